#!/usr/bin/env bash
# cordon serve shares its descriptors and its disk between tenants (docs/e2b.md "Tenants"): it
# refuses to start when RLIMIT_NOFILE cannot hold a share for every sandbox, follows fewer
# processes in one sandbox when the limit is low (so that no sandbox takes the descriptors the
# others need), and, without --disk, gives each sandbox its share of the state directory's free
# space (a tenant that writes past it is killed). A sandbox's end is bounded: at its timeout
# (or DELETE) its processes die at once, though a client reads its stream slowly or the sandbox
# drips a listing, its --max-sandboxes slot is free only once they have, DELETE answers; a
# listing's answer is bounded (resource_exhausted past it) and so the server's memory. Driven
# with python3's http.client.
. "$TAP_LIB"

command -v python3 >/dev/null && command -v curl >/dev/null && command -v prlimit >/dev/null || {
	skip "serve bounds" "python3, curl and prlimit are needed"
	done_testing
	exit
}
key=e2b_0123abcd
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
server=
stop() { [ -n "$server" ] && { kill "$server" 2>/dev/null; wait "$server" 2>/dev/null; }; server=; }
trap stop EXIT
# serve STATE NOFILE OPTIONS...: a server on $port, answering (0), or its exit status
serve() {
	local state=$1 nofile=$2
	shift 2
	port=$(free_port)
	( CORDON_SERVE_API_KEY=$key exec_as_caller prlimit --nofile="$nofile:$nofile" "$CORDON" serve \
		--listen "127.0.0.1:$port" --state-dir "$state" "$@" 2>"$TEST_TMP/serve.log" ) &
	server=$!
	for _ in $(seq 100); do
		curl -s -o /dev/null "http://127.0.0.1:$port/health" && return 0
		kill -0 "$server" 2>/dev/null || { wait "$server"; local rc=$?; server=; return $rc; }
		sleep 0.1
	done
	return 1
}
# client.py PORT ACTION...: create a sandbox, then start N processes (sleep) through envd's
# Start; prints the number started, then the first refusal's Connect code and message
cat >"$TEST_TMP/client.py" <<'PY'
import http.client, json, struct, sys, time
port, action = int(sys.argv[1]), sys.argv[2]
def req(method, path, body=b"", headers={}):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    c.request(method, path, body, {"X-API-Key": "e2b_0123abcd", **headers})
    return c
def create():
    r = req("POST", "/sandboxes", json.dumps({"timeout": 120}).encode(),
            {"Content-Type": "application/json"}).getresponse()
    return json.loads(r.read())
sb = create()
h = {"E2b-Sandbox-Id": sb["sandboxID"], "E2b-Sandbox-Port": "49983",
     "X-Access-Token": sb["envdAccessToken"]}
if action == "procs":
    conns, started = [], 0
    for i in range(int(sys.argv[3])):
        msg = json.dumps({"process": {"cmd": "/bin/sleep", "args": ["60"]}}).encode()
        c = req("POST", "/process.Process/Start", struct.pack(">BI", 0, len(msg)) + msg,
                {**h, "Content-Type": "application/connect+json", "Connect-Protocol-Version": "1"})
        r = c.getresponse()
        first = r.read(5)
        flags, n = struct.unpack(">BI", first) if len(first) == 5 else (None, 0)
        body = json.loads(r.read(n)) if n else {}
        if flags == 2:  # the end-stream message: an error
            print(started, body["error"]["code"], body["error"]["message"])
            break
        started += 1
        conns.append(c)  # the stream stays open: its process is followed
    else:
        print(started)
elif action == "write":
    msg = json.dumps({"process": {"cmd": "/bin/sh", "args": ["-c",
        "head -c " + sys.argv[3] + " /dev/zero > big; sleep 60"]}}).encode()
    c = req("POST", "/process.Process/Start", struct.pack(">BI", 0, len(msg)) + msg,
            {**h, "Content-Type": "application/connect+json", "Connect-Protocol-Version": "1"})
    c.getresponse()
    for _ in range(150):  # the disk watcher looks every 2 s: until it is gone, or 30 s
        r = req("GET", "/sandboxes/" + sb["sandboxID"]).getresponse()
        r.read()
        if r.status == 404:
            print("killed")
            break
        time.sleep(0.2)
    else:
        print("alive")
PY
chmod 644 "$TEST_TMP/client.py"

