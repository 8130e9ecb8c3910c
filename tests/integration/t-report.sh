#!/usr/bin/env bash
# The JSON report: written atomically, on every outcome, with what was applied.
. "$TAP_LIB"

w=$(mkwork)
r=$(mkwork) # the report's directory, writable by the caller
c() { cordon --workdir "$w" "$@"; }

# q FILE EXPR: evaluate a Python expression over the parsed report j
# (a is j["applied"], i its identity)
q() {
	python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); a=j.get("applied",{}); i=a.get("identity"); print(eval(sys.argv[2]))' "$1" "$2" 2>&1
}

export CORDON_TEST_SECRET=hunter2
c --report "$r/a.json" --pass-env CORDON_TEST_SECRET --timeout 30s -- sh -c 'head -c 1000000 /dev/zero | md5sum >/dev/null; exit 3'
is "exit status unchanged by --report" "$rc" 3
is "version 1, a 32-hex id" "$(q "$r/a.json" 'j["version"], len(j["id"]), int(j["id"],16) >= 0')" "(1, 32, True)"
is "command" "$(q "$r/a.json" 'j["command"]')" "['sh', '-c', 'head -c 1000000 /dev/zero | md5sum >/dev/null; exit 3']"
is "outcome exited, status 3, exit_code 3, no signal, no error" \
	"$(q "$r/a.json" 'j["outcome"], j["status"], j["exit_code"], j["signal"], j["error"]')" "('exited', 3, 3, None, None)"
is "times and memory are measured" \
	"$(q "$r/a.json" 'j["wall_us"] > 0, j["startup_us"] > 0, j["user_us"] + j["system_us"] > 0, j["max_rss_kb"] > 100')" \
	"(True, True, True, True)"
is "every namespace is listed" "$(q "$r/a.json" 'j["applied"]["namespaces"]')" "['user', 'mount', 'pid', 'ipc', 'uts', 'cgroup', 'net']"
is "net, workdir, chdir, timeout, rootfs, hostname" \
	"$(q "$r/a.json" 'a["net"], a["workdir"] == a["chdir"] == "'"$w"'", a["timeout_ms"], a["kill_after_ms"], a["rootfs"], a["hostname"]')" \
	"('none', True, 30000, 2000, '/', 'cordon')"
is "identity: inside and host ids" "$(q "$r/a.json" 'i["host_uid"] != 0, i["uid"] == '"$(is_user_mode && caller_uid || echo 65532)"'')" "(True, True)"
is "capabilities none, no_new_privs" "$(q "$r/a.json" 'j["applied"]["capabilities"], j["applied"]["no_new_privs"]')" "(False, True)"
is "core dumps are off" "$(q "$r/a.json" 'j["applied"]["rlimits"]["core"]')" "{'soft': 0, 'hard': 0}"
is "the workdir mount is the one writable bind" \
	"$(q "$r/a.json" '[(m["path"], m["read_only"]) for m in j["applied"]["mounts"] if m["type"] == "workdir"]')" "[('$w', False)]"
is "/proc, /dev, /tmp mounts are listed" \
	"$(q "$r/a.json" 'sorted(m["path"] for m in j["applied"]["mounts"] if m["type"] in ("proc","dev","sysfs"))')" "['/dev', '/proc', '/sys']"
is "env lists names" "$(q "$r/a.json" '"CORDON_TEST_SECRET" in j["applied"]["env"], "PATH" in j["applied"]["env"]')" "(True, True)"
unlike "... never values" "$(cat "$r/a.json")" "hunter2"
is "no temp file is left behind" "$(ls -A "$r")" "a.json"
is "one line of JSON" "$(wc -l <"$r/a.json")" 1

c --report "$r/a.json" -- "$PROBE" signal 9
is "signaled: outcome, signal, 137" "$(q "$r/a.json" 'j["outcome"], j["signal"], j["exit_code"], j["status"]')" "('signaled', 9, 137, None)"
is "the report is replaced" "$(ls -A "$r")" "a.json"

