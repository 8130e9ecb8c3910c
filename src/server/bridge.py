# cordon serve: the bridge between the server and a Jupyter kernel, one process per code context.
#
# Started by interp.c as `python3 -u -I -c "<this source>" LANGUAGE` with fd 0 = requests and
# fd 1 = events, in the sandbox. It runs the context's kernel: for "python" a real IPython kernel
# (python3-ipykernel, `python3 -m ipykernel_launcher`), for another language the Jupyter kernel
# whose kernelspec says that language (r-cran-irkernel's "ir" for "r", ...), spoken to with
# python3-jupyter-client over ipc sockets in a private directory (the sandbox may have no
# network); for "bash", which Debian packages no Jupyter kernel for, one persistent bash.
#
# Lines, each one ASCII JSON object with a "type" (interp.c checks each, kline.c):
#   first, once: {"type":"ready","language":L} or {"type":"error","name":N,"value":V,...} and
#     exit (name "LanguageError": the sandbox has no kernel for L, value names those it has;
#     "KernelError": a package is missing, or the kernel did not start)
#   request: {"code": "...", "env_vars": {"K": "V"}}
#   answer: {"type":"number_of_executions","execution_count":N}, then stdout/stderr/result/
#     error lines in E2B's shapes (@e2b/code-interpreter's parseOutput(); formats from the
#     Jupyter mime bundle: text html markdown svg png jpeg pdf latex json javascript, E2B's
#     e2b/data and e2b/chart as data and chart, any other mime type under "extra"), then
#     {"type":"end_of_execution"}.
#   SIGINT interrupts the running execution (the kernel's interrupt); while idle it is ignored.
#   EOF on the request fd: the kernel is stopped and the bridge exits 0. When the kernel dies,
#   the bridge exits (the server says so and starts a new one on the next execution).

import json
import os
import signal
import sys
import threading
import time

KERNEL_START_TIMEOUT = 120.0
CHUNK = 64 * 1024

_MIME = {
    "text/plain": "text", "text/html": "html", "text/markdown": "markdown",
    "image/svg+xml": "svg", "image/png": "png", "image/jpeg": "jpeg",
    "application/pdf": "pdf", "text/latex": "latex", "application/json": "json",
    "application/javascript": "javascript", "e2b/data": "data", "e2b/chart": "chart",
}


def _now():
    t = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + ".%06dZ" % int(t % 1 * 1e6)


class Events:
    """The event fd: whole lines under one lock."""

    def __init__(self, fd):
        self.fd = fd
        self.lock = threading.Lock()

    def emit(self, obj):
        try:
            line = json.dumps(obj, ensure_ascii=True, allow_nan=False, separators=(",", ":"))
        except (TypeError, ValueError) as e:
            line = json.dumps({"type": "stderr", "text": "[a message was dropped: %s]\n" % e,
                               "timestamp": _now()})
        data = (line + "\n").encode("ascii")
        with self.lock:
            view = memoryview(data)
            try:
                while view:
                    view = view[os.write(self.fd, view):]
            except OSError:           # the server is gone: nothing left to serve
                os._exit(1)

    def error(self, name, value, traceback=""):
        self.emit({"type": "error", "name": name, "value": value, "traceback": traceback})

    def output(self, stream, text):
        for i in range(0, len(text), CHUNK):
            self.emit({"type": stream, "text": text[i:i + CHUNK], "timestamp": _now()})

    def end(self):
        self.emit({"type": "end_of_execution"})


def result_event(data, main):
    """A Jupyter mime bundle as E2B's result."""
    out = {"type": "result", "is_main_result": main}
    extra = {}
    for mime, value in data.items():
        key = _MIME.get(mime)
        if key is None:
            extra[mime] = value
        else:
            out[key] = value
    text = out.get("text")
    if isinstance(text, str) and len(text) >= 2 and text[0] == "'" and text[-1] == "'":
        out["text"] = text[1:-1]      # as E2B's server does ('abc' -> abc)
    if extra:
        out["extra"] = extra
    return out