# --- descriptors: 16 sandboxes, 256 connections and the server's own need about 1600
s=$(mkwork)
serve "$s/a" 1000
rc=$?
is "RLIMIT_NOFILE 1000 for 16 sandboxes and 256 connections: refused (125)" "$rc" 125
like "... saying why" "$(cat "$TEST_TMP/serve.log")" "--max-sandboxes: 16 sandboxes and 256 connections need more descriptors than RLIMIT_NOFILE (1000)"
stop
# one sandbox, 64 connections (16 a tenant: the streams below fit): the server's own 64, 2 a
# connection and 32 being closed, 67 a sandbox (16 of them its polled watchers'), then 4 a
# followed process: 331 leave room for 10
if serve "$s/b" 331 --max-sandboxes 1 --max-connections 64 --pool 0; then
	out=$(python3 "$TEST_TMP/client.py" "$port" procs 14 2>&1)
	like_glob "RLIMIT_NOFILE 331, one sandbox: 10 processes followed, then resource_exhausted" "$out" "10 resource_exhausted *processes run already*"
else
	fail "the server starts with RLIMIT_NOFILE 331 and one sandbox: $(cat "$TEST_TMP/serve.log")"
fi
stop

# --- disk: without --disk, each sandbox gets its share of the free space. A state directory on
# a tmpfs of 64 MiB, --max-sandboxes 4, no pool: a share of about 16 MiB; 40 MiB written is past it
if [ "${CORDON_AS:-root}" = root ] && [ "$(id -u)" = 0 ]; then
	d=$(mkwork)
	mkdir "$d/state"
	port=$(free_port)
	CORDON_SERVE_API_KEY=$key unshare -m --propagation private sh -c '
		mount -t tmpfs -o size=64m,mode=0700 tmpfs "$1/state" || exit 99
		exec "$2" serve --listen "127.0.0.1:$3" --state-dir "$1/state" --max-sandboxes 4 \
			--pool 0 -v' sh "$d" "$CORDON" "$port" 2>"$TEST_TMP/serve.log" &
	server=$!
	for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/health" && break; sleep 0.1; done
	out=$(python3 "$TEST_TMP/client.py" "$port" write 40M 2>&1)
	is "no --disk, a 64 MiB state directory, 4 sandboxes: one that writes 40 MiB is killed" "$out" killed
	like_glob "... the server said its default" "$(cat "$TEST_TMP/serve.log")" "*--disk * a sandbox (the state directory's free space over 4 sandboxes)*"
	stop
else
	skip "the default --disk on a small state directory" "mounting a tmpfs needs root"
fi

# --- a sandbox's end (review 3, F1) and a listing's answer (F2): ends.py prints "ok - ..." or
# "not ok - ..." lines. Before: the slow client's sandbox ran on past its timeout and past
# --max-sandboxes 1, DELETE never answered while the sandbox dripped a listing, and 4 listings
# of control-byte names took the server to about 900 MB.
cat >"$TEST_TMP/ends.py" <<'PY'
import glob, http.client, json, os, socket, struct, sys, threading, time
# ends.py PORT STATE: a sandbox's end is bounded (docs/e2b.md "Tenants"); prints TAP-ish lines
# "ok|not ok - text" that the shell passes on.
port, state = int(sys.argv[1]), sys.argv[2]
KEY = "e2b_0123abcd"

def say(cond, what):
    print(("ok" if cond else "not ok") + " - " + what, flush=True)
    return cond

def req(method, path, body=b"", headers={}, timeout=60):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    c.request(method, path, body, {"X-API-Key": KEY, **headers})
    return c.getresponse()

def create(timeout=120):
    r = req("POST", "/sandboxes", json.dumps({"timeout": timeout}).encode(),
            {"Content-Type": "application/json"})
    b = r.read()
    return r.status, json.loads(b) if r.status == 201 else b

def hdrs(sb, port_=49983):
    return {"E2b-Sandbox-Id": sb["sandboxID"], "E2b-Sandbox-Port": str(port_),
            "X-Access-Token": sb["envdAccessToken"]}

def start(sb, cmd):
    """a process through envd's Start, its stream closed once started"""
    msg = json.dumps({"process": {"cmd": "/bin/sh", "args": ["-c", cmd]}}).encode()
    r = req("POST", "/process.Process/Start", struct.pack(">BI", 0, len(msg)) + msg,
            {**hdrs(sb), "Content-Type": "application/connect+json", "Connect-Protocol-Version": "1"})
    r.read(5)
    r.close()

def running(marker):
    """processes whose command line has marker (a sandbox's are visible from the host)"""
    n = 0
    for p in os.listdir("/proc"):
        if p.isdigit() and int(p) != os.getpid():
            try:
                n += marker.encode() in open(f"/proc/{p}/cmdline", "rb").read()
            except OSError:
                pass
    return n

def poll(cond, deadline=60, every=0.2):
    end = time.time() + deadline
    while time.time() < end:
        if cond():
            return True
        time.sleep(every)
    return cond()

