#!/usr/bin/env bash
# cgroup v2 limits: --memory, --memory-swap, --cpus, --pids, --cgroup MODE, --cgroup-parent.
# Each sandbox gets its own cgroup cordon-<id> under the parent, with its limits, visible and
# read-only inside; everything in it dies at the end and the cgroup is removed, even after a
# launcher was SIGKILLed (the next run removes it); usage figures land in the report.
# Runs only inside tests/vm/run's VM (busybox, bash, setpriv, cordon, probe; no python3, no jq,
# no pgrep: the report is read with sed, processes are found in /proc).
# shellcheck source-path=SCRIPTDIR source=../lib/tap.sh
. "$TAP_LIB"
shopt -s extglob # like_glob PATTERNs with @(a|b)

CG=/sys/fs/cgroup
w=$(mkwork) # the workdir
r=$(mkwork) # the reports' directory, writable by the caller
hex32='[0-9a-f]{32}'

# The parent the functional tests use: root's default (/sys/fs/cgroup/cordon, created by cordon),
# the user's delegated cgroup given explicitly (the user's default placement has its own section).
# $tree is where sandbox cgroups of this run can appear at all.
if is_user_mode; then
	parent=$CORDON_VM_USER_CGROUP
	P=(--cgroup-parent "$parent")
	tree=$CORDON_VM_USER_CGROUP
else
	parent=$CG/cordon
	P=()
	tree=$CG
fi
c() { cordon --workdir "$w" "${P[@]}" "$@"; }

# --- helpers

# sandbox_cgroups: every cordon-<32 hex> cgroup under $tree, sorted
sandbox_cgroups() {
	find "$tree" -type d -name 'cordon-*' 2>/dev/null | grep -E "/cordon-$hex32\$" | sort
}
sandbox_cgroups >"$TEST_TMP/baseline" # left by earlier scripts: not this script's business
# new_cgroups: the sandbox cgroups that were not there when this script started
new_cgroups() {
	sandbox_cgroups | awk -v b="$TEST_TMP/baseline" 'BEGIN { while ((getline l <b) > 0) old[l] = 1 } !($0 in old)' 
}
# no_new_cgroups: true once no new sandbox cgroup exists (up to 5 s: TCG is slow)
no_new_cgroups() {
	local i
	for i in $(seq 50); do
		[ -z "$(new_cgroups)" ] && return 0
		sleep 0.1
	done
	return 1
}
# cgroups_gone DESC: assert no new sandbox cgroup is left: cordon exits while pid 1 still
# tears down its namespaces and leaves the rmdir to a detached remover, so allow it 2 s
cgroups_gone() {
	local i
	for i in $(seq 20); do no_new_cgroups && break; sleep 0.1; done
	if no_new_cgroups; then pass "$1"; else
		fail "$1"
		diag "left: $(new_cgroups | tr '\n' ' ')"
	fi
}
# procs_in_cgroups: the pids in any cordon-* cgroup under $tree
procs_in_cgroups() {
	local d
	find "$tree" -type d -name 'cordon-*' 2>/dev/null | while read -r d; do
		cat "$d/cgroup.procs" 2>/dev/null
	done
}

# marker_pids MARKER: pids of the processes running "sleep MARKER" (no pgrep in the VM)
marker_pids() {
	local p args
	for p in /proc/[0-9]*; do
		mapfile -d '' -t args <"$p/cmdline" 2>/dev/null || continue
		[ "${#args[@]}" = 2 ] && [ "${args[0]##*/}" = sleep ] && [ "${args[1]}" = "$1" ] && echo "${p#/proc/}"
	done
}
# gone MARKER: no "sleep MARKER" runs within 5 s
gone() {
	local i
	for i in $(seq 50); do
		[ -z "$(marker_pids "$1")" ] && return 0
		sleep 0.1
	done
	return 1
}
kill_marker() { local p; for p in $(marker_pids "$1"); do kill -9 "$p" 2>/dev/null; done; }
new_marker() { echo "$((100000 + RANDOM))"; } # sleep MARKER: seconds, long enough

