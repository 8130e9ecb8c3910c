#!/usr/bin/env bash
# tests/run: alone (podman's daemons and stores: one engine suite at a time)
# podman (conmon) driving cordon-runtime: rootful as root, rootless as $TEST_USER. Exit statuses,
# stdio, a terminal, run -d with exec, stop/kill/rm, pause, hooks from --hooks-dir, and cordon's floor seen from the host
# (no container process is host root, capabilities only in a user namespace of its own).
# OCI_RUNTIME=/usr/sbin/runc runs the same cases against runc: the floor's cases then fail as
# root, which is what they are for.
. "$TAP_LIB"
. "$(dirname "$0")/../oci/lib.sh"

plan_skip() { # the whole suite, one reason
	skip "t-oci-podman" "$1"
	done_testing
	exit
}
command -v podman >/dev/null && command -v conmon >/dev/null || plan_skip "podman or conmon not installed"
oci_init || plan_skip "$oci_skip"
oci_podman_setup || plan_skip "$oci_skip"
oci_podman_image || plan_skip "$oci_skip"
NET=$(oci_podman_net)
mode=rootful
oci_rootless && mode=rootless
diag "podman $mode, runtime $OCI_RUNTIME"

run() { pm run --rm "$NET" "$OCI_IMAGE" "$@"; }

# ---- run --rm: status and stdio ----
run /bin/true
is "run --rm true: exit 0" "$rc:$err" "0:"
run /bin/sh -c 'exit 7'
is "run --rm sh -c 'exit 7': exit 7" "$rc" 7
run /bin/echo hello from the container
is "stdout comes back" "$rc:$out" "0:hello from the container"
run /bin/sh -c 'echo to-stderr >&2'
is "stderr comes back" "$rc:$err" "0:to-stderr"
# killed from outside while `run --rm` waits on it: podman run ends with 137
pm_raw run --rm --name k1 "$NET" "$OCI_IMAGE" /bin/sleep 1000 >/dev/null 2>"$TEST_TMP/k1.stderr" &
bg=$!
running() { pm inspect --format '{{.State.Status}}' k1; [ "$out" = running ]; }
if wait_until 60 running; then
	pm kill k1
	wait "$bg"
	is "run --rm, killed (podman kill): exit 137" "$?" 137
else
	kill "$bg" 2>/dev/null
	wait "$bg"
	fail "run --rm, killed (podman kill): the container never ran"
	diag "$(cat "$TEST_TMP/k1.stderr")"
fi
out=$(echo x-through-stdin | pm_raw run --rm -i "$NET" "$OCI_IMAGE" /bin/cat 2>"$TEST_TMP/stderr")
rc=$?
err=$(cat "$TEST_TMP/stderr")
is "stdin: echo x | podman run -i cat" "$rc:$out" "0:x-through-stdin"
out=$(pm_raw run --rm "$NET" "$OCI_IMAGE" /bin/cat </dev/null 2>"$TEST_TMP/stderr")
rc=$?
err=$(cat "$TEST_TMP/stderr")
is "no -i: stdin is empty" "$rc:$out" "0:"

# ---- a terminal: -it under script(1) (conmon gets the pty through --console-socket) ----
# What the process wrote is read from conmon's log of the terminal: `podman run -it`'s own
# attachment loses a short-lived container's output now and then (podman 4.3; with runc too: 4 of
# 30 runs here), the log never (0 of 50, runc and cordon-runtime alike)
script -qec "$PM run -it --name t1 $NET $OCI_IMAGE /bin/sh -c 'test -t 0 && test -t 1 && echo stdio-terminal; tty; echo in-tty; ls -ln \$(tty); exit 3'" /dev/null </dev/null >/dev/null
pm logs t1
logs=$(tr -d '\r' <<<"$out")
pm rm t1
out=$logs
like "-it: the process's stdin and stdout are a terminal" "$out" "stdio-terminal"
like "-it: ... of the container's /dev/pts (tty names it)" "$out" "/dev/pts/"
like "-it: its output reaches the engine" "$out" "in-tty"
# (anywhere in a line: a "^@" may come first, the terminal's echo of a NUL byte podman's
# attachment writes to the terminal's input, with runc as well)
is "-it: the pty is the container's root's (uid 0 inside, not the overflow id)" \
	"$(grep -E 'c[-rw]{9} .*/dev/pts/' <<<"$out" | awk '{print $3}')" "0"
