#!/usr/bin/env bash
# --allow-net: the egress proxy. Servers on 127.0.0.1 and 127.0.0.2 on the host; the sandbox
# reaches only what is allowed, only through the proxy (real clients: curl, python3's urllib).
. "$TAP_LIB"

w=$(mkwork)
o=$(mkwork) # cordon's outputs (report, audit, capture): never in the workdir
NETPEER=$PROBE_DIR/netpeer.py
c() { cordon --workdir "$w" "$@"; }
jv() { python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(json.dumps(eval(sys.argv[2], {"r": r})))' "$@"; }

pids=()
hns= made_etc_netns= # the network namespace that plays the host, once made
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	if [ -n "$hns" ]; then
		ip netns delete "$hns" 2>/dev/null
		rm -rf "/etc/netns/$hns"
		[ -n "$made_etc_netns" ] && rmdir /etc/netns 2>/dev/null # unless another run uses it
	fi
}
trap cleanup EXIT
# start_server VAR MODE ARGS...: start a netpeer server, its port in VAR (in the network
# namespace $server_ns when set)
server_ns=
start_server() {
	local var=$1 f="$TEST_TMP/port.$RANDOM$RANDOM" in=()
	shift
	[ -n "$server_ns" ] && in=(ip netns exec "$server_ns")
	"${in[@]}" python3 "$NETPEER" "$@" >"$f" 2>"$TEST_TMP/server.err" &
	pids+=($!)
	wait_until 5 test -s "$f"
	printf -v "$var" '%s' "$(head -n1 "$f")"
}

site=$TEST_TMP/site
mkdir -p "$site" && echo "hello from the allowed server" >"$site/index.txt" && chmod -R a+rX "$site"
start_server P1 http 127.0.0.1:0 "$site"
start_server P2 http 127.0.0.2:0 "$site"
SIZE=$((100 << 20))
start_server PS source 127.0.0.1:0 "$SIZE"
sinklog=$TEST_TMP/sink.log
start_server PK sink 127.0.0.1:0 "$sinklog"
[ -n "$P1" ] && [ -n "$P2" ] && [ -n "$PS" ] && [ -n "$PK" ] && pass "test servers listen on 127.0.0.1 and 127.0.0.2" ||
	fail "test servers listen on 127.0.0.1 and 127.0.0.2"

# --- c-ares is loaded when the proxy starts: a library that cannot be loaded refuses the run
badlib=$TEST_TMP/badlib
mkdir -p "$badlib" && : >"$badlib/libcares.so.2" && chmod 755 "$badlib"
LD_LIBRARY_PATH=$badlib c --allow-net "127.0.0.1:$P1" -- sh -c 'echo ran; : >cares-ran'
like_glob "c-ares that cannot be loaded: one line, 125, before anything ran" "$rc|$out|$err" \
	"125||cordon: --net: cannot load libcares.so.2: *"
[ -e "$w/cares-ran" ] && fail "... and the command did not run" || pass "... and the command did not run"
LD_LIBRARY_PATH=$badlib c -- sh -c 'echo ran'
is "... and a run without --allow-net does not load it" "$rc|$out" "0|ran"

# --- the allowed server, through the proxy; the other refused; neither directly
c --allow-net "127.0.0.1:$P1" --report "$o/r.json" -- curl -sS "http://127.0.0.1:$P1/index.txt"
is "curl reaches the allowed server through the proxy (plain HTTP)" "$rc:$out" "0:hello from the allowed server"
c --allow-net "127.0.0.1:$P1" -- curl -sS -p "http://127.0.0.1:$P1/index.txt"
is "... and through CONNECT (curl --proxytunnel)" "$rc:$out" "0:hello from the allowed server"
c --allow-net "127.0.0.1:$P1" -- python3 -c "import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:$P1/index.txt').read().decode().strip())"
is "python3's urllib reaches it too" "$rc:$out" "0:hello from the allowed server"
c --allow-net "127.0.0.1:$P1" -- curl -sS -w '%{http_code}' -o /dev/null "http://127.0.0.2:$P2/index.txt"
is "the server on 127.0.0.2 is refused: 403" "$out" 403
c --allow-net "127.0.0.1:$P1" -- curl -sS "http://127.0.0.2:$P2/index.txt"
is "... with a one-line reason" "$out" "cordon: 127.0.0.2:$P2 is not on the allow-list"
c --allow-net "127.0.0.1:$P1" -- curl -sS -p "http://127.0.0.2:$P2/index.txt"
like_glob "... CONNECT to it is refused too" "$rc:$err" "56:*403*"
c --allow-net "127.0.0.1:$P1" -- curl -sS -o /dev/null -w '%{http_code}' "http://127.0.0.1:$((P1 == 65535 ? 1 : P1 + 1))/"
is "the allowed address on another port: 403" "$out" 403
c --allow-net "127.0.0.1:$P1" -- curl -sS --noproxy '*' "http://127.0.0.1:$P1/index.txt"
like_glob "curl --noproxy: no way around the proxy (the sandbox's own loopback)" "$rc:$err" "7:*onnect*"
c --allow-net "127.0.0.1:$P1" -- "$PROBE" connect 127.0.0.2 "$P2"
is "a direct connect to the other host reaches only the sandbox's own loopback" "$out" ECONNREFUSED
c --allow-net "127.0.0.1:$P1" -- "$PROBE" connect 10.0.0.1 80
is "... nor to any other address" "$out" ENETUNREACH
c --allow-net "127.0.0.1:$P1" -- python3 -c 'import socket; socket.getaddrinfo("example.com", 80)'
like_glob "no DNS in the sandbox" "$rc:$err" "1:*gaierror*"
c --allow-net "127.0.0.1:$P1" -- env -u HTTP_PROXY -u http_proxy -u ALL_PROXY -u all_proxy curl -sS "http://127.0.0.1:$P1/index.txt"
is "unset proxy variables do not open a way either" "$rc" 7
c --allow-net "127.0.0.1:$P1" -- sh -c 'echo "$HTTP_PROXY $https_proxy $ALL_PROXY [$NO_PROXY] [$no_proxy]"'
is "the proxy variables, both cases; the host's loopback allowed: NO_PROXY empty (loopback goes through the proxy)" \
	"$out" "http://127.0.0.1:3128 http://127.0.0.1:3128 http://127.0.0.1:3128 [] []"
