#!/usr/bin/env bash
# The seccomp filter: every group default.policy denies answers as documented, other ABIs are
# killed, everyday workloads run under default and strict, log mode, policy selection and
# errors, and the terminal stays the caller's (TIOCSTI denied, job control and Ctrl-C work).
. "$TAP_LIB"

w=$(mkwork)
o=$(mkwork) # cordon's outputs (report, audit, capture): never in the workdir
c() { cordon --workdir "$w" "$@"; } # sysprobe is next to the probe, whose directory is bound
sysprobe() { c -- "$SYSPROBE" "$@"; out=$(tr '\n' ' ' <<<"$out"); out=${out% }; }

# --- default.policy: each group (tests/helpers/sysprobe.c) and the documented answer
sysprobe mount
is "@mount: the whole mount family is EPERM" "$out" "mount EPERM umount2 EPERM pivot_root EPERM chroot EPERM fsopen EPERM fsconfig EPERM fsmount EPERM fspick EPERM open_tree EPERM move_mount EPERM mount_setattr EPERM"
sysprobe keyring
is "@keyring: EPERM" "$out" "add_key EPERM keyctl EPERM request_key EPERM"
sysprobe modules
is "@kernel-modules: EPERM" "$out" "init_module EPERM finit_module EPERM delete_module EPERM"
sysprobe kexec
is "@kexec: EPERM" "$out" "kexec_load EPERM kexec_file_load EPERM"
sysprobe reboot swap
is "@reboot, @swap: EPERM" "$out" "reboot EPERM swapon EPERM swapoff EPERM"
sysprobe raw-io
is "@raw-io (iopl, ioperm): EPERM" "$out" "iopl EPERM ioperm EPERM"
sysprobe clock
is "@clock: EPERM" "$out" "settimeofday EPERM clock_settime EPERM clock_adjtime EPERM adjtimex EPERM"
sysprobe accounting
is "@accounting (acct, quotactl): EPERM" "$out" "acct EPERM quotactl EPERM"
sysprobe debug bpf userfaultfd
is "perf_event_open, bpf, userfaultfd: EPERM" "$out" "perf_event_open EPERM bpf EPERM userfaultfd EPERM"
sysprobe io-uring
is "io_uring: ENOSYS, so that programs fall back" "$out" "io_uring_setup ENOSYS io_uring_enter ENOSYS io_uring_register ENOSYS"
sysprobe namespaces handles
is "setns, open_by_handle_at: EPERM" "$out" "setns EPERM open_by_handle_at EPERM"
sysprobe handle-names kcmp
is "name_to_handle_at: EOPNOTSUPP (a filesystem without handles); kcmp: ENOSYS (a kernel without it)" \
	"$out" "name_to_handle_at EOPNOTSUPP kcmp ENOSYS"
c --seccomp-policy strict -- "$SYSPROBE" handle-names kcmp
is "... strict.policy: both ENOSYS (its answer to all it does not list)" "$(tr '\n' ' ' <<<"$out")" \
	"name_to_handle_at ENOSYS kcmp ENOSYS "
host=$("$SYSPROBE" handle-names kcmp | tr '\n' ' ')
c --seccomp-policy none -- "$SYSPROBE" handle-names kcmp
if [ "$host" = "name_to_handle_at EFAULT kcmp ok " ]; then
	is "(control: without a filter both reach the kernel: EFAULT for the NULL handle, 0 from kcmp)" \
		"$(tr '\n' ' ' <<<"$out")" "$host"
else
	skip "(control: without a filter both reach the kernel)" "this kernel answers on the host: $host"
fi
if command -v ss >/dev/null; then
	# iproute2 resolves a cgroup filter's path to the cgroup's id with name_to_handle_at
	c -- ss -x 'cgroup /'
	like_glob "a real user of name_to_handle_at, ss 'cgroup /', fails cleanly: exit 1 and a message" \
		"$rc:$err" "1:*cgroup*"
else
	skip "ss 'cgroup /' (name_to_handle_at) fails cleanly" "no ss (iproute2) here"
fi
sysprobe obsolete
is "obsolete calls: EPERM" "$out" "uselib EPERM vhangup EPERM sysfs EPERM"
sysprobe userns
is "no nested user namespace: unshare, clone EPERM (also with junk in the high bits), clone3 ENOSYS" \
	"$out" "unshare EPERM unshare-hi EPERM clone EPERM clone3 ENOSYS"