# wait_for FILE: up to 20 s (several cordons starting at once under TCG take a while)
wait_for() { wait_until 20 test -e "$1"; }

# start_bg NAME ARGS...: cordon in the background as the caller; $bg is its pid (exec_as_caller:
# cordon itself), stdout and stderr in $TEST_TMP/NAME.out and .err
start_bg() {
	local name=$1
	shift
	(exec_as_caller "$CORDON" --ro-bind "$PROBE_DIR" --workdir "$w" "$@" \
		>"$TEST_TMP/$name.out" 2>"$TEST_TMP/$name.err") &
	bg=$!
}
# held NAME: set H to a command that says it is running (touches $w/NAME.ready) and runs until
# $w/NAME.go exists
held() { H=(sh -c 'touch "$0.ready"; while [ ! -e "$0.go" ]; do sleep 0.1; done' "$w/$1"); }

# rep FILE: load a report: $j the whole JSON, $jc its applied.cgroup object
rep() {
	j=$(cat "$1" 2>/dev/null)
	jc=$(printf '%s\n' "$j" | sed -nE 's/.*"cgroup":(\{[^{}]*\}|null).*/\1/p')
}
# jv KEY [JSON]: the raw value of "KEY": in JSON (default $j): 12, null, "text", [...]
jv() {
	printf '%s\n' "${2-$j}" | sed -nE 's/.*"'"$1"'":("[^"]*"|\[[^]]*\]|[^,}]*).*/\1/p'
}
cv() { jv "$1" "$jc"; } # the same in applied.cgroup

flat() { printf '%s' "$1" | tr '\n' ' '; } # the lines of $1 on one line
isnum() { [[ $1 =~ ^[0-9]+$ ]]; }
# path_ok DESC PATH PARENT ID: PATH is PARENT/cordon-ID with a 32-hex ID
path_ok() {
	if [[ $2 == "\"$3/cordon-$4\"" && $4 =~ ^$hex32$ ]]; then pass "$1"; else
		fail "$1"
		diag "expected: \"$3/cordon-<id>\" with the report's 32-hex id (id: ${4:-none})"
		diag "got:      ${2:-(nothing)}"
	fi
}
report_id() { jv id | tr -d '"'; }
# rmdir_cgroup DIR: remove a cgroup of the test's once its last process is gone
rmdir_cgroup() {
	local i
	for i in $(seq 30); do
		rmdir "$1" 2>/dev/null && return 0
		[ -d "$1" ] || return 0
		sleep 0.1
	done
	diag "cannot remove $1"
}

# the kernel's files this script relies on (diagnostics only)
diag "cgroup files: $(cd "$CG/tests.scope" && ls -d memory.peak memory.swap.max pids.peak cpu.stat memory.events cgroup.kill 2>&1 | tr '\n' ' ')"
[ -s "$TEST_TMP/baseline" ] && diag "sandbox cgroups left before this script: $(tr '\n' ' ' <"$TEST_TMP/baseline")"

