# cordon serve: the Python kernel behind runCode(), one process per code context.
#
# What the E2B SDK expects (@e2b/code-interpreter 2.8.0, dist/index.js parseOutput(), and the
# real server's template/server/messaging.py + api/models/*.py): POST /execute answers with JSON
# lines, read until the body ends; each line's "type" is one of
#   {"type":"number_of_executions","execution_count":N}   first, sets execution.executionCount
#   {"type":"stdout","text":"...","timestamp":"<ISO 8601>"}  pushed onto execution.logs.stdout
#   {"type":"stderr","text":"...","timestamp":"<ISO 8601>"}  pushed onto execution.logs.stderr
#   {"type":"result","is_main_result":bool,"text":...,"html":...,...}
#       formats text html markdown svg png jpeg pdf latex json javascript data chart, other
#       mime types under "extra"; png/jpeg/pdf are base64; execution.text is the text of the
#       result with is_main_result true (the value of the cell's last expression); the real
#       server strips one pair of surrounding single quotes from text ('abc' -> abc)
#   {"type":"error","name":"ZeroDivisionError","value":"division by zero","traceback":"..."}
#       sets execution.error (traceback is one string)
# The real server ends the execution with {"type":"end_of_execution"} internally and does not
# send it (the SDK ignores unknown types, so sending it is harmless too). The timestamp is
# not read by the SDK. Every line here is one line of ASCII JSON (json.dumps ensure_ascii).
#
# Protocol with the parent (the cordon server), started as `python3 -u -I kernel.py` or
# `python3 -u -I -c "<this source>"` with fd 0 = requests and fd 1 = events:
#   request: {"id": any, "code": "<python>", "env_vars": {"K": "V"}}  (one JSON line)
#   answer:  number_of_executions, then stdout/stderr/result/error lines, then
#            {"type":"end_of_execution"}; nothing is written to the event fd outside that frame
#            (output of background threads or processes while idle is dropped).
#   stdout/stderr: whatever reaches fd 1/2 (print, os.write, child processes), decoded as
#   UTF-8 with errors replaced, at most 64 KiB of text per event; in order within each stream
#   (the order between the two streams is as the drain threads read them). A line is sent at
#   once, a partial line 50 ms after it was written. All output written before the cell
#   ended comes before its result/error and end_of_execution.
#   A malformed request gets an error named KernelError, then end_of_execution.
#   A blank request line is ignored. EOF on the request fd: exit 0.
#   SIGINT while an execution runs raises KeyboardInterrupt in it; while idle it is ignored.

import ast
import base64
import builtins
import codecs
import fcntl
import io
import json
import linecache
import os
import secrets
import signal
import sys
import threading
import time
import traceback
import types

CHUNK = 64 * 1024                 # largest text of one stdout/stderr event, and read size
MAX_REQUEST = 256 * 1024 * 1024   # a longer request line is refused (and skipped)
SYNC_TIMEOUT = 5.0                # seconds a drain may make no progress before sync gives up
CELL_PREFIX = "<cell "            # filenames of executed code: "<cell 3>"


def _private_fd(fd):
    """Duplicate fd onto a high number, close-on-exec, so user code neither sees nor reuses it."""
    return fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 200)


def _write_all(fd, data):
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def _now():
    t = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + ".%06dZ" % int(t % 1 * 1e6)


class Events:
    """The event fd. Lines are written whole under one lock; stream output is written only
    while an execution is open, so the parent sees strict frames."""

    def __init__(self, fd):
        self.fd = fd
        self.lock = threading.Lock()
        self.open = False             # an execution is running (between its first and end line)

    def _line(self, obj):
        line = json.dumps(obj, ensure_ascii=True, allow_nan=False, separators=(",", ":"))
        return (line + "\n").encode("ascii")

    def _put(self, data):
        try:
            _write_all(self.fd, data)
        except OSError:               # the parent is gone: nothing left to serve
            os._exit(1)

    def emit(self, obj):
        data = self._line(obj)
        with self.lock:
            self._put(data)

    def emit_output(self, name, text):
        data = self._line({"type": name, "text": text, "timestamp": _now()})
        with self.lock:
            if self.open:
                self._put(data)

    def begin(self, obj):
        data = self._line(obj)
        with self.lock:
            self.open = True
            self._put(data)

    def end(self):
        data = self._line({"type": "end_of_execution"})
        with self.lock:
            self.open = False
            self._put(data)


