#!/usr/bin/env bash
# cordon serve's default state directory is one no other local user can make first, on disk, in
# cordon's state directory: root's /var/lib/cordon/serve, a user's $XDG_STATE_HOME/cordon/serve
# or ~/.local/state/cordon/serve (the old default, /var/tmp/cordon-serve-UID, made by another
# user, stopped the server from starting). Its sandboxes' workdirs are made there, so the library
# must accept them though they lie below /var/lib or ~/.local: each start here also creates a
# sandbox. Every directory on the path is checked: the wrong owner or mode, or a symlink, is
# refused with one line saying what to do. In a mount namespace of its own, with /var/lib/cordon
# and /var/tmp fresh tmpfs mounts, so that nothing of the host's is touched.
. "$TAP_LIB"

if [ "$(id -u)" != 0 ] || ! command -v unshare >/dev/null || ! command -v curl >/dev/null ||
	! command -v python3 >/dev/null; then
	skip "serve: the state directory" "needs root (a mount namespace), unshare, curl, python3"
	done_testing
	exit
fi
if [ -z "${CD_STATEDIR_NS:-}" ]; then
	exec unshare -m --propagation private env CD_STATEDIR_NS=1 bash "$0" "$@"
fi
mkdir -p /var/lib/cordon
mount -t tmpfs -o mode=0755 tmpfs /var/lib/cordon && mount -t tmpfs -o mode=1777 tmpfs /var/tmp || {
	fail "tmpfs on /var/lib/cordon and /var/tmp in a mount namespace of the test's"
	done_testing
	exit
}
uid=$(caller_uid)
other=$(id -u nobody)
key=e2b_$(head -c 20 /dev/urandom | od -An -tx1 | tr -d ' \n')
export CORDON_SERVE_API_KEY=$key
server=
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; wait 2>/dev/null' EXIT

# serve CMD...: as the caller; $home set: HOME=$home and no XDG_STATE_HOME
serve() {
	if [ -n "${home:-}" ]; then
		exec_as_caller env -u XDG_STATE_HOME HOME="$home" "$@"
	fi
	exec_as_caller "$@"
}
# started ARGS...: the server starts, answers and creates a sandbox (no --state-dir: the default)
started() {
	local port st=1
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	( serve "$CORDON" serve --listen "127.0.0.1:$port" --pool 0 "$@" 2>"$TEST_TMP/serve.log" ) &
	server=$!
	if wait_until 20 curl -s -o /dev/null -H "X-API-Key: $key" "http://127.0.0.1:$port/sandboxes"; then
		created=$(curl -s -X POST -H "X-API-Key: $key" -H 'Content-Type: application/json' \
			-d '{"templateID":"base","timeout":30}' "http://127.0.0.1:$port/sandboxes")
		case $created in *'"sandboxID"'*) st=0 ;; *) echo "$created" >>"$TEST_TMP/serve.log" ;; esac
	fi
	kill "$server" 2>/dev/null
	wait "$server" 2>/dev/null
	server=
	return $st
}
# refused DESC LINE ARGS...: exit 125 and exactly LINE, before listening (within 20 s: a server
# that starts is a failure, not a hang)
refused() {
	local desc=$1 want=$2
	shift 2
	err=$( (serve timeout 20 "$CORDON" serve --listen 127.0.0.1:1 --pool 0 "$@") 2>&1 >/dev/null)
	rc=$?
	is "$desc" "$rc: $err" "125: cordon: serve: --state-dir: $want"
}
starts() {
	if started "$@"; then pass "$desc"; else
		fail "$desc"
		diag "$(cat "$TEST_TMP/serve.log")"
	fi
}