# --- 8. bad values: one line "cordon: --OPTION: ...", exit 125, nothing runs
# bad DESC OPTION ARGS...: cordon ARGS... touch MARKER is rejected that way
marker=$w/started
bad() {
	local desc=$1 opt=$2
	shift 2
	rm -f "$marker"
	cordon_bare --workdir "$w" "$@" -- touch "$marker"
	if [ "$rc" = 125 ] && [[ $err == "cordon: $opt: "* ]] && [[ $err != *$'\n'* ]] && [ -z "$out" ] &&
		[ ! -e "$marker" ]; then
		pass "$desc"
	else
		fail "$desc"
		diag "expected: rc=125, one line 'cordon: $opt: ...', nothing run"
		diag "got:      rc=$rc started=$([ -e "$marker" ] && echo yes || echo no) stdout=$out"
		diag "stderr:   $err"
	fi
}
bad "--memory 0 is rejected" --memory --memory 0
bad "--memory abc is rejected" --memory --memory abc
bad "--memory-swap abc is rejected" --memory-swap --memory-swap abc
bad "--cpus -1 is rejected" --cpus --cpus -1
bad "--cpus 0 is rejected" --cpus --cpus 0
bad "--cpus abc is rejected" --cpus --cpus abc
bad "--pids abc is rejected" --pids --pids abc
bad "--pids 0 is rejected" --pids --pids 0
bad "--cgroup bogus is rejected" --cgroup --cgroup bogus
bad "--cgroup-parent relative/path is rejected" --cgroup-parent --cgroup-parent relative/path
bad "--cgroup-parent /nonexistent is rejected" --cgroup-parent --cgroup-parent /nonexistent
cgroups_gone "no sandbox cgroup after the rejected runs"

# --- 10. the limits are visible inside, and read-only there
lim=/sys/fs/cgroup
c -- cat $lim/memory.max $lim/memory.swap.max $lim/memory.oom.group $lim/pids.max
is "defaults inside: memory.max 4G, swap.max 0, oom.group 1, pids.max 1024" \
	"$rc:$(flat "$out")" "0:4294967296 0 1 1024"
c -- sh -c "cat $lim/cpu.max 2>/dev/null || echo no cpu.max"
like_glob "... no cpu limit (cpu.max is max, or the cpu controller is not enabled)" "$rc:$out" "0:@(max 100000|no cpu.max)"
c --memory 48M --memory-swap 16M --pids 77 --cpus 0.5 -- \
	cat $lim/memory.max $lim/memory.swap.max $lim/pids.max $lim/cpu.max
is "--memory 48M --memory-swap 16M --pids 77 --cpus 0.5 inside" \
	"$rc:$(flat "$out")" "0:50331648 16777216 77 50000 100000"
c --cpus 1.5 -- cat $lim/cpu.max
is "--cpus 1.5: cpu.max 150000 100000" "$rc:$out" "0:150000 100000"
c --memory unlimited --pids unlimited --report "$r/unl.json" -- cat $lim/memory.max $lim/pids.max
rep "$r/unl.json"
is "--memory unlimited --pids unlimited: max inside" "$rc:$(flat "$out")" "0:max max"
is "... and null in the report" "$(cv memory_max):$(cv pids_max)" "null:null"
c --memory 50000000 --report "$r/round.json" -- cat $lim/memory.max
rep "$r/round.json"
is "--memory 50000000: the kernel keeps whole pages, and the report says what it kept" \
	"$rc:$out:$(cv memory_max)" "0:49999872:49999872"
is "... memory.oom.group read back as 1: oom_group true" "$(cv oom_group)" "true"
c --memory 48M -- sh -c "echo max > $lim/memory.max && echo written; echo max > $lim/pids.max && echo written;
	mkdir $lim/sub && echo made; echo \$\$ > $lim/cgroup.procs && echo moved; cat $lim/memory.max"
is "the sandbox cannot raise its limits, make sub-cgroups, or move" "$(flat "$out")" "50331648"
cgroups_gone "no sandbox cgroup left after the runs that read their limits"

# --- while a sandbox runs: its cgroup on the host, with the limits
rm -f "$w"/hold.*
held hold
start_bg hold "${P[@]}" --memory 40M --pids 50 --cpus 0.25 --report "$r/hold.json" -- "${H[@]}"
if wait_for "$w/hold.ready"; then
	now=$(new_cgroups)
	is "a running sandbox has one cgroup of its own under the parent" "$(echo "$now" | grep -c . | tr -d ' '):${now%/*}" "1:$parent"
	d=$(echo "$now" | head -n1)
	is "... with its limits: memory.max, swap.max, oom.group, pids.max, cpu.max" \
		"$(cat "$d/memory.max" "$d/memory.swap.max" "$d/memory.oom.group" "$d/pids.max" "$d/cpu.max" 2>&1 | tr '\n' ' ')" \
		"41943040 0 1 50 25000 100000 "
	like_glob "... and the sandbox's processes in it" "$(cat "$d/cgroup.procs" 2>/dev/null | tr '\n' ' ')" "[0-9]* [0-9]*"
