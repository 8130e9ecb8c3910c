#!/usr/bin/env bash
# The sandbox's resolver (issue 29, item 5): lookups inside get an error at once from cordon's
# resolver on 127.0.0.1:53, which tells the names once on stderr and never looks them up; and
# `--allow-net localhost:PORT` alone (item 8). Real clients: getent, python, curl, dig and host
# (bind9-dnsutils), npm; tests/helpers/dnspeer.py for the hostile bytes and the fake upstream.
. "$TAP_LIB"

w=$(mkwork)
o=$(mkwork) # cordon's outputs (the audit): never in the workdir
DNSPEER=$PROBE_DIR/dnspeer.py
c() { cordon --workdir "$w" "$@"; }
count() { grep -c -F -- "$1" <<<"$2"; } # lines of $2 holding $1 (no pipe: no SIGPIPE)

pids=()
hns= made_etc_netns=
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	if [ -n "$hns" ]; then
		ip netns delete "$hns" 2>/dev/null
		rm -rf "/etc/netns/$hns"
		[ -n "$made_etc_netns" ] && rmdir /etc/netns 2>/dev/null
	fi
}
trap cleanup EXIT

hint='cordon: no network: looked up files.example.org (--allow-net files.example.org lets it through)'

# --- no network
c -- cat /etc/resolv.conf
is "the sandbox's resolv.conf names cordon's resolver on its loopback, and no other" \
	"$(grep '^nameserver' <<<"$out")" "nameserver 127.0.0.1"
c -- sh -c 'getent hosts files.example.org; echo "rc=$?"; getent hosts files.example.org;
	getent hosts Files.Example.Org.; getent hosts other.example.net'
is "getent: not found" "$out" "rc=2"
is "the name is told once, however often and in whatever case it is looked up" \
	"$(count "$hint" "$err")" 1
is "... and each name once" "$(count 'looked up other.example.net' "$err")" 1
c -- python3 -c '
import socket
try:
    socket.getaddrinfo("files.example.org", 443)
except socket.gaierror as e:
    print(e.errno == socket.EAI_NONAME, e.strerror)'
# before: EAI_AGAIN ("Temporary failure in name resolution"), which npm and pip retry for a minute
is "python: getaddrinfo fails with EAI_NONAME at once (not EAI_AGAIN, a timeout)" "$out" \
	"True Name or service not known"
c -q -- getent hosts files.example.org
is "-q: not found, and not a word from cordon" "$rc:$err" "2:"
c -- curl -sS --noproxy '*' http://files.example.org/
is "curl: could not resolve host" "$rc:$(count "$hint" "$err")" "6:1"
like "... in curl's own words" "$err" "Could not resolve host: files.example.org"
if command -v dig >/dev/null && command -v host >/dev/null; then
	c -- dig +tries=1 +time=5 files.example.org
	like "dig: NXDOMAIN" "$out" "status: NXDOMAIN"
	like "... from cordon's resolver" "$out" "SERVER: 127.0.0.1#53(127.0.0.1) (UDP)"
	c -- host -W 5 files.example.org
	is "host: NXDOMAIN" "$rc:$out" "1:Host files.example.org not found: 3(NXDOMAIN)"
	c -- dig +tcp +tries=1 +time=5 files.example.org
	like "dig +tcp: NXDOMAIN over TCP too" "$out" "status: NXDOMAIN"
else
	for d in "dig: NXDOMAIN" "... from cordon's" "host: NXDOMAIN" "dig +tcp: NXDOMAIN"; do
		skip "$d" "no dig or host (Debian: bind9-dnsutils)"
	done
fi
c --audit "$o/a.jsonl" -- getent hosts files.example.org
is "--audit: a dns event for the name" "$(python3 -c '
import json, sys
print([(e["name"], e["answer"]) for e in map(json.loads, open(sys.argv[1])) if e["event"] == "dns"])
' "$o/a.jsonl")" "[('files.example.org', 'nxdomain')]"
c -- sh -c 'getent hosts 1.2.3.4; getent hosts 4.3.2.1.in-addr.arpa'
unlike "reverse lookups are answered, not told" "$err" "looked up"

