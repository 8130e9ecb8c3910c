#!/usr/bin/env bash
# cordon-runtime's linux.resources on a pure cgroup v2 hierarchy (docs/oci.md): a container made
# by create + start gets its own cgroup (cordon-<id> under cordon's parent: cgroupsPath is not
# used) whose memory.max, memory.swap.max, pids.max and cpu.max are what config.json asked
# (swap: the spec's memory + swap; cpu: quota/period as a bandwidth of a 100 ms period), seen
# the same inside through its cgroup mount; a memory hog is OOM-killed (run ends of SIGKILL, the
# parent's memory.events counts the oom_kill, the runtime's --log says so, state stopped); a
# fork bomb stops at pids.max; pause freezes the cgroup (cgroup.freeze, a counter stands still)
# and resume thaws it; ps lists the cgroup's processes; cordon.cgroup=required runs where the
# controllers are; delete leaves no cgroup. The other half of "required", a host without the
# controllers refusing, is tests/integration/t-oci-cgroup.sh. Runs only inside tests/vm/run's
# VM (busybox, bash, setpriv: no python3, so config.json is written by hand).
# shellcheck source-path=SCRIPTDIR source=../lib/tap.sh
. "$TAP_LIB"
# shellcheck source=../oci/lib.sh
. "$(dirname "$TAP_LIB")/oci/lib.sh" # oci_rootfs

RT=$(dirname "$CORDON")/cordon-runtime
if [ ! -x "$RT" ]; then
	fail "cordon-runtime is in the image (tests/vm/run copies it from the build)"
	done_testing
	exit
fi
CG=/sys/fs/cgroup
hex32='[0-9a-f]{32}'
flat() { printf '%s' "$1" | tr '\n' ' '; } # the lines of $1 on one line
# where the containers' cgroups go: root's default, or the user's own delegated cgroup (this
# run's scope; the first container moves this script into its leaf cordon-supervisors)
if is_user_mode; then parent=$CG$(sed -n 's/^0:://p' /proc/self/cgroup); else parent=$CG/cordon; fi

w=$(mkwork)
root=$w/state
b=$w/bundle
log=$w/runtime.log
oci_rootfs "$b/rootfs"
ln -s busybox "$b/rootfs/bin/awk"
# a memory hog (128M, doubling); a fork bomb, which goes off only if pids.max inside is 20
echo 'BEGIN { s = "x"; for (i = 0; i < 27; i++) s = s s; print length(s) }' >"$b/rootfs/hog.awk"
cat >"$b/rootfs/bomb.sh" <<'EOF'
[ "$(cat /sys/fs/cgroup/pids.max)" = 20 ] || exit 3
bomb() { bomb | bomb & }
bomb
wait
sleep 1000
EOF
own "$b"