def _pdeathsig(sig):
    """A child that dies with the bridge (SIGKILL from the server leaves no kernel behind)."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)

    def set_it():
        libc.prctl(1, sig, 0, 0, 0)   # PR_SET_PDEATHSIG
    return set_it


def _user_site():
    """The user site-packages (under HOME), made if it can be, so that what `pip install`
    (PIP_USER) puts there is importable in the running kernel: Python adds it to sys.path at
    start only if it exists."""
    try:
        import site
        path = site.getusersitepackages()
        os.makedirs(path, exist_ok=True)
    except Exception:
        pass


def kernel_env(runtime_dir):
    env = dict(os.environ)
    home = env.get("HOME", "")
    # Debian's python is "externally managed" (PEP 668) and its root is read-only here:
    # `!pip install x` installs into the user site under HOME.
    env.setdefault("PIP_USER", "1")
    env.setdefault("PIP_BREAK_SYSTEM_PACKAGES", "1")
    env.setdefault("PIP_DISABLE_PIP_VERSION_CHECK", "1")
    env.setdefault("PIP_NO_INPUT", "1")
    env.pop("PYTHONNOUSERSITE", None)
    if home:
        local_bin = os.path.join(home, ".local", "bin")
        path = env.get("PATH", "/usr/local/bin:/usr/bin:/bin")
        if local_bin not in path.split(":"):
            env["PATH"] = local_bin + ":" + path
    env["JUPYTER_RUNTIME_DIR"] = runtime_dir
    env.setdefault("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    env.pop("JPY_PARENT_PID", None)
    env.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")   # else a warning on stderr
    return env


def python_available():
    import importlib.util
    try:
        return importlib.util.find_spec("ipykernel") is not None
    except (ImportError, ValueError):
        return False


def kernelspecs():
    """{language: (name, spec)} of the installed Jupyter kernelspecs but IPython's."""
    try:
        from jupyter_client.kernelspec import KernelSpecManager
        specs = KernelSpecManager(ensure_native_kernel=False).get_all_specs()
    except Exception:
        return {}
    out = {}
    for name, info in sorted(specs.items()):
        spec = info.get("spec", {})
        lang = str(spec.get("language", "")).lower()
        if lang and lang != "python" and lang not in out:
            out[lang] = (name, spec)
    return out


def bash_available():
    return any(os.access(os.path.join(d, "bash"), os.X_OK)
               for d in os.environ.get("PATH", "/usr/bin:/bin").split(":") if d)


class JupyterKernel:
    """A Jupyter kernel of this sandbox, spoken to over ipc sockets."""

    def __init__(self, events, argv_of):
        import tempfile
        from jupyter_client.blocking.client import BlockingKernelClient
        from jupyter_client.connect import write_connection_file
        self.events = events
        self.dir = tempfile.mkdtemp(prefix="cordon-kernel-")
        conn, _ = write_connection_file(os.path.join(self.dir, "kernel.json"),
                                        transport="ipc", ip=os.path.join(self.dir, "k"))
        import subprocess
        self.proc = subprocess.Popen(argv_of(conn), env=kernel_env(self.dir),
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, close_fds=True,
                                     preexec_fn=_pdeathsig(signal.SIGKILL))
        self.client = BlockingKernelClient(connection_file=conn)
        self.client.load_connection_file()
        self.client.start_channels()
        deadline = time.monotonic() + KERNEL_START_TIMEOUT
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError("the kernel exited at its start (status %d)"
                                   % self.proc.returncode)
            try:
                self.client.wait_for_ready(timeout=1)
                break
            except RuntimeError:
                if time.monotonic() > deadline:
                    raise RuntimeError("the kernel did not answer in %d s"
                                       % KERNEL_START_TIMEOUT)

    def interrupt(self):
        try:
            os.kill(self.proc.pid, signal.SIGINT)
        except OSError:
            pass

    def _wait_reply(self, msg_id):
        while True:
            try:
                msg = self.client.get_shell_msg(timeout=0.5)
            except Exception:
                self._check_alive()
                continue
            if msg["parent_header"].get("msg_id") == msg_id:
                return msg

    def _check_alive(self):
        if self.proc.poll() is not None:
            os._exit(0)               # the server reports the kernel's end

    def _silent(self, code):
        self._wait_reply(self.client.execute(code, silent=True, store_history=False))

    def execute(self, code, env):
        ev = self.events
        if env:
            self._silent("import os as __cordon_os\n__cordon_env = {k: __cordon_os.environ.get(k)"
                         " for k in %r}\n__cordon_os.environ.update(%r)" % (list(env), env))
        msg_id = self.client.execute(code, store_history=True, allow_stdin=False,
                                     stop_on_error=False)
        while True:
            try:
                msg = self.client.get_iopub_msg(timeout=0.5)
            except Exception:
                self._check_alive()
                continue
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            kind, content = msg["msg_type"], msg["content"]
            if kind == "execute_input":
                ev.emit({"type": "number_of_executions",
                         "execution_count": content.get("execution_count")})
            elif kind == "stream":
                ev.output("stderr" if content.get("name") == "stderr" else "stdout",
                          content.get("text", ""))
            elif kind in ("execute_result", "display_data"):
                ev.emit(result_event(content.get("data", {}), kind == "execute_result"))
            elif kind == "error":
                ev.error(content.get("ename", ""), content.get("evalue", ""),
                         "\n".join(content.get("traceback", [])))
            elif kind == "status" and content.get("execution_state") == "idle":
                break
        self._wait_reply(msg_id)
        if env:
            self._silent("[__cordon_os.environ.pop(k, None) if v is None else "
                         "__cordon_os.environ.__setitem__(k, v) for k, v in "
                         "__cordon_env.items()]\ndel __cordon_env, __cordon_os")

    def stop(self):
        try:
            self.proc.kill()
        except OSError:
            pass


