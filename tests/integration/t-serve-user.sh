#!/usr/bin/env bash
# cordon serve's sandbox user, with nothing but curl and python3 (docs/e2b.md "Commands run as
# the sandbox's user"): commands run as E2B's `user` (uid and gid 1000, HOME /home/user, the
# workdir), whatever host id the server runs as; a request that names another user (the SDKs'
# `user` option: `Authorization: Basic base64(NAME:)` on envd's Connect calls, `username=` on
# /files) is refused, never run as someone else: `root` with permission_denied / 403 saying
# why, any other name with envd's "invalid username" (unauthenticated / 401), in every form
# (a streamed Start, a unary call, a download, an upload of 1 MiB: the answer comes whole, not a
# broken pipe), and nothing it asked for happens. Each refusal has its control beside it (the
# same request as `user`, or naming none, works).
. "$TAP_LIB"

command -v python3 >/dev/null && command -v curl >/dev/null || {
	skip "serve: the sandbox user" "python3 and curl are needed"
	done_testing
	exit
}
dir=$(mkwork)
hex() { head -c "$1" /dev/urandom | od -An -tx1 | tr -d ' \n'; }
key=e2b_$(hex 20)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
url=http://127.0.0.1:$port
( CORDON_SERVE_API_KEY=$key exec_as_caller "$CORDON" serve --listen "127.0.0.1:$port" \
	--state-dir "$dir/s" --pool 0 --max-sandboxes 2 2>"$TEST_TMP/serve.log" ) &
server=$!
trap 'kill "$server" 2>/dev/null; wait "$server" 2>/dev/null' EXIT
if ! wait_until 30 curl -s -o /dev/null "$url/health"; then
	fail "serve: the server answers (log: $(cat "$TEST_TMP/serve.log"))"
	done_testing
	exit
fi
j=$(curl -s --max-time 120 -X POST -H "X-API-Key: $key" -H 'Content-Type: application/json' \
	-d '{"timeout": 300}' "$url/sandboxes")
read -r id tok < <(python3 -c 'import json, sys
j = json.loads(sys.argv[1]); print(j["sandboxID"], j["envdAccessToken"])' "$j" 2>/dev/null)
if [ -z "${id:-}" ]; then
	fail "a sandbox (log: $(tail -5 "$TEST_TMP/serve.log"))"
	done_testing
	exit
fi
b64() { printf '%s' "$1" | base64 -w0; }
envd=(-H "E2b-Sandbox-Id: $id" -H "E2b-Sandbox-Port: 49983" -H "X-Access-Token: $tok")

# run CMD HEADERS...: Start's whole answer (a Connect stream: envelopes of JSON), as text: its
# stdout decoded, then "error CODE: MESSAGE" when it ended in one
run() {
	python3 -c 'import json, struct, sys
m = json.dumps({"process": {"cmd": "/bin/sh", "args": ["-c", sys.argv[1]]}}).encode()
sys.stdout.buffer.write(b"\0" + struct.pack(">I", len(m)) + m)' "$1" >"$TEST_TMP/start"
	curl -s --max-time 60 -X POST "${envd[@]}" -H 'Content-Type: application/connect+json' \
		-H 'Connect-Protocol-Version: 1' "${@:2}" --data-binary "@$TEST_TMP/start" \
		"$url/process.Process/Start" | python3 -c 'import base64, json, struct, sys
b = sys.stdin.buffer.read()
while len(b) >= 5:
    f, n = b[0], struct.unpack(">I", b[1:5])[0]
    m = json.loads(b[5:5 + n] or b"{}"); b = b[5 + n:]
    e = m.get("error")
    if e: print("error %s: %s" % (e.get("code"), e.get("message")))
    d = m.get("event", {}).get("data", {}).get("stdout")
    if d: sys.stdout.write(base64.b64decode(d).decode())'
}
# exists NAME: what a command as the sandbox's user sees of /home/user/NAME
exists() { run "test -e /home/user/$1 && echo yes || echo no"; }
basic() { printf 'Authorization: Basic %s' "$(b64 "$1")"; }

# --- the identity
is "whoami, id, HOME, USER, the working directory" \
	"$(run 'whoami; id; echo "$HOME $USER $LOGNAME"; pwd')" \
	"user
uid=1000(user) gid=1000(user) groups=1000(user)
/home/user user user
/home/user"
is "... its account, the only one of its name and ids" \
	"$(run 'grep -c -e "^user:" -e ":1000:" /etc/passwd; grep -c -e "^user:" -e ":1000:" /etc/group; getent passwd user; getent group 1000')" \
	"1
1
user:x:1000:1000::/home/user:$(test -e /bin/bash && echo /bin/bash || echo /bin/sh)
user:x:1000:"
run 'echo x > ~/home-file' >/dev/null
is "~/FILE is /home/user/FILE, the workdir: /files reads it" \
	"$(curl -s "${envd[@]}" "$url/files?path=/home/user/home-file")" x
is "... and a Stat names its owner and group \"user\"" \
	"$(curl -s -X POST "${envd[@]}" -H 'Content-Type: application/json' \
		-d '{"path": "/home/user/home-file"}' "$url/filesystem.Filesystem/Stat" |
		python3 -c 'import json, sys; e = json.load(sys.stdin)["entry"]; print(e["owner"], e["group"])')" \
	"user user"