# config ARGS-JSON [RESOURCES-JSON] [ANNOTATIONS-JSON]: the bundle's config.json, a tmpfs /tmp
# and the container's cgroup at /sys/fs/cgroup
config() {
	local res=${2:-} ann=${3:-}
	[ -n "$res" ] || res='{}'
	[ -n "$ann" ] || ann='{}'
	cat >"$b/config.json" <<-EOF
		{"ociVersion":"1.2.0",
		 "process":{"terminal":false,"user":{"uid":0,"gid":0},"args":$1,"env":["PATH=/bin"],"cwd":"/"},
		 "root":{"path":"rootfs","readonly":true},
		 "hostname":"vm-oci",
		 "mounts":[{"destination":"/proc","type":"proc","source":"proc"},
		  {"destination":"/dev","type":"tmpfs","source":"tmpfs","options":["nosuid","mode=755"]},
		  {"destination":"/tmp","type":"tmpfs","source":"tmpfs","options":["nosuid","nodev","mode=1777"]},
		  {"destination":"/sys","type":"sysfs","source":"sysfs","options":["nosuid","noexec","nodev","ro"]},
		  {"destination":"/sys/fs/cgroup","type":"cgroup","source":"cgroup","options":["nosuid","noexec","nodev","ro"]}],
		 "linux":{"namespaces":[{"type":"pid"},{"type":"network"},{"type":"ipc"},{"type":"uts"},
		   {"type":"mount"},{"type":"cgroup"}],
		  "resources":$res},
		 "annotations":$ann}
	EOF
	own "$b/config.json"
}
# rt ARGS...: cordon-runtime --root $root --log $log as the caller; $out, $err, $rc
rt() {
	out=$(as_caller "$RT" --root "$root" --log "$log" "$@" 2>"$TEST_TMP/stderr")
	rc=$?
	err=$(cat "$TEST_TMP/stderr")
}
# create ID: create's stdio (the process's, handed on at start) to $w/ID.out and .err
create() {
	as_caller "$RT" --root "$root" --log "$log" create -b "$b" "$1" >"$w/$1.out" 2>"$w/$1.err"
	rc=$?
}
status_of() { as_caller "$RT" --root "$root" state "$1" 2>/dev/null | sed -n 's/.*"status": *"\([a-z]*\)".*/\1/p'; }
# pids_of ID: the host pids `ps --format json` gives, one a line, sorted
pids_of() { as_caller "$RT" --root "$root" ps --format json "$1" 2>/dev/null | tr -c '0-9' '\n' | grep . | sort -n; }
# cgroup_of PID: the cgroup directory PID is in
cgroup_of() { local p; p=$(sed -n 's/^0:://p' "/proc/$1/cgroup" 2>/dev/null) && [ -n "$p" ] && echo "$CG$p"; }
procs_of() { sort -n "$1/cgroup.procs" 2>/dev/null; }
# ps_in_cgroup DESC PIDS CG: PIDS (not none) are all in CG; CG's other processes are cordon's
ps_in_cgroup() {
	local p others='' bad=''
	for p in $2; do grep -qx "$p" "$3/cgroup.procs" 2>/dev/null || bad+=" $p"; done
	for p in $(procs_of "$3"); do
		grep -qx "$p" <<<"$2" && continue
		case $(cat "/proc/$p/comm" 2>/dev/null) in
		cordon-init | cordon-agent) ;; # the sandbox's pid 1 and the session's agent
		*) others+=" $p:$(cat "/proc/$p/comm" 2>/dev/null)" ;;
		esac
	done
	if [ -n "$2" ] && [ -z "$bad$others" ]; then pass "$1"; else
		fail "$1"
		diag "ps: $(flat "$2"); not in $3:${bad:- none}; in it but not listed:${others:- none}"
	fi
}
oom_kills() { sed -n 's/^oom_kill //p' "$parent/memory.events" 2>/dev/null || echo 0; }
cleanup() {
	local id
	for id in $(as_caller "$RT" --root "$root" list -q 2>/dev/null); do
		as_caller "$RT" --root "$root" delete --force "$id" >/dev/null 2>&1
	done
}
trap cleanup EXIT

diag "controllers of $CG: $(cat $CG/cgroup.controllers); parent of the containers: $parent"

# --- 1. the limits asked, in the container's own cgroup
mib=1048576
config '["sleep","1000"]' \
	"{\"memory\":{\"limit\":$((48 * mib)),\"swap\":$((64 * mib))},\"cpu\":{\"quota\":25000,\"period\":100000,\"shares\":512},\"pids\":{\"limit\":37}}"
create lim
rt start lim
is "create + start with linux.resources: 0" "$rc:$err" "0:"
is "... state running" "$(status_of lim)" running
pids=$(pids_of lim)
pid=$(head -n1 <<<"$pids")
cg=$(cgroup_of "${pid:-0}")
if [[ $cg =~ ^$parent/cordon-$hex32$ ]]; then
	pass "ps's pid is in the container's own cgroup, cordon-<id> under $parent (cgroupsPath not used)"
else
	fail "ps's pid is in the container's own cgroup, cordon-<id> under $parent (cgroupsPath not used)"
	diag "pids: $(flat "$pids") cgroup: ${cg:-none}"
	cg=/nonexistent