class BashKernel:
    """One bash for the context: each cell is sourced in it, so that variables, functions and
    the working directory stay; its stdout/stderr are pipes read by two threads, each cell's
    end a marker with a random token written to both. bash and what it starts stay in the
    bridge's process group (the server's own, for this context): the server's SIGKILL of the
    group takes them all, and an interrupt is SIGINT to the group (the bridge ignores its own)."""

    def __init__(self, events):
        import secrets
        import subprocess
        import tempfile
        self.events = events
        self.dir = tempfile.mkdtemp(prefix="cordon-bash-")
        self.token = "\x01cordon-end-" + secrets.token_hex(16) + ":"
        self.count = 0
        self.open = False
        self.echo = False             # the bridge's own SIGINT to its group is coming
        self.interrupting = False     # an interrupt asked for, the cell not ended yet
        self.proc = subprocess.Popen(["bash", "--norc", "--noprofile"], env=kernel_env(self.dir),
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, close_fds=True,
                                     preexec_fn=_pdeathsig(signal.SIGKILL))
        # an interrupt ends the cell (the sourced file returns), not the shell
        self._send("trap 'return 130 2>/dev/null' INT\n")
        self.done = {"stdout": threading.Event(), "stderr": threading.Event()}
        self.status = 0
        for name, pipe in (("stdout", self.proc.stdout), ("stderr", self.proc.stderr)):
            threading.Thread(target=self._drain, args=(name, pipe.fileno()),
                             daemon=True).start()

    def _send(self, text):
        try:
            self.proc.stdin.write(text.encode())
            self.proc.stdin.flush()
        except OSError:
            os._exit(0)

    def _forward(self, name, data):
        if data and self.open:
            self.events.output(name, data.decode("utf-8", "replace"))

    def _drain(self, name, fd):
        token = self.token.encode()
        pending = b""
        while True:
            try:
                data = os.read(fd, CHUNK)
            except OSError:
                data = b""
            if not data:
                self._forward(name, pending)
                os._exit(0) if name == "stdout" else None
                return
            pending += data
            while True:
                i = pending.find(token)
                if i < 0:
                    keep = next((k for k in range(min(len(token) - 1, len(pending)), 0, -1)
                                 if pending.endswith(token[:k])), 0)
                    self._forward(name, pending[:len(pending) - keep])
                    pending = pending[len(pending) - keep:]
                    break
                j = pending.find(b"\n", i)
                if j < 0:
                    self._forward(name, pending[:i])
                    pending = pending[i:]
                    break
                self._forward(name, pending[:i])
                if name == "stdout":
                    try:
                        self.status = int(pending[i + len(token):j])
                    except ValueError:
                        self.status = -1
                pending = pending[j + 1:]
                self.done[name].set()

    def interrupt(self):
        self.interrupting = True
        self.echo = True
        try:
            os.killpg(0, signal.SIGINT)
        except OSError:
            self.echo = False

    def execute(self, code, env):
        import shlex
        self.count += 1
        path = os.path.join(self.dir, "cell")
        with open(path, "w") as f:
            f.write(code + "\n")
        for e in self.done.values():
            e.clear()
        self.interrupting = False
        self.events.emit({"type": "number_of_executions", "execution_count": self.count})
        self.open = True
        assigns = " ".join("%s=%s" % (k, shlex.quote(v)) for k, v in env.items()
                           if k.isidentifier())
        t = shlex.quote(self.token)
        self._send("%s source %s </dev/null\nprintf '%%s%%d\\n' %s $?\n"
                   "printf '%%s0\\n' %s >&2\n" % (assigns, shlex.quote(path), t, t))
        for e in self.done.values():
            while not e.wait(0.5):
                if self.proc.poll() is not None:
                    os._exit(0)
                # an interrupt that came while bash forked a command was lost: its child took
                # it before its exec reset the trap, and bash runs its own trap only once that
                # command ends (sleep 30: 30 s later). Again, until the cell's end is seen.
                if self.interrupting and not self.done["stdout"].is_set():
                    self.interrupt()
        self.interrupting = False
        self.open = False
        if self.status:
            # bash_kernel's shape: no name, the exit status as the value
            self.events.error("", str(self.status), "")

    def stop(self):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        try:
            os.killpg(0, signal.SIGTERM)  # bash and what it started
        except OSError:
            pass