# a root whose /etc/resolv.conf is systemd-resolved's symlink into /run (Ubuntu's): cordon's is
# written where it leads, in the sandbox's own /run
r=$TEST_TMP/rootfs
mkdir -p "$r/bin" "$r/etc"
cp "$(command -v busybox 2>/dev/null || echo /bin/busybox)" "$r/bin/busybox" 2>/dev/null
if [ -x "$r/bin/busybox" ] && ldd "$r/bin/busybox" 2>&1 | grep -c "not a dynamic" >/dev/null; then
	ln -s busybox "$r/bin/sh"
	ln -s ../run/systemd/resolve/stub-resolv.conf "$r/etc/resolv.conf"
	chmod -R a+rX "$r"
	cordon_bare --workdir "$w" --rootfs "$r" -- /bin/sh -c \
		'/bin/busybox grep ^nameserver /etc/resolv.conf; /bin/busybox nslookup stub.example.org'
	like "a root with a resolv.conf symlink into /run: cordon's resolver there" "$out" \
		"nameserver 127.0.0.1"
	like "... busybox nslookup: NXDOMAIN" "$out" "can't find stub.example.org: NXDOMAIN"
	is "... told" "$(count 'looked up stub.example.org' "$err")" 1
	is "... nothing written in the root's own /run" "$(ls -A "$r")" "bin
etc"
else
	for d in "a root with a resolv.conf symlink" "... nslookup" "... told" "... nothing written"; do
		skip "$d" "no static busybox (Debian: busybox-static)"
	done
fi

# --- what the sandbox sends it: every byte is the sandbox's
c -- python3 "$DNSPEER" query 051b5b33316d03726564 # "\e[31m.red": a terminal escape
is "a name with a terminal escape: NXDOMAIN" "$out" 3
is "... told with its bytes escaped, no control byte on the terminal" "$err" \
	'cordon: no network: looked up \027\09131m.red (not a host name)'
c -- python3 "$DNSPEER" query 0361616103626262c00c # a compression pointer in a question
is "a malformed question: FORMERR, not told" "$out:$err" "1:"
c -- python3 "$DNSPEER" flood 6000
is "a flood of malformed, huge, truncated and random queries: cordon still answers after it" \
	"$rc:$out" "0:3"
n=$(count 'cordon: no network: looked up' "$err")
between "... told at most 64 names" "$n" 1 64
like "... and counted the rest in one line" "$err" \
	"more lookups (names past the first 64 are not told one by one)"
is "... nothing else on stderr" "$(grep -c -v '^cordon: no network: ' <<<"$err")" 0
c -- python3 "$DNSPEER" tcpflood
is "TCP: idle, huge, garbage and half-sent connections: a good query still answered" "$rc:$out" \
	"0:3"
is "... told" "$(count 'looked up after.tcp.example' "$err")" 1
# the TCP side's bounds, each on its own: the longest query taken, one byte more closed (the
# supervisor's buffer is the query's most: a length past it must never be read into it), and a
# ninth connection takes the oldest's place, not the next slot's
c -- python3 "$DNSPEER" tcpbound
is "TCP: a query of 4096 bytes answered, 4097 and 65535 refused, the oldest idle one makes room, then a good query answered" \
	"$rc:$out" "0:3 closed closed closed closed oldest 3"

# --- npm: it retried for 71 s (fetch-retries); without network it stops at the first failure
if command -v npm >/dev/null; then
	echo '{"name":"p","version":"1.0.0"}' >"$w/package.json"
	c -- sh -c 'echo "$npm_config_fetch_retries $PIP_RETRIES"; npm install left-pad 2>&1'
	is "npm: retries off (npm_config_fetch_retries, PIP_RETRIES)" "${out%%$'\n'*}" "0 0"
	like "... ENOTFOUND from the resolver" "$out" "code ENOTFOUND"
	is "... and the hint, once" "$(count 'looked up registry.npmjs.org' "$err")" 1
	rm -f "$w/package.json"
else
	for d in "npm: retries off" "... ENOTFOUND" "... and the hint"; do
		skip "$d" "no npm"
	done
fi
c --env npm_config_fetch_retries=3 -- sh -c 'echo "$npm_config_fetch_retries"'
is "--env changes it" "$out" 3
c --allow-net example.com -- sh -c 'echo "${npm_config_fetch_retries-unset}"'
is "--allow-net: npm's retries are its own" "$out" unset

# --- --allow-net: refused names told, allowed ones left to the proxy
c --allow-net a.example -- sh -c 'getent hosts b.example; getent hosts b.example;
	getent hosts a.example; echo "rc=$?"'
is "--allow-net a.example: b.example told once, in the allow-list's words" "$err" \
	'cordon: not on the allow-list: looked up b.example (another --allow-net b.example lets it through)'
