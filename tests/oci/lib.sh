# tests/oci/lib.sh - the engine harness: a busybox image, a private podman and a private containerd,
# all under $TEST_TMP, pointed at an OCI runtime, and a trap that leaves nothing behind. Source it
# after tests/lib/tap.sh (t-oci-podman.sh, t-oci-containerd.sh, bench/oci/run).
#
# Environment:
#   OCI_RUNTIME     the runtime to drive (default: $CORDON_RUNTIME, set by tests/run when
#                   build/cordon-runtime exists). OCI_RUNTIME=/usr/sbin/runc proves the harness.
#   TEST_TMP        scratch directory (tests/run makes it, world-traversable, and removes it)
#   CORDON_AS       root | user: rootful or rootless podman ($TEST_USER through setpriv)
#
# Every daemon and container is private: podman's --root/--runroot/--tmpdir, containerd's
# root/state/sockets and its namespace live under $TEST_TMP, so the machine's own stores are not
# read or touched. oci_cleanup (installed as the EXIT trap by oci_init) removes containers, stops
# the daemons, rootless podman's pause process (catatonit) and unmounts what is left under $TEST_TMP.
set -u

OCI_RUNTIME=${OCI_RUNTIME:-${CORDON_RUNTIME:-}}
OCI_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OCI_IMAGE=localhost/cordon-bb:1
OCI_NS=cordon-test-$$ # containerd namespace
_oci_ctrd_pids=()
_oci_podman_used=0

# oci_rootless: 0 when podman runs as $TEST_USER (rootless)
oci_rootless() { [ "${CORDON_AS:-root}" = user ] || [ "$(id -u)" != 0 ]; }

# oci_init: checks the runtime and installs the cleanup trap. Prints nothing; returns 1 with
# $oci_skip set to the reason when the suite cannot run here.
oci_init() {
	oci_skip=
	if [ -z "$OCI_RUNTIME" ]; then
		oci_skip="no OCI runtime to test (build/cordon-runtime not built, OCI_RUNTIME unset)"
		return 1
	fi
	if [ ! -x "$OCI_RUNTIME" ]; then
		oci_skip="$OCI_RUNTIME: not executable"
		return 1
	fi
	trap oci_cleanup EXIT
	trap 'exit 143' TERM INT HUP # (the EXIT trap then runs)
	return 0
}

# oci_rootfs DIR: a busybox-static root filesystem (the applets the suites use, and the usual
# empty directories of an image)
oci_rootfs() {
	local d=$1 a
	mkdir -p "$d"/{bin,dev,etc,proc,sys,tmp,root,run,var}
	cp /bin/busybox "$d/bin/busybox"
	for a in sh true false ls cat id echo sleep ps hostname mount grep tty touch mkdir \
		head tail wc sed env kill readlink stat chmod chown cut tr test printf uname stty ip nc; do
		ln -s busybox "$d/bin/$a"
	done
	echo 'root:x:0:0:root:/root:/bin/sh' >"$d/etc/passwd"
	echo 'root:x:0:' >"$d/etc/group"
	chmod 1777 "$d/tmp"
}

# oci_image_tar: $TEST_TMP/bb.tar, the rootfs as a tarball for `podman import` (made once)
oci_image_tar() {
	[ -f "$TEST_TMP/bb.tar" ] && return 0
	rm -rf "$TEST_TMP/bb-rootfs"
	oci_rootfs "$TEST_TMP/bb-rootfs"
	tar -C "$TEST_TMP/bb-rootfs" --owner=0 --group=0 -cf "$TEST_TMP/bb.tar" .
	chmod 644 "$TEST_TMP/bb.tar"
}

# ---- podman -----------------------------------------------------------------------------------

# oci_podman_setup: private stores and a containers.conf, owned by whoever runs podman.
# Rootless: needs a subuid/subgid range for $TEST_USER (newuidmap); sets $oci_skip when missing.
oci_podman_setup() {
	local P=$TEST_TMP/podman
	mkdir -p "$P"/{root,runroot,tmp,home,xdg}
	chmod 700 "$P/xdg"
	# default_ulimits: podman asks nofile/nproc 1048576, above this kind of host's hard limits
	# (runc and crun then fail setrlimit). runtime_supports_json: podman passes --log-format=json
	# --log FILE to create only for runtimes named there (by the binary's basename).
	cat >"$P/containers.conf" <<-EOF
		[containers]
		default_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]
		[engine]
		runtime_supports_json = ["crun", "runc", "kata", "runsc", "krun", "cordon-runtime"]
	EOF
	chmod 644 "$P/containers.conf"
	if oci_rootless; then
		if ! grep -s "^$TEST_USER:" /etc/subuid >/dev/null || ! grep -s "^$TEST_USER:" /etc/subgid >/dev/null; then
			oci_skip="rootless podman needs a subuid/subgid range for $TEST_USER in /etc/subuid and /etc/subgid (.ci/run adds $TEST_USER:1000000:65536)"
			return 1
		fi
		[ "$(id -u)" = 0 ] && chown -R "$TEST_USER:" "$P"
	fi
	_oci_podman_wrapper
	_oci_podman_used=1
	return 0
}

