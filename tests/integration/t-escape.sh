#!/usr/bin/env bash
# tests/run: alone (it turns the host's dev.tty.legacy_tiocsti sysctl on and off)
# Escape attempts from inside. Each must fail; where it helps, a control shows the attempt works
# outside (or with the isolation turned off), so that the test can fail.
. "$TAP_LIB"

w=$(mkwork)
c() { cordon --workdir "$w" "$@"; }
root=$([ "$(id -u)" = 0 ] && echo yes)
cleanup=()
legacy= # dev.tty.legacy_tiocsti to put back, when the TIOCSTI test changed it
trap 'for f in "${cleanup[@]}"; do rm -rf "$f"; done; kill $(jobs -p) 2>/dev/null
	[ -n "$legacy" ] && echo "$legacy" >/proc/sys/dev/tty/legacy_tiocsti' EXIT
cleanup+=("$TEST_TMP/nothing")

# --- reading what is not ours
if [ -n "$root" ]; then
	f=/etc/cordon-test-secret.$$
	echo root-only >"$f" && chmod 600 "$f"
	cleanup+=("$f")
	c -- "$PROBE" read "$f"
	is "a root-only (0600) file in the visible root is unreadable" "$out" EACCES
	c --ro-bind "$f:/s" -- "$PROBE" read /s
	is "... even bound in explicitly" "$out" EACCES
	v=/home/cordon-test-victim.$$
	mkdir -p "$v" && echo private >"$v/notes" && chmod -R a+rX "$v"
	cleanup+=("$v")
	c -- "$PROBE" read "$v/notes"
	is "another user's world-readable file in /home is not there" "$out" ENOENT
	echo rootssh >/root/.cordon-test-key.$$
	cleanup+=("/root/.cordon-test-key.$$")
	c -- "$PROBE" read "/root/.cordon-test-key.$$"
	is "root's home is not there" "$out" ENOENT
else
	skip "a root-only (0600) file is unreadable" "needs root to plant it"
fi
export ANTHROPIC_API_KEY=sk-ant-secret-999
c -- sh -c 'cat /proc/self/environ /proc/1/environ 2>/dev/null | tr "\0" "\n"; env'
unlike "an API key in the caller's environment is nowhere inside" "$out" "sk-ant-secret"
c -- "$PROBE" read /proc/1/environ
is "pid 1's environment (the supervisor's copy) is unreadable" "$out" EACCES
c -- "$PROBE" read /proc/1/mem
is "pid 1's memory is unreadable" "$out" EACCES
c -- "$PROBE" ptrace 1
is "pid 1 cannot be ptraced" "$out" EPERM

# --- writing outside the workdir
outside=$(dirname "$w")
c -- sh -c "cd ..; echo x > escaped; echo x > /tmp/escaped; ls -d \"$outside\""
[ -e "$outside/escaped" ] && fail "writing to the workdir's parent stays inside" || pass "writing to the workdir's parent stays inside"
for p in /etc/cordon-x /usr/cordon-x /var/tmp/../cordon-x; do
	c -- "$PROBE" write $p
	like_glob "write $p fails" "$out" "E*"
done

# --- symlinks planted in the workdir
echo host-file >"$TEST_TMP/outside-file"
chmod 644 "$TEST_TMP/outside-file"
ln -s "$TEST_TMP/outside-file" "$w/to-outside"
ln -s /etc/cordon-test-secret.$$ "$w/to-secret"
ln -s ../../../../../../../../../.. "$w/to-root"
[ -n "$root" ] && is_user_mode && chown -h "$TEST_USER:" "$w"/to-*
c -- "$PROBE" read to-outside
is "a symlink to a host file outside the sandbox resolves to nothing" "$out" ENOENT
c -- sh -c 'echo overwritten > to-outside'
is "... writing through it does not touch the host file" "$(cat "$TEST_TMP/outside-file")" host-file
[ "$(cat "$w/to-root$TEST_TMP/outside-file")" = host-file ] &&
	pass "(control: outside, the climbing symlink reaches the host's files)" ||
	fail "(control: outside, the climbing symlink reaches the host's files)"
c -- "$PROBE" read "to-root$TEST_TMP/outside-file"
is "a symlink climbing .. ends at the sandbox's root, not the host's" "$out" ENOENT
if [ -n "$root" ]; then
	c -- "$PROBE" read to-secret
	is "a symlink to a root-only file does not help" "$out" EACCES
fi

# --- fds of the caller
exec 7<"$TEST_TMP/outside-file" 8>"$TEST_TMP/outside-w"
c -- "$PROBE" fds
is "no fd of the caller leaks into the sandbox (only 0 1 2)" "$(echo $out)" "0 1 2"
exec 7<&- 8>&-

