#!/usr/bin/env bash
# cordon's floor under an OCI config.json (docs/oci.md), for real: a bundle (busybox rootfs) goes
# through cordon-runtime's parser and floor (src/oci) and cordon_run() (tests/helpers/
# oci-floor-run.c). What a config asks beyond the floor is clamped, and the container shows it
# (no capabilities, no-new-privileges, a read-only root and file binds, rlimits within the
# caller's); what it cannot have is refused with one line and 125 before anything runs.
. "$TAP_LIB"

if [ -z "${OCI_FLOOR_RUN:-}" ] || [ ! -x "$OCI_FLOOR_RUN" ]; then
	skip "oci-floor-run" "not built (tests/helpers/oci-floor-run.c)"
	done_testing
	exit
fi
busybox=$(command -v busybox) || { skip "oci floor" "no busybox"; done_testing; exit; }
command -v python3 >/dev/null || { skip "oci floor" "no python3"; done_testing; exit; }

b=$TEST_TMP/bundle
mkdir -p "$b/rootfs/bin" "$b/rootfs/etc"
cp "$busybox" "$b/rootfs/bin/busybox"
for c in sh cat grep id hostname touch ls; do ln -s busybox "$b/rootfs/bin/$c"; done
echo 'root:x:0:0::/root:/bin/sh' >"$b/rootfs/etc/passwd"
mkdir -p "$b/rootfs/var/lib/app" "$b/rootfs/var/tmp"
echo 'the image data' >"$b/rootfs/var/lib/app/data"
: >"$b/rootfs/etc/hosts"
echo '192.0.2.7 engine-made' >"$TEST_TMP/hosts"
chmod -R a+rX "$b" "$TEST_TMP/hosts"
scratch=$(mkwork)

# config.json: the example (`cordon-runtime spec`) with python3 edits: oci_config 'EXPR; ...'
oci_config() {
	"$OCI_FLOOR_RUN" example | python3 -c '
import json, sys
c = json.load(sys.stdin)
p = c["process"]
p["terminal"] = False
exec(sys.argv[1])
json.dump(c, open(sys.argv[2], "w"))' "$1" "$b/config.json"
}
run_floor() { # [--session]
	out=$(as_caller "$OCI_FLOOR_RUN" "$@" "$b" "$scratch" 2>"$TEST_TMP/stderr")
	rc=$?
	logs=$(grep '^log: ' "$TEST_TMP/stderr")
	err=$(grep -v '^log: ' "$TEST_TMP/stderr")
}

# what engines ask beyond the floor, clamped: the engines' default capabilities, NNP off, a
# writable root, nofile far above any caller's hard limit, podman's read-write /etc/hosts bind
oci_config '
p["args"] = ["sh", "-c", "grep -E \"^(CapPrm|CapEff|CapBnd|NoNewPrivs)\" /proc/self/status; id -u; hostname; ulimit -Hn; touch /x 2>&1; echo y 2>&1 >/etc/hosts; cat /etc/hosts; touch /.cordon-scratch/f && echo scratch-writable; cat /var/lib/app/data; touch /var/tmp/t && echo var-tmp-writable; touch /var/lib/x 2>&1; true"]
caps = ["CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_KILL", "CAP_SETUID", "CAP_NET_RAW"]
p["capabilities"] = {"bounding": caps, "effective": caps, "permitted": caps}
p["noNewPrivileges"] = False
p["rlimits"] = [{"type": "RLIMIT_NOFILE", "soft": 1048576, "hard": 1048576}]
c["root"]["readonly"] = False
c["hostname"] = "oci-floor"
c["mounts"].append({"destination": "/etc/hosts", "type": "bind", "source": "'"$TEST_TMP/hosts"'", "options": ["rbind", "rprivate"]})'
# once as a run, once as a session (cordon-runtime's way: the process by cordon_session_exec)
for how in run session; do
	rm -f "$scratch/f"
	if [ $how = session ]; then run_floor --session; else run_floor; fi
	is "$how: clamped config: runs (rc 0)" "$rc" 0
	like "$how: no capabilities inside (permitted)" "$out" "CapPrm:	0000000000000000"
	like "$how: no capabilities inside (effective)" "$out" "CapEff:	0000000000000000"
	like "$how: noNewPrivileges false: on anyway" "$out" "NoNewPrivs:	1"
	like "$how: process.user uid 0: 0 inside" "$out" $'\n0\n'
	like "$how: hostname honoured" "$out" "oci-floor"
	hard=$(as_caller sh -c 'ulimit -Hn')
	like "$how: RLIMIT_NOFILE 1048576: the caller's hard limit ($hard)" "$out" $'\n'"$hard"$'\n'
	like "$how: root.readonly false: read-only all the same" "$out" "touch: /x: Read-only file system"
	like "$how: a read-write file bind: read-only inside" "$out" "can't create /etc/hosts: Read-only file system"
	like "$how: the file bind's content" "$out" "192.0.2.7 engine-made"
	like "$how: the scratch workdir: writable" "$out" "scratch-writable"
	like "$how: the image's /var, shown (cordon hides a host's)" "$out" "the image data"
	like "$how: the image's /var, read-only" "$out" "touch: /var/lib/x: Read-only file system"
	like "$how: a fresh /var/tmp" "$out" "var-tmp-writable"
	[ -e "$scratch/f" ] && pass "$how: the scratch workdir: the lifecycle's directory" || fail "$how: the scratch workdir: the lifecycle's directory"
	like "$how: each clamp logged: capabilities" "$logs" "log: process.capabilities: 5 of the engines' default set: clamped to none"
	like "$how: each clamp logged: nofile" "$logs" "log: process.rlimits[0]: RLIMIT_NOFILE 1048576:1048576: clamped to $hard:$hard (the caller's hard limit)"
	like "$how: each clamp logged: root" "$logs" "log: root.readonly: false: clamped to true"
	like "$how: each clamp logged: the file bind" "$logs" "log: mounts[5]: /etc/hosts: a read-write file: clamped to read-only"
	is "$how: nothing else on stderr" "$err" ""
