#!/usr/bin/env bash
# cordon-runtime attacked from the host side: what another user (or a container) controls and
# the caller's cordon-runtime then touches. A FIFO planted where the caller writes the engine's
# pid file (a shared sticky directory: the caller root or cordon-test, the planter another uid).
# Root as the victim: a note in a user's --root naming one of root's directories, read by root's
# delete (Slurm runs it as root on the user's --root); a FIFO for a state file root reads; a
# fake holder there that root's exec would hand its stdio; a squatted scratch name.
. "$TAP_LIB"
. "$(dirname "$0")/../oci/lib.sh" # oci_rootfs

RT=$CORDON_RUNTIME
[ -x /bin/busybox ] || { skip "cordon-runtime" "busybox-static is not installed"; done_testing; exit; }

w=$(mkwork)
root=$w/root
b=$w/bundle
oci_rootfs "$b/rootfs"
(cd "$b" && "$RT" spec) || { fail "cordon-runtime spec"; done_testing; exit; }
python3 - "$b/config.json" <<'EOF'
import json, sys
c = json.load(open(sys.argv[1]))
c["process"]["args"] = ["sleep", "100"]
c["process"]["terminal"] = False
json.dump(c, open(sys.argv[1], "w"))
EOF
own "$b"
as_user() { setpriv --reuid="$TEST_USER" --regid="$TEST_USER" --clear-groups "$@"; }
# the same, replacing the shell: for `( as_user_exec ... ) &`, so that $! is the program itself
# (a kill of a subshell running as_user would leave its child behind)
as_user_exec() { exec setpriv --reuid="$TEST_USER" --regid="$TEST_USER" --clear-groups "$@"; }
victims=()
cleanup() {
	for id in $(as_caller "$RT" --root "$root" list -q 2>/dev/null); do
		as_caller "$RT" --root "$root" delete --force "$id" >/dev/null 2>&1
	done
	for v in "${victims[@]}"; do rm -rf "$v"; done
	rm -rf /var/tmp/cordon-runtime-65533-*
}
trap cleanup EXIT

# --- the pid file the caller writes (root: as root), in a shared sticky directory where
# another uid plants a FIFO at its temporary name: the caller's create must not hang on it
if is_user_mode; then planter=nobody; else planter=$TEST_USER; fi
pdir=$w/pids
mkdir -m 1777 "$pdir"
setpriv --reuid="$planter" --regid="$(id -g "$planter")" --clear-groups mkfifo "$pdir/p1.pid.cordon-tmp"
timeout 60 setpriv --reuid="$(caller_uid)" --regid="$(id -g "$(caller_uid)")" --clear-groups \
	"$RT" --root "$root" create -b "$b" --pid-file "$pdir/p1.pid" p1 >/dev/null 2>"$w/p1.err"
rc=$?
isnt "create --pid-file with a FIFO planted at its temporary name: does not hang" "$rc" 124
st=$(as_caller "$RT" --root "$root" state p1 2>/dev/null)
is "... the pid file names the holder (state.json's)" "$(cat "$pdir/p1.pid" 2>/dev/null)" \
	"$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["pid"])' "$root/p1/state.json" 2>/dev/null)"
pid1=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["pid"])' "$st" 2>/dev/null)
is "... state's pid is the container's pid 1 as the host sees it (NSpid ... 1)" \
	"$(sed -n 's/^NSpid:.*[[:space:]]\([0-9]*\)$/\1/p' "/proc/$pid1/status" 2>/dev/null)" 1
is "... the planted FIFO was not written through" "$(stat -c %F "$pdir/p1.pid.cordon-tmp")" "fifo"
as_caller "$RT" --root "$root" delete --force p1 >/dev/null 2>&1

if is_user_mode; then
	skip "attacks on root's cordon-runtime" "root is the victim: run as root"
	done_testing
	exit
fi

# --- root's delete in a user's --root follows the user's scratch note
# a victim named as root's scratches are (another container's workdir)
victim=/var/tmp/cordon-runtime-0-$(head -c16 /dev/urandom | od -An -tx1 | tr -d ' \n')
victims+=("$victim")
mkdir -p "$victim" && echo precious >"$victim/data"
uroot=$w/uroot
mkdir -m 700 "$uroot" && chown "$TEST_USER:" "$uroot"
as_user mkdir "$uroot/c1"
as_user sh -c "printf %s '$victim' >'$uroot/c1/scratch'"
out=$("$RT" --root "$uroot" delete c1 2>&1)
is "root's delete in a user's --root: the container's directory goes" "$?:$out:$([ -e "$uroot/c1" ] && echo left)" "0::"
is "... and the directory the user's note names, root's, stays" "$(cat "$victim/data" 2>&1)" precious

