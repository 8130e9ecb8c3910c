#!/usr/bin/env bash
# cordon-runtime's command line as the engines call it (README "Under an engine"): create forks a
# holder that a subreaper adopts and the pid file names; start hands the process create's stdio;
# the holder exits as the process did (its status, or its signal: the subreaper sees exactly
# that); state, kill (created and running), delete (twice), run (Slurm's foreground mode, with
# state, kill and delete from other processes), exec (--process, --detach: a proxy pid), the
# console socket, ps, list, pause/resume; and the refusals, each one line, exit 125, nothing
# started: --root a symlink, group/world writable or another's, a bad id, --systemd-cgroup, an
# unknown command; a second uid cannot drive a holder through its socket.
. "$TAP_LIB"
. "$(dirname "$0")/../oci/lib.sh" # oci_rootfs

RT=$CORDON_RUNTIME
PY=/usr/bin/python3 # the callers' python: root's PATH may name one other users cannot run
H=$OCI_HELPER
[ -x /bin/busybox ] || { skip "cordon-runtime" "busybox-static is not installed"; done_testing; exit; }

w=$(mkwork)
root=$w/root
b=$w/bundle
oci_rootfs "$b/rootfs"
[ "${CORDON_AS:-root}" = user ] && chown -R "$TEST_USER:" "$b"

