#!/usr/bin/env bash
# tests/run: alone (podman's daemons and stores: one engine suite at a time)
# cordon's isolation promises hold through an engine: inside `podman run --runtime
# cordon-runtime` (rootful as root, rootless as $TEST_USER; private stores under $TEST_TMP, vfs,
# --network none) the container's processes are no host root, have no capabilities, cannot make
# a setuid file anywhere they can write, meet the /proc masks, cannot mount, see no host
# process, find the rootfs and a read-only bind unwritable and no host file outside; configs
# asking for less isolation (--privileged, --pid host, --cap-add SYS_ADMIN, --network host
# without the annotation cordon.net=host) are refused with one line. OCI_RUNTIME=runc runs the
# same checks against runc: those where runc gives less isolation fail there (the suite's proof).
. "$TAP_LIB"
shopt -s extglob

if ! command -v podman >/dev/null || ! command -v conmon >/dev/null; then
	skip "podman: escapes through the OCI runtime" "no podman or conmon (packages podman, conmon)"
	done_testing
	exit
fi
RT=${OCI_RUNTIME:-${CORDON_RUNTIME:-$(dirname "$CORDON")/cordon-runtime}}
RT=$(command -v "$RT") || RT=
if [ -z "$RT" ]; then
	skip "podman: escapes through the OCI runtime" "cordon-runtime is not built"
	done_testing
	exit
fi
if [ ! -x /bin/busybox ] ||
	! file -L /bin/busybox 2>/dev/null | grep 'statically linked' >/dev/null; then
	skip "podman: escapes through the OCI runtime" "no static /bin/busybox (package busybox-static)"
	done_testing
	exit
fi
rootless=
if [ "${CORDON_AS:-root}" = user ] || [ "$(id -u)" != 0 ]; then
	rootless=1
fi
podman_user=$(id -un "${TEST_USER:-$(id -un)}")
if [ -n "$rootless" ] && ! grep "^$podman_user:" /etc/subuid >/dev/null 2>&1; then
	skip "podman: escapes through the OCI runtime" \
		"rootless podman: no subuid range for $podman_user (.ci/run adds cordon-test:1000000:65536)"
	done_testing
	exit
fi
diag "runtime: $RT (podman $([ -n "$rootless" ] && echo rootless || echo rootful))"

# --- who runs podman, with what: everything private under $TEST_TMP, owned by the caller
E=$TEST_TMP/engine
mkdir -p "$E/home" "$E/xdg"
chmod 700 "$E/xdg"
[ -n "$rootless" ] && [ "$(id -u)" = 0 ] && chown -R "$TEST_USER:" "$E"
pod() {
	as_caller env HOME="$E/home" XDG_RUNTIME_DIR="$E/xdg" \
		podman --root "$E/root" --runroot "$E/run" --tmpdir "$E/tmp" --storage-driver vfs \
		--cgroup-manager=cgroupfs --events-backend=file --runtime-flag "root=$E/state" "$@"
}
run() { # run OPTIONS... IMAGE CMD...: podman run --rm through the runtime; $out, $err, $rc
	out=$(pod run --rm --runtime "$RT" --ulimit nofile=1024:1024 --ulimit nproc=1024:1024 "$@" \
		2>"$TEST_TMP/stderr")
	rc=$?
	err=$(grep -v -e 'is not a shared mount' -e 'cannot find UID/GID' "$TEST_TMP/stderr")
}

host_sleep=
stop_all() {
	pod rm -f -t 0 esc-sleep >/dev/null 2>&1
	[ -n "$host_sleep" ] && kill "$host_sleep" 2>/dev/null
	# rootless podman's pause process (catatonit) stays: it is ours, by its pid file
	local p
	p=$(cat "$E/tmp/pause.pid" 2>/dev/null)
	[ -n "$p" ] && kill "$p" 2>/dev/null
	return 0
}
trap stop_all EXIT

