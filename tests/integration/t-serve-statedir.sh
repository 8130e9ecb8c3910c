#!/usr/bin/env bash
# cordon serve's default state directory is one no other local user can make first: root's
# /run/cordon/serve, a user's $XDG_RUNTIME_DIR/cordon-serve (the old default,
# /var/tmp/cordon-serve-UID, made by another user, stopped the server from starting). Every
# directory on the path is checked: the wrong owner or mode, or a symlink, is refused with one
# line saying what to do. In a mount namespace of its own, with /run and /var/tmp fresh tmpfs
# mounts, so that nothing of the host's is touched.
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
mount -t tmpfs -o mode=0755 tmpfs /run && mount -t tmpfs -o mode=1777 tmpfs /var/tmp || {
	fail "tmpfs on /run and /var/tmp in a mount namespace of the test's"
	done_testing
	exit
}
uid=$(caller_uid)
other=$(id -u nobody)
key=e2b_$(head -c 20 /dev/urandom | od -An -tx1 | tr -d ' \n')
export CORDON_SERVE_API_KEY=$key
server=
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; wait 2>/dev/null' EXIT
xdg=$TEST_TMP/xdg-run
mkdir -m 700 "$xdg" && chown "$uid" "$xdg"

# serve CMD...: as the caller, with XDG_RUNTIME_DIR=$xdg (none when $noxdg is set)
serve() {
	if [ -n "${noxdg:-}" ]; then
		exec_as_caller env -u XDG_RUNTIME_DIR "$@"
	fi
	exec_as_caller env XDG_RUNTIME_DIR="$xdg" "$@"
}
# started ARGS...: the server starts and answers (no --state-dir: the default)
started() {
	local port
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	( serve "$CORDON" serve --listen "127.0.0.1:$port" --pool 0 "$@" 2>"$TEST_TMP/serve.log" ) &
	server=$!
	wait_until 20 curl -s -o /dev/null -H "X-API-Key: $key" "http://127.0.0.1:$port/sandboxes"
	local st=$?
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

if is_user_mode; then
	hint="give --state-dir DIR (a directory of yours no other user can write), or set XDG_RUNTIME_DIR to one"
	def=$xdg/cordon-serve
	# another user (root, here) made the old default first
	mkdir -m 755 "/var/tmp/cordon-serve-$uid"
	if started; then pass "the old default made by another user: the server starts"; else
		fail "the old default made by another user: the server starts"
		diag "$(cat "$TEST_TMP/serve.log")"
	fi
	is "... in \$XDG_RUNTIME_DIR/cordon-serve, the caller's, 0700" "$(stat -c '%u %a' "$def")" "$uid 700"
	noxdg=1 refused "XDG_RUNTIME_DIR unset: refused, saying what to do" \
		"no default: XDG_RUNTIME_DIR is not set: $hint"
	chmod 777 "$def"
	refused "\$XDG_RUNTIME_DIR/cordon-serve writable by others: refused" \
		"$def is writable by group or others (chmod go-w $def): $hint"
	rmdir "$def" && mkdir -m 700 "$def" && chown "$other" "$def"
	refused "\$XDG_RUNTIME_DIR/cordon-serve made by another user: refused" \
		"$def is owned by uid $other, not by the server's (uid $uid): $hint"
	rmdir "$def" && ln -s "$TEST_TMP" "$def"
	refused "\$XDG_RUNTIME_DIR/cordon-serve a symlink: refused" \
		"$def is a symlink: give the path of the directory itself"
	rm "$def" && chown "$other" "$xdg"
	refused "\$XDG_RUNTIME_DIR another user's: refused" \
		"$xdg is owned by uid $other, not by the server's (uid $uid): $hint"
	chown "$uid" "$xdg"
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
	if started; then pass "the old default made by another user: the server starts"; else
		fail "the old default made by another user: the server starts"
		diag "$(cat "$TEST_TMP/serve.log")"
	fi
	is "... in /run/cordon/serve (root's, 0700), below /run/cordon (root's, 0755)" \
		"$(stat -c '%u %a' /run/cordon/serve) $(stat -c '%u %a' /run/cordon)" "0 700 0 755"
	chown "$user" /run/cordon/serve
	refused "/run/cordon/serve another user's: refused" \
		"/run/cordon/serve is owned by uid $user, not by the server's (uid 0): $hint"
	chown 0 /run/cordon/serve && chmod 770 /run/cordon/serve
	refused "/run/cordon/serve writable by the group: refused" \
		"/run/cordon/serve is writable by group or others (chmod go-w /run/cordon/serve): $hint"
	rmdir /run/cordon/serve && mkdir -m 700 "$TEST_TMP/elsewhere" && ln -s "$TEST_TMP/elsewhere" /run/cordon/serve
	refused "/run/cordon/serve a symlink: refused" \
		"/run/cordon/serve is a symlink: give the path of the directory itself"
	is "... what it points to is left alone" "$(ls -A "$TEST_TMP/elsewhere")" ""
	rm /run/cordon/serve && chown "$user" /run/cordon
	refused "/run/cordon another user's: refused" \
		"/run/cordon is owned by uid $user, not by the server's (uid 0): $hint"
	chown 0 /run/cordon
	mkdir -m 755 "$TEST_TMP/theirs" && chown "$user" "$TEST_TMP/theirs"
	refused "--state-dir below another user's directory: refused" \
		"$TEST_TMP/theirs (on the path) is owned by uid $user, who could replace what is below it: choose another --state-dir" \
		--state-dir "$TEST_TMP/theirs/s"
	if started; then pass "/run/cordon set right again: the server starts"; else
		fail "/run/cordon set right again: the server starts"
		diag "$(cat "$TEST_TMP/serve.log")"
	fi
fi
done_testing
