#!/usr/bin/env bash
# cordon serve shares its descriptors and its disk between tenants (docs/e2b.md "Tenants"): it
# refuses to start when RLIMIT_NOFILE cannot hold a share for every sandbox, follows fewer
# processes in one sandbox when the limit is low (so that no sandbox takes the descriptors the
# others need), and, without --disk, gives each sandbox its share of the state directory's free
# space (a tenant that writes past it is killed). Driven with python3's http.client.
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
# connection and 32 being closed, 51 a sandbox, then 4 a followed process: 315 leave room for 10
if serve "$s/b" 315 --max-sandboxes 1 --max-connections 64 --pool 0; then
	out=$(python3 "$TEST_TMP/client.py" "$port" procs 14 2>&1)
	like_glob "RLIMIT_NOFILE 315, one sandbox: 10 processes followed, then resource_exhausted" "$out" "10 resource_exhausted *processes run already*"
else
	fail "the server starts with RLIMIT_NOFILE 315 and one sandbox: $(cat "$TEST_TMP/serve.log")"
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
done_testing
