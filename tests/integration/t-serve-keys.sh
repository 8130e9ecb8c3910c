#!/usr/bin/env bash
# cordon serve's API keys kept out of other local users' sight (docs/e2b.md "API keys"): a key
# file that is a symlink, readable by others, someone else's, empty or not a regular file is
# refused (125, one line); CORDON_SERVE_API_KEY works and is gone from the server's environment
# (and its children's); a key the server makes is in a file of mode 0600, written through no
# planted symlink, and never printed; a server started these ways shows no key in its command
# line; --api-key still works and says why it is unsafe.
. "$TAP_LIB"

command -v python3 >/dev/null && command -v curl >/dev/null || {
	skip "serve: API keys" "python3 and curl are needed"
	done_testing
	exit
}
dir=$(mkwork)
uid=$(caller_uid)
owned() { # owned FILE: the caller's, as the test runs as root
	if is_user_mode && [ "$(id -u)" = 0 ]; then chown "$TEST_USER:" "$1"; fi
}
key_file() { # key_file NAME MODE [CONTENT]: a file of the caller's
	printf '%s' "${3-}" >"$dir/$1"
	owned "$dir/$1"
	chmod "$2" "$dir/$1"
}
k1=e2b_$(head -c 20 /dev/urandom | od -An -tx1 | tr -d ' \n')
k2=e2b_$(head -c 20 /dev/urandom | od -An -tx1 | tr -d ' \n')

# serve_bad ARGS...: a server that should not start: its status in $rc, its stderr in $err
# (within 20 s: a FIFO opened for reading waits for a writer for ever)
serve_bad() {
	err=$(as_caller timeout 20 "$CORDON" serve --listen 127.0.0.1:1 --pool 0 \
		--state-dir "$dir/none" "$@" 2>&1 >/dev/null)
	rc=$?
}
# refused KEYFILE WHY: exit 125, this one line, nothing started
refused() {
	serve_bad --api-key-file "$1"
	is "--api-key-file $2: refused" "$rc: $err" "125: cordon: serve: --api-key-file: $1$3"
}
key_file good 600 "$k1"$'\n'
ln -s good "$dir/link"
refused "$dir/link" "a symlink" " is a symlink: give the file itself (chmod 600, yours)"
key_file group 640 "$k1"
refused "$dir/group" "readable by the group" \
	" may be read or written by group or others: chmod 600 $dir/group"
key_file others 604 "$k1"
refused "$dir/others" "readable by others" \
	" may be read or written by group or others: chmod 600 $dir/others"
# someone else's, yet readable by the server (root reads anything; a user through its group)
printf '%s\n' "$k1" >"$dir/theirs"
if is_user_mode; then
	chown "nobody:$(id -g "$TEST_USER")" "$dir/theirs" && chmod 640 "$dir/theirs"
	them=$(id -u nobody)
else
	chown "$TEST_USER:" "$dir/theirs" && chmod 600 "$dir/theirs"
	them=$(id -u "$TEST_USER")
fi
refused "$dir/theirs" "another user's" \
	" is owned by uid $them, not by you (uid $uid) or root: another user could change the keys (use a file of yours, chmod 600)"
key_file empty 600 ""
refused "$dir/empty" "empty" ": no key in it"
key_file comments 600 $'# only a comment\n\n'
refused "$dir/comments" "only a comment" ": no key in it"
mkdir -m 700 "$dir/adir" && owned "$dir/adir"
refused "$dir/adir" "a directory" " is not a regular file"
mkfifo -m 600 "$dir/fifo" && owned "$dir/fifo"
refused "$dir/fifo" "a FIFO (not waited on)" " is not a regular file"
refused /dev/null "a device" " is not a regular file"

port=
server=
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; wait 2>/dev/null' EXIT
# start LOG ARGS...: a server of the caller's, answering; its pid in $server
start() {
	local log=$1
	shift
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	( exec_as_caller "$CORDON" serve --listen "127.0.0.1:$port" --pool 0 "$@" 2>"$log" ) &
	server=$!
	wait_until 20 curl -s -o /dev/null "http://127.0.0.1:$port/health"
}
stop() {
	kill "$server" 2>/dev/null
	wait "$server" 2>/dev/null
	server=
}
status() { curl -s -o /dev/null -w '%{http_code}' -H "X-API-Key: $1" "http://127.0.0.1:$port/sandboxes"; }
holds() { tr '\0' '\n' <"$1" 2>/dev/null | grep -cF -e "$k1" -e "$k2"; }

