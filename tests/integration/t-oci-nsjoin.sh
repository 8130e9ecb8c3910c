#!/usr/bin/env bash
# cordon-runtime joining the network, ipc and uts namespaces an engine made, by path
# (linux.namespaces[] {type, path}), as a Kubernetes pod's containers join its pause container's:
# the container sees the pod's address and listener, its SysV shared memory and its hostname, and
# gains no capability there (the namespaces stay owned by the user namespace that made them:
# `ip addr add`, `ip link set`, `hostname` fail inside). The refusals, one line and 125 before
# anything runs: a path that is no namespace (a file, a FIFO: not opened for reading), the wrong
# type, the host's own network namespace (/proc/1/ns/net, /proc/self/ns/net, a symlink to one)
# unless cordon.net=host, user/pid/mount/cgroup by path, a hostname with a joined uts namespace,
# cordon.allow-net with a joined network.
# The pod's namespaces are held by a process (unshare); as root also bound to a file, as
# `ip netns add` does. Rootless: the holder's user namespace is the caller's, and the runtime
# runs in it as uid 0 (nsenter -U), as rootless podman runs its runtime in its own.
. "$TAP_LIB"
. "$(dirname "$0")/../oci/lib.sh" # oci_rootfs

RT=$CORDON_RUNTIME
[ -x /bin/busybox ] || { skip "cordon-runtime nsjoin" "busybox-static is not installed"; done_testing; exit; }
for p in unshare nsenter ipcmk python3; do
	command -v $p >/dev/null || { skip "cordon-runtime nsjoin" "no $p"; done_testing; exit; }
done

w=$(mkwork)
root=$w/root
b=$w/bundle
oci_rootfs "$b/rootfs"
user=0
is_user_mode && user=1
[ $user = 1 ] && chown -R "$TEST_USER:" "$b"

# the pod: network (lo up, 10.99.0.1/32 on it, a listener on 7777), ipc (a shm segment), uts
# (hostname pod-host), held by a process; rootless, in a user namespace of the caller's
cat >"$w/pod.sh" <<'EOF'
ip link set lo up && ip addr add 10.99.0.1/32 dev lo && hostname pod-host &&
	ipcmk -M 4096 >"$1/shm" || exit 1
busybox nc -ll -p 7777 -e /bin/echo pod-listener </dev/null >/dev/null 2>&1 &
echo $! >"$1/listener"
echo ready >"$1/ready"
exec sleep 600
EOF
chmod 755 "$w/pod.sh"
chmod 1777 "$w" # the pod writes its files there, as the caller
if [ $user = 1 ]; then
	( exec_as_caller unshare -Urniu sh "$w/pod.sh" "$w" ) &
else
	( exec unshare -niu sh "$w/pod.sh" "$w" ) &
fi
pod=$!
cleanup() {
	for id in $(run_rt list -q 2>/dev/null); do run_rt delete --force "$id" >/dev/null 2>&1; done
	kill "$pod" 2>/dev/null
	# the pod's listener, which outlives the pod's shell otherwise
	[ -s "$w/listener" ] && kill "$(cat "$w/listener")" 2>/dev/null
	[ -n "${bound:-}" ] && umount -l "$bound" 2>/dev/null
	return 0
}
trap cleanup EXIT
for _ in $(seq 100); do [ -s "$w/ready" ] && break; sleep 0.1; done
if [ ! -s "$w/ready" ]; then
	skip "cordon-runtime nsjoin" "cannot make the pod's namespaces (unshare)"
	done_testing
	exit
fi
shmid=$(sed -n 's/^Shared memory id: //p' "$w/shm")
podnet=$(readlink "/proc/$pod/ns/net")