class Drain(threading.Thread):
    """Reads one of the pipes behind fd 1 / fd 2 and forwards it as stdout/stderr events.

    To know that everything written before a point has been forwarded, the kernel writes a
    sync marker (a random token and a sequence number) into the pipe; the drain forwards the
    bytes before it, then records the sequence number as seen."""

    def __init__(self, name, read_fd, write_fd, events, token):
        super().__init__(name="drain-" + name, daemon=True)
        self.stream = name
        self.read_fd = read_fd
        self.write_fd = write_fd      # private duplicate of the write end: markers go here
        self.events = events
        self.prefix = b"\x00\x01cordon-sync-" + token + b":"
        self.marker_len = len(self.prefix) + 8 + 1   # prefix, 8 hex digits, NUL
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.cond = threading.Condition()
        self.seen = 0                 # last sync marker forwarded
        self.sent = 0                 # last sync marker written
        self.reads = 0                # progress, for sync's timeout

    def _forward(self, data, final=False):
        text = self.decoder.decode(data, final)
        for i in range(0, len(text), CHUNK):
            self.events.emit_output(self.stream, text[i:i + CHUNK])

    def _partial_prefix(self, buf):
        """Length of the longest tail of buf that could be the start of a marker."""
        for k in range(min(len(self.prefix) - 1, len(buf)), 0, -1):
            if buf.endswith(self.prefix[:k]):
                return k
        return 0

    def run(self):
        pending = b""
        while True:
            try:
                data = os.read(self.read_fd, CHUNK)
            except OSError:
                return
            self.reads += 1
            if not data:
                self._forward(pending, final=True)
                return
            pending += data
            while pending:
                i = pending.find(self.prefix)
                if i < 0:
                    keep = self._partial_prefix(pending)
                    self._forward(pending[:len(pending) - keep])
                    pending = pending[len(pending) - keep:]
                    break
                self._forward(pending[:i])
                pending = pending[i:]
                if len(pending) < self.marker_len:
                    break                               # the rest of the marker is coming
                digits = pending[len(self.prefix):self.marker_len - 1]
                try:
                    seq = int(digits, 16) if pending[self.marker_len - 1] == 0 else None
                except ValueError:
                    seq = None
                if seq is None:                         # looked like a marker, is not one
                    self._forward(pending[:1])
                    pending = pending[1:]
                    continue
                pending = pending[self.marker_len:]
                self._forward(b"", final=True)          # a split UTF-8 character ends here
                self.decoder.reset()
                with self.cond:
                    self.seen = max(self.seen, seq)
                    self.cond.notify_all()

    def sync(self):
        """Wait until every byte written to the pipe before this call has been forwarded.
        A slow parent only slows this down; it gives up when the drain is gone or stuck."""
        with self.cond:
            self.sent += 1
            seq = self.sent
        _write_all(self.write_fd, self.prefix + b"%08x\x00" % (seq & 0xFFFFFFFF))
        reads, deadline = -1, 0.0
        with self.cond:
            while self.seen < seq:
                if self.reads != reads:
                    reads, deadline = self.reads, time.monotonic() + SYNC_TIMEOUT
                left = deadline - time.monotonic()
                if left <= 0 or not self.is_alive():
                    return False
                self.cond.wait(min(left, 0.5))
        return True