fi
is "memory.max is memory.limit (48M)" "$(cat "$cg/memory.max" 2>&1)" $((48 * mib))
is "memory.swap.max is swap - limit (64M - 48M: the spec counts memory + swap)" \
	"$(cat "$cg/memory.swap.max" 2>&1)" $((16 * mib))
is "pids.max is pids.limit (37)" "$(cat "$cg/pids.max" 2>&1)" 37
is "cpu.max is quota and period (25000 100000)" "$(cat "$cg/cpu.max" 2>&1)" "25000 100000"
is "memory.oom.group is 1 (the container is one OOM unit)" "$(cat "$cg/memory.oom.group" 2>&1)" 1
rt exec lim cat /sys/fs/cgroup/memory.max /sys/fs/cgroup/pids.max /sys/fs/cgroup/cpu.max
is "inside, through its cgroup mount: the same limits" "$rc:$(flat "$out")" "0:$((48 * mib)) 37 25000 100000"
ps_in_cgroup "ps lists processes of the container's cgroup, and the cgroup's others are cordon's own" "$pids" "$cg"
like "... sleep 1000 among them" "$(for p in $pids; do tr '\0' ' ' <"/proc/$p/cmdline"; echo; done)" "sleep 1000"
like "cpu.shares is logged as not applied" "$(cat "$log")" "cpu.shares: 512: not applied"
rt delete --force lim
is "delete --force: 0" "$rc:$err" "0:"
wait_until 10 test ! -d "$cg"
is "... the container's cgroup is removed" "$([ -d "$cg" ] && echo left)" ""

# --- 2. cpu: another period keeps the bandwidth (quota/period CPUs, written over 100 ms)
config '["sh","-c","cat /sys/fs/cgroup/cpu.max"]' '{"cpu":{"quota":150000,"period":200000}}'
rt run -b "$b" cpu2
is "quota 150000 / period 200000: cpu.max inside is 0.75 CPU of 100 ms" "$rc:$out" "0:75000 100000"
rt delete cpu2
config '["sh","-c","cat /sys/fs/cgroup/cpu.max"]' '{"cpu":{"quota":-1}}'
rt run -b "$b" cpu3
is "quota -1: no bandwidth limit (max)" "$rc:$out" "0:max 100000"
rt delete cpu3
config '["sh","-c","cat /sys/fs/cgroup/memory.max /sys/fs/cgroup/pids.max"]' '{"memory":{"limit":-1},"pids":{"limit":-1}}'
rt run -b "$b" unl
is "memory.limit -1 and pids.limit -1: max" "$rc:$(flat "$out")" "0:max max"
rt delete unl
config '["sh","-c","cat /sys/fs/cgroup/memory.max /sys/fs/cgroup/pids.max"]'
rt run -b "$b" dflt
is "no resources: cordon's defaults stay (4 GiB, 1024 pids)" "$rc:$(flat "$out")" "0:4294967296 1024"
rt delete dflt

# --- 3. a memory hog is OOM-killed
config '["awk","-f","/hog.awk"]' "{\"memory\":{\"limit\":$((32 * mib)),\"swap\":$((32 * mib))}}"
: >"$log"
before=$(oom_kills)
rt run -b "$b" oom
is "a memory hog under memory.limit 32M: run ends of SIGKILL (137)" "$rc" 137
after=$(oom_kills)
if [ "${after:-0}" -gt "${before:-0}" ]; then pass "... the OOM killer did it (oom_kill in $parent/memory.events: $before -> $after)"; else
	fail "... the OOM killer did it (oom_kill in $parent/memory.events: $before -> $after)"
fi
like "... the runtime's log says the memory limit killed it" "$(cat "$log")" "memory limit"
is "... state stopped" "$(status_of oom)" stopped
rt delete oom
config '["true"]'
rt run -b "$b" after-oom
is "... and the next container runs" "$rc:$err" "0:"
rt delete after-oom

