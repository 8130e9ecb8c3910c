#!/usr/bin/python3
# Tests of src/server/kernel.py, the Python kernel of `cordon serve`: the kernel runs as the
# server runs it (python3 -u -I, requests on its stdin, events on its stdout) and every event
# line is checked to be one JSON object of a type the E2B SDK reads. Prints TAP.
#
#   python3 tests/unit/test_kernel.py [path/to/kernel.py]

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
KERNEL = (sys.argv[1] if len(sys.argv) > 1
          else os.path.join(HERE, "..", "..", "src", "server", "kernel.py"))
TYPES = {"number_of_executions", "stdout", "stderr", "result", "error", "end_of_execution"}
CHUNK = 64 * 1024


class Kernel:
    """A kernel process; events() collects the lines of one execution."""

    def __init__(self, inline=False, env=None):
        if inline:
            with open(KERNEL) as f:
                argv = [sys.executable, "-u", "-I", "-c", f.read()]
        else:
            argv = [sys.executable, "-u", "-I", KERNEL]
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=env)
        self.lines = queue.Queue()
        self.bad = []                 # lines that are not what the protocol allows
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for raw in self.proc.stdout:
            try:
                line = raw.decode("ascii")
                assert line.endswith("\n") and "\n" not in line[:-1]
                ev = json.loads(line)
                assert isinstance(ev, dict) and ev.get("type") in TYPES
            except Exception:
                self.bad.append(raw[:200])
                continue
            self.lines.put((time.monotonic(), ev))
        self.lines.put((time.monotonic(), None))        # EOF

    def send(self, obj):
        data = obj if isinstance(obj, (bytes, str)) else json.dumps(obj)
        if isinstance(data, str):
            data = data.encode()
        self.proc.stdin.write(data + b"\n")
        self.proc.stdin.flush()

    def next(self, timeout=10):
        try:
            return self.lines.get(timeout=timeout)
        except queue.Empty:
            return None, None

    def collect(self, timeout=20):
        """Events up to and including end_of_execution (stamped with their arrival time)."""
        out = []
        deadline = time.monotonic() + timeout
        while True:
            t, ev = self.next(max(0.01, deadline - time.monotonic()))
            if ev is None:
                return out
            out.append((t, ev))
            if ev["type"] == "end_of_execution":
                return out

    def run(self, code, **extra):
        self.send(dict(code=code, **extra))
        return [ev for _, ev in self.collect()]

    def close(self):
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            return self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return None


def text(events, kind):
    return "".join(e["text"] for e in events if e["type"] == kind)


def of(events, kind):
    return [e for e in events if e["type"] == kind]


def framed(events):
    """number_of_executions first, end_of_execution last, each once."""
    kinds = [e["type"] for e in events]
    return (len(kinds) >= 2 and kinds[0] == "number_of_executions" and kinds[-1] ==
            "end_of_execution" and kinds.count("end_of_execution") == 1 and
            kinds.count("number_of_executions") == 1)


TESTS = []


def test(fn):
    TESTS.append(fn)
    return fn


@test
def print_is_stdout(k):
    "print(2 + 2) is stdout 4\\n, no result"
    ev = k.run("print(2 + 2)")
    return framed(ev) and text(ev, "stdout") == "4\n" and not of(ev, "result") \
        and not of(ev, "error"), ev


@test
def state_persists(k):
    "state persists across requests: x = 1, then x + 1 is the result 2"
    a = k.run("x = 1")
    b = k.run("x + 1")
    r = of(b, "result")
    return framed(a) and len(a) == 2 and len(r) == 1 and r[0]["text"] == "2" \
        and r[0]["is_main_result"] is True, (a, b)


@test
def last_expression(k):
    "the last expression is the main result; imports and functions persist"
    k.run("import math\ndef f(v):\n    return v * 2")
    ev = k.run("y = f(21)\ny += 0\nmath.floor(y + 0.5)")
    r = of(ev, "result")
    q = of(k.run("'abc'"), "result")
    return len(r) == 1 and r[0]["text"] == "42" and q and q[0]["text"] == "abc", (ev, q)