# a good key file
start "$TEST_TMP/file.log" --state-dir "$dir/s1" --api-key-file "$dir/good"
is "--api-key-file of mode 0600: its key is accepted" "$(status "$k1")" 200
is "... another is not" "$(status "$k2")" 401
is "... and the server's command line holds no key" "$(holds "/proc/$server/cmdline")" 0
stop

# the environment
planted=planted-$RANDOM$RANDOM$RANDOM
CORDON_SERVE_API_KEY="$k1, $k2" CORDON_TEST_PLANTED=$planted start "$TEST_TMP/env.log" --state-dir "$dir/s2"
is "CORDON_SERVE_API_KEY: both keys it holds are accepted" "$(status "$k1") $(status "$k2")" "200 200"
is "... and gone from /proc/<server>/environ" "$(holds "/proc/$server/environ")" 0
kids=0
for c in $(pgrep -P "$server"); do kids=$((kids + $(holds "/proc/$c/environ"))); done
is "... and from its children's" "$kids" 0
is "... not in its command line" "$(holds "/proc/$server/cmdline")" 0
unlike "... and never printed" "$(cat "$TEST_TMP/env.log")" "$k1"
# the server's other variables stay with it: its session maker (a child, exec'd) gets only
# those the library reads (PATH, HOME, ...); PATH's line shows each environ was read
count_in() { tr '\0' '\n' <"$2" 2>/dev/null | grep -c -e "$1"; }
is "the server's environment holds a variable it was given (the control)" \
	"$(count_in "$planted" "/proc/$server/environ")" 1
n=0 paths=0 kids=0
for c in $(pgrep -P "$server"); do
	n=$((n + 1)) paths=$((paths + $(count_in '^PATH=' "/proc/$c/environ")))
	kids=$((kids + $(count_in "$planted" "/proc/$c/environ")))
done
is "... its children (the session maker) got PATH, not that variable" "$((n > 0)) $((paths == n)) $kids" "1 1 0"
stop
CORDON_SERVE_API_KEY="$k1,sk_123" serve_bad
is "CORDON_SERVE_API_KEY with a bad key: refused" "$rc: $err" \
	"125: cordon: serve: CORDON_SERVE_API_KEY: a key is e2b_ followed by lowercase hex digits"
CORDON_SERVE_API_KEY=" , " serve_bad
like_glob "CORDON_SERVE_API_KEY with no key: refused" "$rc: $err" \
	"125: cordon: serve: CORDON_SERVE_API_KEY: set but holds no key *"

# no key: one made, in a file of mode 0600, through no planted symlink
mkdir -m 700 "$dir/s3" && owned "$dir/s3"
echo untouched >"$dir/target" && owned "$dir/target" && chmod 644 "$dir/target"
ln -s "$dir/target" "$dir/s3/api-key"
start "$TEST_TMP/made.log" --state-dir "$dir/s3"
made=$(cat "$dir/s3/api-key" 2>/dev/null)
like "no key given: the server says where it wrote one" "$(cat "$TEST_TMP/made.log")" \
	"this run's key is in $dir/s3/api-key (mode 0600, uid $uid)"
is "... a regular file of the caller's, mode 0600 (the planted symlink replaced)" \
	"$(stat -c '%F %u %a' "$dir/s3/api-key")" "regular file $uid 600"
is "... the symlink's target untouched" "$(cat "$dir/target")" untouched
is "... its key is accepted" "$(status "$made")" 200
unlike "... and never printed" "$(cat "$TEST_TMP/made.log")" "${made:-nokey}"
stop
is "... removed when the server stops" "$(ls -A "$dir/s3")" ""

# --api-key: still accepted, with a notice; the copy in its command line overwritten
start "$TEST_TMP/argv.log" --state-dir "$dir/s4" --api-key "$k2"
is "--api-key: accepted" "$(status "$k2")" 200
like_glob "... with a notice saying why it is unsafe" "$(cat "$TEST_TMP/argv.log")" \
	"cordon: serve: --api-key: a key on the command line can be read by every local user (ps, /proc/PID/cmdline); use CORDON_SERVE_API_KEY=KEY or --api-key-file FILE (chmod 600) instead*"
is "... and overwritten in the server's command line once read" "$(holds "/proc/$server/cmdline")" 0
stop
serve_bad --api-key "$k2" --api-key-file "$dir/group"
is "--api-key and a bad option: only the bad option's line" "$rc: $err" \
	"125: cordon: serve: --api-key-file: $dir/group may be read or written by group or others: chmod 600 $dir/group"
done_testing