else
	fail "a running sandbox has one cgroup of its own under the parent (never ready: $(cat "$TEST_TMP/hold.err"))"
	skip "... with its limits: memory.max, swap.max, oom.group, pids.max, cpu.max" "not running"
	skip "... and the sandbox's processes in it" "not running"
	d=
fi
touch "$w/hold.go"
wait $bg
rc=$?
rep "$r/hold.json"
is "... it ends normally" "$rc" 0
path_ok "the report names that cgroup: parent/cordon-<id>" "$(cv path)" "$parent" "$(report_id)"
[ -n "$d" ] && is "... the one seen on the host" "$(cv path)" "\"$d\""
is "the report's applied limits" \
	"$(cv memory_max) $(cv swap_max) $(cv cpu_max) $(cv pids_max) $(cv mode) $(cv missing)" \
	'41943040 0 "25000 100000" 50 "auto" []'
cgroups_gone "the cgroup is removed at the end"

# --- 1. a memory hog is killed by the memory limit, and nothing else is
sleep 300 &
bystander=$!
hog='BEGIN { s = "x"; for (i = 0; i < 27; i++) s = s s; print length(s) }' # 128M, doubling
c --memory 32M --timeout 60s --report "$r/oom.json" -- awk "$hog"
rep "$r/oom.json"
is "a memory hog under --memory 32M is killed: exit 137" "$rc" 137
is "... the report says oom, exit_code 137" "$(jv outcome) $(jv exit_code)" '"oom" 137'
between "... oom_kills >= 1" "$(jv oom_kills)" 1 1000000
between "... memory_peak_bytes is near the limit, not above it" "$(jv memory_peak_bytes)" 16777216 34603008
is "... memory_max and swap_max (default 0) in the report" "$(cv memory_max) $(cv swap_max)" "33554432 0"
kill -0 $bystander 2>/dev/null && pass "... a process outside the sandbox survives" ||
	fail "... a process outside the sandbox survives"
kill $bystander 2>/dev/null
wait $bystander 2>/dev/null
c -- true
is "... and the next sandbox runs fine" "$rc:$err" "0:"
cgroups_gone "... no sandbox cgroup is left"

# --- 2. a fork bomb stops at the pids limit; the host can still fork
# the guard: the bomb goes off only if pids.max inside really is 20 (else exit 3)
bomb='[ "$(cat /sys/fs/cgroup/pids.max)" = 20 ] || exit 3; bomb() { bomb | bomb & }; bomb; wait; sleep 30'
t0=${EPOCHREALTIME/./}
c --pids 20 --timeout 10s --kill-after 1s --report "$r/bomb.json" -- sh -c "$bomb"
ms=$(((${EPOCHREALTIME/./} - t0) / 1000))
rep "$r/bomb.json"
if [ "$rc" != 125 ] && [ "$rc" != 3 ] && [ "$(jv outcome)" != null ] && [ -n "$(jv outcome)" ]; then
	pass "a fork bomb under --pids 20 --timeout 10s runs (cordon took it, pids.max inside was 20)"
else
	fail "a fork bomb under --pids 20 --timeout 10s runs (cordon took it, pids.max inside was 20)"
	diag "rc=$rc (125: cordon failed, 3: pids.max inside was not 20) outcome=$(jv outcome) stderr: $err"