def server_pid():
    for p in os.listdir("/proc"):
        try:
            cl = open(f"/proc/{p}/cmdline", "rb").read().split(b"\0")
        except OSError:
            continue
        if b"--listen" in cl and state.encode() in cl and b"--session-maker" not in cl:
            return p
    return None

def hwm(pid):
    for l in open(f"/proc/{pid}/status"):
        if l.startswith("VmHWM"):
            return int(l.split()[1])

def gone_from_table(sb):
    r = req("GET", "/sandboxes/" + sb["sandboxID"])
    r.read()
    return r.status == 404

# 1. a sandbox times out while a client reads its /execute stream slowly (4 KiB every 5 s: the
# 20 MB line would take days, the piece of it the stream holds minutes); its processes die at its
# timeout, and its slot (--max-sandboxes 1) is free only once they have.
marker_a = "3600.%06d" % (os.getpid() % 1000000)
st, a = create(timeout=4)
say(st == 201, "a sandbox with a timeout of 4 s")
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
s.connect(("127.0.0.1", port))
code = ("import subprocess\nsubprocess.Popen(['sleep', '%s'])\nprint('x' * 20_000_000)\n" % marker_a)
body = json.dumps({"code": code}).encode()
s.sendall(("POST /execute HTTP/1.1\r\nHost: x\r\nE2b-Sandbox-Id: %s\r\nE2b-Sandbox-Port: 49999\r\n"
           "X-Access-Token: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
           % (a["sandboxID"], a["envdAccessToken"], len(body))).encode() + body)
reading = True
got = [0]
def slow():
    while reading:
        try:
            b = s.recv(4096)
        except OSError:
            break
        if not b:
            break
        got[0] += len(b)
        time.sleep(5)
t = threading.Thread(target=slow, daemon=True)
t.start()
say(poll(lambda: running(marker_a) > 0, 60), "its cell started a process")
say(poll(lambda: gone_from_table(a), 60), "the sandbox leaves the table at its timeout")
made = None
alive_when_made = None
end = time.time() + 90
while time.time() < end:
    st, b = create()
    if st == 201:
        made = b
        alive_when_made = running(marker_a)
        break
    if st != 429:
        break
    time.sleep(0.2)
say(made is not None, "a new sandbox once the first is gone (--max-sandboxes 1)")
say(alive_when_made == 0, "--max-sandboxes holds: none of the first one's processes ran when the next was made (%s)" % alive_when_made)
say(poll(lambda: running(marker_a) == 0, 30), "its processes are gone although its client still reads its stream")
say(poll(lambda: not t.is_alive(), 30), "the slow client's connection is cut (it read %d bytes)" % got[0])
reading = False
s.close()
b = made
if b is None:
    sys.exit(0)

# 2. DELETE of a sandbox whose ListDir the sandbox itself drips (it stops the agent's worker
# and lets it go for a moment every 5 s: each entry within the 60 s the library gave a message)
drip = r'''
import os, signal, sys, time
def ppid(p): return int(open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()[1])
def comm(p): return open(f"/proc/{p}/comm").read().strip()
mine = set(); p = os.getpid()
while p > 1: mine.add(p); p = ppid(p)
agent = next(p for p in mine if comm(p) == "cordon-agent" and comm(ppid(p)) != "cordon-agent")
victims = set(); last = 0
while True:
    for d in os.listdir("/proc"):
        if d.isdigit() and int(d) not in mine and int(d) not in victims:
            try:
                if ppid(int(d)) == agent: os.kill(int(d), signal.SIGSTOP); victims.add(int(d))
            except Exception: pass
    if victims and not os.path.exists("stopped"): open("stopped", "w").close()
    if time.time() - last > 5:
        for v in victims:
            try: os.kill(v, signal.SIGCONT); time.sleep(0.0005); os.kill(v, signal.SIGSTOP)
            except Exception: pass
        last = time.time()
    time.sleep(0.002)
'''
marker_b = "dripper%06d" % (os.getpid() % 1000000)
open_list = {}
start(b, "mkdir d && python3 -c 'import os; [open(\"d/%05d\" % i, \"w\").close() for i in range(20000)]' && touch made")
say(poll(lambda: bool(glob.glob(state + "/*/made")), 60), "20,000 files made")
start(b, "cat > drip.py <<'EOF'\n" + drip + "EOF\nexec python3 drip.py " + marker_b)
say(poll(lambda: running(marker_b) > 0, 30), "a process that stops the agent's workers runs")
def listing():
    try:
        r = req("POST", "/filesystem.Filesystem/ListDir", json.dumps({"path": "/home/user/d"}).encode(),
                {**hdrs(b), "Content-Type": "application/json"}, timeout=600)
        open_list["status"] = r.status
        open_list["body"] = r.read()[:200]
    except Exception as e:
        open_list["status"] = repr(e)
