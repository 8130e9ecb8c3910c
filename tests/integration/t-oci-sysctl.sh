#!/usr/bin/env bash
# config.json's linux.sysctl through cordon-runtime, for real (docs/oci.md "sysctl"): the keys of
# the container's own namespaces are set inside them (its network namespace's net.*, its IPC
# namespace's kernel.shm*, kernel.msg*, fs.mqueue.*) and read back inside, while the host's
# values stay as they were (read before and after every run: a key written into the host's
# namespace would show there); podman's net.ipv4.ping_group_range, clamped to the one gid the
# container maps; a write the kernel refuses fails the run with one line; the host's keys, net.*
# on the host's network, keys that climb out of /proc/sys and values of two lines: refused, one
# line, 125, nothing run.
. "$TAP_LIB"
. "$(dirname "$0")/../oci/lib.sh" # oci_rootfs

RT=$CORDON_RUNTIME
[ -x /bin/busybox ] || { skip "cordon-runtime" "busybox-static is not installed"; done_testing; exit; }
[ -x "$RT" ] || { skip "cordon-runtime" "not built"; done_testing; exit; }

w=$(mkwork)
root=$w/root
b=$w/bundle
oci_rootfs "$b/rootfs"
(cd "$b" && "$RT" spec) || { fail "cordon-runtime spec"; done_testing; exit; }
[ "${CORDON_AS:-root}" = user ] && chown -R "$TEST_USER:" "$b"

# the host's values of every key a case touches or that must never move
watched="net/ipv4/ip_unprivileged_port_start net/ipv4/ping_group_range net/ipv4/ip_forward
kernel/shmmax kernel/msgmax kernel/shm_rmid_forced fs/mqueue/msg_max vm/swappiness
kernel/pid_max kernel/core_pattern user/max_user_namespaces"
host_values() { for k in $watched; do printf '%s=%s\n' "$k" "$(tr '\t' ' ' </proc/sys/$k)"; done; }
before=$(host_values)
host_same() { is "$1: the host's values unchanged" "$(host_values)" "$before"; }

# config 'PYTHON EDIT': the bundle's config.json from the example, edited (c, p = process)
config() {
	python3 - "$b/config.json" "$1" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
p = c["process"]
p["terminal"] = False
p["user"] = {"uid": 0, "gid": 0}
c["annotations"] = {}
c["linux"].pop("sysctl", None)
if not any(n["type"] == "network" for n in c["linux"]["namespaces"]):
    c["linux"]["namespaces"].append({"type": "network"})
exec(sys.argv[2])
json.dump(c, open(sys.argv[1], "w"))
PY
}
n=0
# run: cordon-runtime run as the caller, --log to a file; $out, $err, $rc, $log
run() {
	n=$((n + 1))
	out=$(as_caller "$RT" --root "$root" --log "$w/log.$n" run -b "$b" "s$n" </dev/null 2>"$w/err")
	rc=$?
	err=$(cat "$w/err")
	log=$(cat "$w/log.$n" 2>/dev/null)
	as_caller "$RT" --root "$root" delete --force "s$n" >/dev/null 2>&1
}

# --- the container's own namespaces: set, read back inside
config 'p["args"] = ["sh", "-c", "cd /proc/sys; cat net/ipv4/ip_unprivileged_port_start kernel/shmmax kernel/msgmax kernel/shm_rmid_forced fs/mqueue/msg_max net/ipv4/ip_forward | tr \"\\n\" \" \""]
c["linux"]["sysctl"] = {"net.ipv4.ip_unprivileged_port_start": "0", "kernel.shmmax": "1048576", "kernel.msgmax": "4242", "kernel/shm_rmid_forced": "1", "fs.mqueue.msg_max": "77", "net.ipv4.ip_forward": "1"}'
run
is "net, IPC and mqueue keys: set inside" "$rc:$out:$err" "0:0 1048576 4242 1 77 1 :"
host_same "net, IPC and mqueue keys"
# the same container without them: the namespaces' defaults (what the run above changed was
# its own)
config 'p["args"] = ["sh", "-c", "cat /proc/sys/net/ipv4/ip_unprivileged_port_start /proc/sys/kernel/msgmax | tr \"\\n\" \" \""]'
run
is "without linux.sysctl: a fresh namespace's defaults" "$rc:$out" "0:1024 8192 "