c -- unshare -Ur true
is "unshare(1) -Ur fails" "$rc" 1
# the baseline's own rule, without the policy's (pid 1's max_user_namespaces=0 would say ENOSPC)
c --seccomp-policy none -- "$SYSPROBE" userns
is "--seccomp-policy none: still no nested user namespace (the baseline): EPERM, clone3 ENOSYS" \
	"$(tr '\n' ' ' <<<"$out")" "unshare EPERM unshare-hi EPERM clone EPERM clone3 ENOSYS "
sysprobe tty
is "TIOCSTI and TIOCLINUX: EPERM, also with bits above 32 set in the request" "$out" \
	"TIOCSTI EPERM TIOCSTI-hi EPERM TIOCLINUX EPERM"
sysprobe tty-persist
is "the terminal ioctls that outlive the run (TIOCSETD, TIOCCONS, TIOCEXCL, KD*, VT_*): EPERM; TIOCNXCL goes through" \
	"$out" "TIOCSETD EPERM TIOCCONS EPERM TIOCEXCL EPERM TIOCNXCL ENOTTY KDGKBMODE EPERM VT_GETSTATE EPERM TIOCSETD-hi EPERM"
out=$("$SYSPROBE" tty-persist </dev/null | tr '\n' ' ')
is "(control: on the host they reach the kernel: ENOTTY on /dev/null)" "${out% }" \
	"TIOCSETD ENOTTY TIOCCONS ENOTTY TIOCEXCL ENOTTY TIOCNXCL ENOTTY KDGKBMODE ENOTTY VT_GETSTATE ENOTTY TIOCSETD-hi ENOTTY"
sysprobe ldt
is "modify_ldt, memfd_secret: ENOSYS; fanotify_init: EPERM" "$out" \
	"modify_ldt ENOSYS memfd_secret ENOSYS fanotify_init EPERM"
out=$("$SYSPROBE" ldt | tr '\n' ' ')
unlike_glob "(control: on the host they reach the kernel)" "$out" "*modify_ldt ENOSYS*fanotify_init EPERM*"
sysprobe personality
is "personality: default and ADDR_NO_RANDOMIZE allowed, the rest EPERM" "$out" \
	"default ok ADDR_NO_RANDOMIZE ok READ_IMPLIES_EXEC EPERM MMAP_PAGE_ZERO EPERM PER_LINUX32 EPERM UNAME26 EPERM restore ok"
sysprobe sockets
is "sockets: unix, inet, inet6 work; exotic families EAFNOSUPPORT (also with high bits)" "$out" \
	"AF_UNIX ok AF_INET ok AF_INET6 ok AF_VSOCK EAFNOSUPPORT AF_ALG EAFNOSUPPORT AF_PACKET EAFNOSUPPORT AF_VSOCK-hi EAFNOSUPPORT"

# control: without a filter the same calls reach the kernel (so the answers above are the filter's)
c --seccomp-policy none -- "$SYSPROBE" keyring personality io-uring
like_glob "control: --seccomp-policy none lets the keyring and personality through, not io_uring (cordon's baseline)" \
	"$(tr '\n' ' ' <<<"$out")" "add_key EFAULT*READ_IMPLIES_EXEC ok*io_uring_setup ENOSYS*"

# --- other ABIs are killed, not filtered
# The control runs on the host, without cordon: some kernels do not run i386 calls at all
# (no IA32 emulation, or ia32_emulation=0: int 0x80 is then a SIGSEGV), and there the filter
# never sees them.
i386_host=$("$SYSPROBE" abi-i386 2>/dev/null)
if [[ $i386_host == "i386 returned"* ]]; then
	pass "control: on the host, without cordon, the i386 call returns"
	c -- "$SYSPROBE" abi-i386
	is "an i386 syscall (int 0x80) kills the process: SIGSYS" "$rc" 159
	unlike "... before it returns" "$out" "returned"
else
	skip "an i386 syscall (int 0x80) kills the process" "this kernel runs no i386 calls (without cordon: ${i386_host:-killed})"
fi
c -- "$SYSPROBE" abi-x32
is "an x32 syscall kills the process: SIGSYS" "$rc" 159