@test
def counts(k):
    "number_of_executions counts the executions"
    a = of(k.run("pass"), "number_of_executions")[0]["execution_count"]
    b = of(k.run("pass"), "number_of_executions")[0]["execution_count"]
    return b == a + 1, (a, b)


@test
def none_and_semicolon(k):
    "None and a trailing ';' give no result; _ holds the last result"
    a = k.run("None")
    b = k.run("7;")
    c = k.run("8")
    d = k.run("_ * 2")
    return not of(a, "result") and not of(b, "result") and \
        of(d, "result")[0]["text"] == "16", (a, b, c, d)


@test
def exception(k):
    "an exception is an error event: name, value, traceback without the kernel's frames"
    ev = k.run("def g():\n    raise ValueError('bad thing')\ng()")
    e = of(ev, "error")
    if not framed(ev) or len(e) != 1:
        return False, ev
    e = e[0]
    tb = e["traceback"]
    return (e["name"] == "ValueError" and e["value"] == "bad thing" and
            tb.startswith("Traceback (most recent call last):\n") and "<cell " in tb and
            "raise ValueError('bad thing')" in tb and "_execute" not in tb and
            "kernel.py" not in tb and tb.endswith("ValueError: bad thing\n")), e


@test
def syntax_error(k):
    "a syntax error is an error event named SyntaxError"
    ev = k.run("x = = 1")
    e = of(ev, "error")
    return framed(ev) and len(e) == 1 and e[0]["name"] == "SyntaxError" and \
        "x = = 1" in e[0]["traceback"] and "kernel" not in e[0]["traceback"], ev


@test
def raw_fd_and_subprocess(k):
    "os.write(1, ...) and a subprocess's output are stdout, in order"
    ev = k.run("import os, subprocess, sys\nprint('a')\nos.write(1, b'raw\\n')\n"
               "subprocess.run(['echo', 'x'])\nsys.stdout.write('b\\n')")
    return text(ev, "stdout") == "a\nraw\nx\nb\n", ev


@test
def stderr(k):
    "sys.stderr, os.write(2, ...) and a subprocess's stderr are stderr"
    ev = k.run("import os, sys, subprocess\nsys.stderr.write('s1\\n')\nos.write(2, b's2\\n')\n"
               "subprocess.run(['sh', '-c', 'echo s3 >&2'])\nprint('o')")
    return text(ev, "stderr") == "s1\ns2\ns3\n" and text(ev, "stdout") == "o\n", ev


@test
def ordering(k):
    "all output comes before the result and the end"
    ev = k.run("import os\nfor i in range(2000):\n    print(i)\n    os.write(1, b'')\n"
               "import subprocess\nsubprocess.run(['seq', '2000', '2999'])\n"
               "os.write(2, b'last\\n')\n'done'")
    kinds = [e["type"] for e in ev]
    want = "".join("%d\n" % i for i in range(3000))
    return (text(ev, "stdout") == want and text(ev, "stderr") == "last\n" and
            kinds[-2:] == ["result", "end_of_execution"]), kinds[-5:]


@test
def env_vars(k):
    "env_vars apply to one execution (and its subprocesses), then are restored"
    code = ("import os, subprocess\nprint(os.environ.get('CORDON_T'), os.environ.get('HOME'))\n"
            "subprocess.run(['sh', '-c', 'echo sub=$CORDON_T'])")
    home = k.run("import os\nos.environ.get('HOME')")
    a = k.run(code, env_vars={"CORDON_T": "v1", "HOME": "/elsewhere"})
    b = k.run(code)
    h = of(home, "result")[0]["text"] if of(home, "result") else "None"
    return (text(a, "stdout") == "v1 /elsewhere\nsub=v1\n" and
            text(b, "stdout") == "None %s\nsub=\n" % h), (a, b)


