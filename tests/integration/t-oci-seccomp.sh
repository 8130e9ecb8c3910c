#!/usr/bin/env bash
# tests/run: alone (podman: one engine suite at a time)
# linux.seccomp through real cordon-runtime runs (docs/oci.md "linux"): the config's profile,
# compiled with libseccomp, is installed in the container's process and in every exec, beside
# cordon's own filter, which still holds under a profile that allows everything; not in cordon's
# agent (a profile denying what the agent needs leaves it working), which the container's
# processes cannot take over. ERRNO with errnoRet, an allow-list (podman's own default profile,
# as podman writes it into config.json), argument conditions, KILL (SIGSYS: 159), an unknown
# syscall name skipped with a log line, bad profiles refused (one line, 125, nothing started),
# and podman's --security-opt seccomp=FILE.
. "$TAP_LIB"
. "$(dirname "$0")/../oci/lib.sh" # oci_rootfs, the podman harness

RT=$CORDON_RUNTIME
[ -x /bin/busybox ] || { skip "cordon-runtime" "busybox-static is not installed"; done_testing; exit; }
[ -x "$RT" ] || { skip "cordon-runtime" "not built"; done_testing; exit; }

w=$(mkwork)
root=$w/root
b=$w/bundle
oci_rootfs "$b/rootfs"
(cd "$b" && "$RT" spec)
[ "${CORDON_AS:-root}" = user ] && chown -R "$TEST_USER:" "$b"
n=0

# config ARGV-JSON [PROFILE-JSON]: the bundle's process.args and linux.seccomp (none when "")
config() {
	python3 - "$b/config.json" "$1" "${2:-}" <<'EOF'
import json, sys
c = json.load(open(sys.argv[1]))
c["process"]["args"] = json.loads(sys.argv[2])
c["process"]["terminal"] = False
if sys.argv[3]:
    c["linux"]["seccomp"] = json.loads(sys.argv[3])
else:
    c["linux"].pop("seccomp", None)
json.dump(c, open(sys.argv[1], "w"))
EOF
}
# run: cordon-runtime run of the bundle in the foreground; $out, $err, $rc, the log in $w/log
run() {
	n=$((n + 1))
	: >"$w/log"
	[ "${CORDON_AS:-root}" = user ] && chown "$TEST_USER:" "$w/log"
	out=$(as_caller "$RT" --root "$root" --log "$w/log" run -b "$b" "s$n" 2>"$TEST_TMP/stderr")
	rc=$?
	err=$(cat "$TEST_TMP/stderr")
}
rt() {
	out=$(as_caller "$RT" --root "$root" "$@" 2>"$TEST_TMP/stderr")
	rc=$?
	err=$(cat "$TEST_TMP/stderr")
}
cleanup() {
	for id in $(as_caller "$RT" --root "$root" list -q 2>/dev/null); do
		as_caller "$RT" --root "$root" delete --force "$id" >/dev/null 2>&1
	done
}
trap cleanup EXIT

mkdir_errno='{"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["mkdir","mkdirat","no_such_call_x"],"action":"SCMP_ACT_ERRNO","errnoRet":1}]}'
try_mkdir='mkdir /tmp/d; echo mkdir=$?; touch /tmp/f; echo touch=$?'

# ---- ERRNO: mkdir fails with EPERM, touch works; without the profile both work
config "[\"sh\",\"-c\",\"$try_mkdir\"]"
run
is "no profile: mkdir and touch work" "$rc:$out" "0:mkdir=0
touch=0"
config "[\"sh\",\"-c\",\"$try_mkdir\"]" "$mkdir_errno"
run
is "mkdir -> SCMP_ACT_ERRNO errnoRet 1: mkdir fails, touch works" "$rc:$out" "0:mkdir=1
touch=0"
like "... with EPERM" "$err" "Operation not permitted"
like "an unknown syscall name: skipped, with a log line" "$(cat "$w/log")" \
	"linux.seccomp.syscalls: 1 names libseccomp does not know, skipped: no_such_call_x"
like "the log says the profile is installed" "$(cat "$w/log")" \
	"linux.seccomp: the profile (1 rules, default SCMP_ACT_ALLOW) installed"

# ---- an allow-list: podman's default profile, as podman writes it into config.json
podman_profile=$(python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["linux"]["seccomp"]))' \
	"$(dirname "$0")/../oci/fixtures/podman-root-netnone.json")
