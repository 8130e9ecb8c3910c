#!/usr/bin/env bash
# The audit trail's bounds (docs/audit.md): the walks of the workdir hash an inode once and stop
# at their bounds, saying so; the exec events have a byte budget, and the sandbox never waits on
# it. What the command leaves in the workdir must not cost cordon more than the bounds allow.
. "$TAP_LIB"

w=$(mkwork)
logs=$(mkwork) # the audit logs: outside the workdir, writable by whoever runs cordon
c() { cordon --workdir "$w" "$@"; }
own() { if [ "${CORDON_AS:-root}" = user ] && [ "$(id -u)" = 0 ]; then chown -R "$TEST_USER:" "$@"; fi; }
fresh() { # an empty workdir, and nothing left of the last check
	chmod -R u+rwx "$w" 2>/dev/null
	find "$w" -mindepth 1 -delete
}
# the same helpers as t-audit.sh: a python expression over each event e, one line per event
events() {
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
# cordon, as the caller, with the CPU time it and the sandbox used ("RC CPU_SECONDS WALL_SECONDS")
cpu_run() {
	as_caller python3 -c '
import resource, subprocess, sys, time
t = time.monotonic()
rc = subprocess.call(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print("%d %d %d" % (rc, r.ru_utime + r.ru_stime, time.monotonic() - t))' \
		"$CORDON" --workdir "$w" "$@"
}
zeros() { head -c "$1" /dev/zero | sha256sum | cut -d' ' -f1; }
limits() { events "$1" 'e["event"] == "limit" and "%s %s %s" % (e["limit"], e.get("walk", "-"), e.get("bound", e.get("reason"))) or None' | tr '\n' ','; }

# --- 300 hard links of one 8 MiB file: hashed once, every link with its digest. Before the
# fix each link was read again: 300 x 8 MiB, 12 s of cordon's CPU (36 s with ASan).
fresh
read -r rc cpu _ < <(cpu_run --audit "$logs/links.jsonl" -- python3 -c '
import os
with open("big", "wb") as f:
    f.write(os.urandom(8 << 20))
for i in range(300):
    os.link("big", "link%d" % i)')
is "300 hard links: the run ends" "$rc" 0
between "... cordon and the sandbox used under 5 s of CPU (12 s before)" "$cpu" 0 4
sum=$(sha256sum "$w/big" | cut -d' ' -f1)
is "... each of the 301 links has a file event with the file's SHA-256" \
	"$(events "$logs/links.jsonl" 'e["event"] == "file" and e["sha256"] or None' | sort | uniq -c | awk '{print $1, $2}')" \
	"301 $sum"

# --- a sparse 16 MiB file with 1000 links: 16 GB of zeros to hash before the fix (60 s)
fresh
read -r rc cpu _ < <(cpu_run --audit "$logs/sparse.jsonl" -- python3 -c '
import os
with open("sparse", "wb") as f:
    f.truncate(16 << 20)
for i in range(1000):
    os.link("sparse", "l%d" % i)')
is "a sparse 16 MiB file with 1000 links: the run ends" "$rc" 0
between "... under 5 s of CPU (60 s before)" "$cpu" 0 4
is "... every link has the digest of 16 MiB of zeros" \
	"$(events "$logs/sparse.jsonl" 'e["event"] == "file" and e["sha256"] or None' | sort | uniq -c | awk '{print $1, $2}')" \
	"1001 $(zeros 16M)"

# --- a chain of 5000 directories: the walk stops at depth 256 and says so
fresh
read -r rc _ wall < <(cpu_run --audit "$logs/deep.jsonl" -- python3 -c '
import os
for i in range(5000):
    os.mkdir("d")
    os.chdir("d")')
is "5000 nested directories: the run ends" "$rc" 0
between "... promptly (wall seconds)" "$wall" 0 60
like_glob "... the log is valid JSON Lines" "$(valid_jsonl "$logs/deep.jsonl")" "[0-9]*"
is "... the limit event says the walk stopped at depth 256" "$(limits "$logs/deep.jsonl")" \
	"audit-walk after depth,"
is "... the first 256 levels are listed, none deeper" \
	"$(events "$logs/deep.jsonl" 'e["event"] == "file" and "%s %d" % (e["change"], e["path"].count("/") + 1) or None' | sort -k2n | sed -n '1p;$p' | tr '\n' ' ')" \
	"created 1 created 256 "
is "... the limit event comes before the file events" \
	"$(events "$logs/deep.jsonl" 'e["event"]' | grep -v exec | uniq | tr '\n' ' ')" "start limit file exit "

# --- a path longer than 4095 bytes: not listed, and the log says so
fresh
c --audit "$logs/long.jsonl" -- python3 -c '
import os
for i in range(30):
    os.mkdir("x" * 200)
    os.chdir("x" * 200)'
is "directories with 200-byte names, 30 deep: the run ends" "$rc" 0
is "... the path bound is in the log" "$(limits "$logs/long.jsonl")" "audit-walk after path-bytes,"
is "... the 20 levels within 4095 bytes are listed" \
	"$(events "$logs/long.jsonl" 'e["event"] == "file" and len(e["path"]) or None' | sort -n | tail -1)" \
	"$((20 * 200 + 19))"

# --- more than 256 MiB to hash: 20 files of 15 MiB (sparse) before, 20 more made by the command
fresh
for i in $(seq 20); do truncate -s 15M "$w/old$i"; done
own "$w"
c --audit "$logs/bytes.jsonl" -- /bin/sh -c 'for i in $(seq 20); do truncate -s 15M new$i; done'
is "600 MiB to hash: the run ends" "$rc" 0
like_glob "... the log is valid JSON Lines" "$(valid_jsonl "$logs/bytes.jsonl")" "[0-9]*"
is "... both walks say they stopped hashing at 256 MiB" "$(limits "$logs/bytes.jsonl")" \
	"audit-walk before hashed-bytes,audit-walk after hashed-bytes,"
is "... exactly the 20 new files are reported (an old file hashed in one walk only is unchanged)" \
	"$(events "$logs/bytes.jsonl" 'e["event"] == "file" and "%s %s" % (e["change"], e["path"][:3]) or None' | sort | uniq -c | awk '{print $1, $2, $3}')" \
	"20 created new"
hashed=$(events "$logs/bytes.jsonl" 'e["event"] == "file" and e["sha256"] or None' | wc -l)
between "... some have their digest (at most 17 files of 15 MiB fit in 256 MiB)" "$hashed" 1 17
is "... the others have sha256 null, the rest the digest of 15 MiB of zeros" \
	"$(events "$logs/bytes.jsonl" 'e["event"] == "file" and (e["sha256"] or "null") or None' | LC_ALL=C sort -u | tr '\n' ' ')" \
	"$(printf '%s\n' "$(zeros 15M)" null | LC_ALL=C sort | tr '\n' ' ')"

# --- a directory the walk cannot read afterwards: its entries are not reported deleted
fresh
mkdir "$w/locked" && touch "$w/locked/a" "$w/locked/b" "$w/locked/c"
own "$w"
c --audit "$logs/locked.jsonl" -- /bin/chmod 000 locked
is "a directory made unreadable: only its own change is reported, not its entries as deleted" \
	"$(events "$logs/locked.jsonl" 'e["event"] == "file" and "%s %s" % (e["change"], e["path"]) or None' | tr '\n' ' ')" \
	"modified locked "

# --- an exec flood: failing execs with a 100 KiB argument, as fast as the sandbox can
fresh
# at least SECONDS long and COUNT execs: 400 events of 64 KiB overrun the budget unless they take
# over 21 s, however slow the machine
cat >"$w/flood.py" <<'EOF'
import os, sys, time
arg = "x" * 102400
n = 0
end = time.monotonic() + float(sys.argv[1])
while time.monotonic() < end or n < int(sys.argv[2]):
    try:
        os.execv("/nonexistent/cmd", ["/nonexistent/cmd", arg])
    except OSError:
        n += 1
print(n)
EOF
own "$w"
c --audit "$logs/flood.jsonl" -- python3 flood.py 2 400
is "an exec flood: the sandbox ends normally" "$rc:$(tail -1 "$logs/flood.jsonl" | python3 -c 'import json,sys; print(json.load(sys.stdin)["outcome"])')" "0:exited"
like_glob "... the log is valid JSON Lines" "$(valid_jsonl "$logs/flood.jsonl")" "[0-9]*"
# the budget: 4 MiB at once, then 1 MiB a second of the run (a second more for rounding)
budget=$(events "$logs/flood.jsonl" 'e["event"] == "exit" and (4 << 20) + (1 << 20) * ((e["startup_us"] + e["wall_us"]) // 1000000 + 2) or None')
between "... the exec events stay within the budget (130 MB before)" \
	"$(python3 -c 'import sys; print(sum(len(l) for l in open(sys.argv[1], "rb") if b"\"event\":\"exec\"" in l))' "$logs/flood.jsonl")" \
	1 "$budget"
between "... and the whole log, with 64 KiB for the other events" "$(stat -c %s "$logs/flood.jsonl")" 1 "$((budget + 65536))"
is "... one limit event says exec events are dropped" "$(limits "$logs/flood.jsonl")" "exec-log - rate,"
dropped=$(events "$logs/flood.jsonl" 'e["event"] == "exit" and e["exec_events_dropped"] or None')
logged=$(events "$logs/flood.jsonl" 'e["event"] == "exec" and e["path"] == "/nonexistent/cmd" or None' | wc -l)
between "... the exit event counts the dropped ones" "${dropped:-x}" 1 1000000000
is "... every exec the command made is logged or counted as dropped" "$((logged + dropped))" "$out"
is "... each logged one is cut at 64 KiB of arguments, and says so" \
	"$(events "$logs/flood.jsonl" 'e["event"] == "exec" and e["path"] == "/nonexistent/cmd" and "%d %s" % (sum(len(a) for a in e["argv"]), e["truncated"]) or None' | sort -u)" \
	"65536 True"

# --- dropping that starts again after a quiet spell is said again
c --audit "$logs/flood2.jsonl" -- /bin/sh -c 'python3 flood.py 0 400; sleep 6; python3 flood.py 0 400'
is "two floods 6 s apart: two limit events" "$rc:$(limits "$logs/flood2.jsonl")" "0:exec-log - rate,exec-log - rate,"

done_testing
