#!/usr/bin/env bash
# cordon serve's authentication with nothing but curl and python3 (docs/e2b.md "Security"): the
# control plane refuses a missing, wrong, one-byte-off, cut or lengthened API key; the data plane
# (envd's Connect JSON, /files, the code interpreter's port, routed by header or by Host) refuses
# a missing, empty, wrong or one-byte-off access token and another sandbox's; signed /files URLs
# are refused when forged (another path, operation, user or token, an expiration passed, changed
# or dropped, a signature changed in one character); every route of the router's table
# (routes.c) refuses a request without credentials but the two /health answers that take none.
# Each refusal has its control beside it (the right credential works), so that a server refusing
# everything fails here too.
. "$TAP_LIB"

command -v python3 >/dev/null && command -v curl >/dev/null || {
	skip "serve: authentication" "python3 and curl are needed"
	done_testing
	exit
}
dir=$(mkwork)
hex() { head -c "$1" /dev/urandom | od -An -tx1 | tr -d ' \n'; }
key=e2b_$(hex 20)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
url=http://127.0.0.1:$port
( CORDON_SERVE_API_KEY=$key exec_as_caller "$CORDON" serve --listen "127.0.0.1:$port" \
	--state-dir "$dir/s" --pool 0 --max-sandboxes 4 2>"$TEST_TMP/serve.log" ) &
server=$!
trap 'kill "$server" 2>/dev/null; wait "$server" 2>/dev/null' EXIT
if ! wait_until 30 curl -s -o /dev/null "$url/health"; then
	fail "serve: the server answers (log: $(cat "$TEST_TMP/serve.log"))"
	done_testing
	exit
fi