c --allow-net example.com -- sh -c 'echo "[$NO_PROXY] [$no_proxy]"'
is "otherwise loopback is the sandbox's own: NO_PROXY and no_proxy exempt it" "$out" \
	"[localhost,.localhost,127.0.0.1,127.0.1.1,127.0.0.0/8,::1,cordon] [localhost,.localhost,127.0.0.1,127.0.1.1,127.0.0.0/8,::1,cordon]"
# a dev server the command started itself, reached by curl and urllib by address and by name
c --allow-net example.com -- sh -c 'python3 -m http.server 18080 --bind 0.0.0.0 >/dev/null 2>&1 &
	for i in $(seq 100); do curl -s -o /dev/null http://127.0.0.1:18080/ && break; sleep 0.05; done
	curl -s -o /dev/null -w "curl %{http_code} " http://127.0.0.1:18080/
	curl -s -o /dev/null -w "curl-name %{http_code} " http://localhost:18080/
	curl -s -o /dev/null -w "curl-hostname %{http_code} " http://$(hostname):18080/
	python3 -c "import urllib.request as u; print(\"urllib\", *(u.urlopen(\"http://%s:18080/\" % h).status for h in (\"127.0.0.1\", \"localhost\", \"127.0.1.1\", \"cordon\")))"'
is "under --allow-net, a server the command started on its loopback answers curl and urllib, by address, localhost and the hostname" "$out" \
	"curl 200 curl-name 200 curl-hostname 200 urllib 200 200 200 200"
# a refusal is told on cordon's stderr, once per host and port, unless -q
c --allow-net "127.0.0.1:$P1" -- sh -c "curl -s -o /dev/null http://127.0.0.2:$P2/; curl -s -o /dev/null http://127.0.0.2:$P2/x; curl -s -o /dev/null -p http://refused.example:443/"
is "each refused host and port is told once on cordon's stderr" "$err" \
	"$(printf 'cordon: egress refused: 127.0.0.2:%s: not on the allow-list\ncordon: egress refused: refused.example:443: not on the allow-list' "$P2")"
c -q --allow-net "127.0.0.1:$P1" -- curl -s -o /dev/null "http://127.0.0.2:$P2/"
is "... not with -q" "$err" ""

# --- the report and the audit trail
is "report: applied net is proxy, with the allow-list" \
	"$(jv "$o/r.json" '[r["applied"]["net"], r["applied"]["allow_net"]]')" "[\"proxy\", [\"127.0.0.1:$P1\"]]"
c --allow-net "127.0.0.1:$P1" --report "$o/r2.json" --audit "$o/a.jsonl" -- sh -c "curl -s http://127.0.0.1:$P1/index.txt >/dev/null; curl -s http://127.0.0.2:$P2/ >/dev/null; curl -s -p http://127.0.0.1:$P1/index.txt >/dev/null"
is "report: counts of every decision" \
	"$(jv "$o/r2.json" '[r["proxy"][k] for k in ("connections", "allowed", "refused", "failed", "malformed")]')" "[3, 2, 1, 0, 0]"
is "report: bytes both ways (over 100 down, over 60 up)" \
	"$(jv "$o/r2.json" 'r["proxy"]["bytes_down"] > 100 and r["proxy"]["bytes_up"] > 60')" true