lt = threading.Thread(target=listing, daemon=True)
lt.start()
say(poll(lambda: bool(glob.glob(state + "/*/stopped")), 30),
    "the listing's worker is stopped")
try:
    r = req("DELETE", "/sandboxes/" + b["sandboxID"], timeout=120)
    r.read()
    dst = r.status
except Exception as e:
    dst = repr(e)
say(dst == 204, "DELETE answers 204 while a listing is dripped (%s)" % dst)
say(poll(lambda: running(marker_b) == 0, 30), "the sandbox's processes are gone")
say(poll(lambda: not lt.is_alive(), 60), "the dripped listing ends (%s)" % open_list.get("status"))

# 3. ListDir of names of control bytes, a long directory repeated in every path: refused past
# its bound, and the server's memory stays small; a small one with such names is right
st, c = create()
say(st == 201, "a third sandbox")
tree = r'''
import os
p = "/home/user/t"
os.makedirs(p, exist_ok=True); os.chdir(p)
open("a\x01\"b\\c", "w").close()
for i in range(12):
    n = "\x01" * 245 + "%05d" % i
    os.mkdir(n); os.chdir(n)
for i in range(19000):
    open("\x02" * 245 + "%05d" % i, "w").close()
os.makedirs("/home/user/u"); os.chdir("/home/user/u")
for i in range(12000):
    open("\x03" * 245 + "%05d" % i, "w").close()
open("/home/user/tree-made", "w").close()
'''
start(c, "cat > tree.py <<'EOF'\n" + tree + "EOF\nexec python3 tree.py")
say(poll(lambda: bool(glob.glob(state + "/*/tree-made")), 120),
    "the tree is made")
r = req("POST", "/filesystem.Filesystem/ListDir", json.dumps({"path": "/home/user/t"}).encode(),
        {**hdrs(c), "Content-Type": "application/json"})
small = json.loads(r.read())
names = sorted(e["name"] for e in small.get("entries", []))
say(r.status == 200 and "a\x01\"b\\c" in names, "a small listing: names of control bytes and quotes come back whole")
deep = "/home/user/t/" + "/".join("\x01" * 245 + "%05d" % i for i in range(12))
pid = server_pid()
res = []
def big():
    r = req("POST", "/filesystem.Filesystem/ListDir", json.dumps({"path": deep}).encode(),
            {**hdrs(c), "Content-Type": "application/json"}, timeout=300)
    b = r.read()
    try:
        res.append((r.status, json.loads(b).get("code"), len(b)))
    except Exception:
        res.append((r.status, None, len(b)))
ts = [threading.Thread(target=big) for _ in range(4)]
[x.start() for x in ts]; [x.join() for x in ts]
say(all(x[:2] == (429, "resource_exhausted") for x in res),
    "4 listings of 19,000 such names at once: resource_exhausted (%s)" % res)
r = req("POST", "/filesystem.Filesystem/ListDir", json.dumps({"path": "/home/user/u"}).encode(),
        {**hdrs(c), "Content-Type": "application/json"}, timeout=300)
u = json.loads(r.read())
say(r.status == 429 and u.get("code") == "resource_exhausted" and "MiB as JSON" in u.get("message", ""),
    "12,000 names of control bytes (6 MB, 39 MB as JSON): resource_exhausted (%s %s)"
    % (r.status, u.get("code", "%d entries" % len(u.get("entries", [])))))
peak = hwm(pid) if pid else None
if pid and "libasan" in open(f"/proc/{pid}/maps").read():
    print("ok - the server's peak RSS # SKIP an ASan build", flush=True)
    sys.exit(0)
say(peak is not None and peak < 200 * 1024, "the server's peak RSS stays under 200 MB (%s KiB)" % peak)
PY
chmod 644 "$TEST_TMP/ends.py"
s=$(mkwork)
if serve "$s/e" "$(ulimit -Hn)" --max-sandboxes 1 --pool 0 -v; then
	while IFS= read -r line; do
		case $line in
		"ok - "*" # SKIP "*) r=${line#ok - }; skip "${r%% # SKIP *}" "${r#* # SKIP }" ;;
		"ok - "*) pass "${line#ok - }" ;;
		"not ok - "*) fail "${line#not ok - }" ;;
		*) diag "$line" ;;
		esac
	done < <(timeout -k 5 900 python3 "$TEST_TMP/ends.py" "$port" "$s/e" 2>&1)
	grep -i "ended\|shut down\|kill" "$TEST_TMP/serve.log" | sed 's/^/# /' | tail -8
else
	fail "the server starts: $(cat "$TEST_TMP/serve.log")"
fi
stop
done_testing