# a process of the container binds port 80 as uid 1000 once ip_unprivileged_port_start is 0
config 'p["args"] = ["sh", "-c", "nc -l -p 80 -w 1 </dev/null 2>&1; true"]
p["user"] = {"uid": 1000, "gid": 1000}
c["linux"]["sysctl"] = {"net.ipv4.ip_unprivileged_port_start": "0"}'
[ -e "$b/rootfs/bin/nc" ] || ln -s busybox "$b/rootfs/bin/nc"
run
is "ip_unprivileged_port_start 0: uid 1000 listens on port 80 (until nc's timeout)" "$rc:$out" "0:nc: timed out"
config 'p["args"] = ["sh", "-c", "nc -l -p 80 -w 1 </dev/null 2>&1; true"]
p["user"] = {"uid": 1000, "gid": 1000}'
run
like "... and without it, it cannot" "$out" "Permission denied"

# --- podman's ping_group_range: its two values
config 'p["args"] = ["cat", "/proc/sys/net/ipv4/ping_group_range"]
c["linux"]["sysctl"] = {"net.ipv4.ping_group_range": "0 0"}'
run
is "ping_group_range \"0 0\" (podman, root): set" "$rc:$out:$err" $'0:0\t0:'
unlike "... not clamped" "$log" "clamped"
config 'p["args"] = ["cat", "/proc/sys/net/ipv4/ping_group_range"]
c["linux"]["sysctl"] = {"net.ipv4.ping_group_range": "0 2147483647"}'
run
is "ping_group_range \"0 2147483647\": clamped to the one gid mapped" "$rc:$out:$err" $'0:0\t0:'
like "... and logged" "$log" 'sysctl net.ipv4.ping_group_range: "0 2147483647" clamped to "0 0" (the sandbox maps gid 0 alone)'
config 'p["args"] = ["cat", "/proc/sys/net/ipv4/ping_group_range"]
p["user"] = {"uid": 1000, "gid": 1000}
c["linux"]["sysctl"] = {"net.ipv4.ping_group_range": "0 0"}'
run
# the default "1 0" (host gids 1 to 0: empty) reads as the overflow gid inside, where 1 and 0
# are not mapped
is "ping_group_range \"0 0\" for a process of gid 1000: none of its gids: nobody (the default)" "$rc:$out:$err" $'0:65534\t65534:'
like "... logged" "$log" 'sysctl net.ipv4.ping_group_range: "0 0": not written: the sandbox maps gid 1000 alone, outside it: the namespace'"'"'s default (nobody) stays'
config 'p["args"] = ["cat", "/proc/sys/net/ipv4/ping_group_range"]
p["user"] = {"uid": 1000, "gid": 1000}
c["linux"]["sysctl"] = {"net.ipv4.ping_group_range": "0 2147483647"}'
run
is "ping_group_range \"0 2147483647\" for a process of gid 1000: 1000 1000" "$rc:$out:$err" $'0:1000\t1000:'
host_same "ping_group_range"

# --- a write the kernel refuses fails the run, one line
config 'p["args"] = ["touch", "/tmp/ran"]
c["linux"]["sysctl"] = {"net.ipv4.ip_unprivileged_port_start": "abc"}'
run
is "a value the kernel refuses: the run fails, one line" "$rc:$err" \
	'1:cordon-runtime: sysctl: net.ipv4.ip_unprivileged_port_start: "abc": Invalid argument'