# --- the image: a busybox-static rootfs, imported
R=$TEST_TMP/rootfs
mkdir -p "$R/bin" "$R/proc" "$R/sys" "$R/dev" "$R/etc" "$R/tmp" "$R/mnt" "$R/ro" "$R/w"
cp /bin/busybox "$R/bin/busybox"
for a in $(/bin/busybox --list); do
	[ "$a" = busybox ] || ln -s busybox "$R/bin/$a"
done
tar -C "$R" -cf "$TEST_TMP/bb.tar" .
chmod 644 "$TEST_TMP/bb.tar"
if ! pod import "$TEST_TMP/bb.tar" localhost/cordon-esc:1 >/dev/null 2>"$TEST_TMP/import.err"; then
	fail "podman import of a busybox rootfs"
	diag "$(cat "$TEST_TMP/import.err")"
	done_testing
	exit
fi
I=localhost/cordon-esc:1

# host places the container is given (a read-only bind, a writable one) or must not see
ro=$TEST_TMP/ro-dir rw=$TEST_TMP/rw-dir secret=$TEST_TMP/host-secret
mkdir -p "$ro" "$rw"
echo host-data >"$ro/f"
echo host-secret >"$secret"
chmod 755 "$ro"
chmod 777 "$rw" # whichever host id the container's root is, it can write there
# a host process the container must not see
sleep 3062 &
host_sleep=$!

# one container runs every probe; each prints "name=value"
probe='
cap() { awk -v k="$1:" "\$1 == k {print \$2}" /proc/self/status; }
echo "capeff=$(cap CapEff)"
echo "capbnd=$(cap CapBnd)"
landed= wrote=
for d in / /tmp /w /dev/shm; do
	f=$d/esc-suid.$$
	( : >"$f" ) 2>/dev/null || continue
	wrote="$wrote $d"
	chmod u+s "$f" 2>/dev/null
	chmod g+s "$f" 2>/dev/null
	[ -u "$f" ] || [ -g "$f" ] && landed="$landed $d"
done
echo "suid-landed=${landed# }"
echo "wrote=${wrote# }"
echo "kcore=$(head -c 16 /proc/kcore 2>/dev/null | wc -c)"
( : >/proc/sysrq-trigger ) 2>/dev/null && echo "sysrq=writable" || echo "sysrq=refused"
echo "keys=$(cat /proc/keys 2>/dev/null | wc -c) timer_list=$(cat /proc/timer_list 2>/dev/null | wc -c)"
mkdir -p /tmp/m 2>/dev/null
m=
mount -t tmpfs none /tmp/m 2>/dev/null && m="$m tmpfs"
mount -t proc proc /tmp/m 2>/dev/null && m="$m proc"
mount -o remount,rw /ro 2>/dev/null && m="$m remount-ro-bind"
mount -o remount,rw / 2>/dev/null && m="$m remount-root"
echo "mounted=${m# }"
echo "ps-sleep=$(ps -o args | grep -c "^sleep 3062")"
echo "rootfs=$( ( : >/etc/esc-probe ) 2>/dev/null && echo writable || echo refused)"
echo "ro-bind=$( ( : >/ro/esc-probe ) 2>/dev/null && echo writable || echo refused) $(cat /ro/f)"
echo "secret=$(cat SECRET 2>/dev/null || echo absent)"
'
run --network none -v "$ro:/ro:ro" -v "$rw:/w" "$I" sh -c "${probe//SECRET/$secret}"
if [ "$rc" != 0 ] || [ -z "$out" ]; then
	fail "podman run --runtime $(basename "$RT") of the probes"
	diag "rc $rc; $err"
fi
v() { sed -n "s/^$1=//p" <<<"$out"; }
is "no capability in the container's process (CapEff)" "$(v capeff)" 0000000000000000
is "... and none in its bounding set (CapBnd)" "$(v capbnd)" 0000000000000000
is "chmod u+s / g+s lands nowhere the container can write (its /, /tmp, /dev/shm, a rw bind)" \
	"$(v suid-landed)" ""
