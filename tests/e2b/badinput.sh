#!/usr/bin/env bash
# tests/e2b/badinput.sh URL KEY CORDON - bad requests against a running `cordon serve`, with curl
# (TAP): each gets a clear HTTP error with a JSON body, and the server lives on.
set -u
url=$1 key=$2 cordon=$3
n=0 failed=0
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else failed=$((failed + 1)); echo "not ok $n - $2"; [ -n "${3:-}" ] && echo "  # $3"; fi; }
scratch=$(mktemp -d /tmp/badinput.XXXXXX) && trap 'rm -rf "$scratch"' EXIT
# status of a request: curl -s -o body -w %{http_code} ...
req() { curl -s -o "$scratch/body" -w '%{http_code}' "$@"; }
body() { cat "$scratch/body"; }
is() { [ "$1" = "$2" ]; echo $?; }
json_code() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d.get("code"))' "$scratch/body" 2>/dev/null; }
envelope() { python3 -c 'import sys,struct; m=sys.argv[1].encode(); sys.stdout.buffer.write(bytes([0])+struct.pack(">I",len(m))+m)' "$1"; }

s=$(req -X POST "$url/sandboxes" -H "X-API-Key: $key" -d '{"templateID":')
ok "$(is "$s$(json_code)" 400400)" "malformed JSON: 400 with a JSON body" "$s $(body)"
s=$(req -X POST "$url/sandboxes" -H "X-API-Key: $key" -d '[1,2]')
ok "$(is "$s" 400)" "a body that is not an object: 400" "$s"
s=$(req -X POST "$url/sandboxes" -H "X-API-Key: $key" -d '{"timeout":"soon"}')
ok "$(is "$s" 400)" "a field of the wrong type: 400" "$s $(body)"
s=$(req -X POST "$url/sandboxes" -H "X-API-Key: $key" -d '{"envVars":{"A":1}}')
ok "$(is "$s" 400)" "envVars with a number: 400" "$s $(body)"
s=$(head -c 2000000 /dev/zero | tr '\0' ' ' | req -X POST "$url/sandboxes" -H "X-API-Key: $key" --data-binary @-)
ok "$(is "$s" 413)" "a 2 MB body: 413" "$s"
s=$(head -c 2000000 /dev/zero | tr '\0' ' ' | req -X POST "$url/sandboxes" -H "X-API-Key: $key" -H 'Transfer-Encoding: chunked' --data-binary @-)
ok "$(is "$s" 413)" "a 2 MB chunked body (no length): 413" "$s"
# /health answers anyone: it takes no body, which is refused before it is read (not drained).
# The answer comes while the client still sends: it must reach the client each time (the
# server's lingering close; without it a reset lost about one in twelve), hence 25 tries.
head -c 2000000 /dev/zero >"$scratch/2mb"
# answers URL METHOD: the statuses of 25 such requests without a key, the distinct ones
answers() { for _ in $(seq 25); do req -X "$2" "$1" -H 'Expect:' --data-binary "@$scratch/2mb"; echo; done | sort -u | tr '\n' ' '; }
s=$(answers "$url/health" GET)
ok "$(is "$s" "413 ")" "/health without a key, with a 2 MB body: 413, 25 times in 25" "$s"
s=$(answers "$url/sandboxes" POST)
ok "$(is "$s" "401 ")" "no API key, with a 2 MB body: 401, 25 times in 25" "$s"
s=$(printf x | req -X GET "$url/health" -H 'Transfer-Encoding: chunked' --data-binary @-)
ok "$(is "$s$(json_code)" 413413)" "/health with a chunked body: 413 with a JSON body" "$s $(body)"
s=$(req "$url/health")
ok "$(is "$s" 200)" "/health without a body: 200" "$s"
s=$(req "$url/sandboxes" -H "X-API-Key: e2b_00")
ok "$(is "$s$(json_code)" 401401)" "a wrong API key: 401" "$s $(body)"
s=$(req "$url/sandboxes")
ok "$(is "$s" 401)" "no API key: 401" "$s"
s=$(req "$url/sandboxes/nosuchsandbox" -H "X-API-Key: $key")
ok "$(is "$s$(json_code)" 404404)" "an unknown sandbox: 404" "$s $(body)"
s=$(req -X DELETE "$url/sandboxes/nosuchsandbox" -H "X-API-Key: $key")
ok "$(is "$s" 404)" "killing an unknown sandbox: 404" "$s"
s=$(req "$url/sandboxes/../../etc/passwd" --path-as-is -H "X-API-Key: $key")
ok "$(is "$s" 404)" "a path with ..: 404" "$s"
s=$(req "$url/nothing" -H "X-API-Key: $key")
ok "$(is "$s" 404)" "an unknown endpoint: 404" "$s"
s=$(req -X POST "$url/process.Process/List" -H "E2b-Sandbox-Id: nosuchsandbox" -H "E2b-Sandbox-Port: 49983" -H 'Content-Type: application/json' -d '{}')
ok "$(is "$s" 502)" "the data plane of an unknown sandbox: 502 (what the SDK reads as not running)" "$s"