# --- everyday workloads under default.policy
cat >"$w/hello.c" <<'EOF'
#include <pthread.h>
#include <stdio.h>
static void *run(void *a) { return a; }
int main(void)
{
	pthread_t t;
	FILE *f = fopen("c-out.txt", "w");
	pthread_create(&t, NULL, run, NULL);
	pthread_join(t, NULL);
	fputs("written by c\n", f);
	fclose(f);
	puts("hello from c");
	return 0;
}
EOF
cat >"$w/Makefile" <<'EOF'
all: made.txt
made.txt:
	echo made > made.txt
EOF
cat >"$w/script.py" <<'EOF'
import json, os, subprocess, tempfile, threading
out = subprocess.run(["sh", "-c", "echo sub"], capture_output=True, text=True).stdout.strip()
t = threading.Thread(target=lambda: None); t.start(); t.join()
with tempfile.NamedTemporaryFile("w", dir=".", delete=False) as f:
    json.dump({"ok": True}, f)
print("py", out, os.path.exists(f.name))
EOF
[ -n "${root:-}" ] || true
if [ "${CORDON_AS:-root}" = user ] && [ "$(id -u)" = 0 ]; then chown -R "$TEST_USER:" "$w"; fi
c -- sh -c 'echo one two three | tr a-z A-Z | wc -w'
is "default: a shell pipeline" "$out" 3
c -- python3 script.py
is "default: python3 with a subprocess, a thread and a temp file" "$out" "py sub True"
c -- sh -c 'gcc -O2 -pthread -o hello hello.c && ./hello && cat c-out.txt'
is "default: gcc compiles and the program runs" "$out" "$(printf 'hello from c\nwritten by c')"
c -- make -s
is "default: make" "$rc:$(cat "$w/made.txt" 2>/dev/null)" "0:made"
c -- sh -c 'git init -q repo && cd repo && echo x > f && git add f && git -c user.name=n -c user.email=e@x commit -qm m && git log --format=%s'
is "default: git init, add, commit, log" "$out" m
if command -v node >/dev/null; then
	c -- node -e 'require("child_process").execSync("true"); console.log("node", 6 * 7)'
	is "default: node with a child process" "$out" "node 42"
else
	skip "default: node" "node not installed"
fi

# --- strict.policy: the allow-list runs the same everyday things
c --seccomp-policy strict -- sh -c 'echo one two three | tr a-z A-Z | wc -w'
is "strict: a shell pipeline" "$out" 3
c --seccomp-policy strict -- python3 script.py
is "strict: python3 with a subprocess, a thread and a temp file" "$out" "py sub True"
rm -f "$w/c-out.txt"
c --seccomp-policy strict -- ./hello
is "strict: a compiled C program with a thread" "$out:$(cat "$w/c-out.txt" 2>/dev/null)" "hello from c:written by c"
c --seccomp-policy strict -- python3 -c 'import socket
try:
    socket.socket(socket.AF_INET, socket.SOCK_STREAM); print("inet ok")
except OSError as e: print(e.errno == 38)'
is "strict: an inet socket is ENOSYS" "$out" True
c --seccomp-policy strict -- "$SYSPROBE" mount tty
is "strict: mount and TIOCSTI are denied too" "$(tr '\n' ' ' <<<"$out" | awk '{print $2, $NF}')" "ENOSYS ENOSYS"

# --- log mode: allowed and logged, for learning what a workload needs
c --seccomp-log -- "$SYSPROBE" bpf keyring io-uring
# (bpf: EINVAL for the bad attributes, or EPERM where kernel.unprivileged_bpf_disabled refuses
# the sandbox before reading them, as on 6.1; the keyring's answers tell the kernel from the
# filter; io_uring is cordon's baseline, which the learning mode does not relax)
like_glob "--seccomp-log: denied calls go through to the kernel, but not the baseline's" "$(tr '\n' ' ' <<<"$out")" \
	"bpf E[IP][NE][VR]* add_key EFAULT keyctl E* request_key EFAULT io_uring_setup ENOSYS *"
