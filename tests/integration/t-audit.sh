#!/usr/bin/env bash
# The audit trail (--audit FILE): start, exec (every execve, through seccomp user notification),
# file (the workdir's changes), limit, signal and exit events, valid JSON Lines even when the
# run is killed; --capture keeps stdout and stderr byte for byte.
. "$TAP_LIB"

w=$(mkwork)
o=$(mkwork) # cordon's outputs (report, audit, capture): never in the workdir
c() { cordon --workdir "$w" "$@"; }
# events of a log as compact lines, for comparison: one per event, chosen fields
events() { # file jq-like python expression over e
	python3 - "$1" "$2" <<'PY'
import json, sys
for line in open(sys.argv[1], "rb"):
    e = json.loads(line)
    out = eval(sys.argv[2], {"e": e})
    if out is not None:
        print(out)
PY
}
valid_jsonl() {
	python3 -c '
import json, sys
n = 0
for line in open(sys.argv[1], "rb"):
    assert line.endswith(b"\n"), "a line without its newline"
    json.loads(line); n += 1
print(n)' "$1" 2>&1
}
own() { if [ "${CORDON_AS:-root}" = user ] && [ "$(id -u)" = 0 ]; then chown -R "$TEST_USER:" "$@"; fi; }

# --- a session: a shell pipeline, python3 spawning processes, files created, changed, deleted
mkdir -p "$w/src"
echo old >"$w/src/change.txt"
echo bye >"$w/gone.txt"
echo same >"$w/same.txt"
cat >"$w/spawn.py" <<'EOF'
import subprocess
subprocess.run(["/bin/true"])
subprocess.run(["/bin/sh", "-c", "exit 0"])
EOF
own "$w"
c --audit "$o/audit.jsonl" -- /bin/sh -c '/bin/echo one two | /usr/bin/tr a-z A-Z >/dev/null; /usr/bin/python3 spawn.py; echo new >src/change.txt; /bin/rm gone.txt; echo made >made.txt; /bin/mkdir newdir; /bin/ln -s made.txt link'
is "the session ran" "$rc" 0
is "the log is valid JSON Lines, every line whole" "$(valid_jsonl "$o/audit.jsonl")" 16
is "events in order: start, execs, files, exit" \
	"$(events "$o/audit.jsonl" 'e["event"]' | uniq -c | awk '{print $2 "x" $1}' | tr '\n' ' ')" \
	"startx1 execx9 filex5 exitx1 "
# compared sorted: the pipeline's two execs race each other
got=$(events "$o/audit.jsonl" 'e["event"] == "exec" and "%s %s" % (e["path"], e["argv"][1:]) or None' | sort)
want=$(printf '%s\n' "/bin/echo ['one', 'two']" "/bin/rm ['gone.txt']" "/bin/sh ['-c', 'exit 0']" \
	"/bin/true []" "/usr/bin/python3 ['spawn.py']" "/usr/bin/tr ['a-z', 'A-Z']" \
	"/bin/mkdir ['newdir']" "/bin/ln ['-s', 'made.txt', 'link']" | sort)