config '["sh","-c","echo hi; ls / >/dev/null && echo ls=$?; cat /etc/passwd | wc -l; id -u"]' "$podman_profile"
run
is "podman's default profile (defaultAction SCMP_ACT_ERRNO, an allow-list): busybox sh runs" \
	"$rc:$out" "0:hi
ls=0
1
0"
# the same, mkdir and mkdirat taken off its allow-list: its default (ERRNO 38, ENOSYS) answers them
no_mkdir=$(python3 -c '
import json, sys
p = json.loads(sys.argv[1])
for r in p["syscalls"]:
    r["names"] = [n for n in r["names"] if n not in ("mkdir", "mkdirat")]
print(json.dumps(p))' "$podman_profile")
config "[\"sh\",\"-c\",\"$try_mkdir\"]" "$no_mkdir"
run
is "... with mkdir off its list: the default, defaultErrnoRet 38, answers it" "$rc:$out:$err" \
	"0:mkdir=1
touch=0:mkdir: can't create directory '/tmp/d': Function not implemented"

# ---- an argument condition: kill(pid, SIGUSR1) denied, kill(pid, SIGUSR2) not
kill_args='{"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["kill"],"action":"SCMP_ACT_ERRNO","errnoRet":1,"args":[{"index":1,"value":10,"op":"SCMP_CMP_EQ"}]}]}'
config '["sh","-c","trap \"echo got1\" USR1; trap \"echo got2\" USR2; kill -USR1 $$; echo usr1=$?; kill -USR2 $$; echo usr2=$?"]' "$kill_args"
run
is "args[1] == SIGUSR1: that kill fails, SIGUSR2's is delivered" "$rc:$out" "0:usr1=1
got2
usr2=0"
config '["sh","-c","trap \"echo got1\" USR1; kill -USR1 $$; echo usr1=$?"]'
run
is "... without the profile, SIGUSR1 is delivered" "$rc:$out" "0:got1
usr1=0"

# personality(PER_LINUX32) (linux32) denied by arg0 == 8; personality(0xffffffff), the query, not
pers='{"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["personality"],"action":"SCMP_ACT_ERRNO","errnoRet":13,"args":[{"index":0,"value":8,"op":"SCMP_CMP_EQ"}]}]}'
config '["sh","-c","busybox linux32 true; echo linux32=$?; busybox linux64 true; echo linux64=$?"]' "$pers"
run
is "personality with args[0] == 8: linux32 fails, linux64 (personality 0) works" "$rc:$out" "0:linux32=1
linux64=0"
is "... with the profile's errnoRet (13), not cordon's own EPERM" "$err" \
	"linux32: personality(0x8): Permission denied"
# (cordon's "default" policy denies that personality itself: the newest filter's errno wins a tie)
config '["sh","-c","busybox linux32 true; echo linux32=$?"]'
run
is "... without the profile: cordon's own filter's EPERM" "$rc:$out:$err" \
	"0:linux32=1:linux32: personality(0x8): Operation not permitted"

# ---- KILL: the process dies of SIGSYS (128 + 31)
config '["true"]' '{"defaultAction":"SCMP_ACT_KILL"}'
run
is "defaultAction SCMP_ACT_KILL: the process dies of SIGSYS (159)" "$rc" 159
config '["mkdir","/tmp/k"]' '{"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["mkdir","mkdirat"],"action":"SCMP_ACT_KILL_PROCESS"}]}'
run
is "mkdir -> SCMP_ACT_KILL_PROCESS: mkdir dies of SIGSYS (159)" "$rc" 159

# ---- the agent is not under it: a profile denying its socket calls leaves the container working
config '["sh","-c","echo out; exit 3"]' '{"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["sendmsg","recvmsg","poll","ppoll","socketpair","wait4","waitid"],"action":"SCMP_ACT_ERRNO","errnoRet":1}]}'
run
is "a profile denying the agent's own calls: the process runs, its status comes back" "$rc:$out" "3:out"

# ---- cordon's floor holds under a profile that allows everything
floor='busybox unshare -U true; echo unshare=$?; mount -t tmpfs none /tmp; echo mount=$?; busybox chroot / true; echo chroot=$?'
config "[\"sh\",\"-c\",\"$floor\"]" '{"defaultAction":"SCMP_ACT_ALLOW"}'
run
is "defaultAction SCMP_ACT_ALLOW: unshare -U, mount, chroot still fail (cordon's filter)" "$rc:$out" "0:unshare=1
mount=1
chroot=1"

# ---- exec gets the profile too
config '["sleep","60"]' "$mkdir_errno"
( exec_as_caller "$RT" --root "$root" run -b "$b" ex >/dev/null 2>&1 ) &
bg=$!
running() { rt state ex; [[ $out == *'"status":"running"'* ]]; }
if wait_until 30 running; then
	rt exec ex sh -c "$try_mkdir"
	is "exec: the profile too (mkdir fails, touch works)" "$rc:$out" "0:mkdir=1
touch=0"
	rt exec ex mkdir /tmp/e
	is "exec mkdir: 1, EPERM" "$rc:$err" "1:mkdir: can't create directory '/tmp/e': Operation not permitted"
	# the agent starts processes without the profile: the container's may not take it over
	# (ptrace, /proc/PID/mem; the same uid): it is not dumpable once it holds a profile
	agent_env='for p in /proc/[0-9]*; do [ "$(cat $p/comm)" = cordon-agent ] && { head -c1 $p/environ >/dev/null && echo readable || echo denied; }; done 2>/dev/null; :'
	rt exec ex sh -c "$agent_env"
	is "exec: the agent's /proc/PID/environ (ptrace's read check) is denied" "$rc:$out" "0:denied"
	rt exec ex sh -c 'head -c1 /proc/self/environ >/dev/null && echo readable'
	is "... a process's own is not (it is dumpable after its exec)" "$rc:$out" "0:readable"
	rt kill ex KILL
else
	fail "exec: the container never ran"
	fail "exec mkdir"
	fail "exec: the agent's environ"
	fail "exec: its own environ"
fi
wait "$bg"
rt delete --force ex

# ---- bad profiles: one line naming the path, 125, nothing started
bad() { # PROFILE MESSAGE [STEP]
	config '["true"]' "$1"
	run
	is "refused: $2" "$rc:$(wc -l <<<"$err")" "125:1"
	like "... the line names it" "$err" "cordon-runtime: ${3:-config}: $2"
	rt state "s$n"
	is "... nothing created (state: 1)" "$rc" 1
}
bad '{"defaultAction":"SCMP_ACT_MAYBE"}' \
	'linux.seccomp.defaultAction: "SCMP_ACT_MAYBE" is not a seccomp action'
bad '{"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["mkdir"],"action":"SCMP_ACT_ERRNO","args":[{"index":0,"value":1,"op":"SCMP_CMP_ABOUT"}]}]}' \
	'linux.seccomp.syscalls[0].args[0].op: "SCMP_CMP_ABOUT" is not a seccomp comparison'
bad '{"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["mkdir"],"action":"SCMP_ACT_ERRNO","args":[{"index":6,"value":1,"op":"SCMP_CMP_EQ"}]}]}' \
	'linux.seccomp.syscalls[0].args[0].index: 6 is out of range (at most 5)'
bad '{"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["mkdir"],"action":"SCMP_ACT_NOTIFY"}]}' \
	'linux.seccomp.syscalls[0].action: SCMP_ACT_NOTIFY: handing system calls to a listener is refused' floor

# ---- podman run --security-opt seccomp=FILE through the runtime
if ! command -v podman >/dev/null || ! command -v conmon >/dev/null; then
	skip "podman --security-opt seccomp" "podman or conmon not installed"
elif ! oci_init || ! oci_podman_setup || ! oci_podman_image; then
	skip "podman --security-opt seccomp" "$oci_skip"
else
	prof=$TEST_TMP/mkdir-eperm.json
	echo "$mkdir_errno" >"$prof"
	chmod 644 "$prof"
	pm run --rm "$(oci_podman_net)" --security-opt "seccomp=$prof" "$OCI_IMAGE" \
		/bin/sh -c "$try_mkdir"
	is "podman --security-opt seccomp=FILE: mkdir denied, touch works" "$rc:$out" "0:mkdir=1
touch=0"
	pm run --rm "$(oci_podman_net)" "$OCI_IMAGE" /bin/sh -c "$try_mkdir"
	is "podman's default profile: both work" "$rc:$out" "0:mkdir=0
touch=0"
fi

done_testing
