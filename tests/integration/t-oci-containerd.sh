#!/usr/bin/env bash
# tests/run: alone (a containerd daemon: one engine suite at a time)
# containerd (1.6, its runc-v2 shim) driving cordon-runtime through `ctr run --runc-binary`: exit
# status and output, a terminal, run -d with task exec/ps/pause/resume/kill/delete; and a second
# containerd with the CRI plugin on, loading the RuntimeClass configuration of
# docs/oci/containerd-runtimeclass.toml (what a Kubernetes node uses for `handler: cordon`).
# Root only: the daemons need it.
. "$TAP_LIB"
. "$(dirname "$0")/../oci/lib.sh"

plan_skip() {
	skip "t-oci-containerd" "$1"
	done_testing
	exit
}
[ "$(id -u)" = 0 ] && [ "${CORDON_AS:-root}" = root ] || plan_skip "needs root (daemons)"
command -v containerd >/dev/null && command -v ctr >/dev/null &&
	command -v containerd-shim-runc-v2 >/dev/null || plan_skip "containerd not installed"
oci_init || plan_skip "$oci_skip"
oci_ctrd_start ctrd || plan_skip "$oci_skip"
oci_ctrd_image || plan_skip "$oci_skip"
diag "containerd $(containerd --version | awk '{ print $3 }'), runtime $OCI_RUNTIME"
IMG=localhost/cordon-bb:1
R=(--snapshotter native --runc-binary "$OCI_RUNTIME")

c run --rm "${R[@]}" "$IMG" t1 /bin/sh -c 'echo ctr-ok; exit 7'
is "run --rm: output and exit status 7" "$rc:$out" "7:ctr-ok"
c run --rm "${R[@]}" "$IMG" t2 /bin/true
is "run --rm true: exit 0" "$rc:$err" "0:"
# (bounded: a runtime that never answers the shim's console socket leaves ctr waiting for ever)
out=$(timeout -k 5 30 script -qec "ctr -a $CTRD_SOCK -n $OCI_NS run --rm -t ${R[*]} $IMG t4 /bin/sh -c 'tty; echo in-tty'" /dev/null </dev/null | tr -d '\r')
like "-t: a terminal" "$out" "/dev/pts/"
like "-t: its output" "$out" "in-tty"

# ---- the floor under containerd's default config (ctr's: caps, a writable rootfs, root) ----
c run --rm "${R[@]}" "$IMG" t3 /bin/sh -c 'grep ^CapEff /proc/self/status; cat /proc/self/uid_map; touch /bin/x 2>/dev/null && echo wrote || echo read-only'
like_glob "no capability (CapEff 0)" "$out" "CapEff:*0000000000000000*"
like_glob "the rootfs read-only" "$out" "*read-only"
zero=$(awk '$1 ~ /^[0-9]+$/ && $2 == 0 { print }' <<<"$out")
is "no uid inside maps to host uid 0" "$rc:$zero" "0:"

# ---- a network namespace made beforehand, joined by path (a Kubernetes pod's, CRI passes it) ----
if oci_netns_add; then
	ip netns exec "$OCI_NETNS" ip addr add 10.99.0.1/32 dev lo
	c run --rm "${R[@]}" --with-ns "network:/run/netns/$OCI_NETNS" "$IMG" t6 /bin/sh -c 'readlink /proc/self/ns/net; ip addr add 10.99.0.2/32 dev lo 2>&1 || echo cannot-add; ip addr'
	like "--with-ns network:PATH: the container is in that namespace" "$rc:$out" \
		"0:net:[$(stat -L -c %i "/run/netns/$OCI_NETNS")]"
	like "--with-ns network:PATH: its address" "$out" "inet 10.99.0.1/32"
	like "--with-ns network:PATH: no address added from inside" "$out" "cannot-add"
	unlike "--with-ns network:PATH: the namespace unchanged" \
		"$(ip netns exec "$OCI_NETNS" ip addr show dev lo)" "10.99.0.2"
else
	skip "--with-ns network:PATH" "ip netns add failed"
fi

# ---- run -d and the task commands ----
c run -d "${R[@]}" "$IMG" t5 /bin/sleep 1000
is "run -d" "$rc:$err" "0:"
c task ls
like_glob "task ls: RUNNING" "$out" "*t5 * RUNNING*"
c task exec --exec-id e1 t5 /bin/sh -c 'echo exec-ok; exit 4'
is "task exec: output and status" "$rc:$out" "4:exec-ok"
out=$(timeout -k 5 30 script -qec "ctr -a $CTRD_SOCK -n $OCI_NS task exec -t --exec-id e2 t5 /bin/tty" /dev/null </dev/null | tr -d '\r')
like "task exec -t: a terminal" "$out" "/dev/pts/"
c task ps t5
pid=$(awk 'NR > 1 { print $1 }' <<<"$out" | head -n 1)
is "task ps: lists the container's processes" "$rc" 0
if [ -n "$pid" ] && [ -r "/proc/$pid/status" ]; then
	uids=$(awk '/^Uid:/ { print $2, $3, $4, $5 }' "/proc/$pid/status")
	unlike_glob "... none is host root (pid $pid: $uids)" " $uids " "* 0 *"
else
	fail "task ps: a host pid"
	diag "$out"
fi
c task pause t5
if [ "$rc" = 0 ]; then
	pass "task pause"
	c task ls
	like_glob "... PAUSED" "$out" "*t5 * PAUSED*"
	c task resume t5
	is "task resume" "$rc:$err" "0:"
	c task exec --exec-id e3 t5 /bin/echo resumed
	is "... runs again" "$out" resumed
else
	skip "task pause/resume" "$err"
fi
c task kill -s SIGKILL t5
is "task kill -s SIGKILL" "$rc:$err" "0:"
for _ in $(seq 1 100); do
	c task ls
	[[ $out == *STOPPED* ]] && break
	sleep 0.05
done
like_glob "... STOPPED" "$out" "*t5 * STOPPED*"
c task delete t5
is "task delete" "$rc" 0
like "... the task's exit code was 137 (SIGKILL)" "$err" "exit code 137"
c container delete t5
is "container delete" "$rc:$err" "0:"
c task ls -q
is "no task left" "$out" ""

# ---- the RuntimeClass configuration: CRI plugin on, runtimes.cordon with BinaryName ----
if oci_ctrd_start ctrd-cri cri; then
	pass "containerd with the CRI plugin and runtimes.cordon starts"
	cri=$(ctr -a "$CTRD_SOCK" plugins ls 2>&1 | awk '$1 == "io.containerd.grpc.v1" && $2 == "cri" { print $NF }')
	is "ctr plugins ls: the CRI plugin is ok" "$cri" ok
	dump=$(containerd --config "$CTRD_DIR/config.toml" config dump 2>&1)
	like "config dump: runtimes.cordon" "$dump" '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.cordon]'
	like "config dump: its BinaryName is the runtime" "$dump" "BinaryName = \"$OCI_RUNTIME\""
else
	fail "containerd with the CRI plugin and runtimes.cordon starts"
	diag "$oci_skip"
fi

done_testing