# 1.5 s: on a loaded machine a setup past a shorter deadline ends in SIGKILL, not SIGTERM
c --report "$r/t.json" --timeout 1500ms -- sleep 30
is "timeout: outcome, 124, SIGTERM" "$(q "$r/t.json" 'j["outcome"], j["exit_code"], j["signal"]')" "('timeout', 124, 15)"

c --report "$r/n.json" -- no-such-command
is "exec failure: setup-error, 127, step exec" \
	"$(q "$r/n.json" 'j["outcome"], j["exit_code"], j["error"]["step"], j["error"]["errno"], j["error"]["message"]')" \
	"('setup-error', 127, 'exec', 2, 'no-such-command: No such file or directory')"
c --report "$r/m.json" --ro-bind /etc/hostname:"$w/nope/x" -- true
is "setup failure inside: setup-error, 125, step mount" "$(q "$r/m.json" 'j["outcome"], j["exit_code"], j["error"]["step"]')" "('setup-error', 125, 'mount')"

out=$(as_caller "$CORDON" --ro-bind "$PROBE_DIR" --workdir "$w" --report-fd 3 -- sh -c 'echo to-stdout' 3>"$r/fd.json")
rc=$?
is "--report-fd: the command's stdout is its own" "$rc:$out" "0:to-stdout"
is "--report-fd: the report goes to the fd" "$(q "$r/fd.json" 'j["outcome"], j["exit_code"]')" "('exited', 0)"
c --report-fd 3 -- true 3>&-
is "--report-fd: the fd does not leak into the sandbox" "$rc" 125

# a report that cannot be written after the run: cordon failed (125), and says so, with how the
# command ended; the command did run
rm -f "$w/ran"
err=$(as_caller "$CORDON" --ro-bind "$PROBE_DIR" --workdir "$w" --report-fd 3 -- sh -c 'touch ran; exit 3' 2>&1 3>/dev/full)
rc=$?
is "--report-fd on a full device: 125" "$rc" 125
is "... one line: report, where, why, and the command's status" "$err" \
	"cordon: report: file descriptor 3: No space left on device (the command exited with status 3)"
[ -e "$w/ran" ] && pass "... the command ran" || fail "... the command ran"

# the cgroup part names what was read back; oom_group is a boolean
is "cgroup: oom_group is reported" "$(q "$r/a.json" 'type(a["cgroup"]["oom_group"]).__name__')" "bool"

# a report whose directory the caller cannot write fails before anything starts
if is_user_mode && [ "$(id -u)" = 0 ]; then
	c --report /root/r.json -- touch "$w/started"
	is "unwritable report path: 125 before start" "$rc:$err" "125:cordon: --report: /root/r.json: Permission denied"
	[ -e "$w/started" ] && fail "... nothing ran" || pass "... nothing ran"
else
	skip "unwritable report path: 125 before start" "root can write anywhere"
	skip "... nothing ran" "root can write anywhere"
fi

# cordon interrupted: the command is told, the report still lands
rm -f "$w/ready"
(exec_as_caller "$CORDON" --ro-bind "$PROBE_DIR" --workdir "$w" --report "$r/i.json" -- "$PROBE" trap "$w/got" "$w/ready") &
bg=$!
wait_until 5 test -e "$w/ready"
kill -TERM $bg
wait $bg
is "interrupted: the report says how the command ended" "$(q "$r/i.json" 'j["outcome"], j["status"]')" "('exited', 115)"

# a run whose policy cannot be parsed: the report still shows what was decided before (the
# directory, the environment's names), and a setup time, not the time since boot
printf 'bogus_syscall allow\n' >"$r/bad.policy"
chmod 644 "$r/bad.policy"
c --report "$r/bad.json" --seccomp-policy "$r/bad.policy" -- /bin/true
is "a bad policy: 125" "$rc" 125
is "... the report has the directory and the environment's names" \
	"$(q "$r/bad.json" 'a["chdir"] == "'"$w"'", "PATH" in a["env"], "HOME" in a["env"]')" "(True, True, True)"
is "... and a setup time under a minute" "$(q "$r/bad.json" '0 < j["startup_us"] < 60000000')" True

done_testing
