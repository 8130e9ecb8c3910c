# tests/e2b/hostile_bridge.py - a hostile bridge for tests/e2b (hostile.mjs puts it in a
# sandbox): what a tenant that puts its own python3 on the sandbox's PATH runs in place of
# src/server/bridge.py. Each cell runs in this process, with the server's pipes in its hands:
# req_fd (fd 0: the requests) and ev_fd (fd 1: the event lines the server reads).
import contextlib
import io
import json
import os


def emit(obj):
    os.write(1, (json.dumps(obj) + "\n").encode())


emit({"type": "ready", "language": "python"})
names = {"req_fd": 0, "ev_fd": 1}
for n, line in enumerate(open(0, "rb"), 1):
    code = json.loads(line)["code"]
    emit({"type": "number_of_executions", "execution_count": n})
    out = io.StringIO()
    err = None
    try:
        with contextlib.redirect_stdout(out):
            exec(code, names)
    except Exception as e:
        err = e
    if out.getvalue():
        emit({"type": "stdout", "text": out.getvalue()})
    if err is not None:
        emit({"type": "error", "name": type(err).__name__, "value": str(err), "traceback": ""})
    emit({"type": "end_of_execution"})