is "... a.example fails too (REFUSED: the proxy looks it up, not the sandbox)" "$out" "rc=2"
c --allow-net a.example -- python3 -c '
import socket
for n in ("b.example", "a.example"):
    try:
        socket.getaddrinfo(n, 443)
    except socket.gaierror as e:
        print(n, e.errno == socket.EAI_NONAME, e.errno == socket.EAI_AGAIN)'
is "python: b.example EAI_NONAME, a.example EAI_AGAIN (as before)" "$out" \
	"b.example True False
a.example False True"

# --- never resolved: cordon runs in a network namespace whose resolver (its /etc/resolv.conf,
# bound by ip netns exec) is a fake upstream that logs every name it is asked
up_tests=("control: the fake upstream logs what it is asked (dig on the host side)"
	"control: an allowed name through the proxy is looked up upstream"
	"no lookup inside reaches the upstream: not b.example (refused), not a.example (allowed)"
	"... nor a refused name through the proxy")
why=
if [ "$(id -u)" != 0 ]; then why="needs root (ip netns)"
elif ! command -v ip >/dev/null || ! command -v dig >/dev/null; then why="no ip or dig"
else
	hns=cordon-dns-$$-$RANDOM
	if ! ip netns add "$hns"; then hns= why="cannot make a network namespace"; fi
fi
if [ -n "$why" ]; then
	for d in "${up_tests[@]}"; do skip "$d" "$why"; done
else
	[ -d /etc/netns ] || made_etc_netns=1
	mkdir -p "/etc/netns/$hns"
	echo "nameserver 127.0.0.1" >"/etc/netns/$hns/resolv.conf"
	ip -n "$hns" link set lo up
	log=$TEST_TMP/upstream.log
	: >"$log"
	chmod 666 "$log"
	ip netns exec "$hns" python3 "$DNSPEER" serve 127.0.0.1 "$log" >"$TEST_TMP/up.ready" &
	pids+=($!)
	wait_until 5 test -s "$TEST_TMP/up.ready"
	ip netns exec "$hns" dig +short +tries=1 +time=5 control.example >/dev/null
	is "${up_tests[0]}" "$(cat "$log")" "control.example"
	: >"$log"
	hc() {
		out=$(ip netns exec "$hns" bash -c '. "$TAP_LIB"; as_caller "$@"' hc "$CORDON" \
			--ro-bind "$PROBE_DIR" --workdir "$w" "$@" 2>"$TEST_TMP/stderr")
		rc=$?
		err=$(cat "$TEST_TMP/stderr")
	}
	# a.example resolves upstream to 192.0.2.1, a reserved address: the proxy refuses it
	# (rebinding), after looking it up
	hc --allow-net a.example -- curl -sS -o /dev/null https://a.example/
	is "${up_tests[1]}" "$(sort -u "$log")" "a.example"
	: >"$log"
	hc --allow-net a.example -- sh -c 'getent hosts b.example; getent hosts a.example;
		python3 -c "import socket; socket.getaddrinfo(\"b.example\", 80)" 2>/dev/null;
		dig +tries=1 +time=5 b.example >/dev/null; true'
	is "${up_tests[2]}" "$(cat "$log")" ""
	hc --allow-net a.example -- curl -sS -o /dev/null https://b.example/
	is "${up_tests[3]}" "$(cat "$log")" ""
fi

# --- item 8: --allow-net localhost:PORT alone reaches the host's service, as the README says
site=$TEST_TMP/site
mkdir -p "$site" && echo "hello from the host" >"$site/index.txt" && chmod -R a+rX "$site"
python3 "$PROBE_DIR/netpeer.py" http 127.0.0.1:0 "$site" >"$TEST_TMP/port" 2>/dev/null &
pids+=($!)
wait_until 5 test -s "$TEST_TMP/port"
P=$(head -n1 "$TEST_TMP/port")
c --allow-net "localhost:$P" -- curl -sS "http://localhost:$P/index.txt"
is "--allow-net localhost:PORT alone: http://localhost:PORT/ reaches the host's" \
	"$rc:$out" "0:hello from the host"
c --allow-net "localhost:$P" -- curl -sS "http://127.0.0.1:$P/index.txt"
is "... http://127.0.0.1:PORT/ too" "$rc:$out" "0:hello from the host"
c --allow-net "localhost:$P" -- curl -sS "http://127.0.0.1:$((P == 65535 ? 1 : P + 1))/"
like "... not another port" "$out" "not on the allow-list"

done_testing
