#!/usr/bin/env bash
# cgroup options on THIS host, whose cgroup2 has no controllers (hybrid hierarchy): defaults
# never fail and say what they could not apply; explicit limits fail before anything runs,
# unless best-effort, which applies rlimit fallbacks and records them; bad values are refused.
# The limits themselves are tested in a real cgroup v2 kernel: tests/vm/t-cgroup.sh.
. "$TAP_LIB"

w=$(mkwork)
o=$(mkwork) # cordon's outputs (report, audit, capture): never in the workdir
c() { cordon --workdir "$w" "$@"; }
root=""
[ "${CORDON_AS:-root}" = root ] && [ "$(id -u)" = 0 ] && root=1

# --- bad values: one line, 125, nothing runs
refuse() { # description expected-line-prefix args...
	local desc=$1 want=$2
	shift 2
	rm -f "$w/ran"
	c "$@" -- sh -c 'touch ran'
	is "$desc: 125" "$rc" 125
	like_glob "$desc: the message" "$err" "$(glob_quote "$want")*"
	[ ! -e "$w/ran" ] && pass "$desc: nothing ran" || fail "$desc: nothing ran"
}
refuse "--memory 0" "cordon: --memory: 0 bytes is too little" --memory 0
refuse "--memory abc" 'cordon: --memory: "abc" is not a size' --memory abc
refuse "--memory 10x" 'cordon: --memory: "10x" is not a size' --memory 10x
refuse "--cpus -1" 'cordon: --cpus: "-1" is not a number of CPUs' --cpus -1
refuse "--cpus 0" 'cordon: --cpus: "0": must be at least 0.01' --cpus 0
refuse "--cpus 0.005 (under the kernel's 1 ms quota)" 'cordon: --cpus: "0.005": must be at least 0.01' --cpus 0.005
refuse "--cpus abc" 'cordon: --cpus: "abc" is not a number of CPUs' --cpus abc
refuse "--cpus 5000" 'cordon: --cpus: "5000" is too many' --cpus 5000
refuse "--pids abc" 'cordon: --pids: "abc" is not a number of processes' --pids abc
refuse "--pids 0" 'cordon: --pids: must be at least 1' --pids 0
refuse "--pids -5" 'cordon: --pids: "-5" is not a number' --pids -5
refuse "--cgroup bogus" 'cordon: --cgroup: "bogus": expected auto, required, best-effort or off' --cgroup bogus
refuse "--cgroup-parent relative" 'cordon: --cgroup-parent: "rel/path": must be an absolute path' --cgroup-parent rel/path
refuse "--cgroup-parent missing" 'cordon: --cgroup-parent: /nonexistent: No such file' --cgroup-parent /nonexistent
refuse "--cgroup-parent not a cgroup" 'cordon: --cgroup-parent: /tmp is not a cgroup v2 directory' --cgroup-parent /tmp
refuse "--cgroup off with a limit" 'cordon: --memory: cannot apply the limit: --cgroup=off' --cgroup off --memory 1G

# --- this host has no memory, cpu or pids controller in cgroup2 (a systemd-booted host whose
# root cgroup has them runs the real limits instead: the VM tier tests them whole)
mnt=$(awk '$3 == "cgroup2" {print $2; exit}' /proc/mounts)
if [ -n "$root" ] && grep -qw memory "$mnt/cgroup.controllers" 2>/dev/null &&
	grep -qw pids "$mnt/cgroup.controllers" && grep -qw cpu "$mnt/cgroup.controllers"; then
	skip "the controller-less host's checks" "this host's cgroup2 has the memory, pids and cpu controllers"
	c --memory 256M --pids 20 --cpus 0.5 -- cat /sys/fs/cgroup/memory.max /sys/fs/cgroup/pids.max /sys/fs/cgroup/cpu.max
	is "with the controllers, the limits are applied" "$rc:$(tr '\n' ' ' <<<"$out")" "0:268435456 20 50000 100000 "