# --- root's delete and state in a user's --root: a FIFO for a file does not hang them
as_user mkdir "$uroot/c2"
as_user mkfifo "$uroot/c2/scratch" "$uroot/c2/state.json"
out=$(timeout 60 "$RT" --root "$uroot" state c2 2>&1)
rc=$?
isnt "root's state on a FIFO state.json: does not hang" "$rc" 124
like "... refused: not a file" "$out" "state.json"
out=$(timeout 60 "$RT" --root "$uroot" delete c2 2>&1)
is "root's delete with a FIFO scratch note: does not hang, the directory goes" "$?:$out:$([ -e "$uroot/c2" ] && echo left)" "0::"

# --- root's exec in a user's --root: the "holder" there is whatever the user runs, and exec
# hands it root's stdio (its terminal): exec is for the caller's own containers
as_user mkdir "$uroot/c3"
printf '{"id":"c3","status":"running","pid":1,"bundle":"%s","created":"x"}' "$b" >"$w/c3.json"
as_user cp "$w/c3.json" "$uroot/c3/state.json"
( as_user_exec /usr/bin/python3 "$OCI_HELPER" fake-holder "$uroot/c3" ) >"$w/fake.out" 2>&1 &
fake=$!
for _ in $(seq 100); do [ -s "$w/fake.out" ] && break; sleep 0.1; done
out=$(timeout 60 "$RT" --root "$uroot" exec c3 true </dev/null 2>&1)
rc=$?
# root's state there: the pid the user's state.json names (1: root's init; the lock held, its
# start time copied from /proc/1/stat) was reported as the container's, for root to signal
st=$("$RT" --root "$uroot" state c3 2>&1)
src=$?
as_user /usr/bin/python3 -c 'import json,sys; p=sys.argv[1]; s=json.load(open(p)); s["cordonHolderStart"]=int(open("/proc/1/stat").read().rsplit(")",1)[1].split()[19]); open(p+".x","w").write(json.dumps(s)); import os; os.rename(p+".x",p)' "$uroot/c3/state.json"
st2=$("$RT" --root "$uroot" state c3 2>&1)
src2=$?
kill "$fake" 2>/dev/null
wait "$fake" 2>/dev/null
is "root's exec in a user's --root: refused (1)" "$rc" 1
like "... saying whose it is" "$out" "not by the caller"
unlike "... the user's listener got none of root's descriptors" "$(cat "$w/fake.out")" "got"
is "root's state in a user's --root naming pid 1 (a fake holder keeps the lock): refused (1)" "$src" 1
like "... no start time: not its holder" "$st" "refused"
is "... with pid 1's own start time copied in: refused (1), pid 1 is not the user's" "$src2:$st2" \
	"1:cordon-runtime: state: c3: pid 1 is not uid $(id -u "$TEST_USER")'s: refused"

# --- root's kill/ps in a user's --root: ROOT/ID/sock a symlink to another container's holder
# (root's own here): connect() would follow it, and that holder obeys root
vroot=$w/vroot
"$RT" --root "$vroot" create -b "$b" victim >/dev/null 2>&1 && "$RT" --root "$vroot" start victim
as_user mkdir "$uroot/c4"
as_user ln -s "$vroot/victim/sock" "$uroot/c4/sock"
out=$(timeout 60 "$RT" --root "$uroot" kill c4 KILL 2>&1)
is "root's kill in a user's --root whose sock is a symlink to another holder's: refused (1)" \
	"$?:$out" "1:cordon-runtime: container: its control socket is not a socket of the directory's owner: refused"
out=$(timeout 60 "$RT" --root "$uroot" ps c4 2>&1)
is "... ps too" "$?" 1
sleep 0.5
like "... the other container runs on" "$("$RT" --root "$vroot" state victim 2>&1)" '"status":"running"'
as_user rm "$uroot/c4/sock"
"$RT" --root "$vroot" delete --force victim >/dev/null 2>&1