# $TEST_TMP/podman/pm: podman with the private stores and the runtime under test, as the
# caller's identity (a script, so that `script -qec` can run it too)
_oci_podman_wrapper() {
	local P=$TEST_TMP/podman drop=
	oci_rootless && [ "$(id -u)" = 0 ] &&
		drop="setpriv --reuid=$TEST_USER --regid=$TEST_USER --clear-groups env USER=$TEST_USER LOGNAME=$TEST_USER"
	cat >"$P/pm" <<-EOF
		#!/bin/sh
		exec $drop env CONTAINERS_CONF="$P/containers.conf" HOME="$P/home" XDG_RUNTIME_DIR="$P/xdg" \\
		    XDG_CONFIG_HOME="$P/home/.config" XDG_DATA_HOME="$P/home/.local/share" TMPDIR="$P/tmp" \\
		    podman --root "$P/root" --runroot "$P/runroot" --tmpdir "$P/tmp" --storage-driver vfs \\
		    --cgroup-manager=cgroupfs --events-backend=file --runtime "$OCI_RUNTIME" "\$@"
	EOF
	chmod 755 "$P/pm"
	PM=$P/pm
}

# pm ARGS...: $PM ARGS; output in $out, stderr in $err (without podman's notices of this host),
# status in $rc (as tap.sh's cordon())
pm() {
	out=$("$PM" "$@" 2>"$TEST_TMP/pm.stderr")
	rc=$?
	err=$(grep -v -e 'is not a shared mount' -e 'cgroupv2 manager is set to systemd' "$TEST_TMP/pm.stderr")
	return 0
}
# pm_raw ARGS...: podman with the caller's own stdin/stdout (pipes, script -qec)
pm_raw() { "$PM" "$@"; }

# oci_podman_image: imports the busybox image (once); returns 1 with $oci_skip on failure
oci_podman_image() {
	oci_image_tar
	pm image exists "$OCI_IMAGE"
	[ "$rc" = 0 ] && return 0
	pm import "$TEST_TMP/bb.tar" "$OCI_IMAGE"
	if [ "$rc" != 0 ]; then
		oci_skip="podman import failed: ${err:-$out}"
		return 1
	fi
}

# oci_podman_net: the --network option runs use: none when rootless (slirp4netns needs
# /dev/net/tun, 0600 root on some hosts); none as root too (no CNI bridge or iptables rules left
# on the host by a test)
oci_podman_net() { echo --network=none; }