ev=$(python3 -c '
import json, sys
for l in open(sys.argv[1]):
    e = json.loads(l)
    if e["event"] == "net":
        print(e["protocol"], e["host"], e["decision"], e.get("status"), e.get("address"), e["bytes_down"] > 0)
' "$o/a.jsonl")
is "audit: one net event per connection, in order" "$ev" "http 127.0.0.1 allowed None 127.0.0.1 True
http 127.0.0.2 refused 403 None False
connect 127.0.0.1 allowed 200 127.0.0.1 True"
is "audit: the net events come before exit" \
	"$(python3 -c 'import json,sys; print(" ".join(json.loads(l)["event"] for l in open(sys.argv[1])))' "$o/a.jsonl" | sed 's/ exec//g; s/ file//g')" "start net net net exit"
c -v --allow-net "127.0.0.1:$P1" -- curl -s -o /dev/null "http://127.0.0.2:$P2/"
like "-v: one line per connection, with the decision and the reason" "$err" "cordon: net: GET 127.0.0.2:$P2: refused: 127.0.0.2:$P2 is not on the allow-list (0 bytes up, 0 down)"
c --report "$o/r3.json" -- true
is "without --allow-net: net none, no proxy in the report" "$(jv "$o/r3.json" '[r["applied"]["net"], r["proxy"]]')" '["none", null]'

# --- names and DNS rebinding. "localhost" is the host's loopback by name (RFC 6761): its entry
# takes the loopback addresses on its ports (README: `--allow-net localhost:PORT` alone); another
# name that resolves to loopback is refused unless the address is allowed too (below, in the
# network namespace that plays the host, whose /etc/hosts has such a name)
c --allow-net "localhost:$P1" --allow-net "127.0.0.1:$P1" -- curl -sS "http://localhost:$P1/index.txt"
is "a name (localhost) with its loopback address allowed too works" "$rc:$out" "0:hello from the allowed server"
c --allow-net "localhost:$P1" -- curl -sS "http://localhost:$P1/index.txt"
is "localhost:PORT allowed alone reaches the host's loopback on PORT" "$rc:$out" "0:hello from the allowed server"
c --allow-net "localhost:$P1" -- curl -sS -o /dev/null -w '%{http_connect}' -p "http://localhost:$P1/"
is "... CONNECT too: 200" "$out" 200
for alias in 127.0.0.1 '[::ffff:127.0.0.1]' '[::1]' 0x7f000001 127.1 2130706433 0177.0.0.1 '[0:0:0:0:0:ffff:7f00:1]'; do
	c --allow-net "localhost:$P1" --allow-net "example.test:$P1" -- curl -sS -o /dev/null -w '%{http_code}' "http://$alias:$P2/index.txt"
	like_glob "the host's loopback by another spelling ($alias), on a port localhost is not allowed, is refused" "$out" "40[03]"
done
c --allow-net "*.example.test:$P1" -- curl -sS "http://example.test:$P1/"
is "*.example.test does not cover example.test itself" "$out" "cordon: example.test:$P1 is not on the allow-list"
c --allow-net "*.example.test:$P1" -- curl -sS "http://a.b.example.test:$P1/"
like_glob "... but covers a.b.example.test (which then does not resolve: 502)" "$out" "cordon: cannot resolve a.b.example.test: *"
c --allow-net "*.example.test:$P1" -- curl -sS "http://xexample.test:$P1/"
is "... and not xexample.test" "$out" "cordon: xexample.test:$P1 is not on the allow-list"
c --allow-net "LocalHost.:$P1" --allow-net "127.0.0.1:$P1" -- curl -sS "http://LOCALHOST:$P1/index.txt"
is "names match without regard to case or a trailing dot" "$rc:$out" "0:hello from the allowed server"
c --allow-net "no-such-host.invalid:$P1" -- curl -sS -o /dev/null -w '%{http_code}' "http://no-such-host.invalid:$P1/"
is "an allowed name that does not resolve: 502" "$out" 502
c --allow-net "127.0.0.1:1" -- curl -sS "http://127.0.0.1:1/"
is "an allowed address where nothing listens: 502 with the reason" "$out" "cordon: cannot connect to 127.0.0.1:1 (127.0.0.1): Connection refused"

# --- the host's own addresses: a network namespace plays the host, with a public address on an
# interface, names for it in its /etc/hosts (ip netns exec binds /etc/netns/NS/hosts there, and
# c-ares reads it), servers on 0.0.0.0 and ::, and cordon run in it. A name leads there only with
# the address allowed too, as for loopback.
HA=1.2.3.4 HA6=2a00:1234::1 ANYIP=5.6.7 # public: refused for being the host's, not for their class
hc() { # cordon in the host's namespace, as the chosen identity (tap.sh's as_caller)
	out=$(ip netns exec "$hns" bash -c '. "$TAP_LIB"; as_caller "$@"' hc "$CORDON" \
		--ro-bind "$PROBE_DIR" --workdir "$w" "$@" 2>"$TEST_TMP/stderr")
	rc=$?
	err=$(cat "$TEST_TMP/stderr")
}
host_link() { # an interface for the address: dummy where the kernel has it, else a veth pair
	ip -n "$hns" link add ha0 type dummy 2>/dev/null ||
		ip -n "$hns" link add ha0 type veth peer name ha1 || return 1
	ip -n "$hns" link set ha0 up && { ! ip -n "$hns" link show ha1 >/dev/null 2>&1 ||
		ip -n "$hns" link set ha1 up; }
}
make_host_ns() {
	hns=cordon-ha-$$-$RANDOM
	ip netns add "$hns" || { hns= && return 1; }
	[ -d /etc/netns ] || made_etc_netns=1
	ip -n "$hns" link set lo up && host_link && ip -n "$hns" addr add "$HA/32" dev ha0 &&
		mkdir -p "/etc/netns/$hns" &&
		printf '%s\n' "127.0.0.1 localhost" "$HA hostaddr.cordon-test" \
			"::ffff:$HA mapped.cordon-test" "0.0.0.0 zero.cordon-test" ":: zero6.cordon-test" \
			"$HA6 hostaddr6.cordon-test" "$ANYIP.9 anyip.cordon-test" \
			"127.0.0.1 loop.cordon-test" >"/etc/netns/$hns/hosts" &&
		ip -n "$hns" route add local "$ANYIP.0/24" dev lo table local
}
own_v4=("control, without cordon: the server on 0.0.0.0 answers on $HA in the namespace"
	"a name allowed alone that resolves to the host's own address is refused: 403"
	"... with the rebinding reason"
	"... CONNECT too"
	"... SOCKS5 too"
	"... and its IPv4-mapped form (::ffff:$HA)"
	"with $HA allowed too it is reached (a server on 0.0.0.0)"
	"a name that resolves to 0.0.0.0 (which connects to the host) is refused"
	"... or to ::"
	"an address of a prefix routed to the host itself (AnyIP: a local route, no interface address) is the host's own too"
	"a name allowed alone that resolves to loopback (not localhost) is refused (rebinding)"
	"... CONNECT too: 403"
	"... SOCKS5 too")
own_v6=("IPv6 control, without cordon: the server on :: answers on [$HA6] in the namespace"
	"IPv6: a name allowed alone that resolves to the host's own $HA6 is refused"
	"... with $HA6 allowed too it is reached (a server on ::)")
why=
if [ "$(id -u)" != 0 ]; then why="needs root (ip netns)"
elif ! command -v ip >/dev/null; then why="no ip (iproute2)"
elif ! make_host_ns; then why="cannot make a network namespace with ip netns"
fi
if [ -n "$why" ]; then
	for d in "${own_v4[@]}" "${own_v6[@]}"; do skip "$d" "$why"; done
else
	server_ns=$hns
	start_server PH http 0.0.0.0:0 "$site"
	server_ns=
	out=$(ip netns exec "$hns" curl -sS --noproxy '*' "http://$HA:$PH/index.txt" 2>&1)
	is "${own_v4[0]}" "$out" "hello from the allowed server"
	hc --allow-net "hostaddr.cordon-test:$PH" -- curl -sS -o /dev/null -w '%{http_code}' "http://hostaddr.cordon-test:$PH/index.txt"
	is "${own_v4[1]}" "$out" 403
	hc --allow-net "hostaddr.cordon-test:$PH" -- curl -sS "http://hostaddr.cordon-test:$PH/index.txt"
	is "${own_v4[2]}" "$out" "cordon: hostaddr.cordon-test resolves to one of this host's own addresses ($HA), which is not on the allow-list itself (DNS rebinding protection: allow $HA too to reach it)"
	hc --allow-net "hostaddr.cordon-test:$PH" -- curl -sS -o /dev/null -w '%{http_connect}' -p "http://hostaddr.cordon-test:$PH/index.txt"
	is "${own_v4[3]}" "$out" 403
	hc --allow-net "hostaddr.cordon-test:$PH" -- curl -sS -x socks5h://127.0.0.1:3128 "http://hostaddr.cordon-test:$PH/index.txt"
	like_glob "${own_v4[4]}" "$rc:$err" "97:*(2)*"
	hc --allow-net "mapped.cordon-test:$PH" -- curl -sS "http://mapped.cordon-test:$PH/index.txt"
	like_glob "${own_v4[5]}" "$out" "cordon: mapped.cordon-test resolves to one of this host's own addresses (::ffff:$(glob_quote "$HA"))*"
	hc --allow-net "hostaddr.cordon-test:$PH" --allow-net "$HA:$PH" -- curl -sS "http://hostaddr.cordon-test:$PH/index.txt"
	is "${own_v4[6]}" "$rc:$out" "0:hello from the allowed server"
	hc --allow-net "zero.cordon-test:$PH" -- curl -sS "http://zero.cordon-test:$PH/index.txt"
	like_glob "${own_v4[7]}" "$out" "cordon: zero.cordon-test resolves to 0.0.0.0, an unspecified address, *"
	hc --allow-net "zero6.cordon-test:$PH" -- curl -sS "http://zero6.cordon-test:$PH/index.txt"
	like_glob "${own_v4[8]}" "$out" "cordon: zero6.cordon-test resolves to ::, an unspecified address, *"
	hc --allow-net "anyip.cordon-test:$PH" -- curl -sS "http://anyip.cordon-test:$PH/index.txt"
	is "${own_v4[9]}" "$out" "cordon: anyip.cordon-test resolves to one of this host's own addresses ($ANYIP.9), which is not on the allow-list itself (DNS rebinding protection: allow $ANYIP.9 too to reach it)"
	hc --allow-net "loop.cordon-test:$PH" -- curl -sS "http://loop.cordon-test:$PH/index.txt"
	is "${own_v4[10]}" "$out" "cordon: loop.cordon-test resolves to 127.0.0.1, a loopback address, which is not on the allow-list itself (DNS rebinding protection: allow 127.0.0.1 too to reach it)"
	hc --allow-net "loop.cordon-test:$PH" -- curl -sS -o /dev/null -w '%{http_connect}' -p "http://loop.cordon-test:$PH/"
	is "${own_v4[11]}" "$out" 403
	hc --allow-net "loop.cordon-test:$PH" -- curl -sS -x socks5h://127.0.0.1:3128 "http://loop.cordon-test:$PH/index.txt"
	like_glob "${own_v4[12]}" "$rc:$err" "97:*(2)*"
	if ip -n "$hns" -6 addr add "$HA6/128" dev ha0 nodad 2>/dev/null; then
		server_ns=$hns
		start_server PH6 http :::0 "$site"
		server_ns=
		out=$(ip netns exec "$hns" curl -sS --noproxy '*' "http://[$HA6]:$PH6/index.txt" 2>&1)
		is "${own_v6[0]}" "$out" "hello from the allowed server"
		hc --allow-net "hostaddr6.cordon-test:$PH6" -- curl -sS "http://hostaddr6.cordon-test:$PH6/index.txt"
		is "${own_v6[1]}" "$out" "cordon: hostaddr6.cordon-test resolves to one of this host's own addresses ($HA6), which is not on the allow-list itself (DNS rebinding protection: allow $HA6 too to reach it)"
		hc --allow-net "hostaddr6.cordon-test:$PH6" --allow-net "[$HA6]:$PH6" -- curl -sS "http://hostaddr6.cordon-test:$PH6/index.txt"
		is "${own_v6[2]}" "$rc:$out" "0:hello from the allowed server"
	else
		for d in "${own_v6[@]}"; do skip "$d" "no IPv6 in the namespace"; done
	fi
fi

# --- IPv6: an address entry in brackets
if ip -6 addr show lo 2>/dev/null | grep -q '::1/128'; then
	start_server P6 http ::1:0 "$site"
	c --allow-net "[::1]:$P6" -- curl -sS "http://[::1]:$P6/index.txt"
	is "IPv6: the allowed [::1] server, plain HTTP" "$rc:$out" "0:hello from the allowed server"
	c --allow-net "[::1]:$P6" -- curl -sS -p "http://[::1]:$P6/index.txt"
	is "... and through CONNECT" "$rc:$out" "0:hello from the allowed server"
	c --allow-net "127.0.0.1:$P6" -- curl -sS "http://[::1]:$P6/index.txt"
	is "... 127.0.0.1 allowed does not allow ::1" "$out" "cordon: [::1]:$P6 is not on the allow-list"
else
	skip "IPv6: the allowed [::1] server, plain HTTP" "no ::1 on the host's loopback"
	skip "... and through CONNECT" "no ::1 on the host's loopback"
	skip "... 127.0.0.1 allowed does not allow ::1" "no ::1 on the host's loopback"
fi

# --- SOCKS5 on the same port (curl -x socks5h://, the name resolved by the proxy)
c --allow-net "127.0.0.1:$P1" --audit "$o/s.jsonl" -- curl -sS -x socks5h://127.0.0.1:3128 "http://127.0.0.1:$P1/index.txt"
is "SOCKS5: the allowed server" "$rc:$out" "0:hello from the allowed server"
is "... audited as socks5" "$(grep -c '"protocol":"socks5","method":"CONNECT","host":"127.0.0.1".*"decision":"allowed"' "$o/s.jsonl")" 1
c --allow-net "127.0.0.1:$P1" -- curl -sS -x socks5h://127.0.0.1:3128 "http://127.0.0.2:$P2/index.txt"
like_glob "SOCKS5: the other server is refused (not allowed by ruleset)" "$rc:$err" "97:*(2)*"
c --allow-net "localhost:$P1" -- curl -sS -x socks5h://127.0.0.1:3128 "http://localhost:$P1/index.txt"
is "SOCKS5: localhost:PORT alone too" "$rc:$out" "0:hello from the allowed server"
c --allow-net "127.0.0.1:1" -- curl -sS -x socks5h://127.0.0.1:3128 "http://127.0.0.1:1/"
like_glob "SOCKS5: connection refused is told as such" "$rc:$err" "97:*(5)*"
socks_raw() { # greeting-and-request hex: the bytes the proxy answers, as hex
	c --allow-net "127.0.0.1:$P1" -- python3 -c "
import socket, sys
s = socket.create_connection(('127.0.0.1', 3128)); s.sendall(bytes.fromhex(sys.argv[1])); s.settimeout(10)
d = b''
while True:
    k = s.recv(100)
    if not k: break
    d += k
print(d.hex())" "$1"
}
socks_raw 0501000502000101020304d431
is "SOCKS5 BIND (not CONNECT): command not supported" "$out" 050005070001000000000000
socks_raw 050102
is "SOCKS5 without the no-authentication method: refused (0xff)" "$out" 05ff
socks_raw 0501000501000901020304d431
is "SOCKS5 with an unknown address type: 8" "$out" 050005080001000000000000
socks_raw 05010005010003036124620050
is "SOCKS5 with a bad host name: general failure" "$out" 050005010001000000000000

# --- bulk data both ways, intact
want=$(python3 "$NETPEER" expect "$SIZE")
c --allow-net "127.0.0.1:$PS" -- python3 "$NETPEER" get 127.0.0.1 "$PS"
is "CONNECT carries a 100 MB stream down intact (sha256 both ends)" "$rc:$out" "0:$want"
: >"$sinklog"
c --allow-net "127.0.0.1:$PK" -- python3 "$NETPEER" put 127.0.0.1 "$PK" "$SIZE"
wait_until 60 test -s "$sinklog" # the sink's digest, written at its end
is "... and 100 MB up intact" "$rc:$out:$(cat "$sinklog")" "0:$want:$want"
c --allow-net "127.0.0.1:$P1" -- sh -c "seq 40 | xargs -P 20 -I{} curl -s -o /dev/null -w '%{http_code}\n' http://127.0.0.1:$P1/index.txt | sort | uniq -c | tr -s ' '"
is "40 requests, 20 in parallel: all 200" "$out" " 40 200"
c --allow-net "127.0.0.1:$PS" -- sh -c "for i in 1 2 3 4 5 6; do python3 $NETPEER get 127.0.0.1 $PS & done; wait" 
is "6 parallel 100 MB streams, each intact" "$(sort -u <<<"$out")" "$want"

# --- bad clients: timed out, refused, never blocking the proxy
# (no check here depends on how fast the machine is: each waits for what it checks, or gives the
# proxy a timeout far from the test's own steps)
c --allow-net "127.0.0.1:$P1" --net-idle-timeout 60s -- python3 -c "
import socket, subprocess
s = socket.create_connection(('127.0.0.1', 3128))
s.sendall(b'CONNECT 127.0.0.1:$P1 HTTP/1.1\r\n')   # a head never finished
print(subprocess.run(['curl', '-sS', 'http://127.0.0.1:$P1/index.txt'], capture_output=True, text=True).stdout, end='')
s.setblocking(False)
try:
    print('the stalled client was answered', s.recv(100))
except BlockingIOError:
    print('the stalled client still waits')"
is "a client that stalls mid-request does not hold up others: they are served meanwhile" \
	"$out" "hello from the allowed server
the stalled client still waits"
c --allow-net "127.0.0.1:$P1" --net-idle-timeout 1s --report "$o/r4.json" -- \
	python3 "$NETPEER" stall "CONNECT 127.0.0.1:$P1 HTTP/1.1"$'\r\n'
is "... and gets 408 after the idle timeout" "$out" "HTTP/1.1 408 Request Timeout"
is "... counted as timed out" "$(jv "$o/r4.json" 'r["proxy"]["timed_out"]')" 1
# a byte every 0.2 s: never idle for the timeout (1 s); 200 bytes would take 40 s
c --allow-net "127.0.0.1:$P1" --net-idle-timeout 1s -- python3 -c "
import select, socket
s = socket.create_connection(('127.0.0.1', 3128))
head = b'CONNECT 127.0.0.1:$P1 HTTP/1.1\\r\\nX-Pad: ' + b'a' * 200
sent = 0
for ch in head:
    if select.select([s], [], [], 0.2)[0]:   # never idle 1 s, never done: until an answer
        break
    s.send(bytes([ch]))
    sent += 1
s.settimeout(60)
print(s.recv(100).split(b'\\r\\n')[0].decode(), 'with', 'part' if sent < len(head) else 'all', 'of the head sent')"
is "a client that dribbles its request a byte at a time still gets 408 (the head's deadline runs from its start)" \
	"$out" "HTTP/1.1 408 Request Timeout with part of the head sent"
c --allow-net "127.0.0.1:$PS" --net-idle-timeout 1s -- python3 -c "
import socket, time, os
s = socket.create_connection(('127.0.0.1', 3128))
s.sendall(b'CONNECT 127.0.0.1:$PS HTTP/1.1\r\n\r\n')
s.recv(100)
# the client quiet (the server's data waits in buffers) until the proxy's end of it is no longer
# established (port 3128 is 0C38 in /proc/net/tcp), for at most 60 s
def proxy_side_open():
    return any(f[1].endswith(':0C38') and f[3] == '01'
               for f in (l.split() for l in open('/proc/net/tcp').read().splitlines()[1:]))
end = time.monotonic() + 60
while proxy_side_open() and time.monotonic() < end:
    time.sleep(0.1)
if proxy_side_open():
    print('still open after 60 s')
else:
    s.settimeout(60)
    n = 0
    while True:
        d = s.recv(1 << 20)
        if not d: break
        n += len(d)
    print('closed after', 'less than all' if n < $SIZE else 'all')
"
is "a tunnel idle past the timeout is closed" "$out" "closed after less than all"
c --allow-net "127.0.0.1:$PS" -- python3 -c "
import socket, time
s = socket.create_connection(('127.0.0.1', 3128))
s.sendall(b'CONNECT 127.0.0.1:$PS HTTP/1.1\\r\\n\\r\\n')
# never read: what waits for this client in the proxy's socket (port 3128), once it has stopped
# growing (the same for 10 looks in a row, 0.1 s apart, and at least 64 KiB; at most 60 s)
def queued():
    for l in open('/proc/net/tcp').read().splitlines()[1:]:
        f = l.split()
        if f[1].endswith(':0C38') and f[3] == '01':
            return int(f[4].split(':')[0], 16)
    return 0
most, same, last, end = 0, 0, -1, time.monotonic() + 60
while (same < 10 or most < 65536) and time.monotonic() < end:
    q = queued()
    same = same + 1 if q == last else 0
    last, most = q, max(most, q)
    time.sleep(0.1)
print(most)"
between "a client that does not read pins at most 512 KiB in the proxy's socket to it (not 4 MiB)" "$out" 65536 524288
bad() { # description hex-bytes expected-first-line
	c --allow-net "127.0.0.1:$P1" -- sh -c "python3 $NETPEER raw $2; curl -sS http://127.0.0.1:$P1/index.txt"
	is "$1" "$out" "$3
hello from the allowed server"
}
hex() { printf '%s' "$1" | od -An -v -tx1 | tr -d ' \n'; }
bad "garbage gets 400, and the proxy goes on serving" "$(hex $'\x16\x03\x01\x02\x05\x01\x01\x01\xfc\x03\x03\r\n\r\n')" "HTTP/1.1 400 Bad Request"
bad "an origin-form request (not a proxy request): 400" "$(hex $'GET / HTTP/1.1\r\nHost: x\r\n\r\n')" "HTTP/1.1 400 Bad Request"
bad "CONNECT without a port: 400" "$(hex $'CONNECT 127.0.0.1 HTTP/1.1\r\n\r\n')" "HTTP/1.1 400 Bad Request"
bad "user info in the URI (allowed@elsewhere): 400" "$(hex "GET http://127.0.0.1:$P1@127.0.0.2:$P2/ HTTP/1.1"$'\r\n\r\n')" "HTTP/1.1 400 Bad Request"
bad "an https:// URI without CONNECT: 400" "$(hex $'GET https://127.0.0.1/ HTTP/1.1\r\n\r\n')" "HTTP/1.1 400 Bad Request"
bad "a head over 8 KiB: 400" "$(hex "GET http://127.0.0.1:$P1/ HTTP/1.1"$'\r\n'"X: $(head -c 9000 /dev/zero | tr '\0' a)"$'\r\n\r\n')" "HTTP/1.1 400 Bad Request"
bad "a NUL in the request line: 400" "$(hex "GET http://127.0.0.1:$P1/")00$(hex $' HTTP/1.1\r\n\r\n')" "HTTP/1.1 400 Bad Request"
c --allow-net "127.0.0.1:$P1" -- sh -c "python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", 3128)).close()'; curl -sS http://127.0.0.1:$P1/index.txt"
is "a client that closes before asking: the proxy goes on" "$rc:$out" "0:hello from the allowed server"
bad "a folded header line: 400" "$(hex "GET http://127.0.0.1:$P1/ HTTP/1.1"$'\r\nX: a\r\n b\r\n\r\n')" "HTTP/1.1 400 Bad Request"
bad "a space before a header's colon: 400" "$(hex "GET http://127.0.0.1:$P1/ HTTP/1.1"$'\r\nHost : x\r\n\r\n')" "HTTP/1.1 400 Bad Request"
bad "a CR inside the request line: 400" "$(hex "GET http://127.0.0.1:$P1/a"$'\r'"X HTTP/1.1"$'\r\n\r\n')" "HTTP/1.1 400 Bad Request"

