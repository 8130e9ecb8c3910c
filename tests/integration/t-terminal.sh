#!/usr/bin/env bash
# Signals and the terminal stay inside: the command has a process group of its own, so that no
# signal it sends to its group reaches the caller's processes or cordon, and cordon's timeout
# fires whatever the command does to its group; on a terminal it is the foreground (Ctrl-C, and
# Ctrl-Z with fg in an interactive shell, work), and what it changes on the terminal (modes,
# window size, flow control, the foreground) is put back at the end. The sandbox's own ptys
# are bounded.
. "$TAP_LIB"

w=$(mkwork)
c() { cordon --workdir "$w" "$@"; }

# --- kill(0, ...) inside: the command's own group, not the caller's
# A script in a process group of its own (setsid), with a sibling in its group, runs cordon; the
# command signals its group. The script and its sibling must live on.
cat >"$TEST_TMP/group.sh" <<EOF
sleep 60 >/dev/null & sib=\$!
"$CORDON" --workdir "$w" -- sh -c "kill -\$1 0; sleep 0.2" >/dev/null 2>&1
echo "cordon=\$?"
kill -0 \$sib 2>/dev/null && echo sibling-alive
kill \$sib
echo script-alive
EOF
for sig in TERM HUP; do
	out=$(as_caller setsid -w bash "$TEST_TMP/group.sh" "$sig" 2>&1)
	is "kill(0, SIG$sig) inside reaches the command's group only: the calling script and its other children live on" \
		"$(echo $out)" "cordon=$((128 + $(kill -l $sig))) sibling-alive script-alive"
done

# kill(0, SIGSTOP) stopped cordon with its command, so that the timeout never fired: now cordon
# is not in that group, and pid 1 keeps the deadline anyway. No terminal here (setsid): nothing
# follows the stop, the command stays stopped until SIGKILL ends it.
start=$SECONDS
# the guard ends cordon with SIGKILL (137), never with the 124 of cordon's own timeout
out=$(as_caller setsid -w timeout -s KILL 60 "$CORDON" --workdir "$w" -t 2s --kill-after 1s -- sh -c 'kill -STOP 0; echo not-reached' 2>&1)
rc=$?
is "kill(0, SIGSTOP) inside does not stop cordon: the timeout fires (124, not the guard's 137)" "$rc" 124
between "... not before the deadline (2 s)" "$((SECONDS - start))" 2 59
c -- python3 -c 'import os; print(os.getpgrp() == os.getpid(), os.getpgid(0) != os.getpgid(os.getppid()))'
is "the command leads a process group of its own" "$out" "True True"

# --- the sandbox's own /dev/pts holds at most CORDON_PTY_MAX (64) ptys: the ptys of every devpts
# instance but the host's come from one pool of the kernel's (kernel.pty.max less
# kernel.pty.reserve, 3072 by default), which one sandbox took whole before (every other
# sandbox and container then got ENOSPC). At most 65 are tried, to spare the machine's pool.
c -- python3 -c '
import os
n = 0
try:
    for _ in range(65): os.openpty(); n += 1
except OSError as e: print(n, e.errno)
else: print(n)'
is "a sandbox opens 64 ptys at most in its /dev/pts, then ENOSPC" "$out" "64 28"

# --- on a terminal: a pty made here, cordon (or an interactive bash) as its session leader
pty() { # SCRIPT: python, with pty helpers; prints what it prints
	python3 - "$@" <<'PY'
import os, pty, sys, select, subprocess, time, fcntl, termios, struct, re
master, slave = pty.openpty()
def ctty():
    os.setsid(); fcntl.ioctl(0, termios.TIOCSCTTY, 0)
def spawn(argv):
    return subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, preexec_fn=ctty)
buf = b""
def read_until(pat, secs=10):
    global buf
    end = time.time() + secs
    while time.time() < end:
        m = re.search(pat.encode(), buf)
        if m:
            buf = buf[m.end():]
            return True
        if select.select([master], [], [], 0.1)[0]:
            try: buf += os.read(master, 65536)
            except OSError: return False
    return False
def drain(secs=0.3):
    global buf
    end = time.time() + secs
    while time.time() < end:
        if select.select([master], [], [], 0.05)[0]:
            try: buf += os.read(master, 65536)
            except OSError: return
exec(sys.argv[1])
PY
}
ttyrun=(env CORDON="$CORDON" W="$w" PROBE="$PROBE")
[ "$(id -u)" = 0 ] && is_user_mode && ttyrun=(setpriv --reuid="$TEST_USER" --regid="$TEST_USER" --clear-groups "${ttyrun[@]}")