if is_user_mode; then
	hint="give --state-dir DIR (a directory of yours no other user can write), or set HOME or XDG_STATE_HOME to one"
	def=$USER_STATE/cordon/serve
	# another user (root, here) made the old default first
	mkdir -m 755 "/var/tmp/cordon-serve-$uid"
	desc="the old default made by another user: the server starts, and makes a sandbox" starts
	is "... in \$XDG_STATE_HOME/cordon/serve, the caller's, 0700" "$(stat -c '%u %a' "$def")" "$uid 700"
	home=$TEST_TMP/uhome
	mkdir -m 700 "$home" && chown "$uid" "$home"
	desc="without XDG_STATE_HOME: the server starts in ~/.local/state/cordon/serve, and makes a sandbox" starts
	is "... made there, the caller's, 0700" "$(stat -c '%u %a' "$home/.local/state/cordon/serve")" "$uid 700"
	home=$TEST_TMP/nohome
	refused "no home and no XDG_STATE_HOME: refused, saying what to do" \
		"$home: No such file or directory: $hint"
	home=
	chmod 777 "$def"
	refused "\$XDG_STATE_HOME/cordon/serve writable by others: refused" \
		"$def is writable by group or others (chmod go-w $def): $hint"
	rmdir "$def" && mkdir -m 700 "$def" && chown "$other" "$def"
	refused "\$XDG_STATE_HOME/cordon/serve made by another user: refused" \
		"$def is owned by uid $other, not by the server's (uid $uid): $hint"
	rmdir "$def" && ln -s "$TEST_TMP" "$def"
	refused "\$XDG_STATE_HOME/cordon/serve a symlink: refused" \
		"$def is a symlink: give the path of the directory itself"
	rm "$def" && chown "$other" "$USER_STATE"
	refused "\$XDG_STATE_HOME another user's: refused" \
		"$USER_STATE is owned by uid $other, not by the server's (uid $uid): $hint"
	chown "$uid" "$USER_STATE"
	# a given --state-dir below a directory another user owns
	mkdir -m 755 "$TEST_TMP/theirs" && chown "$other" "$TEST_TMP/theirs"
	mkdir -m 700 "$TEST_TMP/theirs/s" && chown "$uid" "$TEST_TMP/theirs/s"
	refused "--state-dir below another user's directory: refused" \
		"$TEST_TMP/theirs (on the path) is owned by uid $other, who could replace what is below it: choose another --state-dir" \
		--state-dir "$TEST_TMP/theirs/s"
else
	hint="fix it (root-owned, chmod go-w), or give --state-dir DIR"
	user=$(id -u "$TEST_USER")
	mkdir -m 700 /var/tmp/cordon-serve-0 && chown "$user" /var/tmp/cordon-serve-0
	desc="the old default made by another user: the server starts, and makes a sandbox" starts
	is "... in /var/lib/cordon/serve (root's, 0700), below /var/lib/cordon (root's, 0755)" \
		"$(stat -c '%u %a' /var/lib/cordon/serve) $(stat -c '%u %a' /var/lib/cordon)" "0 700 0 755"
	chown "$user" /var/lib/cordon/serve
	refused "/var/lib/cordon/serve another user's: refused" \
		"/var/lib/cordon/serve is owned by uid $user, not by the server's (uid 0): $hint"
	chown 0 /var/lib/cordon/serve && chmod 770 /var/lib/cordon/serve
	refused "/var/lib/cordon/serve writable by the group: refused" \
		"/var/lib/cordon/serve is writable by group or others (chmod go-w /var/lib/cordon/serve): $hint"
	rm -rf /var/lib/cordon/serve && mkdir -m 700 "$TEST_TMP/elsewhere" &&
		ln -s "$TEST_TMP/elsewhere" /var/lib/cordon/serve
	refused "/var/lib/cordon/serve a symlink: refused" \
		"/var/lib/cordon/serve is a symlink: give the path of the directory itself"
	is "... what it points to is left alone" "$(ls -A "$TEST_TMP/elsewhere")" ""
	rm /var/lib/cordon/serve && chown "$user" /var/lib/cordon
	refused "/var/lib/cordon another user's: refused" \
		"/var/lib/cordon is owned by uid $user, not by the server's (uid 0): $hint"
	chown 0 /var/lib/cordon
	mkdir -m 755 "$TEST_TMP/theirs" && chown "$user" "$TEST_TMP/theirs"
	refused "--state-dir below another user's directory: refused" \
		"$TEST_TMP/theirs (on the path) is owned by uid $user, who could replace what is below it: choose another --state-dir" \
		--state-dir "$TEST_TMP/theirs/s"
	desc="/var/lib/cordon set right again: the server starts, and makes a sandbox" starts
fi
done_testing