# without -i nothing is written to the terminal's input: the log is the process's output alone
# (cordon-runtime writes no byte of its own to the console: no NUL, no "^@")
pm run -t --name t2 "$NET" "$OCI_IMAGE" /bin/echo hi
is "-t echo hi: podman logs has the line and nothing else (no NUL byte)" \
	"$(pm_raw logs t2 2>/dev/null | tr -d '\r' | od -An -c | tr -s ' ')" " h i \\n"
pm rm t2
pm run --rm -t "$NET" "$OCI_IMAGE" /bin/sh -c 'exit 3'
is "-t: the exit status comes back" "$rc" 3

# ---- run -d, exec, stop, kill, rm ----
pm run -d --name c1 "$NET" "$OCI_IMAGE" /bin/sleep 1000
is "run -d" "$rc" 0
pm inspect --format '{{.State.Status}}' c1
is "... running" "$out" running
pm exec c1 /bin/sh -c 'echo exec-ok; id -u'
is "exec: output and status" "$rc:$out" "0:exec-ok
0"
pm exec c1 /bin/sh -c 'exit 5'
is "exec: exit status 5" "$rc" 5
pm exec -e FOO=bar -w /tmp c1 /bin/sh -c 'echo "$FOO $PWD"'
is "exec -e -w: env and cwd" "$rc:$out" "0:bar /tmp"
out=$(echo exec-stdin | pm_raw exec -i c1 /bin/cat 2>"$TEST_TMP/stderr")
err=$(cat "$TEST_TMP/stderr")
is "exec -i: stdin" "$out" exec-stdin
out=$(script -qec "$PM exec -it c1 /bin/sh -c 'test -t 0 && echo stdin-terminal; tty; echo exec-tty'" /dev/null </dev/null | tr -d '\r')
like "exec -it: stdin is a terminal" "$out" "stdin-terminal"
like "exec -it: ... of the container's /dev/pts" "$out" "/dev/pts/"
like "exec -it: its output" "$out" "exec-tty"
pm exec c1 /bin/ps -o pid,args
like "exec: ps inside sees the container's sleep" "$out" "sleep 1000"
unlike "... and not the host's conmon" "$out" "conmon"
# podman top reads the processes of the pid namespace of the pid in --pid-file (runc's: the
# container's pid 1): the container's, never the host's
pm top c1
like "top: the container's sleep" "$out" "sleep 1000"
todo "cordon-runtime: the pid file names the holder on the host, not the container's init (issue 30, left)"
unlike "top: not the host's processes (conmon; $(wc -l <<<"$out") lines)" "$(grep conmon <<<"$out" | head -n 2)" "conmon"
todo_end

# ---- the floor, seen from the host ----
# the container's pid namespace, named from inside (nsfs ids are the same seen from the host),
# then every host process in it
pm exec c1 /bin/readlink /proc/self/ns/pid
ns=$out
like_glob "the container's pid namespace, named from inside" "$ns" "pid:\[[0-9]*\]"
isnt "... is not the host's" "$ns" "$(readlink /proc/$$/ns/pid)"
procs=
for p in /proc/[0-9]*; do
	[ "$(readlink "$p/ns/pid" 2>/dev/null)" = "$ns" ] && procs+=" ${p#/proc/}"
done
if [ -z "$ns" ] || [ -z "$procs" ]; then
	fail "the container's processes found on the host ($ns)"
else
	pass "the container's processes found on the host:$procs"
	hostroot=
	for p in $procs; do
		uids=$(awk '/^Uid:/ { print $2, $3, $4, $5 }' "/proc/$p/status" 2>/dev/null)
		case " $uids " in *" 0 "*) hostroot+=" $p($uids)" ;; esac
	done
	is "no container process has host uid 0 (real, effective, saved, fs)" "$hostroot" ""
	userns=
	for p in $procs; do # the test's own user namespace: the host's when root
		[ "$(readlink "/proc/$p/ns/user")" = "$(readlink /proc/$$/ns/user)" ] && userns+=" $p"
	done
	is "every container process is in a user namespace other than the host's" "$userns" ""
fi
# no id inside maps to host uid 0 (each uid_map line: inside, host, count), read from the host
# (this test's user namespace is the initial one): read inside, rootless podman's own namespace
# would be the "host" column
maps=
for p in $procs; do
	maps+=$(cat "/proc/$p/uid_map" 2>/dev/null)$'\n'
done
zero=$(awk '$2 == 0 { print }' <<<"$maps") # (host ids are not negative: a range holding 0 starts there)
if [ -n "$(tr -d ' \n' <<<"$maps")" ] && [ -z "$zero" ]; then
	pass "no uid inside maps to host uid 0: $(sort -u <<<"$maps" | tr -s ' \n' ' ')"
