#!/usr/bin/env bash
# The VM itself: a pure cgroup v2 hierarchy with the controllers the cgroup tests need, cordon
# runs in it as root and as the user, and the user's delegated cgroup is the user's to manage.
# Runs only inside tests/vm/run's VM.
# shellcheck source-path=SCRIPTDIR source=../lib/tap.sh
. "$TAP_LIB"

cg=/sys/fs/cgroup
w=$(mkwork)
c() { cordon --workdir "$w" "$@"; }

# as_caller_sh SCRIPT: run a shell snippet as the identity cordon runs as; stdout+stderr in $out
as_caller_sh() { out=$(as_caller sh -c "$1" 2>&1); rc=$?; }

# rmdir_cgroup DIR: remove a cgroup once its last process is gone (reaping takes a moment)
rmdir_cgroup() {
	local _
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		rmdir "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# --- the environment tests/run gives
missing=
for v in CORDON PROBE TAP_LIB TEST_TMP TEST_USER CORDON_AS CORDON_VM_USER_CGROUP; do
	[ -n "${!v:-}" ] || missing+=" $v"
done
is "the environment of tests/run is set" "${missing:-none missing}" "none missing"
is "TEST_TMP is a world-traversable directory" "$(stat -c %a "$TEST_TMP")" 755

# --- the kernel and the hierarchy
is "cgroup2 is mounted at /sys/fs/cgroup" "$(awk '$2 == "/sys/fs/cgroup" { print $3 }' /proc/mounts)" cgroup2
unlike_glob "no cgroup v1 hierarchy" "$(awk '$3 == "cgroup" { print $2 }' /proc/mounts)" "?*"
controllers=" $(cat $cg/cgroup.controllers) "
for ctl in memory cpu pids; do
	like "the $ctl controller is available" "$controllers" " $ctl "
done
subtree=" $(cat $cg/cgroup.subtree_control) "
for ctl in memory cpu pids; do
	like "$ctl is enabled for the root's children" "$subtree" " $ctl "
done
is "/tmp (where TEST_TMP is) is on ext4, which has idmapped mounts on Linux 6.1" \
	"$(awk '$2 == "/tmp" { print $3 }' /proc/mounts)" ext4
like_glob "the test runs in a leaf cgroup of its own" "$(cat /proc/self/cgroup)" "0::/*.scope"
is "CORDON_VM_USER_CGROUP is set and is a cgroup" "$(cat "${CORDON_VM_USER_CGROUP:-/nonexistent}/cgroup.type" 2>&1)" domain

# --- cordon runs, as root and as the user
c -- /bin/true
is "cordon -- /bin/true" "$rc:$err" "0:"
c -- /bin/false
is "cordon passes the exit status on" "$rc" 1
c -- "$PROBE" whoami
if is_user_mode; then
	is "the probe runs inside, as the user" "$out" "uid=999 euid=999 suid=999 gid=995 egid=995 sgid=995 groups="
else
	is "the probe runs inside, for root, as the ordinary uid 65532 (a root-owned workdir)" "$out" \
		"uid=65532 euid=65532 suid=65532 gid=65532 egid=65532 sgid=65532 groups="
fi
c -- sh -c 'echo hi > f'
is "the workdir is writable inside" "$rc:$(cat "$w/f" 2>/dev/null)" "0:hi"
c -- cat /proc/self/cgroup
is "the sandbox has its own cgroup namespace" "$rc:$out" "0:0::/"

# --- the cgroups a test may use
if is_user_mode; then
	ucg=$CORDON_VM_USER_CGROUP
	as_caller_sh "test -w $ucg && test -w $ucg/cgroup.procs && test -w $ucg/cgroup.subtree_control"
	is "the delegated cgroup and its cgroup.procs, subtree_control are writable by the user" "$rc:$out" "0:"
	for ctl in memory cpu pids; do
		like "$ctl is enabled in the delegated cgroup" " $(cat "$ucg/cgroup.subtree_control") " " $ctl "
	done
	sub=$ucg/smoke-$$
	as_caller_sh "mkdir $sub && echo 32M > $sub/memory.max && echo 64 > $sub/pids.max &&
		echo \$\$ > $sub/cgroup.procs && cat /proc/self/cgroup"
	is "the user creates a child, limits it and moves into it" "$rc:$out" "0:0::${sub#"$cg"}"
	is "... the limits hold" "$(cat "$sub/memory.max" "$sub/pids.max" 2>&1 | tr '\n' ' ')" "33554432 64 "
	as_caller_sh "rmdir $sub"
	is "... and removes it" "$rc:$out" "0:"
	rmdir_cgroup "$sub" 2>/dev/null
	as_caller_sh "mkdir $cg/smoke-$$"
	like_glob "outside the delegation the user can create nothing" "$rc:$out" "1:*Permission denied*"
else
	sub=$cg/smoke-$$
	mkdir "$sub" && echo 32M >"$sub/memory.max"
	is "root creates a cgroup and sets memory.max" "$(cat "$sub/memory.max" 2>&1)" 33554432
	rmdir_cgroup "$sub"
	is "... and removes it" "$?" 0
fi

done_testing