# modes, flow control and the line discipline: changed inside, as they were after
res=$("${ttyrun[@]}" bash -c "$(declare -f pty); pty '
import os
before = termios.tcgetattr(slave)
p = spawn([os.environ[\"CORDON\"], \"--workdir\", os.environ[\"W\"], \"--\", \"python3\", \"-c\", \"\"\"
import fcntl, os, termios, tty, struct
tty.setraw(0)
try: fcntl.ioctl(0, termios.TIOCSETD, struct.pack(\"i\", 27)); print(\"setd-ok\", flush=True)
except OSError as e: print(\"setd\", e.errno, flush=True)
try: termios.tcflow(1, termios.TCOOFF); print(\"tcooff-ok\", flush=True)
except termios.error as e: print(\"tcooff\", e.args[0], flush=True)
\"\"\"])
p.wait(timeout=20)
drain()
seen = buf
after = termios.tcgetattr(slave)
print(\"rc=%d\" % p.returncode, \"modes-restored\" if after == before else \"modes-changed\")
print(\"ldisc\", struct.unpack(\"i\", fcntl.ioctl(slave, termios.TIOCGETD, b\"\\0\" * 4))[0])
os.write(slave, b\"flows\\n\")
print(\"output\", \"flows\" if read_until(\"flows\", 3) else \"stopped\")
print(\"tcooff\", 1 if b\"tcooff 1\" in seen else 0)
'" 2>&1)
like "the command set raw mode: cordon puts the modes back" "$res" "rc=0 modes-restored"
like "tcflow(TCOOFF), which would stop the terminal's output for every writer, is refused" "$res" "tcooff 1"
like "... and the output flows" "$res" "output flows"
like "TIOCSETD (a null line discipline) is refused, and the discipline is still N_TTY" "$res" "ldisc 0"

# the window size: set inside (stty, TIOCSWINSZ on the terminal), as it was after
res=$("${ttyrun[@]}" bash -c "$(declare -f pty); pty '
import os
fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack(\"HHHH\", 40, 120, 960, 640))
p = spawn([os.environ[\"CORDON\"], \"--workdir\", os.environ[\"W\"], \"--\", \"sh\", \"-c\", \"stty rows 11 cols 33 && echo inside \$(stty size)\"])
p.wait(timeout=20)
drain()
print(buf.decode(errors=\"replace\").replace(\"\\r\", \"\").replace(\"\\n\", \" \"))
print(\"after\", *struct.unpack(\"HHHH\", fcntl.ioctl(slave, termios.TIOCGWINSZ, b\"\\0\" * 8)))
'" 2>&1)
like "the command set the window size (stty rows 11 cols 33)" "$res" "inside 11 33"
like "... and cordon puts the caller's back after the run (40x120, its pixels too)" "$res" "after 40 120 960 640"

# the foreground: the command's own group while it runs, the caller's again after
res=$("${ttyrun[@]}" bash -c "$(declare -f pty); pty '
import os
p = spawn([\"sh\", \"-c\", os.environ[\"CORDON\"] + \" --workdir \" + os.environ[\"W\"] + \" -- python3 -c \\\"import os; print(chr(102)+chr(103), os.tcgetpgrp(0) == os.getpgrp(), os.getpgrp() == os.getpid())\\\"; python3 -c \\\"import os; print(chr(97)+chr(102), os.tcgetpgrp(0) == os.getpgrp())\\\"\"])
p.wait(timeout=20)
drain()
print(buf.decode(errors=\"replace\").replace(\"\\r\", \"\").replace(\"\\n\", \" \"))
'" 2>&1)
like "on a terminal, the command is the foreground, in a group of its own" "$res" "fg True True"
like "... and after the run the caller's group is the foreground again" "$res" "af True"

# job control in an interactive shell: Ctrl-Z stops the job, fg continues it, Ctrl-C ends it
res=$("${ttyrun[@]}" bash -c "$(declare -f pty); pty '
import os
sh = spawn([\"bash\", \"--norc\", \"--noprofile\", \"-i\"])
os.write(master, b\"PS1=PROMPT-; cd \" + os.environ[\"W\"].encode() + b\"\\n\")
read_until(\"PROMPT-\")
os.write(master, os.environ[\"CORDON\"].encode() + b\" -- python3 -c \\\"import signal, time; signal.signal(signal.SIGINT, signal.SIG_DFL); print(chr(82)+chr(69)+chr(65)+chr(68)+chr(89), flush=True); time.sleep(30)\\\"\\n\")
print(\"ready\", read_until(\"READY\"))
time.sleep(0.3)
os.write(master, b\"\\x1a\")
print(\"stopped\", read_until(\"Stopped\", 10))
read_until(\"PROMPT-\")
os.write(master, b\"jobs -l | wc -l\\n\")
print(\"jobs\", read_until(\"\\\\b1\\\\b\", 5))
os.write(master, b\"fg\\n\")
time.sleep(0.5)
os.write(master, b\"\\x03\")
read_until(\"PROMPT-\", 10)
os.write(master, b\"echo rc=\$?\\n\")
print(\"after-fg\", read_until(\"rc=130\", 10))
os.write(master, b\"exit\\n\")
sh.wait(timeout=10)
'" 2>&1)
like "interactive bash: the command starts in the foreground" "$res" "ready True"
like "... Ctrl-Z stops it: the shell reports the job stopped" "$res" "stopped True"
like "... fg continues it with the terminal, and Ctrl-C then ends it (130)" "$res" "after-fg True"

# TOSTOP set on the terminal by the command: cordon, in the background while the command has the
# terminal, still writes there (--capture's copy) and must not be stopped by SIGTTOU
capdir=$(mkwork)
res=$("${ttyrun[@]}" env CAP="$capdir/cap" bash -c "$(declare -f pty); pty '
import os
sh = spawn([\"bash\", \"--norc\", \"--noprofile\", \"-i\"])
os.write(master, b\"PS1=PROMPT-; cd \" + os.environ[\"W\"].encode() + b\"\\n\")
read_until(\"PROMPT-\")
os.write(master, os.environ[\"CORDON\"].encode() + b\" -t 20 --capture \" + os.environ[\"CAP\"].encode() + b\" -- sh -c \\\"stty tostop; echo tick-a; sleep 0.2; echo tick-b; sleep 0.2; echo tick-c | tr - _; stty -tostop\\\"\\n\")
print(\"ticks\", read_until(\"tick_c\", 10))
os.write(master, b\"echo rc=\$?\\n\")
print(\"rc0\", read_until(\"rc=0\", 10))
os.write(master, b\"exit\\n\")
sh.wait(timeout=10)
'" 2>&1)
like "the command sets TOSTOP: cordon's copy of its output (--capture) still reaches the terminal" "$res" "ticks True"
like "... and cordon is not stopped by SIGTTOU: the run ends (0)" "$res" "rc0 True"

# a stop inside, in an interactive shell: cordon follows it (the job shows stopped), and the
# deadline still ends the sandbox while cordon is stopped
res=$("${ttyrun[@]}" bash -c "$(declare -f pty); pty '
import os
sh = spawn([\"bash\", \"--norc\", \"--noprofile\", \"-i\"])
os.write(master, b\"PS1=PROMPT-; cd \" + os.environ[\"W\"].encode() + b\"\\n\")
read_until(\"PROMPT-\")
t0 = time.time()
os.write(master, os.environ[\"CORDON\"].encode() + b\" -t 1s --kill-after 1s -- sh -c \\\"kill -STOP 0\\\"\\n\")
print(\"stopped\", read_until(\"Stopped\", 10))
time.sleep(3)
os.write(master, b\"fg\\n\")
read_until(\"PROMPT-\", 10)
os.write(master, b\"echo rc=\$?\\n\")
print(\"rc124\", read_until(\"rc=124\", 10), \"secs\", int(time.time() - t0))
os.write(master, b\"exit\\n\")
sh.wait(timeout=10)
'" 2>&1)
like "a command that stops its own group: the shell shows the job stopped" "$res" "stopped True"
like "... and after fg, the run ends as timed out (the deadline passed while cordon was stopped)" "$res" "rc124 True"

# the same with a command that stops and continues itself in a loop: pid 1 tells cordon of one
# stop at a time, so its socket never fills and the deadline still ends the sandbox on time
cat >"$TEST_TMP/flood.py" <<'PY'
import os, pty, select, subprocess, sys, time, fcntl, termios, re
master, slave = pty.openpty()
def ctty():
    os.setsid(); fcntl.ioctl(0, termios.TIOCSCTTY, 0)
sh = subprocess.Popen(["bash", "--norc", "--noprofile", "-i"], stdin=slave, stdout=slave,
                      stderr=slave, preexec_fn=ctty)
buf = b""
def read_until(pat, secs=10):
    global buf
    end = time.time() + secs
    while time.time() < end:
        m = re.search(pat.encode(), buf)
        if m:
            buf = buf[m.end():]
            return True
        if select.select([master], [], [], 0.1)[0]:
            try: buf += os.read(master, 65536)
            except OSError: return False
    return False
w = os.environ["W"]
os.write(master, b"PS1=PROMPT-; cd " + w.encode() + b"\n")
read_until("PROMPT-")
flood = ("me=$$; ( while :; do date +%s > alive; sleep 0.3; done ) & "
         "( while :; do kill -CONT $me; kill -STOP $me || exit; done ) 2>/dev/null & "
         "while :; do sleep 1; done")
os.write(master, ("%s -t 2s --kill-after 1s -- sh -c '%s'\n" % (os.environ["CORDON"], flood)).encode())
print("stopped", read_until("Stopped", 10))
# dead: "alive" (rewritten every 0.3 s inside) unchanged for 3 s, within 60 s
alive = os.path.join(w, "alive")
def age():
    try: return time.time() - os.stat(alive).st_mtime
    except OSError: return -1
end = time.time() + 60
while age() < 3 and time.time() < end:
    time.sleep(0.2)
print("dead", age() >= 3)
os.write(master, b"fg\n")
read_until("PROMPT-", 10)
os.write(master, b"echo rc=$?\n")
print("rc124", read_until("rc=124", 10))
os.write(master, b"exit\n")
sh.wait(timeout=10)
PY
chmod 644 "$TEST_TMP/flood.py"
rm -f "$w/alive"
res=$("${ttyrun[@]}" python3 "$TEST_TMP/flood.py" 2>&1)
like "a command stopping and continuing itself in a loop: the job shows stopped" "$res" "stopped True"
like "... the sandbox is gone by its deadline while cordon is stopped" "$res" "dead True"
like "... and after fg the run ends as timed out" "$res" "rc124 True"

done_testing