def languages():
    have = []
    if python_available():
        have.append("python")
    if bash_available():
        have.append("bash")
    return have + [lang for lang in kernelspecs() if lang not in have]


def start(events, lang):
    """The kernel for lang, or an error line and exit."""
    def fail(name, value):
        events.error(name, value, "%s: %s\n" % (name, value))
        os._exit(3)
    try:
        if lang == "bash":
            if not bash_available():
                fail("LanguageError", "no bash in this sandbox; it has: "
                     + ", ".join(languages()))
            return BashKernel(events)
        try:
            import jupyter_client  # noqa: F401
        except ImportError:
            fail("KernelError", "python3-jupyter-client is not installed in this sandbox's "
                 "root: the %s language needs it" % lang)
        if lang == "python":
            if not python_available():
                fail("KernelError", "python3-ipykernel is not installed in this sandbox's "
                     "root: the python language needs it")
            _user_site()
            return JupyterKernel(events, lambda conn: [sys.executable, "-m",
                                                      "ipykernel_launcher", "-f", conn])
        specs = kernelspecs()
        if lang not in specs:
            fail("LanguageError", "no kernel for the language %r in this sandbox; it has: %s"
                 % (lang, ", ".join(languages())))
        argv = specs[lang][1].get("argv", [])
        return JupyterKernel(events, lambda conn: [a.replace("{connection_file}", conn)
                                                   for a in argv])
    except Exception as e:
        fail("KernelError", "the %s kernel did not start: %s" % (lang, e))


def requests(fd):
    reader = open(fd, "rb", buffering=CHUNK, closefd=False)
    while True:
        line = reader.readline()
        if not line:
            return
        if line.strip():
            yield line


def check(line):
    try:
        req = json.loads(line)
    except ValueError as e:
        return None, None, "the request is not JSON: %s" % e
    if not isinstance(req, dict) or not isinstance(req.get("code"), str):
        return None, None, 'a request is a JSON object with "code", a string'
    env = req.get("env_vars") or {}
    if not isinstance(env, dict) or not all(
            isinstance(k, str) and k and "=" not in k and "\0" not in k and
            isinstance(v, str) and "\0" not in v for k, v in env.items()):
        return None, None, '"env_vars" is an object of string values'
    return req["code"], env, None


def main():
    lang = sys.argv[1] if len(sys.argv) > 1 else "python"
    os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")   # else a warning on stderr
    req_fd = os.dup(0)
    events = Events(os.dup(1))
    for fd in (req_fd, events.fd):
        os.set_inheritable(fd, False)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1):
        os.dup2(null, fd)
    state = {"kernel": None, "busy": False}

    def on_sigint(signum, frame):
        kernel = state["kernel"]
        if getattr(kernel, "echo", False):     # the bridge's own, to its group: ignored
            kernel.echo = False
        elif state["busy"] and kernel is not None:
            kernel.interrupt()
    signal.signal(signal.SIGINT, on_sigint)
    kernel = state["kernel"] = start(events, lang)
    events.emit({"type": "ready", "language": lang})
    for line in requests(req_fd):
        code, env, why = check(line)
        if why is not None:
            events.error("KernelError", why, "KernelError: %s\n" % why)
            events.end()
            continue
        state["busy"] = True
        try:
            kernel.execute(code, env)
        finally:
            state["busy"] = False
        events.end()
    kernel.stop()
    os._exit(0)


if __name__ == "__main__":
    main()