class _Flusher(threading.Thread):
    """Flushes a partial line (text without a newline) soon after it was written, as
    ipykernel does, so that it streams without every write becoming an event of its own."""

    DELAY = 0.05

    def __init__(self):
        super().__init__(name="flusher", daemon=True)
        self.kick = threading.Event()
        self.streams = []

    def run(self):
        while True:
            self.kick.wait()
            time.sleep(self.DELAY)
            self.kick.clear()
            for stream in list(self.streams):
                try:
                    stream.buffer.flush()   # BufferedWriter has its own lock
                except Exception:
                    pass


_flusher = _Flusher()


class _Stream(io.TextIOWrapper):
    """sys.stdout / sys.stderr: a line is written at once (print's text and its newline
    together), a partial line a moment later by the flusher."""

    def write(self, s):
        n = super().write(s)
        if "\n" not in s and "\r" not in s:     # else line buffering has flushed it
            _flusher.kick.set()
        return n


def _make_stream(fd):
    raw = io.FileIO(fd, "w", closefd=False)
    stream = _Stream(io.BufferedWriter(raw, CHUNK), encoding="utf-8", errors="backslashreplace",
                     line_buffering=True, write_through=True)
    _flusher.streams = [s for s in _flusher.streams if not s.closed] + [stream]
    return stream


# Result formats: IPython's _repr_*_ methods and mime types, as the real server names them.
_REPR_FORMATS = [
    ("html", "_repr_html_"), ("markdown", "_repr_markdown_"), ("svg", "_repr_svg_"),
    ("png", "_repr_png_"), ("jpeg", "_repr_jpeg_"), ("pdf", "_repr_pdf_"),
    ("latex", "_repr_latex_"), ("json", "_repr_json_"), ("javascript", "_repr_javascript_"),
]
_MIME_FORMATS = {
    "text/plain": "text", "text/html": "html", "text/markdown": "markdown",
    "image/svg+xml": "svg", "image/png": "png", "image/jpeg": "jpeg",
    "application/pdf": "pdf", "text/latex": "latex", "application/json": "json",
    "application/javascript": "javascript", "e2b/data": "data", "e2b/chart": "chart",
}
_BINARY_FORMATS = ("png", "jpeg", "pdf")