else
	fail "no uid inside maps to host uid 0"
	diag "uid_maps: $maps"
fi
pm exec c1 /bin/cat /proc/self/status
is "exec: no capability, even as the config's root (CapEff 0)" "$(awk '/^CapEff:/ { print $2 }' <<<"$out")" 0000000000000000
pm exec c1 /bin/sh -c 'touch /bin/x 2>/dev/null && echo wrote || echo read-only'
is "exec: the rootfs is read-only (no --read-only asked)" "$out" read-only

pm stop -t 2 c1
is "stop" "$rc" 0
pm inspect --format '{{.State.Status}}' c1
is "... exited" "$out" exited
pm rm c1
is "rm" "$rc" 0
pm container exists c1
is "... gone" "$rc" 1

pm run -d --name c2 "$NET" "$OCI_IMAGE" /bin/sleep 1000
pm kill c2
is "kill (SIGKILL)" "$rc" 0
pm wait c2
is "... the container's exit status: 137" "$rc:$out" "0:137"
pm rm c2
is "rm after kill" "$rc" 0
pm run -d --name c3 "$NET" "$OCI_IMAGE" /bin/sleep 1000
pm rm -f -t 0 c3
is "rm -f of a running container" "$rc" 0
pm container exists c3
is "... gone" "$rc" 1

# ---- pause / unpause: the freezer of the container's cgroup ----
if oci_rootless && [ "$(stat -f -c %T /sys/fs/cgroup)" != cgroup2fs ]; then
	skip "pause/unpause" "rootless podman cannot pause on cgroup v1 or hybrid (no delegated freezer)"
else
	pm run -d --name c4 "$NET" "$OCI_IMAGE" /bin/sleep 1000
	pm pause c4
	is "pause" "$rc:$err" "0:"
	pm inspect --format '{{.State.Status}}' c4
	is "... paused" "$out" paused
	pm unpause c4
	is "unpause" "$rc:$err" "0:"
	pm exec c4 /bin/echo after-unpause
	is "... runs again" "$out" after-unpause
	pm rm -f -t 0 c4
fi

# ---- the configuration podman writes, honoured ----
pm run --rm "$NET" "$OCI_IMAGE" /bin/sh -c 'grep ^CapEff /proc/self/status; touch /bin/x 2>/dev/null && echo wrote || echo read-only'
like_glob "podman's default capabilities: none (CapEff 0)" "$out" "CapEff:*0000000000000000*"
like_glob "... and the rootfs read-only" "$out" "*read-only"
pm run --rm --read-only "$NET" "$OCI_IMAGE" /bin/sh -c 'touch /bin/x 2>/dev/null && echo wrote || echo read-only'
is "--read-only: the rootfs cannot be written" "$rc:$out" "0:read-only"
pm run --rm --cap-drop all "$NET" "$OCI_IMAGE" /bin/sh -c 'grep ^CapEff /proc/self/status'
like_glob "--cap-drop all: no capability (CapEff 0)" "$out" "CapEff:*0000000000000000"
pm run --rm --hostname box1 "$NET" "$OCI_IMAGE" /bin/hostname
is "--hostname" "$out" box1
pm run --rm -e A=1 -w /tmp "$NET" "$OCI_IMAGE" /bin/sh -c 'echo "$A $PWD"'
is "-e and -w" "$out" "1 /tmp"
pm run --rm -u 1000:1000 "$NET" "$OCI_IMAGE" /bin/id
like_glob "-u 1000:1000" "$out" "uid=1000* gid=1000*"
# linux.sysctl: --sysctl's keys set in the container's own network namespace, the host's stay;
# net.ipv4.ping_group_range with the value podman asks on its own for a network it makes
# (--network=none asks none), clamped to the one gid cordon maps (podman refuses the host's keys
# itself: vm.swappiness never reaches the runtime)
host_sysctl=$(cat /proc/sys/net/ipv4/ip_unprivileged_port_start /proc/sys/net/ipv4/ping_group_range)
pm run --rm --sysctl net.ipv4.ip_unprivileged_port_start=80 \
	--sysctl net.ipv4.ping_group_range="0 2147483647" "$NET" "$OCI_IMAGE" /bin/cat \
	/proc/sys/net/ipv4/ip_unprivileged_port_start /proc/sys/net/ipv4/ping_group_range
is "--sysctl net.ipv4.ip_unprivileged_port_start=80: 80 inside; ping_group_range 0 to 2^31-1: 0 0" \
	"$rc:$out" $'0:80\n0\t0'