# --- root's kill in a user's --root: a "holder" that accepts and never answers
as_user mkdir "$uroot/c5"
( as_user_exec /usr/bin/python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.bind(sys.argv[1]); s.listen(5); print("up", flush=True)
c = []
while True: c.append(s.accept()[0])' "$uroot/c5/sock" ) >"$w/mute.out" 2>&1 &
mute=$!
for _ in $(seq 100); do [ -s "$w/mute.out" ] && break; sleep 0.1; done
timeout 60 "$RT" --root "$uroot" kill c5 KILL >/dev/null 2>&1
rc=$?
kill "$mute" 2>/dev/null
wait "$mute" 2>/dev/null
is "root's kill on a user's holder that never answers: gives up with an error (1), no hang" "$rc" 1

# --- root's delete in a user's --root: a FIFO for hooks.json (the poststop hooks create saved)
as_user mkdir "$uroot/c6"
as_user mkfifo "$uroot/c6/hooks.json"
out=$(timeout 60 "$RT" --root "$uroot" delete c6 2>&1)
rc=$?
isnt "root's delete with a FIFO hooks.json: does not hang" "$rc" 124
is "... the directory goes" "$([ -e "$uroot/c6" ] && echo left)" ""

# --- root's --root below a user's directory: its missing parents are made, never where the
# user's symbolic link leads (a root-only directory here)
rootonly=$w/rootonly
mkdir -m 700 "$rootonly"
udir=$w/udir
mkdir -m 755 "$udir" && chown "$TEST_USER:" "$udir"
as_user ln -s "$rootonly" "$udir/a"
out=$(timeout 60 "$RT" --root "$udir/a/new/state" create -b "$b" c7 2>&1)
is "root's --root through a user's symlink: refused (125), one line" "$?:$(wc -l <<<"$out")" "125:1"
like "... saying why" "$out" "a symbolic link in a directory another user may change"
is "... nothing made where it leads" "$(ls -A "$rootonly")" ""
"$RT" --root "$udir/a/new/state" delete --force c7 >/dev/null 2>&1

# --- root's commands on a --root whose path a user's symbolic link leads: to root's own
# containers (a victim here), through a link above the last component or a trailing slash
vr=$w/vr
"$RT" --root "$vr/state" create -b "$b" victim2 >/dev/null 2>&1 && "$RT" --root "$vr/state" start victim2
ud=$w/ud
mkdir -m 755 "$ud" && chown "$TEST_USER:" "$ud"
as_user ln -s "$vr" "$ud/cr"
as_user ln -s "$vr/state" "$ud/st"
for r in "$ud/cr/state" "$ud/st/" "$ud/st/."; do
	out=$(timeout 60 "$RT" --root "$r" kill victim2 KILL 2>&1)
	rc=$?
	like "root's kill with --root $r (a user's link): refused (1), naming --root" "$rc:$out" "1:cordon-runtime: --root: $ud/"
done
out=$(timeout 60 "$RT" --root "$ud/cr/state" delete --force victim2 2>&1)
is "... delete --force too" "$?" 1
sleep 0.5
like "... root's container runs on" "$("$RT" --root "$vr/state" state victim2 2>&1)" '"status":"running"'
"$RT" --root "$vr/state" delete --force victim2 >/dev/null 2>&1

# --- root's kill and start in a user's --root: a "holder" whose backlog is full (connect()
# would wait for ever), one that accepts and never answers (start runs hooks: unbounded for
# the caller's own containers only)
as_user mkdir "$uroot/c8"
( as_user_exec /usr/bin/python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.bind(sys.argv[1]); s.listen(0)
c = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET); c.setblocking(False)
try: c.connect(sys.argv[1])
except BlockingIOError: pass
print("up", flush=True)
import time; time.sleep(300)' "$uroot/c8/sock" ) >"$w/full.out" 2>&1 &
full=$!
for _ in $(seq 100); do [ -s "$w/full.out" ] && break; sleep 0.1; done
timeout 60 "$RT" --root "$uroot" kill c8 KILL >/dev/null 2>&1
is "root's kill on a user's holder with a full backlog: gives up (1), no hang" "$?" 1
kill "$full" 2>/dev/null
wait "$full" 2>/dev/null
( as_user_exec /usr/bin/python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.bind(sys.argv[1]); s.listen(5); print("up", flush=True)
c = []
while True: c.append(s.accept()[0])' "$uroot/c5/sock.2" ) >"$w/mute2.out" 2>&1 &
mute2=$!
for _ in $(seq 100); do [ -s "$w/mute2.out" ] && break; sleep 0.1; done
as_user mv -f "$uroot/c5/sock.2" "$uroot/c5/sock"
timeout 60 "$RT" --root "$uroot" start c5 >/dev/null 2>&1
is "root's start on a user's holder that never answers: gives up (1), no hang" "$?" 1
kill "$mute2" 2>/dev/null
wait "$mute2" 2>/dev/null

# --- the scratch's name: nobody can take it first (a user squatting a fixed parent in the
# sticky /var/tmp, /var/tmp/cordon-runtime-UID, denied that uid every container without a
# read-write bind). The victim: uid 65533, an unprivileged caller without an account.
vu=65533
squat=/var/tmp/cordon-runtime-$vu
if [ -e "$squat" ]; then
	skip "a squatted scratch parent" "$squat exists already"
else
	victims+=("$squat")
	as_user mkdir -m 755 "$squat"
	vw=$w/victim
	mkdir -m 755 "$vw" && chown "$vu:$vu" "$vw"
	chmod -R a+rX "$b"
	python3 -c 'import json, sys
c = json.load(open(sys.argv[1]))
c["process"]["args"] = ["sh", "-c", "echo ran"]
c["root"]["path"] = sys.argv[2]
json.dump(c, open(sys.argv[3], "w"))' "$b/config.json" "$b/rootfs" "$vw/config.json"
	out=$(cd / && setpriv --reuid=$vu --regid=$vu --clear-groups "$RT" --root "$vw/root" run -b "$vw" v1 2>&1)
	is "another user's directory at $squat: uid $vu's run runs" "$?:$out" "0:ran"
	setpriv --reuid=$vu --regid=$vu --clear-groups "$RT" --root "$vw/root" delete v1 >/dev/null 2>&1
	is "... and its delete leaves no scratch of uid $vu behind" \
		"$(ls -d /var/tmp/cordon-runtime-$vu-* 2>/dev/null)" ""
fi

done_testing
