#!/usr/bin/env bash
# cordon serve, when a sandbox's supervisor dies on its own (the OOM killer, an operator): the
# sandbox dies with it (pid 1's parent-death signal), the server notices the session ended and
# removes the workdir itself, which the supervisor could not.
. "$TAP_LIB"

command -v python3 >/dev/null && command -v curl >/dev/null || {
	skip "serve: a supervisor killed" "python3 and curl are needed"
	done_testing
	exit
}
state=$(mkwork)
key=e2b_0123abcd
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
( CORDON_SERVE_API_KEY=$key exec_as_caller "$CORDON" serve --listen "127.0.0.1:$port" \
	--state-dir "$state/s" --pool 0 -v 2>"$TEST_TMP/serve.log" ) &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null' EXIT
for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/health" && break; sleep 0.1; done
id=$(curl -s -X POST -H "X-API-Key: $key" -H 'Content-Type: application/json' -d '{}' \
	"http://127.0.0.1:$port/sandboxes" | python3 -c 'import json,sys; print(json.load(sys.stdin)["sandboxID"])')
like_glob "a sandbox made" "$id" '[0-9a-z]*'
is "its workdir is there" "$(ls "$state/s" | wc -l)" 1
# the server's children: the process that makes sessions; its children: the supervisors
sup=$(for c in $(pgrep -P "$server"); do pgrep -P "$c"; done | head -1)
like_glob "its supervisor found" "$sup" '[0-9]*'
kill -KILL "$sup"
for _ in $(seq 150); do [ -z "$(ls "$state/s")" ] && break; sleep 0.1; done
is "the workdir is removed by the server" "$(ls "$state/s")" ""
like "... and the log says so" "$(cat "$TEST_TMP/serve.log")" "its workdir removed by the server"
code=$(curl -s -o /dev/null -w '%{http_code}' -H "X-API-Key: $key" "http://127.0.0.1:$port/sandboxes/$id")
is "the sandbox is gone from the server" "$code" 404
done_testing
