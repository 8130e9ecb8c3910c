#!/usr/bin/python3
# Tests of src/server/bridge.py, the bridge between `cordon serve` and a context's Jupyter kernel:
# the bridge runs as the server runs it (python3 -u -I -c SOURCE LANGUAGE, requests on its
# stdin, events on its stdout); every line is checked to be one ASCII JSON object of a type the
# server and the E2B SDK read. Needs a python3 with python3-ipykernel and python3-jupyter-client
# (Debian's /usr/bin/python3), else one SKIP. Prints TAP.
#
#   python3 tests/unit/test_bridge.py [path/to/bridge.py]

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BRIDGE = (sys.argv[1] if len(sys.argv) > 1
          else os.path.join(HERE, "..", "..", "src", "server", "bridge.py"))
TYPES = {"ready", "number_of_executions", "stdout", "stderr", "result", "error",
         "end_of_execution"}
n = 0
failed = 0


def ok(cond, name, extra=None):
    global n, failed
    n += 1
    if not cond:
        failed += 1
    print("%s %d - %s" % ("ok" if cond else "not ok", n, name), flush=True)
    if not cond and extra is not None:
        for line in repr(extra)[:2000].splitlines():
            print("  # " + line)


def python_with_jupyter():
    for py in ("/usr/bin/python3", sys.executable):
        if py and subprocess.run([py, "-I", "-c", "import jupyter_client, ipykernel"],
                                 stderr=subprocess.DEVNULL).returncode == 0:
            return py
    return None


PY = python_with_jupyter()
with open(BRIDGE) as f:
    SOURCE = f.read()


class Bridge:
    def __init__(self, lang, hide=None):
        code = SOURCE
        if hide:                      # a package missing from the root
            code = "import sys\nsys.modules[%r] = None\n" % hide + SOURCE
        self.proc = subprocess.Popen([PY, "-u", "-I", "-c", code, lang], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, cwd="/tmp",
                                     process_group=0)  # its own, as the agent gives it
        self.lines = queue.Queue()
        self.bad = []
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
            self.lines.put(ev)
        self.lines.put(None)

    def next(self, timeout=60):
        try:
            return self.lines.get(timeout=timeout)
        except queue.Empty:
            return "timeout"

    def send(self, obj):
        self.proc.stdin.write((obj if isinstance(obj, str) else json.dumps(obj)).encode()
                              + b"\n")
        self.proc.stdin.flush()

    def run(self, code, env=None, timeout=60):
        self.send({"code": code, "env_vars": env or {}})
        return self.collect(timeout)

    def collect(self, timeout=60):
        evs = []
        while True:
            ev = self.next(timeout)
            if ev is None or ev == "timeout":
                evs.append(ev)
                return evs
            evs.append(ev)
            if ev["type"] == "end_of_execution":
                return evs

    def close(self):
        self.proc.stdin.close()
        return self.proc.wait(30)


def of(evs, kind):
    return [e for e in evs if isinstance(e, dict) and e["type"] == kind]


def gone(pid, timeout=10):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        try:                          # a zombie of ours counts as gone
            with open("/proc/%d/stat" % pid) as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except OSError:
            return True
        time.sleep(0.1)
    return False


def test_python():
    b = Bridge("python")
    ok(b.next() == {"type": "ready", "language": "python"}, "python: the first line is ready")
    evs = b.run("x = 20\nprint('hi')\nx * 2 + 2")
    ok([e["type"] for e in evs] == ["number_of_executions", "stdout", "result",
                                    "end_of_execution"], "an execution's lines, in order", evs)
    ok(of(evs, "result")[0].get("text") == "42" and of(evs, "result")[0]["is_main_result"],
       "the main result's text", evs)
    evs = b.run("1/0")
    err = of(evs, "error")
    ok(err and err[0]["name"] == "ZeroDivisionError" and isinstance(err[0]["traceback"], str),
       "an error: name, value, traceback as one string", evs)
    evs = b.run("'quoted'")
    ok(of(evs, "result")[0]["text"] == "quoted", "one pair of quotes off the text (E2B's)", evs)
    evs = b.run("from IPython.display import display, JSON\ndisplay({'a': 1}, raw=False)\n"
                "import IPython.display as d\nd.display({'application/x-thing': 'v', "
                "'text/plain': 't'}, raw=True)")
    res = of(evs, "result")
    ok(len(res) == 2 and res[1].get("extra") == {"application/x-thing": "v"}
       and not res[1]["is_main_result"], "an unknown mime type goes under extra", evs)
    b.send("not json")
    evs = b.collect()
    ok(of(evs, "error") and of(evs, "error")[0]["name"] == "KernelError"
       and evs[-1]["type"] == "end_of_execution", "a bad request: KernelError, then the end", evs)
    evs = b.run("import os; os.environ.get('E1')", env={"E1": "v1"})
    ok(of(evs, "result")[0]["text"] == "v1", "env_vars reach the execution", evs)
    evs = b.run("os.environ.get('E1', 'unset')")
    ok(of(evs, "result")[0]["text"] == "unset", "... and are gone after it", evs)
    pid = int(of(b.run("import os; os.getpid()"), "result")[0]["text"])
    b.send({"code": "import time\nprint('go', flush=True)\ntime.sleep(30)"})
    first = [b.next(), b.next()]
    b.proc.send_signal(signal.SIGINT)
    evs = first + b.collect(20)
    ok(of(evs, "error") and of(evs, "error")[0]["name"] == "KeyboardInterrupt"
       and evs[-1]["type"] == "end_of_execution", "SIGINT interrupts the execution", evs)
    evs = b.run("x")
    ok(of(evs, "result") and of(evs, "result")[0]["text"] == "20", "... the state is kept", evs)
    b.proc.send_signal(signal.SIGINT)          # idle: ignored
    ok(of(b.run("x"), "result"), "SIGINT while idle is ignored")
    ok(b.close() == 0 and gone(pid), "EOF: the bridge exits 0, its kernel with it")
    ok(not b.bad, "every line was one JSON event", b.bad)

    b = Bridge("python")
    b.next()
    pid = int(of(b.run("import os; os.getpid()"), "result")[0]["text"])
    b.proc.kill()
    b.proc.wait()
    ok(gone(pid), "SIGKILL of the bridge: its kernel dies too (PR_SET_PDEATHSIG)")

    b = Bridge("python")
    b.next()
    b.send({"code": "import os; os._exit(3)"})
    evs = b.collect(30)
    ok(evs[-1] is None and b.proc.wait(30) == 0,
       "the kernel dies: the bridge ends (the server says so)", evs)


