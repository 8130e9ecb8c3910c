#!/usr/bin/env bash
# Processes: pid 1 inside reaps and forwards; when the command ends, everything in the sandbox
# dies; when cordon dies, even of SIGKILL, the sandbox dies; the timeout kills everything.
. "$TAP_LIB"

w=$(mkwork)
c() { cordon --workdir "$w" "$@"; }

# start cordon in the background: $bg is its pid
start_bg() {
	(exec_as_caller "$CORDON" --ro-bind "$PROBE_DIR" --workdir "$w" "$@" >"$TEST_TMP/bg.out" 2>"$TEST_TMP/bg.err") &
	bg=$!
}
wait_for() { wait_until 5 test -e "$1"; } # FILE
none_runs() { ! pgrep -f "^sleep $1\$" >/dev/null; }
# MARKER: no host process runs "sleep MARKER" (at once, or within 30 s on a loaded machine: the
# sleeps run for 1000 s and more, so only the kill ends them)
gone() { wait_until 30 none_runs "$1"; }
now_ms() { date +%s%3N; }

c -- sh -c 'echo $PPID'
is "the command's parent is pid 1 (cordon's init)" "$out" 1
c -- "$PROBE" reap
is "pid 1 reaps orphans: no zombies" "$out" "no zombies"

m=1001.$$$RANDOM
c -- "$PROBE" daemon $m
is "a double-forked daemon is started" "$rc" 0
gone $m && pass "... and dies when the command exits" || fail "... and dies when the command exits"
pkill -f "^sleep $m\$"

m=1002.$$$RANDOM
c -- sh -c "sleep $m & sleep $m & exec true"
gone $m && pass "background children die with the command" || fail "background children die with the command"

# signals sent to cordon reach the command
for sig in INT TERM HUP QUIT USR1 USR2; do
	rm -f "$w/got" "$w/ready"
	start_bg -- "$PROBE" trap "$w/got" "$w/ready"
	if wait_for "$w/ready"; then
		kill -s $sig $bg
		wait $bg
		rc=$?
		num=$(kill -l $sig)
		is "SIG$sig sent to cordon reaches the command" "$(cat "$w/got" 2>/dev/null):$rc" "$sig:$((100 + num))"
	else
		fail "SIG$sig sent to cordon reaches the command (never ready)"
		kill -9 $bg
	fi
done

# die with the parent
m=1003.$$$RANDOM
start_bg -- sh -c "sleep $m & sleep $m"
for i in $(seq 100); do pgrep -f "^sleep $m\$" >/dev/null && break; sleep 0.05; done
kill -9 $bg
wait $bg 2>/dev/null
gone $m && pass "cordon killed with SIGKILL: the whole sandbox dies" || fail "cordon killed with SIGKILL: the whole sandbox dies"
pkill -f "^sleep $m\$"

# the timeout
t0=$(now_ms)
c --timeout 500ms -- sleep 30
t1=$(now_ms)
is "--timeout: exit 124" "$rc" 124
is "... with a notice" "$err" "cordon: timeout: the command ran past 0.5s and was killed"
# how soon after the deadline is a figure of the machine's load (bench/): here, only that it is
# not before it, and that the command was killed, not waited for (sleep 30)
between "... not before the deadline, and long before the command's end ($((t1 - t0)) ms)" \
	"$((t1 - t0))" 500 29999
c -q --timeout 200ms -- sleep 30
is "-q silences the notice" "$rc:$err" "124:"
rm -f "$w/got"
# the deadline counts from cordon's start, setup included: 1.5 s leaves a slow (sanitized,
# loaded) setup time to start the probe and install its handler before the SIGTERM
c --timeout 1500ms -- "$PROBE" trap "$w/got"
is "the timeout sends SIGTERM first" "$rc:$(cat "$w/got" 2>/dev/null)" "124:TERM"
m=1004.$$$RANDOM
rm -f "$w/ready"
t0=$(now_ms)
c --timeout 1500ms --kill-after 700ms -- sh -c "sleep $m & exec \"$PROBE\" ignore-term $w/ready"
t1=$(now_ms)
is "a command that ignores SIGTERM is killed: 124" "$rc" 124
# not before the deadline and the grace (1.5 s + 0.7 s), and killed: a command that ignores
# SIGTERM would otherwise run until the test's own timeout
between "... after --kill-after, not before ($((t1 - t0)) ms)" "$((t1 - t0))" 2200 59999
gone $m && pass "... and its daemons with it" || fail "... and its daemons with it"
c --timeout 2s -- sh -c 'exit 7'
is "a command that finishes in time keeps its status" "$rc:$err" "7:"
c --timeout 1 -- sh -c 'sleep 0.1; exit 0'
is "a bare number is seconds" "$rc" 0

# The host's /proc or /sys partly covered (as in a Docker container): the kernel refuses a fresh
# one in a user namespace. One line that says so and what to do, exit 125; not a user namespace
# advice (pid 1 reads its own namespace's user.max_user_namespaces, 0, which it wrote itself)
covered() { # WHAT PATH: cordon run where PATH of the host's WHAT is covered
	unshare -m --propagation private sh -c 'mount --bind /dev/null "$1" && shift && exec "$@"' \
		sh "$2" "$CORDON" --workdir "$w" -- true 2>&1
}
if [ "$(id -u)" = 0 ] && [ "${CORDON_AS:-root}" = root ]; then
	for fs in proc:/proc/uptime sysfs:/sys/kernel/notes; do
		out=$(covered "${fs%%:*}" "${fs#*:}")
		rc=$?
		is "a covered host ${fs%%:*} (${fs#*:} under /dev/null): exit 125" "$rc" 125
		like "... says a fresh ${fs%%:*} was refused" "$out" "cordon: mount: cannot mount a fresh ${fs%%:*}: "
		like "... and why: the host's is partly covered" "$out" "The host's ${fs%%:*} is partly covered"
		like "... and the fix" "$out" "--security-opt systempaths=unconfined"
		unlike "... not the advice for disabled user namespaces" "$out" "max_user_namespaces"
		unlike "... nor for unprivileged ones" "$out" "unprivileged_userns_clone"
		is "... one line" "$(wc -l <<<"$out")" 1
	done
else
	skip "a covered host proc and sysfs: refused with the fix" "covering the host's /proc needs root's mount namespace"
fi

done_testing