fi
between "... and is over within the timeout and kill-after, with slack (ms)" "$ms" 0 30000
pp=$(jv pids_peak)
if [ "$pp" = null ]; then
	skip "... pids_peak never above 20" "pids_peak is null (no pids.peak in this kernel)"
else
	between "... pids_peak reached the limit and never passed it" "$pp" 10 20
fi
is "... pids_max in the report" "$(cv pids_max)" 20
as_caller sh -c 'for i in 1 2 3 4 5 6 7 8 9 10; do /bin/true || exit 1; done'
is "after it the caller can still fork (true 10 times)" "$?" 0
for i in 1 2 3 4 5 6 7 8 9 10; do /bin/true || break; done
is "... and so can the test" "$?" 0
cgroups_gone "... the bomb's cgroup is gone"
is "... no process is left in any cordon-* cgroup" "$(procs_in_cgroups | tr '\n' ' ')" ""

# --- 3. --cpus 0.5 halves a spinner; without it a spinner gets a whole CPU
# cpu_pct FILE: 100 * (cpu_user_us + cpu_system_us) / wall_us of a report
cpu_pct() {
	local u s t
	rep "$1"
	u=$(jv cpu_user_us) s=$(jv cpu_system_us) t=$(jv wall_us)
	if isnum "$u" && isnum "$s" && isnum "$t" && [ "$t" -gt 0 ]; then
		echo $(((u + s) * 100 / t))
	else
		echo "none (cpu_user_us=$u cpu_system_us=$s wall_us=$t)"
	fi
}
c --cpus 0.5 --timeout 3s --report "$r/cpu-half.json" -- "$PROBE" spin
is "a spinner under --cpus 0.5 runs until the timeout" "$rc" 124
between "... and uses 20%-80% of a CPU (half, with TCG's noise)" "$(cpu_pct "$r/cpu-half.json")" 20 80
rep "$r/cpu-half.json"
is "... cpu_max in the report" "$(cv cpu_max)" '"50000 100000"'
c --timeout 3s --report "$r/cpu-full.json" -- "$PROBE" spin
is "a spinner without --cpus runs until the timeout" "$rc" 124
between "... and uses more than 60% of a CPU" "$(cpu_pct "$r/cpu-full.json")" 60 1000
rep "$r/cpu-full.json"
is "... no cpu limit in the report" "$(cv cpu_max)" null
cgroups_gone "... no sandbox cgroup is left"

# --- 4. a double-forked daemon dies at the end of the run, and at the timeout
m=$(new_marker)
c -- "$PROBE" daemon $m
is "a double-forked daemon is started" "$rc" 0
gone $m && pass "... and dies when the command exits" || fail "... and dies when the command exits"
kill_marker $m
cgroups_gone "... its cgroup is removed"
m=$(new_marker)
c --timeout 2s --kill-after 1s -- sh -c "\"$PROBE\" daemon $m; exec sleep 60"
is "a daemon's command that runs past --timeout: 124" "$rc" 124
gone $m && pass "... the daemon dies at the timeout" || fail "... the daemon dies at the timeout"
kill_marker $m
is "... no process is left in any cordon-* cgroup" "$(procs_in_cgroups | tr '\n' ' ')" ""
cgroups_gone "... and no sandbox cgroup"

# --- 5. usage figures
c --report "$r/use.json" -- dd if=/dev/zero of=/dev/null bs=20M count=1
rep "$r/use.json"
is "a command that touches 20 MB (dd bs=20M) runs" "$rc" 0
between "... memory_peak_bytes over 10 MB (and not absurd)" "$(jv memory_peak_bytes)" 10485760 1073741824
is "... oom_kills 0, outcome exited" "$(jv oom_kills) $(jv outcome)" '0 "exited"'
pp=$(jv pids_peak)
[ "$pp" = null ] && pass "... pids_peak is a number or null (null)" ||
	between "... pids_peak is a number or null" "$pp" 1 1024