# create ID: its output to files (the holder keeps create's stdio until start, as an engine's
# pipes: a $(...) would wait for the container's end)
create() {
	as_caller "$RT" --root "$root" create -b "$b" "$1" >"$w/$1.out" 2>"$w/$1.err"
	rc=$?
}
# rt ARGS...: cordon-runtime --root $root as the caller; $out, $err, $rc
rt() {
	out=$(as_caller "$RT" --root "$root" "$@" 2>"$TEST_TMP/stderr")
	rc=$?
	err=$(cat "$TEST_TMP/stderr")
}
# config ARGV-JSON [process-field-json]: the bundle's process.args (and one more field)
config() {
	python3 - "$b/config.json" "$1" "${2:-}" <<'EOF'
import json, sys
c = json.load(open(sys.argv[1]))
c["process"]["args"] = json.loads(sys.argv[2])
c["process"]["terminal"] = False
if sys.argv[3]:
    c["process"].update(json.loads(sys.argv[3]))
json.dump(c, open(sys.argv[1], "w"))
EOF
}
field() { python3 -c 'import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$1" "$2" 2>/dev/null; }

# init_of HOLDER: the container's pid 1 as the host sees it (what `state` calls its pid): the
# child of the holder's child (the session's supervisor) whose innermost pid is 1
init_of() {
	local c g
	for c in $(ps -o pid= --ppid "$1"); do
		for g in $(ps -o pid= --ppid "$c"); do
			grep -qE '^NSpid:.*[[:space:]]1$' "/proc/$g/status" 2>/dev/null && echo "$g"
		done
	done
}
cleanup() {
	for id in $(as_caller "$RT" --root "$root" list -q 2>/dev/null); do
		as_caller "$RT" --root "$root" delete --force "$id" >/dev/null 2>&1
	done
}
trap cleanup EXIT

# --- spec
out=$(cd "$b" && as_caller "$RT" spec 2>&1)
is "spec writes config.json into the bundle" "$?:$([ -f "$b/config.json" ] && echo there)" "0:there"
out=$(cd "$b" && as_caller "$RT" spec 2>&1)
rc=$?
is "spec refuses to overwrite it (125, one line)" "$rc:$(wc -l <<<"$out")" "125:1"

# --- create, state, start: through a subreaper, as conmon runs them
config '["sh","-c","echo hello; echo oops >&2; exit 3"]'
pf=$w/c1.pid
script="'$RT' --root '$root' create --bundle '$b' --pid-file '$pf' c1 >'$w/c1.out' 2>'$w/c1.err' &&
'$RT' --root '$root' state c1 >'$w/c1.state' &&
grep NSpid /proc/\$(sed -n 's/.*\"pid\":\\([0-9]*\\).*/\\1/p' '$w/c1.state')/status >'$w/c1.nspid' &&
'$RT' --root '$root' start c1"
out=$(as_caller "$PY" "$H" reap "$pf" -- sh -c "$script")
is "create + start: the subreaper reaps the pid file's pid with the process's status (3)" "$out" "cmd=0 pid=exit:3"
st=$(cat "$w/c1.state")
is "state after create: created" "$(field "$st" status)" "created"
is "... its pid: the container's pid 1 as the host sees it (the pid file's is the holder)" \
	"$(field "$st" pid) $(sed 's/^NSpid:[[:space:]]*//' "$w/c1.nspid" | tr -s '[:space:]' ' ' | sed 's/ $//')" \
	"$(field "$st" pid) $(field "$st" pid) 1"
isnt "... not the pid file's" "$(field "$st" pid)" "$(cat "$pf")"
is "... the bundle, absolute" "$(field "$st" bundle)" "$b"
is "the process wrote on the stdio create got" "$(cat "$w/c1.out"):$(cat "$w/c1.err")" "hello:oops"
rt state c1
is "state after the end: stopped, pid 0" "$(field "$out" status):$(field "$out" pid)" "stopped:0"
like "... with ociVersion and id" "$out" '"ociVersion":"1.2.0","id":"c1"'
rt start c1
is "start of a stopped container fails (1)" "$rc" 1

# --- delete, twice
rt delete c1
is "delete of a stopped container: 0, its directory gone" "$rc:$([ -e "$root/c1" ] && echo left)" "0:"
rt delete c1
is "delete again: 1, one line" "$rc:$err" "1:cordon-runtime: container: c1: container does not exist"
rt delete --force c1
is "delete --force of a missing container: 0 (containerd deletes twice)" "$rc" 0

# --- kill in created: the container ends of the signal
config '["sleep","100"]'
for sig in KILL TERM; do
	pf=$w/k-$sig.pid
	script="'$RT' --root '$root' create -b '$b' --pid-file '$pf' k-$sig >/dev/null &&
'$RT' --root '$root' kill k-$sig $sig"
	out=$(as_caller "$PY" "$H" reap "$pf" -- sh -c "$script")
	is "kill $sig in created: the holder ends of it" "$out" "cmd=0 pid=signal:$(kill -l $sig)"
	rt state k-$sig
	is "... state stopped" "$(field "$out" status)" stopped
	rt delete k-$sig
done

# --- kill in running, ps, list, exec, pause
pf=$w/r1.pid
( exec_as_caller "$PY" "$H" reap "$pf" -- "$RT" --root "$root" create -b "$b" --pid-file "$pf" r1 ) >"$w/r1.reap" &
reaper=$!
for _ in $(seq 100); do [ -s "$pf" ] && break; sleep 0.1; done
rt start r1
is "start: 0" "$rc:$err" "0:"
rt state r1
is "state: running, the container's pid 1 below the holder" "$(field "$out" status):$(field "$out" pid)" "running:$(init_of "$(cat "$pf")")"
rt ps --format json r1
pid=$(python3 -c 'import json,sys; p=json.loads(sys.argv[1]); print(p[0] if len(p)==1 else p)' "$out")
is "ps --format json: the process's host pid (sleep 100)" "$(tr '\0' ' ' </proc/"$pid"/cmdline 2>/dev/null)" "sleep 100 "
rt list
like "list: the container, running" "$(grep '^r1 ' <<<"$out")" running
rt list -q
like "list -q: its id" "$out" r1
rt list --format json
is "list --format json: its state" "$(python3 -c 'import json,sys; print([c["status"] for c in json.loads(sys.argv[1]) if c["id"]=="r1"])' "$out")" "['running']"

printf '{"args":["sh","-c","echo exec-out; exit 4"],"env":["PATH=/bin"],"cwd":"/"}' >"$w/proc.json"
rt exec --process "$w/proc.json" r1
is "exec --process: its output and its status" "$rc:$out" "4:exec-out"
rt exec r1 sh -c 'kill -USR1 $$'
is "exec: a process killed by a signal: 128+N" "$rc" 138
epf=$w/e1.pid
out=$(as_caller "$PY" "$H" reap "$epf" -- sh -c "'$RT' --root '$root' exec --detach --pid-file '$epf' r1 sleep 50 && kill -TERM \$(cat '$epf')")
is "exec --detach: the pid file's pid is a proxy that passes SIGTERM on and dies of it" "$out" "cmd=0 pid=signal:15"

rt pause r1
if [ "$rc" = 0 ]; then
	rt state r1
	is "pause: state paused" "$(field "$out" status)" paused
	rt exec r1 true
	is "exec in a paused container: refused (1)" "$rc" 1
	rt resume r1
	rt state r1
	is "resume: running again" "$(field "$out" status)" running
else
	skip "pause" "no cgroup for the session here: $err"
	skip "exec while paused" "no pause"
	skip "resume" "no pause"
fi
rt delete r1
is "delete of a running container without --force: refused (1)" "$rc:$(field "$(as_caller "$RT" --root "$root" state r1)" status)" "1:running"
rt kill r1
is "kill (TERM by default) of a running container: 0" "$rc" 0
wait "$reaper"
is "... the holder dies of SIGTERM, as its process did" "$(cat "$w/r1.reap")" "cmd=0 pid=signal:15"
rt delete r1

# --- delete --force of a running container
config '["sleep","100"]'
create f1
rt start f1
rt delete --force f1
is "delete --force of a running container: 0, gone" "$rc:$([ -e "$root/f1" ] && echo left)" "0:"

# --- run: exit status, a signal, and the state while it runs (Slurm's mode)
config '["sh","-c","echo ran; exit 7"]'
rt run -b "$b" run1
is "run: the output and the status (7)" "$rc:$out" "7:ran"
rt state run1
is "state after run: stopped" "$(field "$out" status)" stopped
rt delete run1
config '["sh","-c","kill -USR1 $$"]'
out=$(as_caller "$PY" -c 'import subprocess,sys; print(subprocess.run(sys.argv[1:]).returncode)' "$RT" --root "$root" run -b "$b" run2 2>&1)
is "run: a process killed by SIGUSR1: run dies of SIGUSR1 itself (WIFSIGNALED)" "$out" "-10"
rt delete run2
config '["sleep","100"]'
( exec_as_caller "$RT" --root "$root" run -b "$b" run3 ) &
runner=$!
for _ in $(seq 100); do
	[ "$(field "$(as_caller "$RT" --root "$root" state run3 2>/dev/null)" status)" = running ] && break
	sleep 0.1
done
st=$("$RT" --root "$root" state run3 2>&1)
is "state of a running run, asked by root (Slurm does)" "$(field "$st" status):$(field "$st" pid)" "running:$(init_of "$runner")"
rt kill -a run3
wait "$runner"
is "kill -a: run dies of SIGTERM" "$?" 143
rt delete --force run3
is "delete --force after: 0" "$rc" 0

# --- the console socket
config '["sh","-c","read x; echo got:$x; stty size; ls -ln $(tty)"]' '{"terminal":true,"consoleSize":{"height":33,"width":99}}'
sock=$w/console.sock
out=$(as_caller "$PY" "$H" console "$sock" -- "$RT" --root "$root" create -b "$b" --console-socket "$sock" t1 -- "$RT" --root "$root" start t1)
like "console: the pty's name comes with the master" "$out" "name=/dev/pts/"
like "console: the process reads the terminal" "$out" "got:hello"
like "console: consoleSize is the terminal's size" "$out" "33 99"
# devpts gives a new pty its opener's ids: the holder's are not mapped inside (65534)
is "console: the pty is the container's user's (uid 0 gid 0 inside, as with runc)" \
	"$(grep '/dev/pts/' <<<"$out" | grep -v name= | awk '{print $3, $4}')" "0 0"
rt delete --force t1

rt create -b "$b" t2
is "process.terminal without --console-socket: refused (125, one line)" "$rc:$(wc -l <<<"$err")" "125:1"

# exec --tty with --process: its consoleSize is the pty's size (the engine's resize comes later)
config '["sleep","100"]'
create x5
rt start x5
printf '{"terminal":true,"consoleSize":{"height":33,"width":101},"args":["sh","-c","read x; stty size; ls -ln $(tty)"],"env":["PATH=/bin"],"cwd":"/"}' >"$w/tty.json"
rm -f "$sock"
out=$(as_caller "$PY" "$H" console "$sock" -- "$RT" --root "$root" exec --detach --console-socket "$sock" --process "$w/tty.json" x5 -- true)
like "exec --process with consoleSize 33x101: stty size inside says so" "$out" "33 101"
is "... and that pty is the container's user's too" "$(grep '/dev/pts/' <<<"$out" | grep -v name= | awk '{print $3, $4}')" "0 0"
rt delete --force x5

# --- a second uid cannot drive the holder through its socket
config '["sleep","100"]'
create p1
chmod 711 "$w" "$root" "$root/p1"
chmod 777 "$root/p1/sock"
out=$(setpriv --reuid=nobody --regid=nogroup --clear-groups "$PY" "$H" frame "$root/p1/sock" 1 2>&1)
is "a second uid: the holder hangs up without an answer" "$out" closed
rt state p1
is "... and the container was not started" "$(field "$out" status)" created
chmod 700 "$root" "$root/p1"
chmod 755 "$w"
rt delete --force p1

# --- refusals: one line, 125, nothing started
# try_create ROOT: create x1 there (output to files: a create that is not refused must not hang
# the test, its holder keeping the output open); removed again at once if it was made
try_create() {
	as_caller "$RT" --root "$1" create -b "$b" x1 >"$w/x1.out" 2>"$w/x1.err"
	rc=$?
	err=$(cat "$w/x1.err")
	[ "$rc" = 0 ] && as_caller "$RT" --root "$1" delete --force x1 >/dev/null 2>&1
}
refused() { # description expected-text
	is "$1: 125, one line" "$rc:$(wc -l <<<"$err")" "125:1"
	like "... $1: says why" "$err" "$2"
}
mkdir -p "$w/real"
ln -sfn "$w/real" "$w/link"
try_create "$w/link"
refused "--root a symlink" "a symbolic link"
is "... nothing made" "$(ls "$w/real")" ""
mkdir -p "$w/open" && chmod 777 "$w/open"
try_create "$w/open"
refused "--root world-writable" "writable by group or others"
other=$(mktemp -d "$TEST_TMP/other.XXXXXX")
chmod 755 "$other"
if [ "${CORDON_AS:-root}" = user ]; then chown root: "$other"; else chown "$TEST_USER:" "$other"; fi
try_create "$other"
refused "--root another's" "not by the caller"
is "... nothing made" "$(ls "$other")" ""
# containerd's shim names /run/containerd/runc/NAMESPACE before anything made its parent: made
# as runc makes them, 0700
try_create "$w/miss/ing/root"
is "--root whose parents are missing: created" "$rc" 0
is "... the parents and the root made 0700" \
	"$(stat -c %a "$w/miss" "$w/miss/ing" "$w/miss/ing/root" | tr '\n' ' ')" "700 700 700 "
for id in "a/b" ".." "x y" ""; do
	as_caller "$RT" --root "$root" create -b "$b" "$id" >"$w/id.out" 2>"$w/id.err"
	rc=$?
	err=$(cat "$w/id.err")
	refused "id \"$id\"" "container id"
done
as_caller "$RT" --root "$root" --systemd-cgroup create -b "$b" x2 >"$w/x2.out" 2>"$w/x2.err"
rc=$?
err=$(cat "$w/x2.err")
refused "--systemd-cgroup" "--systemd-cgroup: not supported"
rt frobnicate x2
refused "an unknown command" "unknown command"
is "nothing was made in --root by the refusals" "$(ls "$root")" ""
rt --log "$w/log.json" --log-format json state nosuch
is "--log-format json: the error as runc's JSON line" \
	"$(python3 -c 'import json,sys; l=json.loads(open(sys.argv[1]).read().splitlines()[-1]); print(l["level"], l["msg"], "time" in l)' "$w/log.json")" \
	"error container: nosuch: container does not exist True"

# --- the pid in state.json is checked to be the holder's: a pid reused, or named by someone else
config '["sleep","100"]'
pf=$w/id1.pid
as_caller "$RT" --root "$root" create -b "$b" --pid-file "$pf" id1 >/dev/null 2>&1
rt start id1
( exec_as_caller sleep 300 ) &
decoy=$!
# state.json with the decoy's pid (a pid the holder's could have been recycled into)
forge() { # PID: state.json's pid made PID, as the caller (the file's owner) would
	as_caller python3 -c 'import json,sys; p=sys.argv[1]+"/state.json"; s=json.load(open(p)); s["pid"]=int(sys.argv[2]); t=p+".x"; open(t,"w").write(json.dumps(s)); import os; os.chmod(t,0o600); os.rename(t,p)' "$root/id1" "$1"
}
forge "$decoy"
rt state id1
is "state: a pid that is not the holder's (its start time differs): refused (1)" "$rc:$(field "$out" pid)" "1:"
like "... saying so" "$err" "is not its holder"
forge "$(cat "$pf")"
chmod g+w "$root/id1/state.json"
rt state id1
is "state: a state.json group-writable: refused (1)" "$rc" 1
like "... saying so" "$err" "writable by group or others"
chmod g-w "$root/id1/state.json"
rt state id1
is "state: the container's pid again: running" "$(field "$out" status):$(field "$out" pid)" "running:$(init_of "$(cat "$pf")")"
# a holder that does not answer (stopped): delete --force ends after a few seconds, and does
# not signal a pid that state.json names unless it is the holder's
forge "$decoy"
kill -STOP "$(cat "$pf")"
t0=$(date +%s)
out=$(timeout 60 "$RT" --root "$root" delete --force id1 2>&1)
rc=$?
is "delete --force, its holder stopped, state.json naming another pid: ends (1) within 20 s" "$rc:$(( $(date +%s) - t0 < 20 ))" "1:1"
like "... saying its holder is not signalled" "$out" "not signalled"
kill -0 "$decoy" 2>/dev/null
is "... and the other process (the pid state.json names) lives" "$?" 0
forge "$(cat "$pf")"
t0=$(date +%s)
out=$(timeout 60 "$RT" --root "$root" delete --force id1 2>&1)
rc=$?
dt=$(( $(date +%s) - t0 ))
is "delete --force, its holder stopped (SIGSTOP): 0 within 20 s, gone" "$rc:$(( dt < 20 )):$([ -e "$root/id1" ] && echo left)" "0:1:"
diag "delete --force of a stopped holder took ${dt} s"
hpid=$(cat "$pf")
is "... the holder was killed" "$([ -e "/proc/$hpid" ] && ! grep -q ') Z' "/proc/$hpid/stat" 2>/dev/null && echo alive)" ""
kill "$decoy"
wait "$decoy" 2>/dev/null
# a process that ignores SIGTERM: delete --force's is SIGKILL
config '["sh","-c","trap \"\" TERM; while :; do sleep 1; done"]'
create id2
rt start id2
t0=$(date +%s)
rt delete --force id2
is "delete --force of a process that ignores SIGTERM: 0 within 10 s, gone" "$rc:$(( $(date +%s) - t0 < 10 )):$([ -e "$root/id2" ] && echo left)" "0:1:"

# --- list: a state.json's strings with control bytes (a newline, ESC) are escaped in the table
as_caller mkdir -m 700 "$root/esc1"
as_caller sh -c "printf '%s' '{\"id\":\"esc1\",\"status\":\"stopped\",\"pid\":0,\"bundle\":\"/b\\nfake-line\\u001b[2J\",\"created\":\"x\"}' >'$root/esc1/state.json'; chmod 600 '$root/esc1/state.json'"
out=$(as_caller "$RT" --root "$root" list 2>&1 | od -An -c | tr -s ' ')
unlike "list: no ESC byte from a state.json reaches the terminal" "$out" '033'
rt list
is "list: one line for the container (its newline escaped)" "$(grep -c '^fake-line' <<<"$out"):$(grep '^esc1 ' <<<"$out" | grep -c fake-line)" "0:1"
like "... shown as \\x0a and \\x1b" "$(grep '^esc1 ' <<<"$out")" '/b\x0afake-line\x1b[2J'
rt delete esc1

rt features
is "features: JSON with ociVersionMax" "$(field "$out" ociVersionMax)" "1.2.0"
done_testing