created=$(curl -s -X POST "$url/sandboxes" -H "X-API-Key: $key" -d '{"timeout":120}')
id=$(echo "$created" | python3 -c 'import json,sys; print(json.load(sys.stdin)["sandboxID"])')
tok=$(echo "$created" | python3 -c 'import json,sys; print(json.load(sys.stdin)["envdAccessToken"])')
ok "$([ -n "$id" ]; echo $?)" "create" "$created"
H=(-H "E2b-Sandbox-Id: $id" -H "E2b-Sandbox-Port: 49983")
s=$(req -X POST "$url/process.Process/List" "${H[@]}" -H 'Content-Type: application/json' -d '{}')
ok "$(is "$s" 401)" "the data plane without the access token: 401" "$s"
s=$(req -X POST "$url/process.Process/List" "${H[@]}" -H "X-Access-Token: ${tok}x" -H 'Content-Type: application/json' -d '{}')
ok "$(is "$s" 401)" "a wrong access token: 401" "$s"
H+=(-H "X-Access-Token: $tok")
s=$(req -X POST "$url/filesystem.Filesystem/Stat" "${H[@]}" -H 'Content-Type: application/json' -d '{"path":')
ok "$(is "$s$(json_code)" 400invalid_argument)" "a unary RPC with bad JSON: 400 invalid_argument" "$s $(body)"
s=$(req -X POST "$url/filesystem.Filesystem/Stat" "${H[@]}" -H 'Content-Type: application/json' -d '{"path":7}')
ok "$(is "$s$(json_code)" 400invalid_argument)" "a path that is a number: invalid_argument" "$s $(body)"
s=$(req -X POST "$url/filesystem.Filesystem/Stat" "${H[@]}" -H 'Content-Type: application/json' -d '{"path":"/nonexistent"}')
ok "$(is "$s$(json_code)" 404not_found)" "stat of a missing file: 404 not_found" "$s $(body)"
s=$(req -X POST "$url/process.Process/Start" "${H[@]}" -H 'Content-Type: application/connect+json' -d '{"process":{"cmd":"true"}}')
ok "$(is "$s" 200)" "a streaming RPC without its envelope: 200 ..." "$s"
ok "$(body | tail -c +6 | grep -q '"code":"invalid_argument"'; echo $?)" "... and an end-stream error" "$(body | tail -c +6)"
s=$(envelope '{"process":{"cmd":"/nonexistent/cmd"}}' | req -X POST "$url/process.Process/Start" "${H[@]}" -H 'Content-Type: application/connect+json' --data-binary @-)
ok "$(body | tail -c +6 | grep -q '"error"'; echo $?)" "a command that does not exist: an end-stream error" "$s $(body | tail -c +6 | tr -d '\0')"
s=$(envelope '{"process":{"cmd":"/bin/sh","args":["-c","echo out; echo err >&2; exit 7"]}}' | req -X POST "$url/process.Process/Start" "${H[@]}" -H 'Content-Type: application/connect+json' --data-binary @-)
ok "$(body | grep -aq '"exitCode":7'; echo $?)" "Start streams the end with the exit code" "$(body | tr -c '[:print:]' .)"
s=$(req -X POST "$url/filesystem.Filesystem/WatchDir" "${H[@]}" -H 'Content-Type: application/connect+json' --data-binary @<(envelope '{"path":"/nonexistent"}'))
ok "$(body | grep -aq '"code":"not_found"'; echo $?)" "WatchDir of a missing directory: an end-stream not_found" "$(body | tr -d '\0')"
s=$(req -X POST "$url/filesystem.Filesystem/WatchDir" "${H[@]}" -H 'Content-Type: application/connect+json' --data-binary @<(envelope '{"path":7}'))
ok "$(body | grep -aq '"code":"invalid_argument"'; echo $?)" "WatchDir of a path that is a number: invalid_argument" "$(body | tr -d '\0')"