owner=$(stat -c %U "$dir/s"/*/home-file 2>/dev/null)
is "... on the host the file is the server's (root's: the workdir's owner), not a sandbox id's" \
	"$owner" "$(id -un "$(caller_uid)")"

# --- user, named or not, is the sandbox's; root and others are refused
is "Start naming \"user\": runs (the control)" "$(run 'echo ran-user' -H "$(basic user:)")" ran-user
is "Start with a Bearer Authorization (no Basic user: envd's default): runs" \
	"$(run 'echo ran-bearer' -H 'Authorization: Bearer x')" ran-bearer
refused_root() { like "$1: permission_denied, saying why" "$2" 'error permission_denied: user "root" is refused: cordon serve runs every command and file operation as "user" (uid 1000)'; }
refused_root "Start as root" "$(run 'touch /home/user/as-root; echo ran' -H "$(basic root:)")"
refused_root "... with a password" "$(run 'touch /home/user/as-root; echo ran' -H "$(basic root:x)")"
refused_root "... the scheme in lower case" "$(run 'touch /home/user/as-root; echo ran' -H "authorization: basic $(b64 root:)")"
is "... and no Start as root ran" "$(exists as-root)" no
like "Start as bob: envd's unauthenticated, invalid username" \
	"$(run 'touch /home/user/as-bob' -H "$(basic bob:)")" \
	"error unauthenticated: invalid username: 'bob' (the sandbox's user is \"user\")"
like "... a Basic that is no base64: refused too" "$(run 'touch /home/user/as-bob' -H 'Authorization: Basic !!!')" \
	'error unauthenticated: invalid username'
like "... base64 without a colon: refused too" "$(run 'touch /home/user/as-bob' -H "$(basic root)")" \
	'error unauthenticated: invalid username'
is "... and none of them ran" "$(exists as-bob)" no

# a unary call
list() { curl -s -w ' %{http_code}' -X POST "${envd[@]}" -H 'Content-Type: application/json' \
	-d '{}' "$@" "$url/process.Process/List" | python3 -c 'import json, sys
t = sys.stdin.read(); b, _, c = t.rpartition(" "); print(c, json.loads(b).get("code", "ok"))'; }
is "List as user: 200 (the control)" "$(list -H "$(basic user:)")" "200 ok"
is "List as root: 403 permission_denied" "$(list -H "$(basic root:)")" "403 permission_denied"
is "List as bob: 401 unauthenticated" "$(list -H "$(basic bob:)")" "401 unauthenticated"

# /files: username= and Authorization alike
get() { curl -s -w ' %{http_code}' "${envd[@]}" "$@" | tr -d '\n'; }
is "GET /files as user: 200 (the control)" "$(get "$url/files?path=/home/user/home-file&username=user")" "x 200"
like "GET /files as root: 403, saying why" "$(get "$url/files?path=/home/user/home-file&username=root")" \
	'user \"root\" is refused'
like "GET /files as bob: 401" "$(get "$url/files?path=/home/user/home-file&username=bob")" \
	"invalid username: 'bob'"
like "GET /files as user by username=, root by Authorization: 403" \
	"$(get -H "$(basic root:)" "$url/files?path=/home/user/home-file&username=user")" '403'
head -c 1048576 /dev/zero >"$TEST_TMP/big"
put() { curl -s -w ' %{http_code}' -X POST "${envd[@]}" -H 'Content-Type: application/octet-stream' \
	--data-binary "@$TEST_TMP/big" "$url/files?path=/home/user/$1&username=$2" | tail -c 3; }
is "POST /files of 1 MiB as user: 200 (the control)" "$(put up-user user)" 200
is "POST /files of 1 MiB as root: 403, the answer whole (no broken pipe)" "$(put up-root root)" 403
is "POST /files of 1 MiB as bob: 401" "$(put up-bob bob)" 401
is "... and neither was written" "$(exists up-root) $(exists up-bob) $(exists up-user)" "no no yes"
is "the server lives on" "$(curl -s -o /dev/null -w '%{http_code}' "$url/health")" 200
done_testing