done

# refused: one line, 125, nothing run (the command would leave a file in the scratch)
refused() { # description, python edit, exact line
	rm -f "$scratch/ran"
	oci_config "p[\"args\"] = [\"touch\", \"/.cordon-scratch/ran\"]; $2"
	run_floor
	is "$1: 125" "$rc" 125
	is "$1: one line" "$err" "cordon-runtime: $3"
	[ ! -e "$scratch/ran" ] && pass "$1: nothing ran" || fail "$1: nothing ran"
}
refused "CAP_SYS_ADMIN" 'p["capabilities"] = {"bounding": ["CAP_KILL", "CAP_SYS_ADMIN"]}' \
	"process.capabilities.bounding[1]: CAP_SYS_ADMIN: refused (cordon's processes hold no capabilities; only the engines' default set is accepted, and clamped to none)"
refused "the host's pid namespace" 'c["linux"]["namespaces"] = [n for n in c["linux"]["namespaces"] if n["type"] != "pid"]' \
	"linux.namespaces: no pid entry: the host's pid namespace: refused"
refused "the host's network" 'c["linux"]["namespaces"] = [n for n in c["linux"]["namespaces"] if n["type"] != "network"]' \
	"linux.namespaces: no network entry: the host's network namespace: refused (annotation cordon.net=host allows it)"
refused "joining the host's mount namespace" 'c["linux"]["namespaces"][4]["path"] = "/proc/1/ns/mnt"' \
	"linux.namespaces[4]: mount /proc/1/ns/mnt: joining one: refused (the container's is always its own)"
refused "a privileged podman container" 'c["annotations"] = {"io.podman.annotations.privileged": "TRUE"}' \
	"annotations.io.podman.annotations.privileged: TRUE: privileged containers are refused"
refused "the host's /dev" 'c["mounts"].append({"destination": "/dev/kmsg", "type": "bind", "source": "/dev/kmsg"})' \
	"mounts[5]: /dev/kmsg: /proc, /sys and /dev are cordon's own (only their usual mounts are accepted): refused"
# a bind of the host's /proc (its processes, their command lines), /sys, /dev (its /dev/shm), or
# of a directory above one (binds are recursive: / holds them all)
refused "a bind of the host's /proc" 'c["mounts"].append({"destination": "/h", "type": "bind", "source": "/proc", "options": ["rbind", "ro"]})' \
	"mounts[5]: /proc: the host's /proc: refused (the container's /proc, /sys and /dev are cordon's own)"
refused "a bind of the host's /dev/shm" 'c["mounts"].append({"destination": "/h", "type": "bind", "source": "/dev/shm", "options": ["rbind", "ro"]})' \
	"mounts[5]: /dev/shm: the host's /dev/shm: refused (the container's /proc, /sys and /dev are cordon's own)"
rm -f "$scratch/ran"
oci_config 'p["args"] = ["touch", "/.cordon-scratch/ran"]; c["mounts"].append({"destination": "/h", "type": "bind", "source": "/", "options": ["rbind", "ro"]})'
run_floor
is "a bind of the host's /, which holds its /proc, /sys, /dev: 125, nothing ran" \
	"$rc:$([ -e "$scratch/ran" ] && echo ran)" "125:"
like "... one line naming the kernel's filesystem below it" "$err" "cordon-runtime: mounts[5]: /: the host's /"
# a mount whose destination the image's symbolic links lead into /proc (x -> /proc/sys,
# dangling in the image: its /proc is empty)
ln -s /proc/sys "$b/rootfs/procsys"
refused "a mount through the image's symlink into /proc" 'c["mounts"].append({"destination": "/procsys/kernel", "type": "tmpfs", "source": "tmpfs"})' \
	"mounts[5]: /procsys/kernel: the image's symbolic links lead it into /proc, /sys or /dev, which are cordon's own: refused"
rm "$b/rootfs/procsys"
refused "a host sysctl" 'c["linux"]["sysctl"] = {"kernel.core_pattern": "|/tmp/x"}' \
	"linux.sysctl.kernel.core_pattern: not namespaced: it would change the host: refused"
# an engine's user writes annotations, the runtime may be root: the trail stays in the bundle
refused "an audit trail out of the bundle" 'c["annotations"] = {"cordon.audit": "../escaped.jsonl"}' \
	"annotations.cordon.audit: \"../escaped.jsonl\": a file name (made in the bundle directory)"
[ ! -e "$TEST_TMP/escaped.jsonl" ] && pass "the audit trail: nothing written out of the bundle" ||
	fail "the audit trail: nothing written out of the bundle"
refused "a hook's relative path" 'c["hooks"] = {"prestart": [{"path": "bin/sh"}]}' \
	"hooks.prestart[0].path: \"bin/sh\": not an absolute path"

done_testing