# a client that half-closes a tunnel and then resets it, to a server that never answers (a
# listener that never accepts): the proxy closes it at once and does not spin on the hang-up
python3 -c 'import socket, time; s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8); print(s.getsockname()[1], flush=True); time.sleep(60)' >"$TEST_TMP/silent.port" &
pids+=($!)
wait_until 5 test -s "$TEST_TMP/silent.port"
PQ=$(cat "$TEST_TMP/silent.port")
rm -f "$w/reset" "$w/measured"
( exec_as_caller "$CORDON" --ro-bind "$PROBE_DIR" --workdir "$w" --allow-net "127.0.0.1:$PQ" --audit "$o/rst.jsonl" -- python3 -c "
import os, socket, struct, time
s = socket.create_connection(('127.0.0.1', 3128))
s.sendall(b'CONNECT 127.0.0.1:$PQ HTTP/1.1\r\n\r\n'); s.recv(100)
s.shutdown(socket.SHUT_WR)
time.sleep(0.2)
s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack('ii', 1, 0)); s.close()
open('reset', 'w').close()
end = time.monotonic() + 120
while not os.path.exists('measured') and time.monotonic() < end:
    time.sleep(0.1)" ) &
launcher=$!
# the launcher's CPU time (in ticks) over 2 s after the reset: an idle proxy uses next to none,
# one that spins on the hang-up all it can get (however loaded the machine, more than this)
wait_until 60 test -e "$w/reset"
cpu0=$(awk '{print $14 + $15}' /proc/$launcher/stat 2>/dev/null)
sleep 2
cpu1=$(awk '{print $14 + $15}' /proc/$launcher/stat 2>/dev/null)
touch "$w/measured"
wait $launcher
rm -f "$w/reset" "$w/measured" # root's: the next runs would say the workdir holds a foreign file
between "... the launcher used at most 0.1 s of CPU in the 2 s after the reset (no busy loop)" \
	"$(( ${cpu1:-9999} - ${cpu0:-0} ))" 0 10