c --timeout 1s --report "$r/spin.json" -- "$PROBE" spin
rep "$r/spin.json"
between "a spinner: cpu_user_us > 0" "$(jv cpu_user_us)" 1 100000000
between "... cpu_system_us is a number" "$(jv cpu_system_us)" 0 100000000

# --- 6. no cgroup is left after many runs, even after a SIGKILLed launcher
c -- true # the root's default parent exists from here on
ndirs() { find "$parent" -type d 2>/dev/null | wc -l | tr -d ' '; }
before=$(ndirs)
fails=0
for i in $(seq 20); do
	c -- true
	[ "$rc" = 0 ] || fails=$((fails + 1))
done
is "20 sequential runs succeed" "$fails" 0
cgroups_gone "... and leave no sandbox cgroup"
is "... nor any other cgroup under the parent" "$(ndirs)" "$before"

m=$(new_marker)
start_bg killed "${P[@]}" -- sleep $m
for i in $(seq 100); do [ -n "$(marker_pids $m)" ] && break; sleep 0.1; done
stale=$(new_cgroups)
is "a sandbox of a launcher about to be SIGKILLed has its cgroup" "$(echo "$stale" | grep -c . | tr -d ' ')" 1
kill -9 $bg
wait $bg 2>/dev/null
gone $m && pass "... the launcher SIGKILLed: the sandbox dies (PDEATHSIG)" ||
	fail "... the launcher SIGKILLed: the sandbox dies (PDEATHSIG)"
kill_marker $m
sleep 1
c -- true
is "the next run succeeds" "$rc:$err" "0:"
cgroups_gone "... and removes the stale sandbox cgroup"
is "... no cordon-* cgroup is left under the parent" \
	"$(find "$parent" -mindepth 1 -maxdepth 1 -type d -name 'cordon-*' | tr '\n' ' ')" ""

# --- 7. parallel sandboxes each get their own limits
rm -f "$w"/par*
bgs=()
for i in 1 2 3; do
	start_bg par$i "${P[@]}" --pids $((20 + i)) --timeout 60s --report "$r/par$i.json" -- \
		sh -c 'cat /sys/fs/cgroup/pids.max; touch "$0.ready"; while [ ! -e "$0.go" ]; do sleep 0.1; done' "$w/par$i"
	bgs+=("$bg")
done
ready=0
for i in 1 2 3; do wait_for "$w/par$i.ready" && ready=$((ready + 1)); done
is "3 parallel sandboxes are running" "$ready" 3
now=$(new_cgroups)
is "... in 3 cgroups of their own" "$(echo "$now" | grep -c . | tr -d ' ')" 3
is "... with their own pids.max, seen on the host" \
	"$(for d in $now; do cat "$d/pids.max"; done 2>&1 | sort | tr '\n' ' ')" "21 22 23 "
for i in 1 2 3; do touch "$w/par$i.go"; done
st=
for b in "${bgs[@]}"; do wait "$b"; st+="$? "; done
err=$(for i in 1 2 3; do sed "s/^/par$i: /" "$TEST_TMP/par$i.err"; done)
is "... they all end normally" "$st" "0 0 0 "
is "... each read its own pids.max inside" \
	"$(cat "$TEST_TMP/par1.out" "$TEST_TMP/par2.out" "$TEST_TMP/par3.out" | tr '\n' ' ')" "21 22 23 "
paths=
for i in 1 2 3; do
	rep "$r/par$i.json"
	is "... report $i: pids_max $((20 + i))" "$(cv pids_max)" $((20 + i))
	paths+="$(cv path)"$'\n'
done
is "... 3 different cgroup paths" "$(printf '%s' "$paths" | grep . | sort -u | wc -l | tr -d ' ')" 3
cgroups_gone "... and all 3 are removed"