# run_rt ARGS: the runtime as the caller (60 s at most: a FIFO opened for reading would hang);
# rootless, in the pod's user namespace as its uid 0
run_rt() {
	if [ $user = 1 ]; then
		as_caller timeout -k 5 60 nsenter --preserve-credentials -U -t "$pod" "$RT" \
			--root "$root" "$@"
	else
		timeout -k 5 60 "$RT" --root "$root" "$@"
	fi
}
# config ARGV-JSON PYTHON: the bundle's config.json, `spec`'s example edited: args, then the
# python statements on c (ns(type, path) sets a namespace's path)
config() {
	(cd "$b" && rm -f config.json && as_caller "$RT" spec) || return 1
	python3 - "$b/config.json" "$1" "${2:-}" <<'EOF'
import json, sys
c = json.load(open(sys.argv[1]))
c["process"]["args"] = json.loads(sys.argv[2])
c["process"]["terminal"] = False
def ns(t, path):
    for n in c["linux"]["namespaces"]:
        if n["type"] == t:
            n["path"] = path
            return
    c["linux"]["namespaces"].append({"type": t, "path": path})
exec(sys.argv[3])
json.dump(c, open(sys.argv[1], "w"))
EOF
}
n=0
run() { # the container's output as $out, its status as $rc, stderr as $err
	n=$((n + 1))
	out=$(run_rt run -b "$b" "c$n" 2>"$TEST_TMP/stderr")
	rc=$?
	err=$(cat "$TEST_TMP/stderr")
}
# the pod's segment in /proc/sysvipc/shm as the container read it: "seg"
segment() { awk -v id="$shmid" '$2 == id && $4 == 4096 { print "seg" }' <<<"$out"; }

P=/proc/$pod/ns
probe='ip addr; readlink /proc/self/ns/net; echo | nc -w 5 10.99.0.1 7777 2>&1 || echo no-listener; hostname; cat /proc/sysvipc/shm'

# ---- joined: the pod's address, listener, shm segment and hostname ----
config "[\"sh\", \"-c\", \"$probe\"]" "ns('network', '$P/net'); ns('ipc', '$P/ipc'); ns('uts', '$P/uts'); c.pop('hostname', None)"
run
is "joined network, ipc, uts: runs" "$rc:$err" "0:"
like "network joined: the pod's address" "$out" "inet 10.99.0.1/32"
like "network joined: the pod's namespace" "$out" "$podnet"
like "network joined: the pod's listener answers" "$out" "pod-listener"
like "uts joined: the pod's hostname" "$out" "pod-host"
is "ipc joined: the pod's shm segment (id $shmid)" "$(segment)" seg

# ---- not joined: none of it ----
config "[\"sh\", \"-c\", \"$probe\"]" "c.pop('hostname', None)"
run
is "own namespaces: runs" "$rc:$err" "0:"
unlike "own network: not the pod's address" "$out" "inet 10.99.0.1"
like "own network: the listener unreachable" "$out" "no-listener"
unlike "own uts: not the pod's hostname" "$out" "pod-host"
is "own ipc: not the pod's shm segment" "$(segment)" ""

# ---- escape: no capability over the joined namespaces ----
config '["sh", "-c", "ip addr add 10.99.0.2/32 dev lo && echo ADDED; ip link set lo down && echo DOWN; hostname evil && echo RENAMED; grep ^CapEff /proc/self/status; true"]' \
	"ns('network', '$P/net'); ns('uts', '$P/uts'); c.pop('hostname', None)"
run
is "escape: runs" "$rc" 0
unlike "escape: ip addr add in the joined network fails" "$out" "ADDED"
unlike "escape: ip link set lo down fails" "$out" "DOWN"
unlike "escape: hostname in the joined uts fails" "$out" "RENAMED"
like "escape: no capability" "$out" "CapEff:	0000000000000000"
host=$(nsenter -t "$pod" --net --uts sh -c 'ip addr show dev lo; cat /sys/class/net/lo/operstate; hostname' 2>&1)
[ $user = 1 ] && host=$(as_caller nsenter --preserve-credentials -U -n -u -t "$pod" sh -c 'ip addr show dev lo; hostname' 2>&1)
unlike "escape: the pod's network unchanged (no 10.99.0.2)" "$host" "10.99.0.2"
like "escape: the pod's hostname unchanged" "$host" "pod-host"
like "escape: the pod's lo still up" "$host" "UP"

# ---- refusals: one line naming linux.namespaces[N], 125, nothing run ----
refused() { # NAME PYTHON PATTERN
	config '["sh", "-c", "echo RAN"]' "c.pop('hostname', None); $2"
	run
	is "refused: $1: 125, nothing ran" "$rc:$out" "125:"
	like "refused: $1: the reason" "$err" "$3"
	is "refused: $1: one line" "$(wc -l <<<"$err")" 1
}
: >"$w/plain"
mkfifo "$w/fifo"
chmod a+r "$w/plain" "$w/fifo"
ln -s /proc/self/ns/net "$w/self-net"
refused "a regular file" "ns('network', '$w/plain')" \
	"linux.namespaces[1]: network $w/plain: not a namespace file: refused"
