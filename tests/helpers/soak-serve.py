#!/usr/bin/env python3
"""soak-serve.py - the server half of the soak (tests/integration/t-soak.sh): many sandboxes
made, used and ended through `cordon serve`'s HTTP API (E2B's REST plane, envd's Connect JSON,
/files), with faults picked by a seeded RNG, every sandbox's outcome counted, and what the
server holds compared before and after.

  soak-serve.py N SEED PORT STATE BALLAST RESTARTS -- SERVER-ARGV...

SERVER-ARGV starts the server (listening on PORT, state directory STATE, API key in the
environment); this program starts it, SIGKILLs and restarts it (the "server" fault, at most
RESTARTS times, all in the first half), and stops it (SIGTERM) at the end. BALLAST: a file to
create on the state directory's filesystem (a small tmpfs of its own) to fill it for the "disk"
fault, or "-": that fault is not drawn. It is a child subreaper: whatever the server started that
outlives it comes back here, and is counted. CORDON_SOAK_SECONDS in the environment: after the
N, go on with more (no restarts) until that many seconds have passed (hours, by hand). Prints "# " lines and one last line of counts,
"soak-serve: key=value ...", which the suite checks.
"""
import concurrent.futures, ctypes, http.client, json, os, random, signal, struct, subprocess, sys
import threading, time

KEY = os.environ.get("CORDON_SERVE_API_KEY", "")
n, seed, port, state, ballast, restarts = (int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]),
                                           sys.argv[4], sys.argv[5], int(sys.argv[6]))
argv = sys.argv[sys.argv.index("--") + 1:]
rng = random.Random(seed)
ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
FAULTS = ["plain", "kill", "timeout", "supervisor", "agent", "vanish", "disk", "server"]
made = {f: 0 for f in FAULTS}
reported = {f: 0 for f in FAULTS}
wrong = {f: 0 for f in FAULTS}
secs = {f: 0.0 for f in FAULTS}
server = None
log = open(os.environ.get("SOAK_SERVE_LOG", "/dev/null"), "ab")
WORKERS = 4  # sandboxes under way at once
T = 30  # every request's answer within 30 s, or it is missing


def say(*a):
    print("#", *a, flush=True)


def children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(p) for p in f.read().split()]
    except OSError:
        return []


def descendants(pid):
    out = []
    for c in children(pid):
        out += [c] + descendants(c)
    return out


def reap_orphans():
    """zombies of ours that are not the server (it is waited for by Popen)"""
    for c in children(os.getpid()):
        if server is None or c != server.pid:
            try:
                os.waitpid(c, os.WNOHANG)
            except ChildProcessError:
                pass


def start_server():
    global server
    server = subprocess.Popen(argv, stderr=log, stdin=subprocess.DEVNULL)
    for _ in range(300):
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            c.request("GET", "/health")
            if c.getresponse().status < 500:
                return
        except OSError:
            pass
        if server.poll() is not None:
            raise SystemExit(f"the server exited: {server.returncode}")
        time.sleep(0.1)
    raise SystemExit("the server does not answer")


def req(method, path, body=b"", headers=None):
    """(status, body bytes), or (None, error text) when the connection failed"""
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=T)
        c.request(method, path, body, {"X-API-Key": KEY, **(headers or {})})
        r = c.getresponse()
        data = r.read()
        c.close()
        return r.status, data
    except (OSError, http.client.HTTPException) as e:
        return None, repr(e)


def envd(sb):
    return {"E2b-Sandbox-Id": sb["sandboxID"], "E2b-Sandbox-Port": "49983",
            "X-Access-Token": sb.get("envdAccessToken") or ""}