else
	# as root a cgroup is made, without controllers; unprivileged, nothing is delegated here
	if [ -n "$root" ]; then
		why_mem='memory.max: the memory controller is not available in cgroup v2 at *'
		why_pids='pids.max: the pids controller*'
		why_cpu='cpu.max: the cpu controller*'
	else
		why_mem='cgroup: no delegated cgroup v2 subtree: * is not writable by uid *'
		why_pids=$why_mem why_cpu=$why_mem
	fi
	c --report "$o/r.json" -- sh -c 'echo ran'
	is "defaults never fail where controllers are missing" "$rc:$out" "0:ran"
	r=$(cat "$o/r.json")
	like_glob "... and the report lists what was not applied" "$r" "*\"cgroup\":{\"mode\":\"auto\",*\"memory_max\":null*\"missing\":[\"$why_mem"
	like_glob "... the pids default too" "$r" "*\"missing\":[*$why_pids"
	if [ -n "$root" ]; then
		like_glob "... and no cgroup is made, which would limit nothing here" "$r" \
			"*\"cgroup\":{\"mode\":\"auto\",\"path\":null,*\"cgroup: none made: cgroup v2 at $(glob_quote "$mnt")/cordon has no memory, pids or cpu controller (--cgroup required makes one all the same)\"*"
		mine() { ls -d "$mnt"/cordon/cordon-* 2>/dev/null | sort; }
		before=$(mine)
		rm -f "$w/running"
		(exec_as_caller "$CORDON" --workdir "$w" -- sh -c 'touch running; sleep 30') &
		pid=$!
		for i in $(seq 100); do [ -e "$w/running" ] && break; sleep 0.05; done
		is "... none while it runs either" "$([ -e "$w/running" ] && echo running):$(comm -13 <(echo "$before") <(mine))" "running:"
		kill $pid
		wait $pid 2>/dev/null
	fi
	c -v -- true
	like_glob "-v says what could not be applied" "$err" "*cgroup: not applied: $why_mem"
	refuse "an explicit --memory without the controller" "cordon: --memory: cannot apply the limit: " --memory 1G
	like_glob "... naming the cause and the way out" "$err" "*${why_mem#*: }*--cgroup=best-effort*"
	refuse "an explicit --pids without the controller" "cordon: --pids: cannot apply the limit: " --pids 50
	refuse "an explicit --cpus without the controller" "cordon: --cpus: cannot apply the limit: " --cpus 1

	# --- best-effort: rlimit fallbacks where they mean something, recorded
	c --cgroup best-effort --memory 256M --report "$o/b.json" -- sh -c 'ulimit -v'
	is "best-effort --memory: RLIMIT_AS takes its place" "$rc:$out" "0:262144"
	like_glob "... and the report says so" "$(cat "$o/b.json")" '*"mode":"best-effort"*"fallbacks":["rlimit as=268435456"*'
	c --cgroup best-effort --cpus 0.5 --report "$o/b2.json" -- true
	is "best-effort --cpus: runs" "$rc" 0
	like_glob "... recording that cpu.max was not applied" "$(cat "$o/b2.json")" "*\"missing\":[*$why_cpu"
	c --cgroup best-effort --pids 20 -- bash -c 'ulimit -u'
	if [ -n "$root" ]; then
		is "best-effort --pids as root (a dedicated host uid): RLIMIT_NPROC" "$out" 20
	else
		isnt "best-effort --pids unprivileged: no RLIMIT_NPROC (it would count the caller's other processes)" "$out" 20
	fi
fi