@test
def malformed(k):
    "malformed requests get a KernelError and the end, and the kernel keeps serving"
    ok = True
    seen = []
    for bad in [b"not json", b'{"nocode": 1}', b'{"code": 5}', b"[1, 2]", b"\xff\xfe{",
                b'{"code": "1", "env_vars": {"A": 1}}', b'{"code": "1", "env_vars": [1]}',
                b'{"code": "1", "env_vars": {"A=B": "x"}}', b"[" * 100000]:
        k.send(bad)
        ev = [e for _, e in k.collect()]
        seen.append(ev)
        ok = ok and len(ev) == 2 and ev[0]["type"] == "error" and \
            ev[0]["name"] == "KernelError" and ev[0]["value"] and \
            ev[1]["type"] == "end_of_execution"
    k.send(b"   ")                                  # a blank line is ignored
    after = k.run("print('still')")
    return ok and text(after, "stdout") == "still\n" and framed(after), seen


@test
def interrupt_busy_loop(k):
    "SIGINT during while True: pass is a KeyboardInterrupt error, and the kernel serves on"
    k.send({"code": "n = 0\nwhile True:\n    n += 1"})
    t, first = k.next()
    time.sleep(0.3)
    k.proc.send_signal(signal.SIGINT)
    ev = [first] + [e for _, e in k.collect()]
    e = of(ev, "error")
    after = k.run("n > 0")
    return (framed(ev) and len(e) == 1 and e[0]["name"] == "KeyboardInterrupt" and
            "<cell " in e[0]["traceback"] and of(after, "result")[0]["text"] == "True"), ev


@test
def interrupt_sleep_and_child(k):
    "SIGINT interrupts time.sleep and a waited-for child process"
    res = []
    for code in ["import time\ntime.sleep(60)",
                 "import subprocess\nsubprocess.run(['sleep', '60'])"]:
        k.send({"code": code})
        k.next()
        time.sleep(0.3)
        start = time.monotonic()
        k.proc.send_signal(signal.SIGINT)
        ev = [e for _, e in k.collect(timeout=10)]
        res.append((time.monotonic() - start < 5, [e.get("name") for e in of(ev, "error")]))
    return all(fast and names == ["KeyboardInterrupt"] for fast, names in res), res


@test
def interrupt_idle(k):
    "SIGINT while idle is ignored"
    for _ in range(5):
        k.proc.send_signal(signal.SIGINT)
        time.sleep(0.02)
    time.sleep(0.2)
    t, stray = k.next(timeout=0.2)
    ev = k.run("print('alive')")
    return stray is None and k.proc.poll() is None and text(ev, "stdout") == "alive\n" \
        and not of(ev, "error"), (stray, ev)


@test
def streaming(k):
    "output streams while the execution runs"
    k.send({"code": "import time, sys\nfor i in range(3):\n    print(i)\n    time.sleep(0.4)\n"
                    "sys.stdout.write('no newline')\ntime.sleep(0.4)"})
    evs = k.collect()
    end = evs[-1][0]
    early = [(end - t, e["text"]) for t, e in evs if e["type"] == "stdout"]
    return (len(early) >= 4 and early[0][0] > 1.0 and early[0][1] == "0\n" and
            any(txt == "no newline" and dt > 0.2 for dt, txt in early)), early


@test
def huge_line(k):
    "a 1 MB single-line print arrives whole, in events of at most 64 KiB"
    ev = k.run("print('ab' * 512 * 1024)")
    out = of(ev, "stdout")
    return (text(ev, "stdout") == "ab" * 512 * 1024 + "\n" and len(out) >= 16 and
            all(len(e["text"]) <= CHUNK for e in out)), [len(e["text"]) for e in out]


@test
def utf8(k):
    "UTF-8 split across writes is decoded whole; invalid bytes become U+FFFD"
    ev = k.run("import os\nb = 'é€😀'.encode()\n"
               "for i in range(len(b)):\n    os.write(1, b[i:i+1])\n"
               "os.write(1, b'\\n\\xff\\n')\nprint('\\u2603', '\\ud800')")
    return text(ev, "stdout") == "é€😀\n\ufffd\n\u2603 \\ud800\n", ev