class Kernel:
    def __init__(self):
        self.count = 0                # execution_count, as Jupyter's In[N]
        self.armed = False            # SIGINT raises KeyboardInterrupt (user code runs)
        self.deferred = False         # a SIGINT came during a critical section of an execution
        self.sync_lock = threading.Lock()
        self.loop = None              # asyncio loop for top-level await, made when first needed
        self._setup_fds()
        self._setup_namespace()
        signal.signal(signal.SIGINT, self._on_sigint)

    # -- set-up -------------------------------------------------------------------------

    def _setup_fds(self):
        # The protocol fds move out of the way; the original stderr is kept for fatal errors.
        self.req_fd = _private_fd(0)
        self.events = Events(_private_fd(1))
        self.log_fd = _private_fd(2)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        # fd 1 and 2 become pipes drained by threads: print(), os.write(1, ...) and the
        # output of child processes all end up as events, in order per stream.
        token = secrets.token_hex(16).encode("ascii")
        self.drains = {}
        for fd, name in ((1, "stdout"), (2, "stderr")):
            r, w = os.pipe()
            os.dup2(w, fd)            # inheritable: child processes write here too
            private_r, private_w = _private_fd(r), _private_fd(w)
            os.close(r)
            os.close(w)
            st = os.fstat(fd)
            drain = Drain(name, private_r, private_w, self.events, token)
            drain.ident_fd = (st.st_dev, st.st_ino)
            self.drains[fd] = drain
        # The kernel's threads block SIGINT (they inherit the mask they start with), so that
        # it reaches the main thread and interrupts a blocking call there (sleep, wait).
        old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        for thread in (*self.drains.values(), _flusher):
            thread.start()
        signal.pthread_sigmask(signal.SIG_SETMASK, old)
        self.stdout = sys.stdout = sys.__stdout__ = _make_stream(1)
        self.stderr = sys.stderr = sys.__stderr__ = _make_stream(2)
        sys.stdin = sys.__stdin__ = open(0, "r", closefd=False)

    def _setup_namespace(self):
        # The user's code runs in a fresh __main__ module, like IPython's user namespace, so
        # the kernel's own names are not in it and pickle finds functions defined in cells.
        self.kernel_module = sys.modules.get("__main__")
        main = types.ModuleType("__main__")
        main.__dict__["__builtins__"] = builtins
        main.__dict__["display"] = self.display
        sys.modules["__main__"] = main
        self.ns = main.__dict__
        sys.argv = [""]
        # -I keeps the kernel's start clean; user code gets the path a Jupyter kernel has.
        import site
        extra = [""] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
        sys.path[0:0] = [p for p in extra if p not in sys.path]
        try:
            user_site = site.getusersitepackages()
            if os.path.isdir(user_site):
                site.addsitedir(user_site)
        except Exception:
            pass

    # -- interrupts ---------------------------------------------------------------------

    def _on_sigint(self, signum, frame):
        if self.armed:
            raise KeyboardInterrupt
        if self.events.open:
            self.deferred = True      # raised when user code is (re)armed
        # idle: ignored

    # -- output -------------------------------------------------------------------------

    def _flush_and_sync(self):
        """Everything written so far to sys.stdout/stderr and fd 1/2 becomes events."""
        for stream in {id(s): s for s in (sys.stdout, sys.stderr, self.stdout, self.stderr)
                       }.values():
            try:
                stream.flush()
            except Exception:
                pass
        with self.sync_lock:
            for drain in self.drains.values():
                try:
                    drain.sync()
                except OSError:
                    pass

    def _restore_output(self):
        """Each execution starts with fd 1/2 and sys.stdout/stderr writing to the kernel."""
        for fd, drain in self.drains.items():
            try:
                st = os.fstat(fd)
                same = (st.st_dev, st.st_ino) == drain.ident_fd
            except OSError:
                same = False
            if not same:
                os.dup2(drain.write_fd, fd)
        if getattr(sys.stdout, "closed", True):
            sys.stdout = self.stdout = _make_stream(1)
        if getattr(sys.stderr, "closed", True):
            sys.stderr = self.stderr = _make_stream(2)

    # -- results ------------------------------------------------------------------------

    def _result(self, value, main):
        """A result event for value, with every format the object offers."""
        out = {"type": "result", "is_main_result": main}
        try:
            text = repr(value)
        except Exception as e:
            text = "<repr failed: %s: %s>" % (type(e).__name__, e)
        if len(text) >= 2 and text[0] == "'" and text[-1] == "'":
            text = text[1:-1]         # as the real server does
        out["text"] = text
        extra = {}
        bundle = self._call_repr(value, "_repr_mimebundle_")
        if isinstance(bundle, dict):
            for mime, data in bundle.items():
                key = _MIME_FORMATS.get(mime)
                if key == "text":
                    continue
                if key is None:
                    extra[str(mime)] = data
                else:
                    out[key] = data
        for key, method in _REPR_FORMATS:
            if key not in out:
                data = self._call_repr(value, method)
                if data is not None:
                    out[key] = data
        for key in _BINARY_FORMATS:
            if isinstance(out.get(key), (bytes, bytearray)):
                out[key] = base64.b64encode(out[key]).decode("ascii")
        if extra:
            out["extra"] = extra
        # keep only what serialises: a format that does not is dropped
        for key in [k for k in out if k not in ("type", "is_main_result", "text")]:
            try:
                json.dumps(out[key], allow_nan=False)
            except Exception:
                del out[key]
        return out

    @staticmethod
    def _call_repr(value, method):
        # Look the method up on the type, as IPython does, so a class itself is not asked.
        fn = getattr(type(value), method, None)
        if fn is None or not callable(fn):
            return None
        try:
            data = fn(value)
        except Exception:
            return None
        if isinstance(data, tuple) and len(data) == 2:   # (data, metadata)
            data = data[0]
        return data

    def display(self, *objs, **_ignored):
        """IPython's display(): each object becomes a result that is not the main result."""
        if not self.events.open:
            return
        armed, self.armed = self.armed, False          # an event line is never cut short
        try:
            self._flush_and_sync()
            for obj in objs:
                self.events.emit(self._result(obj, False))
        finally:
            self.armed = armed
            if armed and self.deferred:
                self.deferred = False
                raise KeyboardInterrupt

    # -- errors -------------------------------------------------------------------------

    @staticmethod
    def _error(exc):
        tb = exc.__traceback__
        # Drop the kernel's frames (and asyncio's, for top-level await): the traceback starts
        # at the first frame of executed code.
        t = tb
        while t is not None and not t.tb_frame.f_code.co_filename.startswith(CELL_PREFIX):
            t = t.tb_next
        try:
            if isinstance(exc, SyntaxError) and t is None:
                lines = traceback.format_exception_only(type(exc), exc)
            else:
                lines = traceback.format_exception(type(exc), exc, t)
            text = "".join(lines)
        except BaseException as e:
            text = "%s (the traceback could not be formatted: %s)" % (type(exc).__name__, e)
        try:
            value = str(exc)
        except BaseException:
            value = "<str() failed>"
        return {"type": "error", "name": type(exc).__name__, "value": value,
                "traceback": text}

    # -- execution ----------------------------------------------------------------------

    @staticmethod
    def _suppressed(code):
        """A trailing ';' hides the last expression's value, as in IPython."""
        import tokenize
        last = None
        try:
            for tok in tokenize.generate_tokens(io.StringIO(code).readline):
                if tok.type not in (tokenize.NEWLINE, tokenize.NL, tokenize.COMMENT,
                                    tokenize.ENDMARKER, tokenize.INDENT, tokenize.DEDENT):
                    last = tok
        except Exception:
            return False
        return last is not None and last.type == tokenize.OP and last.string == ";"

    def _arm(self):
        self.armed = True
        if self.deferred:             # a SIGINT came after the execution began: it counts
            self.deferred = False
            raise KeyboardInterrupt

    def _run(self, code_obj):
        """Runs one compiled piece of user code with SIGINT armed; returns its value."""
        if code_obj.co_flags & 0x80:                    # CO_COROUTINE: top-level await
            import asyncio
            if self.loop is None or self.loop.is_closed():
                self.loop = asyncio.new_event_loop()
            self._arm()
            try:
                coro = eval(code_obj, self.ns)
                return self.loop.run_until_complete(coro)
            finally:
                self.armed = False
        self._arm()
        try:
            return eval(code_obj, self.ns)
        finally:
            self.armed = False

    def _execute(self, code):
        """Runs a cell: returns a result event, an error event, or None."""
        filename = "%s%d>" % (CELL_PREFIX, self.count)
        # the source is kept for tracebacks, as IPython does
        linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
        flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
        try:
            tree = compile(code, filename, "exec", flags=ast.PyCF_ONLY_AST | flags,
                           dont_inherit=True)
            last = None
            if tree.body and isinstance(tree.body[-1], ast.Expr):
                last = ast.Expression(tree.body.pop().value)
            body = compile(tree, filename, "exec", flags=flags, dont_inherit=True)
            tail = None
            if last is not None:
                tail = compile(last, filename, "eval", flags=flags, dont_inherit=True)
        except BaseException as e:                      # SyntaxError, ValueError (NUL), ...
            return self._error(e)
        try:
            self._run(body)
            if tail is None:
                return None
            value = self._run(tail)
        except BaseException as e:                      # includes KeyboardInterrupt, SystemExit
            self.armed = False
            return self._error(e)
        if value is None or self._suppressed(code):
            return None
        self.ns["_"] = value
        try:                          # a __repr__ may print, hang or fail like any user code
            self._arm()
            try:
                return self._result(value, True)
            finally:
                self.armed = False
        except BaseException as e:
            self.armed = False
            return self._error(e)

    def _set_env(self, env):
        saved = {}
        for key, value in env.items():
            saved[key] = os.environ.get(key)
            os.environ[key] = value
        return saved

    @staticmethod
    def _restore_env(saved):
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value

    @staticmethod
    def _check(req):
        """The request's code and env_vars, or a reason it is malformed."""
        if not isinstance(req, dict):
            return None, None, "a request is a JSON object"
        code = req.get("code")
        if not isinstance(code, str):
            return None, None, 'a request needs "code": a string of Python source'
        env = req.get("env_vars")
        if env is None:
            env = {}
        if not isinstance(env, dict):
            return None, None, '"env_vars" is an object of string values'
        for key, value in env.items():
            if not key or "=" in key or "\0" in key:
                return None, None, "env_vars: %r is not a variable name" % key
            if not isinstance(value, str) or "\0" in value:
                return None, None, "env_vars: the value of %r is not a string" % key
        return code, env, None

    def handle(self, line):
        try:
            req = json.loads(line)
        except Exception as e:
            req = None
            reason = "the request is not JSON: %s" % e
        else:
            code, env, reason = self._check(req)
        if reason is not None:
            self.events.emit({"type": "error", "name": "KernelError", "value": reason,
                              "traceback": "KernelError: %s\n" % reason})
            self.events.end()
            return
        self.count += 1
        self.deferred = False
        self._restore_output()
        saved = self._set_env(env)
        try:
            self.events.begin({"type": "number_of_executions", "execution_count": self.count})
            outcome = self._execute(code)
            self._flush_and_sync()
            if outcome is not None:
                try:
                    self.events.emit(outcome)
                except Exception as e:          # a result that cannot be written as JSON
                    self.events.emit({"type": "error", "name": "KernelError",
                                      "value": "the result could not be sent: %s" % e,
                                      "traceback": ""})
        finally:
            self._restore_env(saved)
            self.events.end()

    def _requests(self):
        """Yields request lines (bytes); an over-long line is reported and skipped."""
        reader = open(self.req_fd, "rb", buffering=CHUNK, closefd=False)
        while True:
            line = reader.readline(MAX_REQUEST + 1)
            if not line:
                return
            if len(line) > MAX_REQUEST and not line.endswith(b"\n"):
                while True:                             # skip the rest of the line
                    rest = reader.readline(CHUNK)
                    if not rest or rest.endswith(b"\n"):
                        break
                yield None
                continue
            yield line

    def serve(self):
        for line in self._requests():
            if line is None:
                self.events.emit({"type": "error", "name": "KernelError",
                                  "value": "the request is longer than %d bytes" % MAX_REQUEST,
                                  "traceback": ""})
                self.events.end()
                continue
            if not line.strip():
                continue
            try:
                self.handle(line)
            except KeyboardInterrupt:
                # a SIGINT that landed in the kernel's own code between arming and disarming
                self.armed = False
                if self.events.open:
                    self.events.end()


def main():
    signal.signal(signal.SIGINT, signal.SIG_IGN)       # until the kernel's handler is set
    try:
        kernel = Kernel()
    except Exception:
        try:
            os.write(2, ("cordon kernel: cannot start:\n" + traceback.format_exc()).encode())
        finally:
            os._exit(2)
    try:
        kernel.serve()
    except BaseException:
        try:
            os.write(kernel.log_fd, ("cordon kernel: " + traceback.format_exc()).encode())
        finally:
            os._exit(1)
    # EOF: leave at once, without waiting for threads or processes the user code started
    os._exit(0)


if __name__ == "__main__":
    main()