# --- placement and clean-up (of a cgroup made: on a host without controllers, when required)
req=()
grep -qwE 'memory|pids|cpu' "$mnt/cordon/cgroup.controllers" 2>/dev/null || req=(--cgroup required)
if [ -n "$root" ]; then
	c "${req[@]}" --report "$o/p.json" -- sh -c 'grep "^0::" /proc/self/cgroup'
	is "inside, the sandbox's cgroup is the root of its cgroup namespace" "$out" "0::/"
	like_glob "as root, the sandbox's cgroup is under <cgroup2>/cordon" "$(cat "$o/p.json")" "*\"path\":\"$(glob_quote "$mnt")/cordon/cordon-*"
	# (other sandboxes may run on this machine meanwhile: only the new cgroup is this one's)
	before=$(ls -d "$mnt"/cordon/cordon-* 2>/dev/null)
	(exec_as_caller "$CORDON" --workdir "$w" "${req[@]}" -- sleep 30) &
	pid=$!
	mine=
	for i in $(seq 100); do
		mine=$(ls -d "$mnt"/cordon/cordon-* 2>/dev/null | grep -vxF -e "$before" -e '' | head -1)
		[ -n "$mine" ] && break
		sleep 0.05
	done
	[ -n "$mine" ] && pass "a running sandbox has its cgroup" || fail "a running sandbox has its cgroup"
	kill -9 $pid
	wait $pid 2>/dev/null
	sleep 1 # a cgroup younger than 0.5 s may be a neighbour's about to be used
	c "${req[@]}" -- true # the next run that makes a cgroup cleans up
	[ -n "$mine" ] && [ ! -e "$mine" ] && pass "the cgroup of a cordon killed with SIGKILL is removed by the next run" ||
		fail "the cgroup of a cordon killed with SIGKILL is removed by the next run"
	# (the runs' own cgroups, by their ids: other sandboxes may run on this machine meanwhile)
	ids=
	for i in $(seq 10); do
		c "${req[@]}" --report "$o/many.json" -- true
		ids+="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' "$o/many.json") "
	done
	left() { for id in $ids; do [ -e "$mnt/cordon/cordon-$id" ] && echo "$id"; done | wc -l; }
	# cordon exits while pid 1 still tears down its namespaces; a detached remover waits for
	# the cgroup to empty and removes it: allow it 2 s
	for i in $(seq 20); do
		[ "$(left)" = 0 ] && break
		sleep 0.1
	done
	is "no cgroup is left after many runs" "$(wc -w <<<"$ids"):$(left)" "10:0"

	# The remover (cgroup.c), which outlives cordon: it holds none of the caller's descriptors
	# (a pipe of the caller's kept open would hold the caller's reader), in a session of its
	# own. A cgroup the host makes below the sandbox's keeps its rmdir failing (EBUSY) for a
	# second, long enough to look at it: it is the process holding the sandbox's cgroup open.
	# (The sandbox's cgroup is found by its command's, named by a marker: other sandboxes may
	# run on this machine meanwhile.)
	marker="remover-test-$$-$RANDOM"
	rm -f "$w/go"
	(exec_as_caller "$CORDON" --workdir "$w" "${req[@]}" -- \
		sh -c "while [ ! -e go ]; do sleep 0.02; done; : $marker" >"$o/rm.out" 2>&1 3>"$o/rm.fd3") &
	pid=$!
	mine=
	for i in $(seq 100); do
		for p in $(pgrep -f -- "$marker"); do
			cg=$(sed -n 's/^0:://p' "/proc/$p/cgroup" 2>/dev/null)
			[[ "$cg" =~ /cordon/cordon-[0-9a-f]{32}$ ]] && mine=$mnt$cg
		done
		[ -n "$mine" ] && break
		sleep 0.05
	done
	[ -n "$mine" ] && mkdir "$mine/hold"
	touch "$w/go"
	wait $pid
	rem=
	for i in $(seq 50); do
		for p in $(pgrep -x cordon); do
			[ "$(ps -o stat= -p "$p" | cut -c1)" != Z ] &&
				ls -l "/proc/$p/fd" 2>/dev/null | grep -q -- "-> $mine\$" && rem=$p
		done
		[ -n "$rem" ] && break
		sleep 0.02
	done
	[ -n "$mine" ] && [ -n "$rem" ] && pass "the remover runs on while the sandbox's cgroup cannot be removed yet" ||
		fail "the remover runs on while the sandbox's cgroup cannot be removed yet ($mine)"
	# (while the cgroup is populated it also watches its cgroup.events: the cgroup's, too)
	fds=$(for f in /proc/"$rem"/fd/*; do readlink "$f"; done 2>/dev/null | grep -vxF "$mine/cgroup.events" |
		sort | uniq -c | awk '{print $1 "x " $2}' | paste -sd' ')
	is "... holding none of the caller's descriptors: /dev/null on 0-2, and the cgroup" "$fds" \
		"3x /dev/null 1x $mine"
	is "... in a session of its own" "$(ps -o sid= -p "${rem:-0}" | tr -d ' ')" "$rem"
	is "... in / (holding no file system of the caller's busy)" "$(readlink "/proc/${rem:-0}/cwd")" /
	[ -n "$mine" ] && rmdir "$mine/hold"
	for i in $(seq 600); do [ -e "$mine" ] || break; sleep 0.05; done # at most 30 s
	[ -n "$mine" ] && [ ! -e "$mine" ] && pass "... and it removes the cgroup once it can" ||
		fail "... and it removes the cgroup once it can"
	# ... and through the library, from a thread that is gone (its stack unmapped) by then:
	# tests/helpers/remover-test.c's results, renumbered into this script's
	if [ -x "${REMOVER_TEST:-}" ]; then
		while IFS= read -r line; do
			case $line in
			"ok "*) pass "remover-test: ${line#* - }" ;;
			"not ok "*) fail "remover-test: ${line#* - }" ;;
			"#"*) echo "$line" ;;
			esac
		done < <("$REMOVER_TEST" "$w" "$mnt/cordon" 2>&1)
	else
		fail "remover-test is built (tests/helpers/remover-test.c)"
	fi
	c --cgroup required -- true
	is "--cgroup required: a cgroup can be made here (without controllers)" "$rc" 0
	c --cgroup off --report "$o/o.json" -- true
	like "--cgroup off: no cgroup, and the report says so" "$(cat "$o/o.json")" '"cgroup":{"mode":"off","path":null'
else
	c --cgroup required -- true
	is "--cgroup required, unprivileged, nothing delegated: 125" "$rc" 125
	like_glob "... saying what to do" "$err" "cordon: --cgroup: required, but no delegated cgroup v2 subtree*Delegate=yes*--cgroup-parent*"
fi

done_testing