# code ARGS...: the HTTP status of curl ARGS (000: no answer)
code() { curl -s -o /dev/null -w '%{http_code}' --max-time 60 "$@"; }
# body ARGS...: "STATUS BODY"
body() { curl -s -w ' %{http_code}' --max-time 60 "$@" | python3 -c '
import sys; t = sys.stdin.read(); b, _, c = t.rpartition(" "); print(c, b)'; }
# other KEY: the same length, its last character changed (and still of the key's alphabet)
other() { python3 -c 'import sys; k = sys.argv[1]; print(k[:-1] + ("0" if k[-1] != "0" else "1"))' "$1"; }
first_other() { python3 -c 'import sys; k, p = sys.argv[1], int(sys.argv[2]); print(k[:p] + ("a" if k[p] != "a" else "b") + k[p + 1:])' "$1" "$2"; }

# --- the control plane: X-API-Key
list() { code "$url/sandboxes" "$@"; }
is "control plane, the right key: 200 (the control)" "$(list -H "X-API-Key: $key")" 200
is "... no key: 401" "$(list)" 401
is "... an empty key: 401" "$(list -H "X-API-Key;")" 401
is "... another key of the same form: 401" "$(list -H "X-API-Key: e2b_$(hex 20)")" 401
is "... the key with its last character changed: 401" "$(list -H "X-API-Key: $(other "$key")")" 401
is "... the key with its first hex digit changed: 401" "$(list -H "X-API-Key: $(first_other "$key" 4)")" 401
is "... the key less its last character: 401" "$(list -H "X-API-Key: ${key%?}")" 401
is "... the key's prefix e2b_: 401" "$(list -H "X-API-Key: e2b_")" 401
is "... the key and one more character: 401" "$(list -H "X-API-Key: ${key}0")" 401
is "... the key upper-cased: 401" "$(list -H "X-API-Key: ${key^^}")" 401
is "... the key in Authorization: Bearer (not where the SDK sends it): 401" \
	"$(list -H "Authorization: Bearer $key")" 401
is "... the key as the access token: 401" "$(list -H "X-Access-Token: $key")" 401
is "a create with a wrong key: 401" \
	"$(code -X POST -H "X-API-Key: $(other "$key")" -H 'Content-Type: application/json' \
		-d '{"timeout": 300}' "$url/sandboxes")" 401
is "... and no sandbox was made" "$(curl -s -H "X-API-Key: $key" "$url/sandboxes")" "[]"

# --- two sandboxes
create() { # create VAR: the sandbox's "ID TOKEN" in VAR
	local j
	j=$(curl -s --max-time 120 -X POST -H "X-API-Key: $key" -H 'Content-Type: application/json' \
		-d '{"timeout": 300, "metadata": {"suite": "t-serve-auth"}}' "$url/sandboxes")
	printf -v "$1" '%s' "$(python3 -c 'import json, sys
j = json.loads(sys.argv[1]); assert j["envdAccessToken"] == j["trafficAccessToken"]
print(j["sandboxID"], j["envdAccessToken"])' "$j" 2>/dev/null)"
}
create A
create B
read -r ida toka <<<"$A"
read -r idb tokb <<<"$B"
if [ -z "${ida:-}" ] || [ -z "${idb:-}" ] || [ "$toka" = "$tokb" ]; then
	fail "two sandboxes, each with a token of its own (log: $(tail -5 "$TEST_TMP/serve.log"))"
	done_testing
	exit
fi
pass "two sandboxes, each with a token of its own"
is "a delete with a wrong key: 401" \
	"$(code -X DELETE -H "X-API-Key: $(other "$key")" "$url/sandboxes/$ida")" 401
is "... and the sandbox is still there" "$(code -H "X-API-Key: $key" "$url/sandboxes/$ida")" 200

# --- the data plane: envd's Connect JSON, routed by E2b-Sandbox-Id and E2b-Sandbox-Port
# rpc ID PORT PATH BODY HEADERS...: "STATUS BODY" of a unary Connect call
rpc() {
	local id=$1 p=$2 path=$3 data=$4
	shift 4
	body -X POST -H "E2b-Sandbox-Id: $id" -H "E2b-Sandbox-Port: $p" \
		-H 'Content-Type: application/json' -H 'Connect-Protocol-Version: 1' -d "$data" \
		"$@" "$url$path"
}
plist() { rpc "$1" 49983 /process.Process/List '{}' "${@:2}" | cut -c1-3; }
is "envd, A's token on A: 200 (the control)" "$(plist "$ida" -H "X-Access-Token: $toka")" 200
is "... its traffic token header (E2B-Traffic-Access-Token): 200 (the control)" \
	"$(plist "$ida" -H "E2B-Traffic-Access-Token: $toka")" 200
is "... B's token on B: 200 (the control)" "$(plist "$idb" -H "X-Access-Token: $tokb")" 200
is "... no token: 401" "$(plist "$ida")" 401
is "... an empty token: 401" "$(plist "$ida" -H "X-Access-Token;")" 401
is "... an empty traffic token: 401" "$(plist "$ida" -H "E2B-Traffic-Access-Token;")" 401
is "... a wrong token: 401" "$(plist "$ida" -H "X-Access-Token: $(hex 20)")" 401
is "... A's token with its last character changed: 401" \
	"$(plist "$ida" -H "X-Access-Token: $(other "$toka")")" 401
is "... A's token less its last character: 401" "$(plist "$ida" -H "X-Access-Token: ${toka%?}")" 401
is "... A's token and one more character: 401" "$(plist "$ida" -H "X-Access-Token: ${toka}0")" 401
is "... B's token on A: 401" "$(plist "$ida" -H "X-Access-Token: $tokb")" 401
is "... B's token on A as the traffic token: 401" \
	"$(plist "$ida" -H "E2B-Traffic-Access-Token: $tokb")" 401
is "... A's token on B: 401" "$(plist "$idb" -H "X-Access-Token: $toka")" 401
is "... the API key as A's token: 401" "$(plist "$ida" -H "X-Access-Token: $key")" 401
is "... a wrong X-Access-Token beside the right traffic token: 401 (the first one asked counts)" \
	"$(plist "$ida" -H "X-Access-Token: $tokb" -H "E2B-Traffic-Access-Token: $toka")" 401

# what B may not do to A: run a command, read a file, write one
# Start: a server stream, its request one Connect envelope (flags, length, JSON)
envelope() { python3 -c 'import json, struct, sys
m = json.dumps({"process": {"cmd": "/bin/sh", "args": ["-c", "echo ran > /home/user/" + sys.argv[1]]}}).encode()
sys.stdout.buffer.write(b"\0" + struct.pack(">I", len(m)) + m)' "$1" >"$TEST_TMP/start-$1"; }
pstart() { # pstart ID FILE TOKEN: the status of a Start of "echo ran > /home/user/FILE"
	envelope "$2"
	code -X POST -H "E2b-Sandbox-Id: $1" -H "E2b-Sandbox-Port: 49983" -H "X-Access-Token: $3" \
		-H 'Content-Type: application/connect+json' -H 'Connect-Protocol-Version: 1' \
		--data-binary "@$TEST_TMP/start-$2" "$url/process.Process/Start"
}
is "B's token starting a process in A: 401" "$(pstart "$ida" ran "$tokb")" 401
is "A's token starting one in A: 200 (the control)" "$(pstart "$ida" ran-a "$toka")" 200
files() { # files ID TOKEN-HEADER... : "STATUS BODY" of GET /files?path=/home/user/secret
	body -H "E2b-Sandbox-Id: $1" -H "E2b-Sandbox-Port: 49983" "${@:2}" \
		"$url/files?path=/home/user/secret&username=user"
}
put() { # put ID TEXT HEADERS...: the status of a POST /files of TEXT to /home/user/secret
	code -X POST -H "E2b-Sandbox-Id: $1" -H "E2b-Sandbox-Port: 49983" \
		-H 'Content-Type: application/octet-stream' --data-binary "$2" "${@:3}" \
		"$url/files?path=/home/user/secret&username=user"
}
secret_a=secret-of-a-$(hex 8)
secret_b=secret-of-b-$(hex 8)
is "A writes its file with its token: 200 (the control)" "$(put "$ida" "$secret_a" -H "X-Access-Token: $toka")" 200
is "B writes its own: 200" "$(put "$idb" "$secret_b" -H "X-Access-Token: $tokb")" 200
is "A reads its file with its token (the control)" "$(files "$ida" -H "X-Access-Token: $toka")" "200 $secret_a"
is "B's token reading A's file: 401" "$(files "$ida" -H "X-Access-Token: $tokb" | cut -c1-3)" 401
is "no token reading A's file: 401" "$(files "$ida" | cut -c1-3)" 401
is "B's token writing A's file: 401" "$(put "$ida" overwritten -H "X-Access-Token: $tokb")" 401
is "... and A's file is as A wrote it" "$(files "$ida" -H "X-Access-Token: $toka")" "200 $secret_a"
stat() { rpc "$ida" 49983 /filesystem.Filesystem/Stat "{\"path\": \"$1\"}" -H "X-Access-Token: $toka" | cut -c1-3; }
is "... and B's Start ran nothing in A (Stat of what A's wrote: 200, the control; of B's: 404)" \
	"$(stat /home/user/ran-a) $(stat /home/user/ran)" "200 404"

# routed by Host (PORT-ID.domain), as behind a proxy in front of the server
hroute() { code -X POST -H "Host: 49983-$1.cordon.invalid" -H 'Content-Type: application/json' \
	-d '{}' "${@:2}" "$url/process.Process/List"; }
is "by Host: A's token on A: 200 (the control)" "$(hroute "$ida" -H "X-Access-Token: $toka")" 200
is "... B's token on A: 401" "$(hroute "$ida" -H "X-Access-Token: $tokb")" 401
is "... no token: 401" "$(hroute "$ida")" 401
# the code interpreter's port
interp() { code -H "E2b-Sandbox-Id: $ida" -H "E2b-Sandbox-Port: 49999" "$@" "$url/health"; }
is "the interpreter's port, B's token on A: 401" "$(interp -H "X-Access-Token: $tokb")" 401
is "... no token: 401" "$(interp)" 401
unlike "... A's token: not refused (the control)" "$(interp -H "X-Access-Token: $toka")" 401
is "envd's /health answers without a token (as envd does): 204" \
	"$(code -H "E2b-Sandbox-Id: $ida" -H "E2b-Sandbox-Port: 49983" "$url/health")" 204

# --- signed /files URLs: v1_ + base64 (unpadded) of SHA-256 of path:operation:user:token[:exp]
# signed PATH OP USER TOKEN [EXP]: the query string the SDK's downloadUrl/uploadUrl would make
signed() {
	python3 -c 'import base64, hashlib, sys, urllib.parse
path, op, user, token = sys.argv[1:5]; exp = sys.argv[5:]
sig = "v1_" + base64.b64encode(hashlib.sha256(":".join([path, op, user, token] + exp).encode()).digest()).decode().rstrip("=")
q = {"path": path, "username": user, "signature": sig}
if exp: q["signature_expiration"] = exp[0]
print(urllib.parse.urlencode(q))' "$@"
}
now=$(date +%s)
later=$((now + 3600))
p=/home/user/secret
get() { body "$url/files?$1" "${@:2}"; } # get QUERY [CURL ARGS]: "STATUS BODY"
st() { get "$@" | cut -c1-3; }
is "signed read URL of A's: A's file (the control)" "$(get "$(signed $p read user "$toka")")" "200 $secret_a"
is "... with an expiration to come: A's file (the control)" \
	"$(get "$(signed $p read user "$toka" "$later")")" "200 $secret_a"
is "... B's: B's file (the signature names the sandbox)" "$(get "$(signed $p read user "$tokb")")" "200 $secret_b"
is "... A's, with A's id in E2b-Sandbox-Id and no token: A's file (the control)" \
	"$(get "$(signed $p read user "$toka")" -H "E2b-Sandbox-Id: $ida" -H "E2b-Sandbox-Port: 49983")" \
	"200 $secret_a"
q=$(signed /home/user/other read user "$toka")
is "a signature of another path: refused" "$(st "${q/other/secret}")" 404
is "a signature of the write operation, to read: refused" \
	"$(st "$(signed $p write user "$toka")")" 404
is "a signature of another user's (root), sent as user: refused" \
	"$(st "$(signed $p read root "$toka" | sed 's/username=root/username=user/')")" 404
is "a signature made with a wrong token: refused" "$(st "$(signed $p read user "$(hex 20)")")" 404
is "a signature made with A's token less a character: refused" \
	"$(st "$(signed $p read user "${toka%?}")")" 404
is "a signature made with the API key: refused" "$(st "$(signed $p read user "$key")")" 404
is "B's signature sent with A's id in E2b-Sandbox-Id: 401" \
	"$(st "$(signed $p read user "$tokb")" -H "E2b-Sandbox-Id: $ida" -H "E2b-Sandbox-Port: 49983")" 401
is "an expired signature (10 s ago): refused" "$(st "$(signed $p read user "$toka" $((now - 10)))")" 404
is "... with A's id in E2b-Sandbox-Id: 401" \
	"$(st "$(signed $p read user "$toka" $((now - 10)))" -H "E2b-Sandbox-Id: $ida" -H "E2b-Sandbox-Port: 49983")" 401
q=$(signed $p read user "$toka" $((now - 10)))
is "... its expiration moved on in the URL: refused" "$(st "${q/signature_expiration=$((now - 10))/signature_expiration=$later}")" 404
q=$(signed $p read user "$toka" "$later")
is "a signature with an expiration, sent without it: refused" "$(st "${q%&signature_expiration=*}")" 404
q=$(signed $p read user "$toka")
tampered=$(python3 -c 'import sys, urllib.parse
q = urllib.parse.parse_qs(sys.argv[1]); s = q["signature"][0]
for i in (3, len(s) - 1):
    c = "A" if s[i] != "A" else "B"
    t = dict((k, v[0]) for k, v in q.items()); t["signature"] = s[:i] + c + s[i + 1:]
    print(urllib.parse.urlencode(t))' "$q")
is "a signature changed in its first or its last character: refused, both" \
	"$(while read -r t; do st "$t"; done <<<"$tampered")" "404
404"
is "a signature cut short by one character: refused" "$(st "${q%?}")" 404
is "no signature: refused" "$(st "path=$p&username=user")" 404
# writing through a signed URL
up() { code -X POST -H 'Content-Type: application/octet-stream' --data-binary "$2" "$url/files?$1"; }
is "signed write URL of A's: the upload works (the control)" "$(up "$(signed $p write user "$toka")" via-url)" 200
is "... and A's file holds it" "$(files "$ida" -H "X-Access-Token: $toka")" "200 via-url"
is "a signed read URL used to write: refused" "$(up "$(signed $p read user "$toka")" forged)" 404
is "a write signature of another path: refused" \
	"$(q=$(signed /home/user/other write user "$toka"); up "${q/other/secret}" forged)" 404
is "an expired write signature: refused" "$(up "$(signed $p write user "$toka" $((now - 10)))" forged)" 404
is "... and A's file is untouched by them" "$(files "$ida" -H "X-Access-Token: $toka")" "200 via-url"

# --- every route of the router's table (src/server/routes.c), without credentials: 401, but for
# the two that take none (GET /health of the control plane and of envd: checked above); so that a
# route added to the table without its check fails here
table_routes() {
	python3 -c 'import re, sys
src = open(sys.argv[1]).read()
rows = re.findall(r"\{PLANE_(\w+),\s*\"(\w+)\",\s*\"([^\"]*)\",\s*(NULL|\"[^\"]*\"),\s*(NULL|&\w+)", src)
for plane, method, prefix, suffix, form in rows:
    path = prefix
    if suffix != "NULL":
        path += (sys.argv[2] if form == "&sandbox_id" else "c1") + suffix.strip("\"")
    print(plane, method, path)' "$(dirname "$TAP_LIB")/../../src/server/routes.c" "$1"
}
n_routes=0
while read -r plane method path; do
	case $plane in
	CONTROL) where=() ;;
	ENVD) where=(-H "E2b-Sandbox-Id: $ida" -H "E2b-Sandbox-Port: 49983") ;;
	*) where=(-H "E2b-Sandbox-Id: $ida" -H "E2b-Sandbox-Port: 49999") ;;
	esac
	[ "$method $path" = "GET /health" ] && [ "$plane" != INTERP ] && continue
	n_routes=$((n_routes + 1))
	data=()
	case $method in POST | PUT) data=(-H 'Content-Type: application/json' -d '{}') ;; esac
	is "no credentials: $plane $method $path: 401" \
		"$(code -X "$method" "${where[@]}" "${data[@]}" "$url$path")" 401
done < <(table_routes "$ida")
is "routes.c's table read: more than 40 routes that take credentials" \
	"$([ "$n_routes" -gt 40 ] && echo yes || echo "$n_routes")" yes

for id in "$ida" "$idb"; do curl -s -o /dev/null -X DELETE -H "X-API-Key: $key" "$url/sandboxes/$id"; done
kill -TERM "$server"
wait "$server"
is "the server stops on SIGTERM: exit 0" "$?" 0
server=
done_testing