is "... and closed the tunnel for the reset" \
	"$(python3 -c 'import json,sys; print([e.get("reason") for e in map(json.loads, open(sys.argv[1])) if e["event"] == "net"])' "$o/rst.jsonl")" \
	"['the client reset the connection']"
c --allow-net "127.0.0.1:$P1" --net-max-connections 2 -- python3 -c "
import socket
s = [socket.create_connection(('127.0.0.1', 3128)) for _ in range(3)]
s[2].settimeout(5)
print(s[2].recv(100).split(b'\r\n')[0].decode())"
is "over --net-max-connections: 503" "$out" "HTTP/1.1 503 Service Unavailable"
c --allow-net "127.0.0.1:$P1" --net-max-connections 2 -- python3 -c "
import socket
s = [socket.create_connection(('127.0.0.1', 3128)) for _ in range(3)]
s[2].settimeout(5)
a = b''
while True:
    d = s[2].recv(1000)
    if not d:
        break
    a += d
print(a.split(b'\\r\\n\\r\\n', 1)[1].decode(), end='')"
is "... saying why in plain words, with the cap" "$out" "cordon: more connections at once than the proxy allows (2)"

# --- bad entries, before anything runs
rejects "--allow-net empty" 'cordon: --allow-net: empty entry (HOST[:PORT])' -- --allow-net '' -- true
rejects "--allow-net with a bad port" 'cordon: --allow-net: "example.com:99999": port 99999 is not in 1-65535' -- --allow-net example.com:99999 -- true
rejects "--allow-net with port 0" 'cordon: --allow-net: "example.com:0": port 0 is not in 1-65535' -- --allow-net example.com:0 -- true
rejects "--allow-net with an empty port" "cordon: --allow-net: \"example.com:\": empty port after ':'" -- --allow-net example.com: -- true
rejects "--allow-net '*'" "cordon: --allow-net: \"*\": a wildcard must name a domain, as in *.example.com (for all of the network, use the host's network)" -- --allow-net '*' -- true
rejects "--allow-net '*.com'" 'cordon: --allow-net: "*.com": a wildcard over a whole top-level domain is too broad' -- --allow-net '*.com' -- true
rejects "--allow-net 'a.*.com'" "cordon: --allow-net: \"a.*.com\": '*' is allowed only as a leading \"*.\"" -- --allow-net 'a.*.com' -- true
rejects "--allow-net with a bad name" 'cordon: --allow-net: "exa mple.com": "exa mple.com" is neither a host name nor an IPv4 address (IPv6: [2001:db8::1]:443)' -- --allow-net 'exa mple.com' -- true
rejects "--allow-net with a bad address" 'cordon: --allow-net: "300.1.1.1": "300.1.1.1" is neither a host name nor an IPv4 address (IPv6: [2001:db8::1]:443)' -- --allow-net 300.1.1.1 -- true
rejects "--allow-net with a bad IPv6 address" 'cordon: --allow-net: "[::g]:80": "::g" is not an IPv6 address' -- --allow-net '[::g]:80' -- true
rejects "--allow-net with --net host" "cordon: --allow-net: cannot be combined with the host's network, which has no allow-list" -- --allow-net example.com --net host -- true
rejects "--net-idle-timeout 0" 'cordon: --net-idle-timeout: must be at least 0.1s' -- --net-idle-timeout 0 -- true
rejects "--net-max-connections abc" 'cordon: --net-max-connections: "abc" is not a number in 1-65536' -- --net-max-connections abc -- true
c --allow-net example.com --allow-net '*.example.org:8443' --allow-net '[2001:db8::1]:443' --allow-net 2001:db8::2 --allow-net 192.0.2.1 -- true
is "good entries of every kind are accepted" "$rc:$err" "0:"

done_testing