def start_cmd(sb, script):
    """a Connect stream of `sh -c script`: the open response, or (None, why)"""
    msg = json.dumps({"process": {"cmd": "/bin/sh", "args": ["-c", script]}}).encode()
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=T)
        c.request("POST", "/process.Process/Start", struct.pack(">BI", 0, len(msg)) + msg,
                  {**envd(sb), "Content-Type": "application/connect+json",
                   "Connect-Protocol-Version": "1"})
        return c, c.getresponse()
    except (OSError, http.client.HTTPException) as e:
        return None, repr(e)


def follow(c, r, upto=None):
    """read a stream's messages: ("end", exitCode or status) at its end event, ("error", code)
    at an error, ("eof", "") when it stops without either, ("stopped", "") after `upto` data
    messages, ("transport", why) when the connection fails"""
    if c is None:
        return "transport", r
    if r.status != 200:
        body = r.read()
        c.close()
        return "error", f"{r.status} {body[:80]!r}"
    datas, end = 0, None
    try:
        while True:
            head = r.read(5)
            if len(head) < 5:
                c.close()
                return ("end", end) if end is not None else ("eof", "")
            flags, k = struct.unpack(">BI", head)
            m = json.loads(r.read(k) or b"{}")
            if flags & 2:
                c.close()
                if end is not None:
                    return "end", end
                return "error", (m.get("error") or {}).get("code", "?")
            ev = m.get("event", {})
            if "data" in ev:
                datas += 1
                if upto is not None and datas >= upto:
                    return "stopped", ""
            if "end" in ev:
                e = ev["end"]
                end = e.get("exitCode", e.get("status", 0))
    except (OSError, http.client.HTTPException, ValueError) as e:
        c.close()
        return "transport", repr(e)


def supervisors():
    """the server's grandchildren: its session maker's children"""
    return sorted(g for c in children(server.pid) for g in children(c))


creating = threading.Lock()


def create(timeout=60):
    """(sandbox, None) or (None, why); the sandbox's "supervisor": its supervisor's pid (the
    one that appeared: creates are made one at a time, with no pool)"""
    with creating:
        before = set(supervisors())
        st, body = req("POST", "/sandboxes", json.dumps({"timeout": timeout}).encode(),
                       {"Content-Type": "application/json"})
        new = set(supervisors()) - before
    if st == 201 or st == 200:
        sb = json.loads(body)
        sb["supervisor"] = new.pop() if len(new) == 1 else None
        return sb, None
    return None, f"{st} {body[:120]!r}"


def gone(sb, within):
    """the sandbox is no longer the server's (404) within `within` seconds"""
    end = time.monotonic() + within
    while time.monotonic() < end:
        st, _ = req("GET", "/sandboxes/" + sb["sandboxID"])
        if st == 404:
            return True
        time.sleep(0.1)
    return False


def fill_disk():
    with open(ballast, "wb") as f:
        try:
            while True:
                f.write(b"\0" * 65536)
                f.flush()
        except OSError:
            pass


