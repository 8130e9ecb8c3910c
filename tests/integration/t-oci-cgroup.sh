#!/usr/bin/env bash
# cordon-runtime's cordon.cgroup=required annotation on a host whose cgroup v2 gives the caller no
# memory or pids controller (this kind of host: a hybrid hierarchy; unprivileged, nothing
# delegated): the container is refused with one line before anything runs (create and run: no
# state, no holder, no process); without the annotation the same config runs, best-effort. Where
# the controllers are, tests/vm/t-oci.sh checks the limits themselves and "required" running.
. "$TAP_LIB"
. "$(dirname "$0")/../oci/lib.sh" # oci_rootfs

RT=${CORDON_RUNTIME:-}
if [ -z "$RT" ] || [ ! -x "$RT" ]; then
	skip "cordon.cgroup=required" "cordon-runtime is not built"
	done_testing
	exit
fi
[ -x /bin/busybox ] || { skip "cordon.cgroup=required" "busybox-static is not installed"; done_testing; exit; }

# controllers_for_caller: the caller's sandboxes could get memory and pids limits here
controllers_for_caller() {
	local mnt own
	mnt=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
	[ -n "$mnt" ] || return 1
	if is_user_mode || [ "$(id -u)" != 0 ]; then
		own=$mnt$(as_caller sed -n 's/^0:://p' /proc/self/cgroup)
		as_caller test -w "$own/cgroup.procs" || return 1
		mnt=$own
	fi
	grep -qw memory "$mnt/cgroup.controllers" 2>/dev/null && grep -qw pids "$mnt/cgroup.controllers"
}
if controllers_for_caller; then
	skip "cordon.cgroup=required refuses without controllers" \
		"the caller has cgroup v2 memory and pids controllers here (tests/vm/t-oci.sh runs required with them)"
	done_testing
	exit
fi

w=$(mkwork)
root=$w/state
b=$w/bundle
oci_rootfs "$b/rootfs"
# config RESOURCES-JSON ANNOTATIONS-JSON
config() {
	cat >"$b/config.json" <<-EOF
		{"ociVersion":"1.2.0",
		 "process":{"terminal":false,"user":{"uid":0,"gid":0},"args":["sh","-c","echo ran"],"env":["PATH=/bin"],"cwd":"/"},
		 "root":{"path":"rootfs","readonly":true},
		 "mounts":[{"destination":"/proc","type":"proc","source":"proc"}],
		 "linux":{"namespaces":[{"type":"pid"},{"type":"network"},{"type":"ipc"},{"type":"uts"},
		   {"type":"mount"},{"type":"cgroup"}],
		  "resources":$1},
		 "annotations":$2}
	EOF
}
own "$b"
rt() {
	out=$(as_caller "$RT" --root "$root" "$@" 2>"$TEST_TMP/stderr")
	rc=$?
	err=$(cat "$TEST_TMP/stderr")
}
cleanup() {
	local id
	for id in $(as_caller "$RT" --root "$root" list -q 2>/dev/null); do
		as_caller "$RT" --root "$root" delete --force "$id" >/dev/null 2>&1
	done
}
trap cleanup EXIT
# refused DESC ID: the last command failed with one cordon-runtime line naming the cgroup
# limit or the cgroup, and left no container ID behind
refused() {
	if [ "$rc" != 0 ] && [ "$(wc -l <<<"$err")" = 1 ] &&
		[[ $err =~ ^cordon-runtime:\ (memory|pids|cgroup|cpus):\ .*(controller|cgroup) ]]; then
		pass "$1"
	else
		fail "$1"
		diag "rc=$rc stderr: $err"
	fi
	rt state "$2"
	is "... no container $2 is left (state: container does not exist)" "$rc:$err" \
		"1:cordon-runtime: container: $2: container does not exist"
	is "... nothing ran" "$out" ""
}

limits='{"memory":{"limit":67108864},"pids":{"limit":50}}'
config "$limits" '{"cordon.cgroup":"required"}'
own "$b/config.json"
as_caller "$RT" --root "$root" create -b "$b" req1 >"$w/req1.out" 2>"$TEST_TMP/stderr"
rc=$? err=$(cat "$TEST_TMP/stderr")
refused "create with cordon.cgroup=required and memory/pids limits: refused, one line" req1
is "... the process wrote nothing" "$(cat "$w/req1.out")" ""
rt run -b "$b" req2
refused "run with cordon.cgroup=required: refused the same way" req2
is "list shows no container" "$(as_caller "$RT" --root "$root" list -q 2>&1)" ""

# without limits asked, "required" asks only for a cgroup of the container's own: root gets one
# (with no controller in it); the caller without a delegated cgroup cannot
config '{}' '{"cordon.cgroup":"required"}'
own "$b/config.json"
rt run -b "$b" req3
if is_user_mode || [ "$(id -u)" != 0 ]; then
	refused "cordon.cgroup=required without resources, unprivileged and nothing delegated: refused" req3
else
	is "cordon.cgroup=required without resources, as root: runs in a cgroup of its own" "$rc:$out" "0:ran"
	rt delete req3
fi

config "$limits" '{}'
own "$b/config.json"
rt run -b "$b" be1
is "the same limits without the annotation: best-effort, the container runs" "$rc:$out" "0:ran"
rt delete be1
done_testing
