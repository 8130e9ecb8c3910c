#!/usr/bin/env bash
# --net none: a network namespace of its own with loopback up; --net host: the host's.
. "$TAP_LIB"

w=$(mkwork)
o=$(mkwork) # cordon's outputs (report, audit, capture): never in the workdir
c() { cordon --workdir "$w" "$@"; }

c -- cat /proc/net/dev
is "--net none: only lo" "$(awk -F: 'NR > 2 {gsub(/ /, "", $1); print $1}' <<<"$out")" lo
c -- python3 -c '
import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
c = socket.create_connection(s.getsockname()); a, _ = s.accept(); c.sendall(b"ping"); print(a.recv(4).decode())'
is "loopback is up and works inside" "$out" ping
c -- python3 -c 'import socket; print(socket.getaddrinfo("example.com", 80))'
like_glob "no DNS" "$rc:$err" "1:*gaierror*"
c -- "$PROBE" connect 1.1.1.1 53
is "no route out" "$out" ENETUNREACH
c -- sh -c 'readlink /proc/self/ns/net'
like_glob "(the sandbox reads its network namespace)" "$rc:$out" "0:net:\[[0-9]*\]"
isnt "a network namespace of its own" "$out" "$(readlink /proc/self/ns/net)"
c --net host -- sh -c 'readlink /proc/self/ns/net'
is "--net host: the host's network namespace" "$out" "$(readlink /proc/self/ns/net)"
c --net host --report "$o/r.json" -- true
is "--net host is in the report (no net namespace)" \
	"$(python3 -c 'import json; a=json.load(open("'"$o/r.json"'"))["applied"]; print(a["net"], "net" in a["namespaces"])')" "host False"

done_testing