is "... the host's unchanged" "$(cat /proc/sys/net/ipv4/ip_unprivileged_port_start /proc/sys/net/ipv4/ping_group_range)" "$host_sysctl"

# ---- --network ns:PATH: a network namespace made beforehand, joined (a pod's) ----
# root: as `ip netns add` makes one; rootless: made in podman's own user namespace (podman
# unshare), which owns it, as rootless podman's own networks are
podnet= holder=
if ! oci_rootless; then
	oci_netns_add && ip netns exec "$OCI_NETNS" sh -c 'ip link set lo up && ip addr add 10.99.0.1/32 dev lo' &&
		podnet=/run/netns/$OCI_NETNS
else
	"$PM" unshare unshare -n sh -c 'ip link set lo up && ip addr add 10.99.0.1/32 dev lo &&
		echo $$ >"$1" && exec sleep 600' _ "$TEST_TMP/podman/tmp/holder" >/dev/null 2>&1 &
	wait_until 30 test -s "$TEST_TMP/podman/tmp/holder" &&
		holder=$(cat "$TEST_TMP/podman/tmp/holder") && podnet=/proc/$holder/ns/net
fi
if [ -n "$podnet" ]; then
	pm run --rm --network "ns:$podnet" "$OCI_IMAGE" /bin/sh -c 'readlink /proc/self/ns/net; ip addr add 10.99.0.2/32 dev lo 2>&1 || echo cannot-add; ip addr'
	like "--network ns:PATH: the container is in that namespace" "$rc:$out" \
		"0:$(readlink "$podnet")"
	like "--network ns:PATH: its address" "$out" "inet 10.99.0.1/32"
	like "--network ns:PATH: no address added from inside" "$out" "cannot-add"
	# linux.sysctl into a joined network namespace: its maker's, not written (logged); the
	# run goes on (podman asks net.ipv4.ping_group_range for every network of its own)
	pm run --rm --network "ns:$podnet" --sysctl net.ipv4.ip_unprivileged_port_start=80 \
		"$OCI_IMAGE" /bin/cat /proc/sys/net/ipv4/ip_unprivileged_port_start
	is "--network ns:PATH with --sysctl: runs, the namespace's own value stays" "$rc:$out" "0:1024"
else
	skip "--network ns:PATH" "cannot make a network namespace for it"
fi
[ -n "$holder" ] && kill "$holder" 2>/dev/null

# ---- limits: cgroup v2 controllers only ----
ctl=/sys/fs/cgroup/cgroup.controllers
if [ "$(stat -f -c %T /sys/fs/cgroup)" = cgroup2fs ] && grep -w memory "$ctl" >/dev/null &&
	grep -w pids "$ctl" >/dev/null && ! oci_rootless; then
	pm run --rm --memory 64m --pids-limit 50 "$NET" "$OCI_IMAGE" \
		/bin/sh -c 'cat /sys/fs/cgroup/memory.max /sys/fs/cgroup/pids.max'
	is "--memory 64m --pids-limit 50" "$rc:$out" "0:67108864
50"
else
	skip "--memory/--pids-limit" "no cgroup v2 memory and pids controllers here (hybrid or rootless): tests/vm"
fi

# ---- OCI hooks: a hooks.d directory (--hooks-dir), passed by podman in config.json's hooks ----
HD=$TEST_TMP/hooks.d
HO=$TEST_TMP/hooks-out
mkdir -p "$HD" "$HO"
chmod 755 "$HD"
chmod 777 "$HO"
printf '#!/bin/sh\necho "$1 $(sed -n '\''s/.*"status":"\\([a-z]*\\)".*/\\1/p'\'')" >>%s/log\n' "$HO" >"$HD/hook.sh"
chmod 755 "$HD/hook.sh"
for stage in prestart poststop; do
	printf '{"version":"1.0.0","hook":{"path":"%s","args":["hook.sh","%s"]},"when":{"always":true},"stages":["%s"]}\n' \
		"$HD/hook.sh" "$stage" "$stage" >"$HD/cordon-$stage.json"
done
pm --hooks-dir "$HD" run --rm "$NET" "$OCI_IMAGE" /bin/true
is "--hooks-dir with a prestart and a poststop hook: run --rm succeeds" "$rc:$err" "0:"
is "... the runtime ran both, in order (prestart created, poststop stopped)" \
	"$(cat "$HO/log" 2>/dev/null | tr '\n' ';')" "prestart created;poststop stopped;"

done_testing