# a client that goes away mid-stream: the server lives on, the process runs on (as in envd)
envelope '{"process":{"cmd":"/bin/sh","args":["-c","sleep 3; echo late"]},"tag":"gone"}' |
	curl -s -o /dev/null --max-time 1 -X POST "$url/process.Process/Start" "${H[@]}" -H 'Content-Type: application/connect+json' --data-binary @-
s=$(req -X POST "$url/process.Process/List" "${H[@]}" -H 'Content-Type: application/json' -d '{}')
ok "$(body | grep -q '"tag":"gone"'; echo $?)" "a Start stream cut by the client: the process runs on" "$(body)"
# the same for /execute: the kernel is interrupted and the next execution runs at once
I=(-H "E2b-Sandbox-Id: $id" -H "E2b-Sandbox-Port: 49999" -H "X-Access-Token: $tok")
req --max-time 120 -X POST "$url/execute" "${I[@]}" -d '{"code":"0"}' >/dev/null # its kernel started
curl -s -o /dev/null --max-time 2 -X POST "$url/execute" "${I[@]}" -d '{"code":"import time\ntime.sleep(60)"}'
start=$(date +%s)
s=$(req --max-time 20 -X POST "$url/execute" "${I[@]}" -d '{"code":"print(1 + 1)"}')
ok "$(body | grep -q '"text": *"2\\n"'; echo $?)" "an execution cut by the client is interrupted: the next one runs" "$(body)"
ok "$([ $(( $(date +%s) - start )) -lt 10 ]; echo $?)" "... promptly"
s=$(req -X POST "$url/execute" "${I[@]}" -d '{"code":5}')
ok "$(is "$s" 400)" "/execute with code a number: 400" "$s $(body)"
s=$(req -X POST "$url/execute" "${I[@]}" -d '{"code":"1","context_id":"nosuch"}')
ok "$(is "$s" 404)" "/execute in an unknown context: 404" "$s"
s=$(req -X POST "$url/files?path=/home/user/x" "${H[@]}" -H 'Content-Type: text/plain' -d 'x')
ok "$(is "$s" 415)" "an upload neither multipart nor octet-stream: 415" "$s"
s=$(req "$url/files?path=/home/user" "${H[@]}")
ok "$(is "$s" 400)" "downloading a directory: 400" "$s $(body)"
s=$(req "$url/files?path=/nonexistent" "${H[@]}")
ok "$(is "$s" 404)" "downloading a missing file: 404" "$s $(body)"
s=$(req -X DELETE "$url/sandboxes/$id" -H "X-API-Key: $key")
ok "$(is "$s" 204)" "kill: 204" "$s"
s=$(req -X POST "$url/process.Process/List" "${H[@]}" -H 'Content-Type: application/json' -d '{}')
ok "$(is "$s" 502)" "after the kill the data plane answers 502" "$s"

# bad options: one line, exit 125, before anything starts
out=$("$cordon" serve --listen 0.0.0.0:1 2>&1); rc=$?
ok "$([ $rc = 125 ] && [ "$(echo "$out" | wc -l)" = 1 ]; echo $?)" "a non-loopback --listen is refused (125, one line)" "$rc $out"
out=$("$cordon" serve --api-key sk_123 2>&1); rc=$?
ok "$(is "$rc" 125)" "a key not of the form e2b_<hex>: 125" "$out"
out=$("$cordon" serve --idle-ttl 5Q 2>&1); rc=$?
ok "$(is "$rc" 125)" "a bad duration: 125" "$out"
mkdir -p /tmp/badinput-shared.$$ && chmod 777 /tmp/badinput-shared.$$
out=$("$cordon" serve --state-dir /tmp/badinput-shared.$$ 2>&1); rc=$?
ok "$(is "$rc" 125)" "a state dir others may write: 125" "$out"
rmdir /tmp/badinput-shared.$$

s=$(req "$url/health")
ok "$(is "$s" 200)" "the server lives on" "$s"
echo "1..$n"
[ $failed = 0 ]