# --- 9. --cgroup=off creates no cgroup; --cgroup=required works here
rm -f "$w"/off.*
held off
start_bg off "${P[@]}" --cgroup=off --report "$r/off.json" -- "${H[@]}"
if wait_for "$w/off.ready"; then
	is "--cgroup=off: no sandbox cgroup while it runs" "$(new_cgroups | tr '\n' ' ')" ""
else
	fail "--cgroup=off: no sandbox cgroup while it runs (never ready: $(cat "$TEST_TMP/off.err"))"
fi
touch "$w/off.go"
wait $bg
rc=$?
rep "$r/off.json"
is "... it runs" "$rc" 0
is "... report: mode off, no path" "$(cv mode) $(cv path)" '"off" null'
c --cgroup required --report "$r/req.json" -- cat /sys/fs/cgroup/pids.max
rep "$r/req.json"
is "--cgroup required works in the VM" "$rc:$out" "0:1024"
is "... report: mode required, nothing missing" "$(cv mode) $(cv missing)" '"required" []'
path_ok "... and its cgroup" "$(cv path)" "$parent" "$(report_id)"
c --cgroup best-effort --memory 64M -- cat /sys/fs/cgroup/memory.max
is "--cgroup best-effort applies what it can (all of it here)" "$rc:$out" "0:67108864"
cgroups_gone "... no sandbox cgroup is left"

# --- explicit limits that cannot be applied: a parent without the controllers (its own parent
# enables none for it), and a parent with a process in it (no internal processes: its children
# cannot get domain controllers such as memory)
# user_cgroup DIR: make DIR, the user's in user mode (as systemd delegates)
user_cgroup() {
	mkdir "$1" || return 1
	if is_user_mode; then chown "$TEST_USER:" "$1" "$1/cgroup.procs" "$1/cgroup.subtree_control" "$1/cgroup.threads"; fi
}
outer=$tree/cgtest-outer-$$
nc=$outer/inner
user_cgroup "$outer" && user_cgroup "$nc"
diag "controllers available in $nc: '$(cat "$nc/cgroup.controllers")'"
PN=(--workdir "$w" --cgroup-parent "$nc")
rm -f "$marker"
cordon "${PN[@]}" --memory 32M -- touch "$marker"
like_glob "--memory that cannot be applied: 125, naming memory" "$rc:$err" "125:cordon: --memory: *memory*"
if [[ $err != *$'\n'* && ! -e $marker ]]; then pass "... one line, nothing ran"; else fail "... one line, nothing ran"; fi
cordon "${PN[@]}" --pids 50 -- true
like_glob "--pids that cannot be applied: 125, naming pids" "$rc:$err" "125:cordon: --pids: *pids*"
cordon "${PN[@]}" --cpus 0.5 -- true
like_glob "--cpus that cannot be applied: 125, naming cpu" "$rc:$err" "125:cordon: --cpus: *cpu*"
cordon "${PN[@]}" --report "$r/nc.json" -- true
rep "$r/nc.json"
is "... the defaults never make cordon fail (auto)" "$rc:$err" "0:"
like_glob "... the report lists memory and pids as missing" "$(cv missing)" '*"memory*"pids*'
cordon "${PN[@]}" --cgroup best-effort --memory 32M --report "$r/ncb.json" -- true
rep "$r/ncb.json"
is "--cgroup best-effort: the same --memory runs" "$rc:$err" "0:"
like "... and the report lists memory as missing" "$(cv missing)" '"memory'
cgroups_gone "... no sandbox cgroup is left below that parent"
rmdir_cgroup "$nc"
rmdir_cgroup "$outer"