is "the eight execs of the session (and the command's own)" "$(grep -v "^/bin/sh \['-c', '/bin/echo" <<<"$got")" "$want"
is "... the command's own exec is the first" "$(events "$o/audit.jsonl" 'e["event"] == "exec" and e["path"] or None' | head -1)" "/bin/sh"
is "pids and parents: python's children have python as their parent" \
	"$(events "$o/audit.jsonl" 'e["event"] == "exec" and "%d %d %s" % (e["pid"], e["ppid"], e["path"]) or None' | python3 -c '
import sys
rows = [l.split() for l in sys.stdin]
pid = {r[2]: r[0] for r in rows if r[2] == "/usr/bin/python3"}
py = pid["/usr/bin/python3"]
print(sorted(r[2] for r in rows if r[1] == py))')" "['/bin/sh', '/bin/true']"
is "cwd is the workdir as seen inside" "$(events "$o/audit.jsonl" 'e["event"] == "exec" and e["cwd"] or None' | sort -u)" "$w"
is "exactly the expected file events" \
	"$(events "$o/audit.jsonl" 'e["event"] == "file" and "%s %s %s" % (e["change"], e["path"], e["type"]) or None')" \
	"$(printf '%s\n' 'deleted gone.txt file' 'created link symlink' 'created made.txt file' 'created newdir dir' 'modified src/change.txt file')"
is "a created file carries its size and SHA-256" \
	"$(events "$o/audit.jsonl" 'e["event"] == "file" and e["path"] == "made.txt" and "%d %s" % (e["size"], e["sha256"]) or None')" \
	"5 $(printf 'made\n' | sha256sum | cut -d' ' -f1)"
is "a symlink carries its target" "$(events "$o/audit.jsonl" 'e["event"] == "file" and e["type"] == "symlink" and e["target"] or None')" made.txt
is "the exit event has the report's figures" "$(events "$o/audit.jsonl" 'e["event"] == "exit" and "%s %d %d" % (e["outcome"], e["exit_code"], e["wall_us"] > 0) or None')" "exited 0 1"
like_glob "the start event has the command and the configuration" "$(head -1 "$o/audit.jsonl")" \
	'{"event":"start","id":"*","time":"20*Z",*"command":["/bin/sh","-c",*"applied":{*"seccomp":{*"mounts":[*'
ids=$(events "$o/audit.jsonl" 'e["id"]' | sort -u | wc -l)
is "every event carries the same sandbox id" "$ids" 1

# --- tricky argv: spaces, newlines, quotes, backslashes, non-UTF-8 bytes
c --audit "$o/argv.jsonl" -- /bin/sh -c '/bin/true "a b" "new
line" "q\"uote" "back\\slash" "$(printf "\377\376")" ""'
# bytes that are not UTF-8 show as \u00XX in the string (U+00FF for 0xff) ...
is "tricky argv: JSON escapes, exactly what was asked" \
	"$(events "$o/argv.jsonl" 'e["event"] == "exec" and e["path"] == "/bin/true" and ascii(e["argv"]) or None')" \
	"['/bin/true', 'a b', 'new\\nline', 'q\"uote', 'back\\\\slash', '\\xff\\xfe', '']"
is "... and the exact bytes in hex where they are not UTF-8" \
	"$(events "$o/argv.jsonl" 'e["event"] == "exec" and e["path"] == "/bin/true" and e.get("argv_hex", ["-"])[5] or None')" "fffe"
like_glob "... the line itself is valid UTF-8 JSON" "$(valid_jsonl "$o/argv.jsonl")" "[0-9]*"

# --- a failed exec is recorded with the kernel's answer
c --audit "$o/fail.jsonl" -- /bin/sh -c './not-there; /etc/passwd; true'
is "exec of a missing file: ENOENT, of a non-executable: EACCES" \
	"$(events "$o/fail.jsonl" 'e["event"] == "exec" and e["path"] != "/bin/sh" and "%s %s" % (e["path"], e["result"]) or None' | grep -v '/true ')" \
	"$(printf '%s\n' './not-there ENOENT' '/etc/passwd EACCES')"

# --- a run killed by the timeout still leaves a whole log, ending with its exit event
c --audit "$o/kill.jsonl" --timeout 1s --kill-after 500ms -- /bin/sh -c 'trap "" TERM; while :; do /bin/true; done'
is "timeout: 124" "$rc" 124
like_glob "the killed run's log parses" "$(valid_jsonl "$o/kill.jsonl")" "[0-9]*"
is "... has the timeout and kill-after limit events" "$(events "$o/kill.jsonl" 'e["event"] == "limit" and e["limit"] or None' | tr '\n' ' ')" "timeout kill-after "
is "... and ends with the exit event, outcome timeout" "$(tail -1 "$o/kill.jsonl" | python3 -c 'import json,sys; e=json.load(sys.stdin); print(e["event"], e["outcome"])')" "exit timeout"

# --- signals forwarded are recorded
(exec_as_caller "$CORDON" --workdir "$w" --audit "$o/sig.jsonl" -- /bin/sh -c 'trap "exit 3" USR1; : >trap-set; while :; do sleep 0.1; done') &
pid=$!
wait_until 10 test -e "$w/trap-set"
kill -USR1 $pid
wait $pid
is "a forwarded signal ends the command as it chose" "$?" 3
is "... and the signal event says which" "$(events "$o/sig.jsonl" 'e["event"] == "signal" and e["name"] or None')" USR1

# --- an audit file that cannot be created fails before anything runs
rm -f "$w/ran"
c --audit /nonexistent/dir/a.jsonl -- /bin/sh -c 'touch ran'
is "an audit file that cannot be created: 125" "$rc" 125
is "... with one line" "$err" "cordon: --audit: /nonexistent/dir: No such file or directory"
[ ! -e "$w/ran" ] && pass "... and nothing ran" || fail "... and nothing ran"

# --- without --audit nothing changes: no listener, no filter change
rules() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["applied"]["seccomp"]["rules"])' "$1"; }
c --report "$o/r.json" -- true
c --audit "$o/x.jsonl" --report "$o/r2.json" -- true
is "without --audit the filter has no notification; with it, two rules more (execve, execveat)" \
	"$(($(rules "$o/r2.json") - $(rules "$o/r.json")))" 2

