#!/usr/bin/env bash
# cordon serve keeps answering past 1024 descriptors: libmicrohttpd polls (poll(), not select(),
# which refuses a connection whose descriptor is FD_SETSIZE or more: one tenant's followed
# processes could deny every other), and the server raises its descriptor limit. 1100 idle
# connections are held open, then /health must answer.
. "$TAP_LIB"

command -v python3 >/dev/null && command -v curl >/dev/null || {
	skip "serve descriptors" "python3 and curl are needed"
	done_testing
	exit
}
state=$(mkwork)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
( exec_as_caller "$CORDON" serve --listen "127.0.0.1:$port" --api-key e2b_0123abcd \
	--state-dir "$state/s" --max-connections 2000 --pool 0 2>"$TEST_TMP/serve.log" ) &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null' EXIT
for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/health" && break; sleep 0.1; done
out=$(python3 - "$port" <<'PY'
import resource, socket, subprocess, sys, time
resource.setrlimit(resource.RLIMIT_NOFILE, (4096, 4096))
port = int(sys.argv[1])
conns = [socket.create_connection(("127.0.0.1", port)) for _ in range(1100)]
r = ""
for _ in range(50):  # the server accepts them in its own time: until /health answers, or 10 s
    r = subprocess.run(["curl", "-s", "-m", "5", "-o", "/dev/null", "-w", "%{http_code}",
                        f"http://127.0.0.1:{port}/health"], capture_output=True, text=True).stdout
    if r == "200":
        break
    time.sleep(0.2)
print(r)
PY
)
is "with 1100 connections open, the server still answers" "$out" 200
if grep -q FD_SETSIZE "$TEST_TMP/serve.log"; then
	fail "no connection refused for its descriptor number: $(grep -m1 FD_SETSIZE "$TEST_TMP/serve.log")"
else
	pass "no connection refused for its descriptor number"
fi
done_testing