busy=$tree/cgtest-busy-$$
user_cgroup "$busy"
(echo "$BASHPID" >"$busy/cgroup.procs" && exec sleep 600) &
resident=$!
wait_until 5 test -s "$busy/cgroup.procs"
PB=(--workdir "$w" --cgroup-parent "$busy")
cordon "${PB[@]}" --memory 32M -- true
like_glob "--memory under a parent with a process in it: 125, naming memory" "$rc:$err" "125:cordon: --memory: *memory*"
cordon "${PB[@]}" -- true
is "... the defaults still never make cordon fail there (auto)" "$rc:$err" "0:"
cordon "${PB[@]}" -- true
is "... nor the next time" "$rc:$err" "0:"
is "... and the parent is left a plain domain cgroup" "$(cat "$busy/cgroup.type")" domain
kill $resident 2>/dev/null
wait $resident 2>/dev/null
cgroups_gone "... no sandbox cgroup is left below it"
rmdir_cgroup "$busy"

# --- default placement as the user (its own cgroup, NAME.scope, is the user's); root's default,
# and a custom parent, as root
if is_user_mode; then
	here=$(sed -n 's/^0:://p' /proc/self/cgroup)
	c0=$CG${here%/cordon-supervisors}
	cordon --workdir "$w" --report "$r/def.json" -- cat /sys/fs/cgroup/pids.max /sys/fs/cgroup/memory.max
	rep "$r/def.json"
	is "default placement as the user: the limits apply" "$rc:$(flat "$out")" "0:1024 4294967296"
	p=$(cv path)
	if [[ $p =~ ^\""$c0"/(.+/)?cordon-"$(report_id)"\"$ ]]; then pass "... in a cgroup below its own ($c0)"; else
		fail "... in a cgroup below its own ($c0)"
		diag "got: $p"
	fi
	is "... nothing missing" "$(cv missing)" "[]"
	is "... this shell, which shared that cgroup, now sits in its leaf cordon-supervisors" \
		"$CG$(sed -n 's/^0:://p' /proc/self/cgroup)" "$c0/cordon-supervisors"
	cgroups_gone "... and no sandbox cgroup is left"

	# a cgroup that is not the user's: no cgroup in auto mode, 125 when required
	f=$CG/cgtest-foreign-$$
	mkdir "$f"
	in_foreign() { out=$( (echo "$BASHPID" >"$f/cgroup.procs" && exec_as_caller "$CORDON" --workdir "$w" "$@") 2>"$TEST_TMP/stderr"); rc=$?; err=$(cat "$TEST_TMP/stderr"); }
	in_foreign --report "$r/for.json" -- true
	rep "$r/for.json"
	is "run from a cgroup not the user's: auto still runs" "$rc:$err" "0:"
	is "... without a cgroup" "$(cv path)" null
	in_foreign --cgroup required -- true
	like_glob "... --cgroup required fails with 125" "$rc:$err" "125:cordon: *"
	in_foreign --memory 32M -- true
	like_glob "... an explicit --memory fails with 125" "$rc:$err" "125:cordon: --memory: *"
	rmdir_cgroup "$f"
	skip "root's default parent /sys/fs/cgroup/cordon" "as root only"
	skip "--cgroup-parent /sys/fs/cgroup/custom-parent" "as root only"
else
	cordon --workdir "$w" --report "$r/def.json" -- true
	rep "$r/def.json"
	path_ok "root's default parent /sys/fs/cgroup/cordon" "$(cv path)" "$CG/cordon" "$(report_id)"
	cp=$CG/custom-parent
	mkdir -p "$cp" && for ctl in memory cpu pids; do echo "+$ctl" >"$cp/cgroup.subtree_control"; done
	cordon --workdir "$w" --cgroup-parent "$cp" --memory 40M --report "$r/cp.json" -- cat /sys/fs/cgroup/memory.max
	rep "$r/cp.json"
	is "--cgroup-parent /sys/fs/cgroup/custom-parent: the limit applies" "$rc:$out" "0:41943040"
	path_ok "... the cgroup is below it" "$(cv path)" "$cp" "$(report_id)"
	is "... and removed" "$(find "$cp" -mindepth 1 -type d | tr '\n' ' ')" ""
	rmdir_cgroup "$cp"
	skip "default placement as the user" "as the user only"
fi
done_testing