# The kernel's log is a ring buffer that is full after a long run, so lines are matched by their
# /dev/kmsg sequence number, not counted; audit lines are rate limited, so it tries a few times.
kmsg_after() { # SEQ PATTERN: the last sequence number, or whether a later record matches
	python3 - "$@" <<-'PY'
	import os, re, sys
	fd = os.open("/dev/kmsg", os.O_RDONLY | os.O_NONBLOCK)
	last, hit = -1, False
	while True:
	    try: rec = os.read(fd, 8192).decode(errors="replace")
	    except BlockingIOError: break
	    except BrokenPipeError: continue  # overwritten while read
	    seq = int(rec.split(",")[1]); last = seq
	    if len(sys.argv) > 2 and seq > int(sys.argv[1]) and re.search(sys.argv[2], rec): hit = True
	print(last if len(sys.argv) < 3 else int(hit))
	PY
}
if [ "$(id -u)" = 0 ] && [ -r /dev/kmsg ] && kmsg_after >/dev/null 2>&1; then
	logged=0
	for try in 1 2 3 4; do
		seq=$(kmsg_after)
		c --seccomp-log -- "$SYSPROBE" bpf
		sleep 0.3
		logged=$(kmsg_after "$seq" 'type=1326.*comm="sysprobe".*syscall=321 ')
		[ "$logged" = 1 ] && break
		sleep 2
	done
	[ "$logged" = 1 ] && pass "... and the kernel logs them (audit type=1326, syscall=321 bpf)" ||
		fail "... and the kernel logs them (audit type=1326, syscall=321 bpf)"
else
	skip "... and the kernel logs them" "dmesg not readable here"
fi
c --seccomp-log --report "$o/log.json" -- true
like "the report says log mode" "$(cat "$o/log.json")" '"seccomp":{"policy":"default.policy","mode":"log"'

# --- choosing a policy
c --report "$o/r.json" -- true
like_glob "the report names the policy and its size" "$(cat "$o/r.json")" \
	'*"seccomp":{"policy":"default.policy","mode":"enforce","rules":*,"bpf_instructions":*,"optimized":true,"blocks_tiocsti":true,"source":"*","baseline":{*}}*'
src=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["applied"]["seccomp"]["source"])' "$o/r.json" 2>&1)
inst=/usr/local/share/cordon/seccomp-policies/default.policy
if [ -r "$inst" ]; then want=$(readlink -f "$inst"); else want=built-in:default; fi
is "... where it was read: the installed file, else the copy built into cordon" "$src" "$want"
c --seccomp-policy none --report "$o/r.json" -- true
like_glob "--seccomp-policy none: the report says so, and that the baseline still applies" "$(cat "$o/r.json")" \
	'*"seccomp":{"policy":"none","mode":"off","baseline":{"rules":*,"bpf_instructions":*}}*'
like "... and the command stays on the terminal (the baseline denies TIOCSTI)" "$(cat "$o/r.json")" '"new_session":false'
cp "$POLICY_DIR/strict.policy" "$POLICY_DIR/groups.policy" "$w/"
c --seccomp-policy "$w/strict.policy" --report "$o/p.json" -- sh -c 'echo by-path'
is "a policy by path" "$out" by-path
is "... the report's source is its real path" \
	"$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["applied"]["seccomp"]["source"])' "$o/p.json" 2>&1)" \
	"$(readlink -f "$w/strict.policy")"
cd "$w" && c --seccomp-policy ./strict.policy -- sh -c 'echo relative' && cd - >/dev/null
is "a path relative to the current directory" "$out" relative

# --- bad policies: one line naming file:line:col, exit 125, nothing runs
bad() { # description file-content expected-error
	printf '%b' "$2" >"$w/bad.policy"
	rm -f "$w/ran"
	c --seccomp-policy "$w/bad.policy" -- sh -c 'touch ran'
	is "$1: exit 125" "$rc" 125
	is "$1: the message" "$err" "cordon: $w/bad.policy:$3"
	[ ! -e "$w/ran" ] && pass "$1: nothing ran" || fail "$1: nothing ran"
}
bad "unknown syscall" 'default allow\nerrno EPERM  opne\n' '2:14: unknown syscall "opne"'
bad "unknown errno" 'default allow\nerrno EPRM mount\n' '2:7: unknown errno "EPRM" (use a name such as EPERM or ENOSYS, or a number)'
bad "unknown group" 'default allow\nerrno EPERM @nope\n' '2:13: unknown group "@nope" (groups are defined with `group @nope ...` before use, e.g. in groups.policy)'
bad "no default action" 'errno EPERM mount\n' ' no default action (add a line such as `default allow` or `default errno ENOSYS`)'
c --seccomp-policy nosuchpolicy -- true
is "an unknown policy name: exit 125" "$rc" 125
like_glob "... says where it looked" "$err" 'cordon: --seccomp-policy: no policy "nosuchpolicy" in *'
c --seccomp-policy /nonexistent/x.policy -- true
is "a missing policy file: one line, 125" "$rc:$err" "125:cordon: --seccomp-policy: /nonexistent/x.policy: No such file or directory"
c --seccomp-policy '../etc' -- true
is "a name that is neither a name nor a policy path" "$rc" 125