def one(i, fault, restarted):
    """one sandbox through its fault; returns what differed from the expected, or None. Every
    answer counts: a create refused with a clear error is this sandbox's outcome."""
    if fault == "disk":
        fill_disk()
    try:
        sb, why = create(1 if fault == "timeout" else 60)
        if sb is None:
            if why.startswith("None"):
                return "create got no answer: " + why
            say(i, fault, "create refused:", why)  # an answer: the disk was full
            return None
        sid = sb["sandboxID"]
        if fault == "plain":
            res = follow(*start_cmd(sb, "echo soak > f && cat f"))
            if res != ("end", 0):
                return f"a command: {res}"
            st, body = req("POST", "/files?path=/home/user/sub/file&username=user",
                           os.urandom(random.Random(seed * 100003 + i).randrange(1000, 200000)),
                           {**envd(sb), "Content-Type": "application/octet-stream"})
            if st != 200:
                return f"an upload: {st} {body[:80]!r}"
            st, _ = req("DELETE", "/sandboxes/" + sid)
            return None if st == 204 else f"DELETE answered {st}"
        if fault == "disk":
            res = follow(*start_cmd(sb, "head -c 4194304 /dev/zero > big"))
            st, _ = req("POST", "/files?path=/home/user/more&username=user", b"\0" * (1 << 20),
                        {**envd(sb), "Content-Type": "application/octet-stream"})
            os.unlink(ballast)
            if res == ("end", 0) and st == 200:
                return "4 MiB and 1 MiB written to a full filesystem"
            if res[0] == "transport" or st is None:
                return f"no answer on a full disk: {res} {st}"
            req("DELETE", "/sandboxes/" + sid)
            return None
        if fault == "kill":
            c, r = start_cmd(sb, "while :; do echo x; sleep 0.05; done")
            st, _ = req("DELETE", "/sandboxes/" + sid)
            res = follow(c, r)
            if st != 204:
                return f"DELETE answered {st}"
            return None if res[0] in ("error", "end", "eof") else f"the stream: {res}"
        def ended(res, what):  # the stream ended (not a broken transport), then the sandbox
            if res[0] == "transport":
                return f"the stream of a sandbox {what}: {res}"
            return None if gone(sb, 20) else f"alive 20 s on, {what}"
        if fault == "timeout":
            return ended(follow(*start_cmd(sb, "sleep 30")), "past its timeout of 1 s")
        if fault == "supervisor":
            c, r = start_cmd(sb, "sleep 30")
            if not sb["supervisor"]:
                return "its supervisor not found"
            os.kill(sb["supervisor"], signal.SIGKILL)
            return ended(follow(c, r), "whose supervisor was killed")
        if fault == "agent":
            return ended(follow(*start_cmd(sb, "kill -9 $PPID; sleep 5")), "whose agent was killed")
        if fault == "vanish":
            c, r = start_cmd(sb, "while :; do echo x; sleep 0.02; done")
            res = follow(c, r, upto=3)
            if c is not None:  # the client vanishes: a reset, no goodbye
                c.sock.setsockopt(1, 13, struct.pack("ii", 1, 0))  # SO_LINGER 0
                c.sock.close()
            if res != ("stopped", ""):
                return f"the stream before the client vanished: {res}"
            st, _ = req("DELETE", "/sandboxes/" + sid)
            return None if st == 204 else f"DELETE answered {st}"
        if fault == "server":
            c, r = start_cmd(sb, "while :; do echo x; sleep 0.05; done")
            server.send_signal(signal.SIGKILL)
            server.wait()
            res = follow(c, r)
            start_server()
            restarted.append(i)
            if res[0] not in ("transport", "eof"):
                return f"the stream across the server's death: {res}"
            st, _ = req("GET", "/sandboxes/" + sid)
            return None if st == 404 else f"after a restart the sandbox answers {st}"
    finally:
        if fault == "disk" and os.path.exists(ballast):
            os.unlink(ballast)
    return "?"


def stat_server():
    pid = server.pid
    fds = len(os.listdir(f"/proc/{pid}/fd"))
    with open(f"/proc/{pid}/status") as f:
        rss = next(int(l.split()[1]) for l in f if l.startswith("VmRSS:"))
    return fds, rss


def count_state():
    try:
        return sorted(os.listdir(state))
    except OSError:
        return []


