#!/usr/bin/env bash
# cordon serve keeps answering past 1024 descriptors: libmicrohttpd polls (poll(), not select(),
# which refuses a connection whose descriptor is FD_SETSIZE or more: one tenant's followed
# processes could deny every other), and the server raises its descriptor limit. 1100
# connections are held open, each kept alive after an authenticated request (the server closes
# idle ones without credentials: conns.c), then /health must answer while the server holds more
# than 1024 descriptors.
. "$TAP_LIB"

command -v python3 >/dev/null && command -v curl >/dev/null || {
	skip "serve descriptors" "python3 and curl are needed"
	done_testing
	exit
}
state=$(mkwork)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
# 5000: a tenant (the key) may hold a quarter of them
( CORDON_SERVE_API_KEY=e2b_0123abcd exec_as_caller "$CORDON" serve --listen "127.0.0.1:$port" \
	--state-dir "$state/s" --max-connections 5000 --pool 0 2>"$TEST_TMP/serve.log" ) &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null' EXIT
for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/health" && break; sleep 0.1; done
out=$(python3 - "$port" "$server" <<'PY'
import os, resource, socket, subprocess, sys, time
resource.setrlimit(resource.RLIMIT_NOFILE, (4096, 4096))
port, server = int(sys.argv[1]), sys.argv[2]
req = b"GET /sandboxes HTTP/1.1\r\nHost: x\r\nX-API-Key: e2b_0123abcd\r\n\r\n"
conns, answered = [], 0
for _ in range(1100):
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(10)
    s.sendall(req)
    got = b""
    while b"\r\n\r\n" not in got or not got.endswith(b"[]"):
        d = s.recv(4096)
        if not d:
            break
        got += d
    answered += got.startswith(b"HTTP/1.1 200")
    conns.append(s)
fds = len(os.listdir(f"/proc/{server}/fd"))
r = subprocess.run(["curl", "-s", "-m", "5", "-o", "/dev/null", "-w", "%{http_code}",
                    f"http://127.0.0.1:{port}/health"], capture_output=True, text=True).stdout
print(answered, "more" if fds > 1100 else f"{fds} only", r)
PY
)
is "with 1100 connections open (all answered), past 1100 descriptors, the server still answers" \
	"$out" "1100 more 200"
if grep -q FD_SETSIZE "$TEST_TMP/serve.log"; then
	fail "no connection refused for its descriptor number: $(grep -m1 FD_SETSIZE "$TEST_TMP/serve.log")"
else
	pass "no connection refused for its descriptor number"
fi
done_testing