def test_bash():
    b = Bridge("bash")
    ok(b.next() == {"type": "ready", "language": "bash"}, "bash: ready")
    evs = b.run("Y=7; echo out; echo err >&2; cd /")
    ok("".join(e["text"] for e in of(evs, "stdout")) == "out\n",
       "bash: stdout", evs)
    ok("".join(e["text"] for e in of(evs, "stderr")) == "err\n", "bash: stderr", evs)
    evs = b.run("echo $Y; pwd; read line; echo \"[$line]\"")
    ok("".join(e["text"] for e in of(evs, "stdout")) == "7\n/\n[]\n",
       "bash: one shell (variables, directory kept); stdin is empty", evs)
    evs = b.run("exit_with() { return $1; }; exit_with 4")
    ok(of(evs, "error") and of(evs, "error")[0]["value"] == "4", "bash: a status as an error", evs)
    evs = b.run("printf '%s' \"$E2\"", env={"E2": "a b'c"})
    ok("".join(e["text"] for e in of(evs, "stdout")) == "a b'c", "bash: env_vars, quoted", evs)
    b.send({"code": "echo go; sleep 30; echo not-here"})
    first = [b.next(), b.next()]
    b.proc.send_signal(signal.SIGINT)
    evs = first + b.collect(20)
    ok(evs[-1]["type"] == "end_of_execution" and "not-here" not in json.dumps(evs),
       "bash: SIGINT ends the cell", evs)
    evs = b.run("echo $Y")
    ok("".join(e["text"] for e in of(evs, "stdout")) == "7\n", "bash: ... the shell lives", evs)
    # the first SIGINT lost (as one is when it comes while bash forks: the child takes it before
    # its exec): here ignored for a second; the interrupt is sent again until the cell ends
    b.send({"code": "trap '' INT; echo go; sleep 1; trap 'return 130 2>/dev/null' INT; "
                    "sleep 30; echo not-here"})
    first = [b.next(), b.next()]
    b.proc.send_signal(signal.SIGINT)
    evs = first + b.collect(20)
    ok(isinstance(evs[-1], dict) and evs[-1]["type"] == "end_of_execution"
       and "not-here" not in json.dumps(evs),
       "bash: an interrupt the command did not take is sent again until the cell ends", evs)
    ok(b.close() == 0, "bash: EOF, exit 0")
    ok(not b.bad, "bash: every line was one JSON event", b.bad)

    b = Bridge("bash")
    b.next()
    pid = int("".join(e["text"] for e in of(b.run("sleep 300 & echo $!"), "stdout")))
    b.send({"code": "sleep 301"})
    b.next()
    os.killpg(b.proc.pid, signal.SIGKILL)      # as the server stops a context
    b.proc.wait()
    ok(gone(pid), "bash: the server's SIGKILL of the group leaves nothing of the context's")


def test_missing():
    b = Bridge("cobol")
    ev = b.next()
    ok(ev and ev["type"] == "error" and ev["name"] == "LanguageError" and "python" in ev["value"]
       and "bash" in ev["value"] and "cobol" in ev["value"],
       "a language the sandbox lacks: LanguageError naming those it has", ev)
    ok(b.proc.wait(30) == 3, "... and the bridge exits 3")
    b = Bridge("python", hide="ipykernel")
    ev = b.next()
    ok(ev and ev["name"] == "KernelError" and "python3-ipykernel" in ev["value"],
       "no ipykernel: the error names python3-ipykernel", ev)
    b.proc.wait(30)
    b = Bridge("python", hide="jupyter_client")
    ev = b.next()
    ok(ev and ev["name"] == "KernelError" and "python3-jupyter-client" in ev["value"],
       "no jupyter_client: the error names python3-jupyter-client", ev)
    b.proc.wait(30)
    b = Bridge("bash", hide="jupyter_client")
    ok(b.next() == {"type": "ready", "language": "bash"}, "bash needs no jupyter_client")
    b.close()


if PY is None:
    print("ok 1 - bridge # SKIP no python3 with ipykernel and jupyter_client "
          "(python3-ipykernel, python3-jupyter-client)")
    print("1..1")
    sys.exit(0)
test_python()
test_bash()
test_missing()
print("1..%d" % n)
sys.exit(1 if failed else 0)