# the IPC namespace's keys are its root's (uid 0 inside): a process of uid 1000 maps none
config 'p["args"] = ["true"]
p["user"] = {"uid": 1000, "gid": 1000}
c["linux"]["sysctl"] = {"kernel.shmmax": "1048576"}'
run
is "an IPC key without uid 0 mapped: the kernel refuses it, one line" "$rc:$err" \
	"1:cordon-runtime: sysctl: kernel.shmmax: Permission denied"
host_same "refused writes"

# --- refused before anything runs: one line, 125
refused() { # description, python edit, exact line
	rm -f "$w/ran"
	config "p[\"args\"] = [\"true\"]; $2"
	run
	is "$1: 125, one line" "$rc:$err" "125:cordon-runtime: $3"
	host_same "$1"
}
refused "vm.swappiness" 'c["linux"]["sysctl"] = {"vm.swappiness": "1"}' \
	"config: linux.sysctl.vm.swappiness: not namespaced: it would change the host: refused"
refused "kernel.pid_max" 'c["linux"]["sysctl"] = {"kernel.pid_max": "4096"}' \
	"config: linux.sysctl.kernel.pid_max: not namespaced: it would change the host: refused"
refused "kernel.core_pattern" 'c["linux"]["sysctl"] = {"kernel.core_pattern": "|/tmp/x"}' \
	"config: linux.sysctl.kernel.core_pattern: not namespaced: it would change the host: refused"
refused "user.max_user_namespaces (cordon's own 0 in the container)" 'c["linux"]["sysctl"] = {"user.max_user_namespaces": "10"}' \
	"config: linux.sysctl.user.max_user_namespaces: not namespaced: it would change the host: refused"
refused "kernel.hostname" 'c["linux"]["sysctl"] = {"kernel.hostname": "x"}' \
	"config: linux.sysctl.kernel.hostname: the hostname is config.json's hostname (the UTS namespace's domain name stays \"(none)\"): refused"
refused "a key climbing with .." 'c["linux"]["sysctl"] = {"net/ipv4/../../kernel/core_pattern": "|/tmp/x"}' \
	"config: linux.sysctl.net/ipv4/../../kernel/core_pattern: not a sysctl key (an empty, \".\" or \"..\" component): refused"
refused "a key of dots and slashes climbing" 'c["linux"]["sysctl"] = {"net.ipv4/../../vm/swappiness": "1"}' \
	"config: linux.sysctl.net.ipv4/../../vm/swappiness: not a sysctl key (an empty, \".\" or \"..\" component): refused"
refused "a key from /" 'c["linux"]["sysctl"] = {"/proc/sys/vm/swappiness": "1"}' \
	"config: linux.sysctl./proc/sys/vm/swappiness: not a sysctl key (an empty, \".\" or \"..\" component): refused"
refused "a value of two lines" 'c["linux"]["sysctl"] = {"net.ipv4.ip_forward": "1\n0"}' \
	"config: linux.sysctl.net.ipv4.ip_forward: a newline or control character in the value: refused"
# net.* on the host's network: without the check, the write would go to the host's namespace
# (the kernel refuses it there only because the container's root holds nothing over it)
refused "net.* with cordon.net=host" 'c["linux"]["namespaces"] = [x for x in c["linux"]["namespaces"] if x["type"] != "network"]; c["annotations"] = {"cordon.net": "host"}; c["linux"]["sysctl"] = {"net.ipv4.ip_unprivileged_port_start": "0"}' \
	"floor: linux.sysctl.net.ipv4.ip_unprivileged_port_start: the host's network (annotation cordon.net=host): it would change the host's: refused"
config 'p["args"] = ["cat", "/proc/sys/kernel/shmmax"]; c["linux"]["namespaces"] = [x for x in c["linux"]["namespaces"] if x["type"] != "network"]; c["annotations"] = {"cordon.net": "host"}; c["linux"]["sysctl"] = {"kernel.shmmax": "2097152"}'
run
is "cordon.net=host: an IPC key still set (the IPC namespace is the container's)" "$rc:$out:$err" "0:2097152:"
host_same "cordon.net=host"
done_testing