def main():
    signal.signal(signal.SIGALRM, lambda *a: (_ for _ in ()).throw(SystemExit("soak-serve: stuck")))
    seconds = int(os.environ.get("CORDON_SOAK_SECONDS") or 0)
    until = time.monotonic() + seconds
    signal.alarm(900 + seconds)
    say(f"soak-serve: {n} sandboxes, seed {seed}" + (", no disk fault" if ballast == "-" else ""))
    start_server()
    faults = [f for f in FAULTS if ballast != "-" or f != "disk"]
    restarted, warm = [], max(4, n // 10)
    half = n // 2
    # a warm-up (plain) at the end of the first half, after the last restart: the baseline
    plan = [rng.choice([f for f in faults if f != "server"]) for _ in range(n)]
    for i in range(half - warm, half):
        plan[i] = "plain"
    # the restarts: RESTARTS of them, at places drawn in the first half, before the warm-up
    for i in rng.sample(range(max(0, half - warm)), min(restarts, max(0, half - warm))):
        plan[i] = "server"
    base = None
    states_base = None
    gate = threading.Condition()
    busy = [0, False]  # sandboxes under way; an exclusive one (server, disk) under way

    def work(i, f):
        exclusive = f in ("server", "disk")  # they would fail the others' requests
        with gate:
            gate.wait_for(lambda: not busy[1] and (not exclusive or busy[0] == 0))
            busy[0] += 1
            busy[1] = exclusive
            made[f] += 1
        t0 = time.monotonic()
        try:
            why = one(i, f, restarted)
            reap_orphans()  # a pid 1 whose supervisor was killed: not left a zombie
        except Exception as e:  # a bug of this program: said, and counted as not reported
            say(i, f, "soak-serve:", repr(e))
            return
        with gate:
            busy[0] -= 1
            busy[1] = False
            gate.notify_all()
            secs[f] += time.monotonic() - t0
            reported[f] += 1
            if why:
                wrong[f] += 1
                say(i, f, why)

    for lo, hi in ((0, half), (half, n)):
        if lo == half:
            time.sleep(0.5)
            base = stat_server()
            states_base = count_state()
            say(f"after warm-up: {base[0]} descriptors, {base[1]} KiB RSS, "
                f"{len(states_base)} state dir entries")
        with concurrent.futures.ThreadPoolExecutor(WORKERS) as ex:
            list(ex.map(lambda i: work(i, plan[i]), range(lo, hi)))
        reap_orphans()
    more = [f for f in faults if f != "server"]  # the baseline stays this server's
    while time.monotonic() < until:  # by hand: on and on, in rounds of 100
        lo = len(plan)
        plan += [rng.choice(more) for _ in range(100)]
        with concurrent.futures.ThreadPoolExecutor(WORKERS) as ex:
            list(ex.map(lambda i: work(i, plan[i]), range(lo, len(plan))))
        reap_orphans()
    # every sandbox gone: the list is empty
    for _ in range(200):
        st, body = req("GET", "/sandboxes")
        if st == 200 and json.loads(body) == []:
            break
        time.sleep(0.1)
    listed = len(json.loads(body)) if st == 200 else -1
    time.sleep(0.5)
    for _ in range(50):  # descriptors let go as the destroyers end
        end = stat_server()
        if base is None or end[0] <= base[0]:
            break
        time.sleep(0.1)
    if base is None:
        base = end
        states_base = count_state()
    states_end = count_state()
    say("fault       made reported wrong seconds")
    for f in FAULTS:
        say(f"{f:<10} {made[f]:5} {reported[f]:8} {wrong[f]:5} {secs[f]:7.1f}")
    say("state dir at the end:", " ".join(states_end))
    server.send_signal(signal.SIGTERM)
    try:
        server.wait(30)
    except subprocess.TimeoutExpired:
        say("the server did not stop in 30 s: SIGKILL")
        server.kill()
        server.wait()
    left = []
    for _ in range(50):
        reap_orphans()
        left = descendants(os.getpid())
        if not left:
            break
        time.sleep(0.1)
    for p in left:
        try:
            say("left:", p, open(f"/proc/{p}/cmdline").read().replace("\0", " "))
        except OSError:
            pass
    print(f"soak-serve: sandboxes={sum(made.values())} reported={sum(reported.values())} "
          f"wrong={sum(wrong.values())} restarts={len(restarted)} listed_end={listed} "
          f"fds_warm={base[0]} fds_end={end[0]} rss_warm_kb={base[1]} rss_end_kb={end[1]} "
          f"after_warm={len(plan) - half} state_warm={len(states_base)} state_end={len(states_end)} "
          f"processes_left={len(left)}", flush=True)


main()