# --- --capture: stdout and stderr kept, and passed on byte for byte
printf 'bin\000ary\377\n' >"$w/bytes"
own "$w"
out=$(cd "$w" && as_caller "$CORDON" --workdir "$w" --capture "$o/cap" -- /bin/sh -c 'cat bytes; echo to-err >&2; printf "no newline"' 2>"$TEST_TMP/cap-err" | od -An -tx1 | tr -d ' \n')
is "--capture: stdout passed on byte for byte" "$out" "$(printf 'bin\000ary\377\nno newline' | od -An -tx1 | tr -d ' \n')"
is "... stderr too" "$(cat "$TEST_TMP/cap-err")" to-err
is "... and kept in DIR/stdout" "$(od -An -tx1 <"$o/cap/stdout" | tr -d ' \n')" "$out"
is "... and DIR/stderr" "$(cat "$o/cap/stderr")" to-err
# a caller that never reads cordon's stdout: cordon must not block on it (its loop is the
# watchdog's): the timeout fires on time, the copy is kept, and cordon exits
res=$(as_caller python3 - "$CORDON" "$w" "$o/slow" <<'PY'
import subprocess, sys, time
t0 = time.time()
p = subprocess.Popen([sys.argv[1], "--workdir", sys.argv[2], "--capture", sys.argv[3], "-t", "2s",
                      "--kill-after", "1s", "--", "sh", "-c", "yes | head -c 50000000; sleep 60"],
                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
try:
    rc = p.wait(timeout=30)
except subprocess.TimeoutExpired:
    p.kill(); rc = "blocked"
print(rc, int(time.time() - t0))
PY
)
like_glob "--capture with a caller that never reads: the timeout fires and cordon exits (124)" "$res" "124 *"
# how soon is the machine's load; what is checked: not before the deadline, and not blocked
# until the guard (30 s) or the command's own end (sleep 60)
between "... not before the deadline (2 s), not held until the guard (30 s)" "${res#* }" 2 29
between "... and the copy holds what was read (the pipe and cordon's buffer, then the writes waited)" \
	"$(stat -c %s "$o/slow/stdout")" 65536 2000000
# what the caller sees does not change: 2>&1 keeps the order of the two streams ...
cat >"$TEST_TMP/alternate.py" <<'PY'
import sys
for i in range(4000):
    f = sys.stdout if i % 2 else sys.stderr
    f.write("%d\n" % i)
    f.flush()
PY
chmod 644 "$TEST_TMP/alternate.py"
out=$(cd "$w" && as_caller "$CORDON" --workdir "$w" --ro-bind "$TEST_TMP/alternate.py:/a.py" --capture "$o/merged" -- python3 /a.py 2>&1 |
	awk '{ if ($1 != NR - 1) bad++ } END { print NR, bad + 0 }')
is "--capture with 2>&1: 4000 lines of stdout and stderr alternating come out in order" "$out" "4000 0"
is "... and DIR/stdout holds them in that order (DIR/stderr empty)" \
	"$(awk '{ if ($1 != NR - 1) bad++ } END { print NR, bad + 0 }' "$o/merged/stdout"):$(wc -c <"$o/merged/stderr")" "4000 0:0"
# ... and on a terminal, the command sees one
res=$(as_caller python3 - "$CORDON" "$w" "$o/tty" <<'PY'
import os, pty, subprocess, sys, time, select
m, s = pty.openpty()
cmd = "import os, sys; print('tty', os.isatty(1), os.isatty(2), flush=True); sys.stderr.write('err\\n'); print('out')"
p = subprocess.Popen([sys.argv[1], "--workdir", sys.argv[2], "--capture", sys.argv[3], "--",
                      "python3", "-c", cmd], stdin=s, stdout=s, stderr=s)
os.close(s)
out = b""
end = time.time() + 20
while time.time() < end:
    if select.select([m], [], [], 0.1)[0]:
        try: out += os.read(m, 4096)
        except OSError: break
    elif p.poll() is not None:
        break
p.wait()
print(p.returncode, out.decode().replace("\r", "").replace("\n", "|"))
PY
)
is "--capture on a terminal: the command's stdout and stderr are a terminal, in order" "$res" "0 tty True True|err|out|"
is "... DIR/stdout holds what was shown" "$(tr '\n' '|' <"$o/tty/stdout")" "tty True True|err|out|"
# the copy is bounded (1 GiB a stream, or --fsize): the caller still gets everything
out=$(cd "$w" && as_caller "$CORDON" --workdir "$w" --fsize 1M --capture "$o/big" --report "$o/big.json" -- \
	sh -c 'head -c 3000000 /dev/zero' | wc -c)
is "--capture with --fsize 1M: the caller gets all 3000000 bytes" "$out" 3000000
is "... DIR/stdout keeps 1 MiB, and the report says the copy was cut" \
	"$(stat -c %s "$o/big/stdout"):$(python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["capture"]; print(c["stdout_bytes"], c["truncated"])' "$o/big.json")" \
	"1048576:1048576 True"
c --capture /nonexistent/x/y -- true
is "--capture in a missing parent: 125" "$rc:$err" "125:cordon: --capture: /nonexistent/x: No such file or directory"

# an empty workdir: nothing to list before or after (the sanitizer build once found qsort given
# no array), and nothing to say on stderr
e=$(mkwork)
cordon --workdir "$e" --audit "$o/empty.jsonl" -- true
is "an empty workdir: 0, nothing on stderr, a whole trail" "$rc:$err:$(valid_jsonl "$o/empty.jsonl")" "0::3"

# an audit trail that lacks events (its disk filled up) is a failed run: 125 and one line that
# says how many events are missing and how the command ended; without the failure: 0
full=$(mkwork)
if [ "$(id -u)" = 0 ] && mount -t tmpfs -o size=64k,mode=1777 cordon-test-full "$full" 2>/dev/null; then
	as_caller dd if=/dev/zero of="$full/fill" bs=1k count=60 2>/dev/null
	c --audit "$full/a.jsonl" --report "$o/full.json" -- sh -c 'for i in $(seq 100); do /bin/true; done; exit 3'
	like_glob "an audit trail the disk cannot hold: 125, the line says so and how the command ended" \
		"$rc:$err" "125:cordon: audit: the log lacks * events, not written or cut short: No space left on device (the command exited with status 3)"
	is "... the report says so too: exit code 125, the command's outcome, the error" \
		"$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(j["exit_code"], j["outcome"], j["status"], j["error"]["step"])' "$o/full.json" 2>&1)" \
		"125 exited 3 audit"
	rm -f "$full/fill" "$full/a.jsonl"
	c --audit "$full/a.jsonl" -- sh -c 'exit 3'
	is "... with room for it: the command's status" "$rc:$err" "3:"
	# the disk fills up while the command runs (its workdir is on it) and has room again at
	# the end: the events cut short are gone whole, and the later ones are lines of their own.
	# 40 exec events (10 KiB) after the fill: more than the trail's last page can still hold
	# (a start event past a page's end once left room for all the few there were)
	rm -f "$full/a.jsonl"
	mkdir "$full/w" && own "$full/w"
	cordon --workdir "$full/w" --audit "$full/a.jsonl" -- sh -c \
		'head -c 200000 /dev/zero >fill 2>/dev/null; for i in $(seq 40); do /bin/true x; done; /bin/echo y >/dev/null; rm -f fill'
	like_glob "... a disk full for a while: 125, some events lost" "$rc:$err" "125:cordon: audit: the log lacks *"
	is "... every line of the trail is whole JSON, the exit event last" \
		"$(valid_jsonl "$full/a.jsonl"):$(tail -n1 "$full/a.jsonl" | python3 -c 'import json,sys; print(json.load(sys.stdin)["event"])')" \
		"$(wc -l <"$full/a.jsonl"):exit"
	gaps=$(events "$full/a.jsonl" '("gap" if e["lost"] > 0 and e["errno"] == 28 else "a bad gap") if e["event"] == "gap" else None' | sort -u)
	exitl=$(events "$full/a.jsonl" '(e["exit_code"], e["error"]["step"], e["events_lost"] > 0) if e["event"] == "exit" else None')
	is "... the trail itself shows the gap where events are missing, and the exit event the loss" \
		"$gaps|$exitl" "gap|(125, 'audit', True)"
	rm -rf "$full/w" "$full/a.jsonl"
	umount "$full"
else
	skip "an audit trail the disk cannot hold" "needs root to mount a small tmpfs"
	skip "... the report says so too" "needs root to mount a small tmpfs"
	skip "... with room for it" "needs root to mount a small tmpfs"
	skip "... a disk full for a while" "needs root to mount a small tmpfs"
	skip "... every line of the trail is whole JSON" "needs root to mount a small tmpfs"
	skip "... the trail itself shows the gap" "needs root to mount a small tmpfs"
fi

done_testing