# --- 4. a fork bomb stops at pids.max
config '["sh","/bomb.sh"]' '{"pids":{"limit":20}}'
create bomb
rt start bomb
is "a fork bomb under pids.limit 20 starts" "$rc:$err" "0:"
sleep 3
is "... it is still running (the guard passed: pids.max inside was 20)" "$(status_of bomb)" running
pid=$(pids_of bomb | head -n1)
cg=$(cgroup_of "${pid:-0}")
between "... pids.current never above 20" "$(cat "$cg/pids.current" 2>/dev/null || echo none)" 1 20
if [ -e "$cg/pids.peak" ]; then
	between "... pids.peak reached the limit, never passed it" "$(cat "$cg/pids.peak")" 15 20
else
	skip "... pids.peak reached the limit, never passed it" "no pids.peak in this kernel"
fi
between "... forks were refused at the limit (pids.events max)" "$(sed -n 's/^max //p' "$cg/pids.events" 2>/dev/null)" 1 1000000000
for i in 1 2 3 4 5 6 7 8 9 10; do /bin/true || break; done
is "... the host can still fork" "$?" 0
rt delete --force bomb
is "... delete --force ends it: 0" "$rc:$err" "0:"
wait_until 10 test ! -d "$cg"
is "... its cgroup is gone" "$([ -d "$cg" ] && echo left)" ""

# --- 5. pause and resume: the cgroup's freezer
config '["sh","-c","while :; do echo tick; sleep 0.2; done"]' '{"pids":{"limit":50}}'
create frz
rt start frz
sleep 1
pid=$(pids_of frz | head -n1)
cg=$(cgroup_of "${pid:-0}")
rt pause frz
is "pause: 0" "$rc:$err" "0:"
is "... state paused" "$(status_of frz)" paused
is "... cgroup.freeze is 1" "$(cat "$cg/cgroup.freeze" 2>&1)" 1
like "... cgroup.events says frozen" "$(cat "$cg/cgroup.events" 2>&1)" "frozen 1"
n1=$(wc -l <"$w/frz.out")
sleep 1.5
n2=$(wc -l <"$w/frz.out")
is "... the counter stands still while frozen" "$n2" "$n1"
ps_in_cgroup "ps of a paused container still lists its processes" "$(pids_of frz)" "$cg"
rt exec frz true
is "exec into a paused container: refused (1)" "$rc" 1
rt pause frz
is "pause again: refused (1)" "$rc" 1
rt resume frz
is "resume: 0" "$rc:$err" "0:"
is "... state running" "$(status_of frz)" running
is "... cgroup.freeze is 0" "$(cat "$cg/cgroup.freeze" 2>&1)" 0
sleep 1.5
between "... the counter goes on" "$(wc -l <"$w/frz.out")" $((n2 + 2)) 1000
rt pause frz
rt kill frz KILL
stopped() { [ "$(status_of "$1")" = stopped ]; }
wait_until 10 stopped frz
is "kill KILL of a paused container: it ends (stopped)" "$(status_of frz)" stopped
rt delete frz
wait_until 10 test ! -d "$cg"
is "... its cgroup is gone" "$([ -d "$cg" ] && echo left)" ""

# --- 6. cordon.cgroup=required where the controllers are: the limits, applied
config '["sh","-c","cat /sys/fs/cgroup/memory.max /sys/fs/cgroup/pids.max"]' \
	"{\"memory\":{\"limit\":$((40 * mib))},\"pids\":{\"limit\":30}}" '{"cordon.cgroup":"required"}'
rt run -b "$b" req
is "cordon.cgroup=required with the controllers: runs with the limits" "$rc:$(flat "$out")" "0:$((40 * mib)) 30"
rt delete req

# --- nothing left
is "no container is left" "$(as_caller "$RT" --root "$root" list -q 2>&1)" ""
is "no cordon-* cgroup with processes is left under $parent" \
	"$(find "$parent" -type d -name 'cordon-*' 2>/dev/null | grep -E "/cordon-$hex32\$" | while read -r d; do cat "$d/cgroup.procs"; done)" ""
done_testing