_oci_podman_cleanup() {
	local P=$TEST_TMP/podman f pid
	[ "$_oci_podman_used" = 1 ] || return 0
	"$PM" rm --all --force --time 0 >/dev/null 2>&1
	# rootless podman leaves its pause process (catatonit -P) holding the user namespace
	for f in "$P/tmp/pause.pid" "$P/xdg/libpod/tmp/pause.pid"; do
		[ -s "$f" ] || continue
		pid=$(cat "$f")
		[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
	done
	_oci_podman_used=0
}

# ---- containerd -------------------------------------------------------------------------------

# oci_ctrd_start NAME [CRI]: a private containerd under $TEST_TMP/NAME (config from
# tests/oci/fixtures/containerd-test.toml, or containerd-cri.toml with CRI=cri), started in the
# background; waits for it to answer. Sets CTRD_SOCK and CTRD_DIR; returns 1 with $oci_skip.
oci_ctrd_start() {
	local name=$1 conf=containerd-test.toml d
	[ "${2:-}" = cri ] && conf=containerd-cri.toml
	d=$TEST_TMP/$name
	mkdir -p "$d"
	sed -e "s|@DIR@|$d|g" -e "s|@RUNTIME@|$OCI_RUNTIME|g" "$OCI_LIB_DIR/fixtures/$conf" >"$d/config.toml"
	containerd --config "$d/config.toml" >"$d/containerd.log" 2>&1 &
	_oci_ctrd_pids+=("$!")
	CTRD_DIR=$d CTRD_SOCK=$d/ctrd.sock
	for _ in $(seq 1 200); do
		ctr -a "$CTRD_SOCK" version >/dev/null 2>&1 && return 0
		kill -0 "$!" 2>/dev/null || break
		sleep 0.05
	done
	oci_skip="containerd did not start: $(tail -n 3 "$d/containerd.log")"
	return 1
}

# c ARGS...: ctr on the private containerd and namespace, as root; $out, $err, $rc
c() {
	out=$(ctr -a "$CTRD_SOCK" -n "$OCI_NS" "$@" 2>"$TEST_TMP/ctr.stderr")
	rc=$?
	err=$(cat "$TEST_TMP/ctr.stderr")
	return 0
}
c_raw() { ctr -a "$CTRD_SOCK" -n "$OCI_NS" "$@"; }

# oci_ctrd_image: the busybox image in containerd, unpacked by the native snapshotter (plain
# directories: a rootfs cordon can id-map; overlayfs cannot be)
oci_ctrd_image() {
	oci_image_tar
	if [ ! -f "$TEST_TMP/bb-oci.tar" ]; then
		# an OCI archive with the one layer, without podman: umoci would do, skopeo needs an image
		oci_podman_setup && oci_podman_image || return 1
		pm save --format oci-archive -o "$TEST_TMP/bb-oci.tar" "$OCI_IMAGE"
		if [ "$rc" != 0 ]; then
			oci_skip="podman save failed: $err"
			return 1
		fi
	fi
	c images import --snapshotter native --base-name localhost/cordon-bb "$TEST_TMP/bb-oci.tar"
	if [ "$rc" != 0 ]; then
		oci_skip="ctr images import failed: $err"
		return 1
	fi
}

_oci_ctrd_cleanup() {
	local sock id p shims=
	# our shims: a runc-v2 shim works in its task's directory, under our state directories
	for p in /proc/[0-9]*; do
		[ "$(cat "$p/comm" 2>/dev/null)" = containerd-shim ] || continue
		case $(readlink "$p/cwd" 2>/dev/null) in "$TEST_TMP"/*) shims+=" ${p#/proc/}" ;; esac
	done
	for sock in "$TEST_TMP"/*/ctrd.sock; do
		[ -S "$sock" ] || continue
		for id in $(ctr -a "$sock" -n "$OCI_NS" tasks ls -q 2>/dev/null); do
			ctr -a "$sock" -n "$OCI_NS" tasks kill -s SIGKILL "$id" >/dev/null 2>&1
			ctr -a "$sock" -n "$OCI_NS" tasks delete --force "$id" >/dev/null 2>&1
		done
		for id in $(ctr -a "$sock" -n "$OCI_NS" containers ls -q 2>/dev/null); do
			ctr -a "$sock" -n "$OCI_NS" containers delete "$id" >/dev/null 2>&1
		done
	done
	for p in "${_oci_ctrd_pids[@]}"; do
		kill "$p" 2>/dev/null && wait "$p" 2>/dev/null
	done
	_oci_ctrd_pids=()
	# a shim outlives containerd
	for p in $shims; do kill -9 "$p" 2>/dev/null; done
	# what a shim left half-made (a create that never returned): the runtime's own list
	if [ -d "/run/containerd/runc/$OCI_NS" ]; then
		for id in $("$OCI_RUNTIME" --root "/run/containerd/runc/$OCI_NS" list -q 2>/dev/null); do
			"$OCI_RUNTIME" --root "/run/containerd/runc/$OCI_NS" delete --force "$id" >/dev/null 2>&1
		done
		rm -rf "/run/containerd/runc/$OCI_NS" 2>/dev/null
	fi
}

# oci_netns_add: a network namespace made as an engine makes a pod's (`ip netns add`), named in
# $OCI_NETNS (/run/netns/$OCI_NETNS); removed by the cleanup
_oci_netns=
oci_netns_add() {
	OCI_NETNS=cordon-test-$$
	ip netns add "$OCI_NETNS" || return 1
	_oci_netns=$OCI_NETNS
}

# ---- cleanup ----------------------------------------------------------------------------------

# oci_umount_tmp: unmounts whatever is still mounted under $TEST_TMP, deepest first
oci_umount_tmp() {
	local m
	awk -v t="$TEST_TMP/" 'index($5, t) == 1 { print $5 }' /proc/self/mountinfo | sort -r |
		while read -r m; do umount -l "$m" 2>/dev/null; done
}

oci_cleanup() {
	_oci_podman_cleanup
	_oci_ctrd_cleanup
	[ -n "$_oci_netns" ] && ip netns delete "$_oci_netns" 2>/dev/null
	_oci_netns=
	[ "$(id -u)" = 0 ] && oci_umount_tmp
	return 0
}
