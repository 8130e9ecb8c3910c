#!/usr/bin/env bash
# The supervisor under valgrind: no leak, no invalid access, on the paths valgrind can run.
# Valgrind 3.19 (Debian 12) does not know the new mount API (open_tree, fsopen, move_mount) nor
# pidfd_send_signal, so a sandbox cannot come up under it: the paths covered are option
# parsing, validation, and the failure and clean-up paths after clone(). The full run is covered
# for leaks by LeakSanitizer in the ASan build (.ci/run).
. "$TAP_LIB"

if ! command -v valgrind >/dev/null; then
	skip "valgrind: supervisor clean" "valgrind not installed (apt-get install valgrind)"
	done_testing
	exit
fi
if ldd "$CORDON" 2>/dev/null | grep -q libasan; then
	skip "valgrind: supervisor clean" "a sanitizer build: valgrind cannot run it (ASan checks it instead)"
	done_testing
	exit
fi
w=$(mkwork)
o=$(mkwork) # cordon's outputs (report, audit, capture): never in the workdir
check() { # description expected-rc args...
	local desc=$1 want=$2
	shift 2
	out=$(cd "$w" && as_caller valgrind -q --leak-check=full --show-leak-kinds=definite,indirect,possible \
		--errors-for-leak-kinds=definite,indirect,possible --error-exitcode=99 \
		"$CORDON" "$@" 2>&1 >/dev/null)
	rc=$?
	out=$(grep -v -e '^--[0-9]*--' -e '^cordon: ' <<<"$out")
	if [ "$rc" = "$want" ] && [ -z "$out" ]; then pass "$desc"; else
		fail "$desc"
		diag "rc=$rc (want $want)"
		diag "$out"
	fi
}
check "--help" 0 --help
check "--version" 0 --version
check "bad duration" 125 --timeout 5x -- true
check "bad size" 125 --tmpfs /x:lots -- true
check "every kind of option, then a conflict found at run time" 125 --workdir "$w" --ro-bind /etc:/e \
	--tmpfs /t:1M --hide /e/x --tmp-size 8M --env A=b --pass-env HOME --hostname h --rlimit nofile=64 \
	--nofile 32 --fsize 1M --cpu-time 5 --timeout 10 --kill-after 1 --uid 5 --gid 5 \
	--report "$o/r.json" --tmpfs /e -- true
check "bad --allow-net entry after good ones" 125 --allow-net example.com --allow-net '[::1]:80' --allow-net '*.com' -- true
check "allow-list entries of every kind, then a conflict at run time" 125 --allow-net example.com \
	--allow-net '*.example.org:8443' --allow-net 192.0.2.1 --allow-net 2001:db8::1 --net host -- true
check "rlimit above the hard limit" 125 --rlimit nofile=4294967295 -- true
check "report in a missing directory" 125 --report /nonexistent/r.json -- true
check "the sandbox fails to come up (valgrind lacks open_tree): clean-up after clone" 125 \
	--seccomp-policy none --report "$o/r2.json" -v -- true
[ -s "$o/r2.json" ] && pass "... and the report of the failure is written" || fail "... and the report of the failure is written"

# the policy parser and its errors (the compiler needs the seccomp syscall, which valgrind lacks:
# libseccomp refuses SCMP_ACT_KILL_PROCESS there, and cordon fails closed, which is checked too)
printf 'default allow\nerrno EPERM opne\n' >"$w/typo.policy"
printf 'default allow\ninclude groups\nerrno EPERM @mount\nallow mount(arg0 == 1)\n' >"$w/conflict.policy"
check "policy check: unknown syscall" 125 policy check "$w/typo.policy"
check "policy check: a conflict" 125 policy check "$w/conflict.policy"
check "policy check: a missing file" 125 policy check "$w/none.policy"
check "a run whose filter cannot be compiled fails closed" 125 --report "$o/r3.json" -- true

done_testing