@test
def rich_results(k):
    "_repr_html_ / _repr_png_ and display() give the formats the SDK reads"
    ev = k.run("class H:\n    def _repr_html_(self): return '<b>x</b>'\n"
               "    def _repr_png_(self): return b'\\x89PNG'\n"
               "    def __repr__(self): return 'H()'\n"
               "display(H(), 5)\nH()")
    r = of(ev, "result")
    return (len(r) == 3 and r[0]["is_main_result"] is False and r[0]["html"] == "<b>x</b>" and
            r[0]["png"] == "iVBORw==" and r[1]["text"] == "5" and r[2]["is_main_result"] is True
            and r[2]["text"] == "H()"), r


@test
def top_level_await(k):
    "top-level await works, also after an interrupted await"
    k.send({"code": "import asyncio\nawait asyncio.sleep(60)"})
    k.next()
    time.sleep(0.3)
    k.proc.send_signal(signal.SIGINT)
    stopped = [e for _, e in k.collect(timeout=10)]
    ev = k.run("async def two():\n    await asyncio.sleep(0.01)\n    return 2\n"
               "await two()")
    r = of(ev, "result")
    return (of(stopped, "error")[0]["name"] == "KeyboardInterrupt" and len(r) == 1 and
            r[0]["text"] == "2"), (stopped, ev)


@test
def system_exit_and_fds(k):
    "sys.exit() is an error; closing fd 1 or replacing sys.stdout lasts one execution"
    a = k.run("import sys\nsys.exit(3)")
    b = k.run("import os\nos.close(1)\nos.close(2)")
    c = k.run("import os, sys\nos.write(1, b'back\\n')\nsys.stdout.close()")
    d = k.run("print('again')")
    return (of(a, "error")[0]["name"] == "SystemExit" and framed(b) and
            text(c, "stdout") == "back\n" and text(d, "stdout") == "again\n"), (a, b, c, d)


@test
def idle_output_dropped(k):
    "output written while idle is not sent: nothing between executions"
    k.run("import threading, time\ndef spam():\n    for i in range(30):\n"
          "        print('bg', i)\n        time.sleep(0.01)\n"
          "threading.Thread(target=spam).start()")
    t, stray = k.next(timeout=0.6)
    ev = k.run("print('fg')")
    return stray is None and framed(ev) and text(ev, "stdout").endswith("fg\n"), stray


@test
def inline_and_eof(k):
    "started with -c, the kernel works too; EOF on requests is exit 0"
    k2 = Kernel(inline=True)
    ev = k2.run("print(2 + 2)\n40 + 2")
    rc = k2.close()
    return (text(ev, "stdout") == "4\n" and of(ev, "result")[0]["text"] == "42" and rc == 0
            and not k2.bad), (ev, rc)


@test
def eof_exits_with_threads(k):
    "EOF exits 0 even with user threads and children still running"
    k2 = Kernel()
    k2.run("import threading, subprocess, time\n"
           "threading.Thread(target=time.sleep, args=(5,)).start()\n"
           "p = subprocess.Popen(['sleep', '5'])")
    start = time.monotonic()
    rc = k2.close()
    return rc == 0 and time.monotonic() - start < 3, rc


def main():
    k = Kernel()
    failed = 0
    print("1..%d" % (len(TESTS) + 1))
    for n, fn in enumerate(TESTS, 1):
        try:
            ok, detail = fn(k)
        except Exception as e:
            ok, detail = False, repr(e)
        if ok:
            print("ok %d - %s" % (n, fn.__doc__))
        else:
            failed += 1
            print("not ok %d - %s" % (n, fn.__doc__))
            print("# " + repr(detail)[:2000])
        sys.stdout.flush()
    rc = k.close()
    err = k.proc.stderr.read()
    n = len(TESTS) + 1
    if rc == 0 and not k.bad and not err:
        print("ok %d - every event line was one JSON object; exit 0; nothing on stderr" % n)
    else:
        failed += 1
        print("not ok %d - every event line was one JSON object; exit 0; nothing on stderr" % n)
        print("# rc=%r bad=%r stderr=%r" % (rc, k.bad[:3], err[:500]))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