# --- the network
python3 -c '
import socket,time
s=socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
port = s.getsockname()[1]
a=socket.socket(socket.AF_UNIX); a.bind("\0cordon-test-abstract-%d" % port); a.listen(8)
print(port, flush=True)
time.sleep(120)' >"$TEST_TMP/listener.port" &
listener=$!
wait_until 5 test -s "$TEST_TMP/listener.port"
port=$(cat "$TEST_TMP/listener.port")
c -- "$PROBE" connect 127.0.0.1 $port
is "a listener on the host's 127.0.0.1 is unreachable" "$out" ECONNREFUSED
c --net host -- "$PROBE" connect 127.0.0.1 $port
is "... (control: with --net host it is reachable)" "$out" ok
c -- python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect("\0cordon-test-abstract-'$port'")'
like_glob "a host abstract unix socket (X11, D-Bus style) is unreachable" "$rc:$err" "1:*ConnectionRefusedError*"
c -- "$PROBE" connect 10.0.0.1 80
is "no route anywhere else" "$out" ENETUNREACH
kill $listener

# --- processes of the host
(exec_as_caller sleep 300 >/dev/null 2>&1) &
victim=$!
sleep 0.2
c -- "$PROBE" kill $victim 0
is "a host process of the same user cannot be signalled" "$out" ESRCH
c -- sh -c 'kill -9 -1; echo still-here'
kill -0 $victim 2>/dev/null && pass "kill -9 -1 inside spares the host's processes of the same user" ||
	fail "kill -9 -1 inside spares the host's processes of the same user"
kill $victim 2>/dev/null
c -- sh -c 'kill -9 1; kill -TERM 1; echo alive'
is "pid 1 ignores kill from inside" "$out" alive
c -- sh -c 'ls /proc | grep -cE "^[0-9]+$"'
like_glob "only the sandbox's processes are visible" "$out" "[1-4]"

# --- privilege
c -- "$PROBE" status
like_glob "no capability in any set" "$out" "*CapInh:	0000000000000000*CapPrm:	0000000000000000*CapEff:	0000000000000000*CapBnd:	0000000000000000*CapAmb:	0000000000000000*"
like "no_new_privs" "$out" "NoNewPrivs:	1"
# /proc's windows on the kernel are masked: empty inside, though anyone reads them on the host
if [ -n "$(head -c 1 /proc/kallsyms)" ]; then # (proc's files say size 0: read one)
	c -- sh -c 'for f in kallsyms timer_list; do wc -c </proc/$f; done 2>&1'
	is "/proc/kallsyms and timer_list: masked (empty)" "$(tr '\n' ' ' <<<"$out")" "0 0 "
else
	skip "/proc's masks" "no readable /proc/kallsyms on this host"
fi
c -- "$PROBE" mount
is "mount fails" "$out" EPERM
c -- "$PROBE" chroot
is "chroot fails" "$out" EPERM
c -- sh -c 'su -c id root </dev/null >/dev/null 2>&1 || echo refused; sudo -n true 2>/dev/null || echo refused'
is "setuid programs give nothing" "$out" "$(printf 'refused\nrefused')"

# --- the terminal: TIOCSTI must not push input into the caller's terminal
tiocsti_test() { # args for cordon; prints what the terminal received and the probe's report
	python3 - "$@" <<'PY'
import os, pty, sys, select, subprocess, time
master, slave = pty.openpty()
def ctty():
    os.setsid()
    import fcntl, termios
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)
p = subprocess.Popen(sys.argv[1:], stdin=slave, stdout=slave, stderr=slave, preexec_fn=ctty)
p.wait()
time.sleep(0.1)
data = b""
while select.select([master], [], [], 0.2)[0]:
    try: data += os.read(master, 4096)
    except OSError: break
# what the probe printed, and whether "INJECTED" came back as terminal input (echoed)
print(repr(data.decode(errors="replace")))
PY
}
if [ -n "$root" ] && [ "$(cat /proc/sys/dev/tty/legacy_tiocsti 2>/dev/null)" = 0 ]; then
	legacy=0 # the trap puts it back
	echo 1 >/proc/sys/dev/tty/legacy_tiocsti
fi
ctl=$(tiocsti_test "$PROBE" tiocsti INJECTED)
if [ "$(cat /proc/sys/dev/tty/legacy_tiocsti 2>/dev/null)" != 0 ]; then
	like "(control: TIOCSTI works on a terminal outside the sandbox)" "$ctl" "fd0 ok"
	res=$(tiocsti_test "$CORDON" --ro-bind "$PROBE_DIR" --workdir "$w" -- "$PROBE" tiocsti INJECTED)
	like_glob "TIOCSTI from inside is refused by the filter, on stdin and on /dev/tty" "$res" "*fd0 EPERM*devtty EPERM*"
	unlike "... and nothing reaches the terminal's input" "$res" "INJECTEDINJECTED"
else
	skip "TIOCSTI from inside is refused" "dev.tty.legacy_tiocsti=0 and not root: the kernel refuses it anyway"
fi

done_testing