# --- cordon policy check|show
out=$("$CORDON" policy check default 2>&1); rc=$?
is "policy check default" "$rc:$out" "0:default: ok"
out=$("$CORDON" policy show strict 2>&1); rc=$?
like_glob "policy show: the default, rules with their lines, BPF size, TIOCSTI verdict" "$out" \
	"policy strict.policy (includes groups.policy)*default: errno ENOSYS*allow*read*# strict.policy:*BPF: * instructions (binary tree), * as a linear list*TIOCSTI, TIOCLINUX): denied*"
printf 'default allow\n' >"$w/open.policy"
out=$("$CORDON" policy show "$w/open.policy" 2>&1)
like "policy show says when TIOCSTI is NOT denied" "$out" "NOT denied"
out=$("$CORDON" policy check "$w/bad.policy" 2>&1); rc=$?
like_glob "policy check of a bad file: 125 and the message" "$rc:$out" "125:cordon: $(glob_quote "$w")/bad.policy: no default action*"
out=$("$CORDON" policy frobnicate 2>&1); rc=$?
is "policy with a bad subcommand" "$rc:$out" "125:cordon: policy: usage: cordon policy check|show NAME|PATH"

# --- the terminal: the command stays in the caller's session (job control), Ctrl-C works
pty_run() { # timeout-s input cordon-args...: the input is typed once the command printed READY
	python3 - "$@" <<'PY'
import os, pty, sys, select, subprocess, time, fcntl, termios
secs, data = float(sys.argv[1]), sys.argv[2].encode().decode("unicode_escape").encode()
master, slave = pty.openpty()
def ctty():
    os.setsid(); fcntl.ioctl(0, termios.TIOCSCTTY, 0)
p = subprocess.Popen(sys.argv[3:], stdin=slave, stdout=slave, stderr=slave, preexec_fn=ctty)
os.close(slave)
out = b""
ready = time.time() + 10
while data and b"READY" not in out and time.time() < ready and p.poll() is None:
    if select.select([master], [], [], 0.1)[0]:
        try: out += os.read(master, 4096)
        except OSError: break
if data: os.write(master, data)
end = time.time() + secs
while time.time() < end and p.poll() is None:
    if select.select([master], [], [], 0.1)[0]:
        try: out += os.read(master, 4096)
        except OSError: break
try: p.wait(timeout=5)
except subprocess.TimeoutExpired: p.kill(); p.wait()
while select.select([master], [], [], 0.1)[0]:
    try: out += os.read(master, 4096)
    except OSError: break
print("rc=%d %s" % (p.returncode, out.decode(errors="replace").replace("\r", "").replace("\n", "|")))
PY
}
res=$(pty_run 5 '' "$CORDON" -q --workdir "$w" -- python3 -c 'import os; print("fg", os.tcgetpgrp(0) == os.getpgrp(), os.getsid(0) != os.getpid())')
like_glob "with the filter, the command is in the terminal's foreground process group (job control)" "$res" "rc=0 fg True True*"
# (not sh -c: dash catches SIGINT, and a Ctrl-C between its fork and the child's exec is lost)
res=$(pty_run 5 '\x03' "$CORDON" --workdir "$w" -- python3 -c 'import signal, time
signal.signal(signal.SIGINT, signal.SIG_DFL); print("READY", flush=True); time.sleep(20); print("not-interrupted")')
like_glob "Ctrl-C on the terminal interrupts the command: 130" "$res" "rc=130*"
unlike "... which does not go on" "$res" "not-interrupted"
res=$(pty_run 5 '\x03' "$CORDON" --workdir "$w" -- python3 -c '
import signal, time
n = 0
def h(s, f):
    global n; n += 1
signal.signal(signal.SIGINT, h)
print("READY", flush=True)
time.sleep(2); print("sigints", n)')
like_glob "Ctrl-C reaches the command once, not twice (the terminal signals it; cordon does not forward again)" "$res" "rc=0 *sigints 1|"

done_testing