refused "a FIFO (not opened: no hang)" "ns('network', '$w/fifo')" \
	"linux.namespaces[1]: network $w/fifo: not a namespace file: refused"
refused "an ipc namespace as the network" "ns('network', '$P/ipc')" \
	"linux.namespaces[1]: network $P/ipc: a namespace of type ipc, not network: refused"
refused "a network namespace as the uts" "ns('uts', '$P/net')" \
	"linux.namespaces[3]: uts $P/net: a namespace of type network, not uts: refused"
refused "the runtime's own network (/proc/self/ns/net)" "ns('network', '/proc/self/ns/net')" \
	"linux.namespaces[1]: network /proc/self/ns/net: the host's own network namespace"
refused "a symlink to the runtime's own network" "ns('network', '$w/self-net')" \
	"linux.namespaces[1]: network $w/self-net: the host's own network namespace"
refused "the runtime's own uts (/proc/self/ns/uts)" "ns('uts', '/proc/self/ns/uts')" \
	"linux.namespaces[3]: uts /proc/self/ns/uts: the host's own uts namespace"
# pid 1's: refused as the host's where the runtime may read /proc/1 (root on a host), else
# not opened at all (rootless; root in a container whose pid 1 is above its user namespace)
ln -s /proc/1/ns/net "$w/host-net"
why="Permission denied"
[ $user = 0 ] && readlink /proc/1/ns/net >/dev/null 2>&1 && why="the host's own network namespace"
refused "pid 1's network (/proc/1/ns/net)" "ns('network', '/proc/1/ns/net')" \
	"linux.namespaces[1]: network /proc/1/ns/net: $why"
refused "a symlink to /proc/1/ns/net" "ns('network', '$w/host-net')" \
	"linux.namespaces[1]: network $w/host-net: $why"
for t in user pid mount cgroup; do
	f=$t
	[ $t = mount ] && f=mnt
	refused "$t by path" "ns('$t', '$P/$f')" ": $t $P/$f: joining one: refused"
done
refused "hostname with a joined uts" "ns('uts', '$P/uts'); c['hostname'] = 'mine'" \
	"hostname: \"mine\": with a joined uts namespace ($P/uts): refused"
refused "cordon.allow-net with a joined network" \
	"ns('network', '$P/net'); c.setdefault('annotations', {})['cordon.allow-net'] = 'example.com'" \
	"annotations.cordon.allow-net: a network namespace joined ($P/net) is not cordon's"

# ---- rootless, outside the user namespace that owns the pod's: setns is not allowed ----
if [ $user = 1 ]; then
	config '["sh", "-c", "echo RAN"]' "ns('network', '$P/net'); c.pop('hostname', None)"
	out=$(as_caller timeout -k 5 60 "$RT" --root "$w/root-outside" run -b "$b" outside 2>"$TEST_TMP/stderr")
	rc=$?
	err=$(cat "$TEST_TMP/stderr")
	is "a namespace the caller has no CAP_SYS_ADMIN over: 125, nothing ran" "$rc:$out" "125:"
	is "... the reason" "$err" "cordon-runtime: floor: linux.namespaces[1]: network $P/net: cannot be joined: Operation not permitted (the runtime holds no CAP_SYS_ADMIN in the user namespace that owns it): refused"
fi

# ---- the host's network by path, with cordon.net=host: that mode ----
config '["sh", "-c", "readlink /proc/self/ns/net"]' \
	"ns('network', '/proc/self/ns/net'); c.pop('hostname', None); c.setdefault('annotations', {})['cordon.net'] = 'host'"
run
is "cordon.net=host and the host's network by path: runs, in the host's network" "$rc:$out" \
	"0:$(readlink /proc/self/ns/net)"

# ---- as ip netns makes them: bound to a file (root) ----
if [ $user = 0 ]; then
	bound=$w/netns-file
	: >"$bound"
	if mount --bind "$P/net" "$bound"; then
		config '["sh", "-c", "ip addr"]' "ns('network', '$bound'); c.pop('hostname', None)"
		run
		is "a bound network namespace file: runs" "$rc:$err" "0:"
		like "a bound network namespace file: joined" "$out" "inet 10.99.0.1/32"
	else
		skip "a bound network namespace file" "mount --bind failed"
	fi
fi
done_testing