like "... (tried: the rw bind was written)" "$(v wrote)" /w
is "... and the host finds no setuid or setgid file in the rw bind" \
	"$(find "$rw" -perm /6000 -printf '%P ')" ""
is "/proc/kcore gives nothing" "$(v kcore)" 0
is "/proc/sysrq-trigger cannot be opened for writing" "$(v sysrq)" refused
is "/proc/keys and /proc/timer_list give nothing" "$(v keys)" "0 timer_list=0"
is "no mount: tmpfs, proc, remount of the ro bind or of / all refused" "$(v mounted)" ""
is "the host's processes are not visible (ps)" "$(v ps-sleep)" 0
is "the rootfs is read-only" "$(v rootfs)" refused
is "a bind given read-only (-v DIR:/ro:ro) cannot be written (and is there)" "$(v ro-bind)" \
	"refused host-data"
is "a host file outside the container is not visible" "$(v secret)" absent

# --- the container's processes on the host: none is host root
pod run -d --name esc-sleep --runtime "$RT" --ulimit nofile=1024:1024 --ulimit nproc=1024:1024 \
	--network none "$I" sleep 3063 >/dev/null 2>"$TEST_TMP/stderr"
sleeper() { pgrep -f '^sleep 3063$' | head -1; }
running() { [ -n "$(sleeper)" ]; }
if wait_until 60 running; then
	pid=$(sleeper)
	pidns=$(readlink "/proc/$pid/ns/pid")
	ids=
	for p in /proc/[0-9]*; do
		[ "$(readlink "$p/ns/pid" 2>/dev/null)" = "$pidns" ] || continue
		ids+=" $(awk '/^Uid:/ {print $2 "," $3 "," $4 "," $5}' "$p/status" 2>/dev/null)"
	done
	diag "the container's processes' host uids (real,effective,saved,fs):$ids"
	unlike_glob "no process of the container is host root (Uid in /proc/PID/status, all of its pid ns)" \
		"$ids " "*[ ,]0[ ,]*"
	like_glob "... (and there is one at least)" "$ids" " +([0-9]),*"
else
	fail "podman run -d --runtime $(basename "$RT") sleep: the container's process starts"
	diag "$(cat "$TEST_TMP/stderr")"
fi
pod rm -f -t 0 esc-sleep >/dev/null 2>&1

# --- configs asking for less isolation: refused with one line, nothing run
# the control: the same container without the option runs
run --network none "$I" echo ran
control=$out
is "(control: without the options below, the container runs)" "$control" ran
refused() { # description, podman run options...
	local what=$1
	shift
	run "$@" "$I" echo ran
	# podman shows the runtime's line after its own prefix; one line, nothing else
	if [ "$control" = ran ] && [ "$rc" != 0 ] && [ -z "$out" ] &&
		[[ $err == *"cordon-runtime: "* ]] && [ "$(wc -l <<<"$err")" = 1 ]; then
		pass "$what: refused, with cordon-runtime's one line"
		diag "$err"
	else
		fail "$what: refused, with cordon-runtime's one line"
		diag "rc $rc, out: $out"
		diag "stderr: $err"
	fi
}
refused "--privileged" --network none --privileged
refused "--pid host" --network none --pid host
refused "--cap-add SYS_ADMIN" --network none --cap-add SYS_ADMIN
refused "--network host (without the annotation cordon.net=host)" --network host
# ... which the annotation allows: the host's network, said so, and the rest of the floor held
run --network host --annotation cordon.net=host "$I" sh -c \
	'awk "\$1 == \"CapEff:\" {print \$2}" /proc/self/status; ( : >/etc/x ) 2>/dev/null || echo ro'
is "--network host with --annotation cordon.net=host runs (no capability, read-only root still)" \
	"$(tr '\n' ' ' <<<"$out")" "0000000000000000 ro "

done_testing
