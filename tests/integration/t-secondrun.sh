#!/usr/bin/env bash
# The second run: what a first sandbox leaves in its workdir must not steer a later run of
# cordon on the host. The first sandbox plants, at every path the next run will touch (its
# outputs, its workdir, its read-only binds, their parents), symlinks to a victim, hard links,
# FIFOs, and tries to leave a setuid file; then a second run (as root when the suite runs as
# root, where the plants are root's own files: the workdir is id-mapped) uses paths through the
# first workdir. The victims (a directory and a file standing for /etc and /etc/shadow, another
# user's directory) must stay untouched and unseen, nothing may be written outside the intended
# places, and the host finds no setuid file.
. "$TAP_LIB"

host_root=$([ "$(id -u)" = 0 ] && echo yes)
root_run=$([ -n "$host_root" ] && ! is_user_mode && echo yes) # cordon runs as root
ran=.second-ran # what the second run's command leaves in its workdir
cleanup=()
trap 'for f in "${cleanup[@]}"; do rm -f "$f"; done' EXIT

# mine PATH...: make directories (with their parents) owned by whoever runs cordon
mine() {
	mkdir -p "$@" && chmod 755 "$@"
	if [ -n "$host_root" ] && is_user_mode; then chown "$TEST_USER:" "$@"; fi
}
# second DIR ARGS...: the second run, in workdir DIR, on a command that leaves $ran there
second() {
	local dir=$1
	shift
	cleanup+=("$dir/$ran")
	rm -f "$dir/$ran"
	cordon_bare -w "$dir" "$@" -- sh -c "echo ran; : >$ran"
}
# refused DESC LINE DIR [ARGS...]: the second run in DIR says LINE, exit 125, and nothing ran
refused() {
	second "${@:3}"
	is "$1" "$rc|$err|$out|$([ -e "$3/$ran" ] && echo ran)" "125|$2||"
}

# --- the victims: root's (the caller's, unprivileged) "/etc", and (root) another user's directory
v=$TEST_TMP/etc
mine "$v" "$v/sub"
echo precious >"$v/shadow"
if is_user_mode && [ -n "$host_root" ]; then chown "$TEST_USER:" "$v/shadow"; fi
u=$TEST_TMP/users
if [ -n "$root_run" ]; then
	mkdir -p "$u/sub" && echo private >"$u/notes" && chown -R "$TEST_USER:" "$u"
fi

# --- the first run plants; the host gave it one file of its own (its source, say)
f=$(mkwork)
echo source >"$f/precious"
if is_user_mode && [ -n "$host_root" ]; then chown "$TEST_USER:" "$f/precious"; fi
src=$(mktemp -d "$TEST_TMP/tar.XXXXXX")
cp /bin/true "$src/suid" && chmod 4755 "$src/suid"
tar -C "$src" -cf "$TEST_TMP/suid.tar" suid && chmod 644 "$TEST_TMP/suid.tar"
cordon_bare -w "$f" --ro-bind "$TEST_TMP/suid.tar:/suid.tar" -- sh -c '
	v=$1 u=$2
	ln -s "$v" plant            # the next workdir itself
	ln -s "$v" link             # a parent of the next workdir
	ln -s "$u" ulink            # ... leading to another user
	ln -s /etc elink            # ... leading to the system
	ln -s "$v" out              # the directory of the next outputs
	ln -s "$u" uout
	ln -s "$v/shadow" r.json    # the next outputs themselves
	ln precious a.jsonl
	mkfifo fifo.json
	ln -s "$v" cap
	cp /bin/bash bash; chmod 4755 bash; chmod u+s,g+s bash
	cp -p /usr/bin/passwd passwd
	tar -xpf /suid.tar
	true' sh "$v" "$u" 2>/dev/null
is "(the first run planted its symlinks, hard link and FIFO, and left its copies)" \
	"$rc:$(cd "$f" && stat -c '%n:%F:%h' plant link out r.json a.jsonl fifo.json bash passwd suid | tr '\n' ' ')" \
	"0:plant:symbolic link:1 link:symbolic link:1 out:symbolic link:1 r.json:symbolic link:1 a.jsonl:regular file:2 fifo.json:fifo:1 bash:regular file:1 passwd:regular file:1 suid:regular file:1 "
if [ -n "$root_run" ]; then
	is "(its symlinks are root's on the host: the id-mapped workdir makes them so)" \
		"$(stat -c %u "$f/plant" "$f/link" "$f/out" | sort -u)" 0
fi
is "the host finds no setuid or setgid file in the first workdir (chmod 4755, cp -p, tar -xp)" \
	"$(find "$f" -perm /6000 -printf '%P ')" ""

# --- the second run's workdir through the first one
refused "-w first/plant (a planted symlink) is refused" \
	"cordon: --workdir: $f/plant: is a symlink, which cordon does not follow here (a sandbox may have left it): give the real path" \
	"$f/plant"
second "$f/link/sub"
is "-w first/link/sub: the planted symlink does not lead the second run into another directory" \
	"$rc|$([ -e "$v/sub/$ran" ] && echo "ran in $v/sub")" "125|"
# (every symlink in an earlier workdir is refused first, whatever it leads to: marks.c)
refused "-w first/elink/default: nor into a system tree" \
	"cordon: --workdir: $f/elink/default: $f/elink is a symlink in a directory that was a sandbox's workdir, which may have planted it: cordon does not follow it (give the real path)" \
	"$f/elink/default"
if [ -n "$root_run" ]; then
	refused "root: -w first/ulink/sub: nor into another user's directory" \
		"cordon: --workdir: $f/ulink/sub: $f/ulink is a symlink in a directory that was a sandbox's workdir, which may have planted it: cordon does not follow it (give the real path)" \
		"$f/ulink/sub"
fi

# --- the second run's outputs in the first workdir
s=$(mkwork)
second "$s" --report "$f/r.json"
is "--report first/r.json (a planted symlink to the victim): replaced, the victim untouched" \
	"$rc:$(cat "$v/shadow"):$(stat -c %F "$f/r.json")" "0:precious:regular file"
second "$s" --audit "$f/a.jsonl"
is "--audit first/a.jsonl (a planted hard link to the first run's file): that file untouched" \
	"$rc:$(cat "$f/precious")" "0:source"
out=$(as_caller timeout 20 "$CORDON" -w "$s" --report "$f/fifo.json" -- true 2>&1)
is "--report first/fifo.json (a planted FIFO): cordon does not block, and replaces it" \
	"$?:$out:$(stat -c %F "$f/fifo.json")" "0::regular file"
refused "--capture first/cap (a planted symlink to the victim directory) is refused" \
	"cordon: --capture: $f/cap: Not a directory" "$s" --capture "$f/cap"
second "$s" --report "$f/out/r.json"
is "--report first/out/r.json: the planted symlink does not put the report in the victim directory" \
	"$(ls -A "$v/r.json" 2>/dev/null)" ""
if [ -n "$root_run" ]; then
	second "$s" --report "$f/uout/r.json"
	is "root: --report first/uout/r.json: nor in another user's directory" \
		"$(ls -A "$u/r.json" 2>/dev/null)" ""
fi

# --- the second run's read-only binds through the first workdir
cordon_bare -w "$s" --ro-bind "$f/plant:/data" -- cat /data/shadow
is "--ro-bind first/plant (a planted symlink to the victim directory): refused, the victim unseen" \
	"$rc|$out|$err" \
	"125||cordon: --ro-bind: $f/plant: $f/plant is a symlink in a directory that was a sandbox's workdir, which may have planted it: cordon does not follow it (give the real path)"

# --- root, a first workdir of another user's: its plants are that user's, never followed
if [ -n "$root_run" ]; then
	tu=$(id -u "$TEST_USER")
	g=$(mktemp -d "$TEST_TMP/users-work.XXXXXX")
	chmod 755 "$g" && chown "$TEST_USER:" "$g"
	cordon_bare -w "$g" -- sh -c 'ln -s "$1" out; ln -s "$1" link' sh "$v"
	second "$s" --report "$g/out/r.json"
	is "root: --report through a symlink $TEST_USER's sandbox planted is refused" "$rc|$err" \
		"125|cordon: --report: $g/out: $g/out is a symlink in a directory that was a sandbox's workdir, which may have planted it: cordon does not follow it (give the real path)"
	refused "root: -w through one too" \
		"cordon: --workdir: $g/link/sub: $g/link is a symlink in a directory that was a sandbox's workdir, which may have planted it: cordon does not follow it (give the real path)" \
		"$g/link/sub"
	# a directory no sandbox had, with a symlink of the user's: refused for its owner
	h=$(mktemp -d "$TEST_TMP/users-plain.XXXXXX")
	ln -s "$v" "$h/link" && chown -h "$TEST_USER:" "$h/link"
	refused "root: a symlink owned by another user on the way is refused" \
		"cordon: --workdir: $h/link/sub: $h/link is a symlink owned by uid $tu; cordon follows only symlinks owned by root or by you (give the real path)" \
		"$h/link/sub"
	cordon_bare -w "$s" --ro-bind "$g/link:/data" -- cat /data/shadow
	is "root: --ro-bind through one: refused, the victim unseen" "$rc|$out|$err" \
		"125||cordon: --ro-bind: $g/link: $g/link is a symlink in a directory that was a sandbox's workdir, which may have planted it: cordon does not follow it (give the real path)"
fi

# --- the default workdir reached by `cd` through a planted symlink ($PWD says so)
out=$(cd "$f/link" && as_caller env PWD="$f/link" "$CORDON" -- sh -c 'echo "$PWD"' 2>&1)
is "cd first/link && cordon: the planted symlink in the current path is refused" "$out" \
	"cordon: --workdir: $f/link: $f/link is a symlink in a directory that was a sandbox's workdir, which may have planted it: cordon does not follow it (give the real path)"

# --- root ran a sandbox in a user's directory (it ran as that user, whose symlinks it left):
# the user's own later run refuses them too (root's list is every user's to read)
if [ -n "$host_root" ]; then
	x=$(mktemp -d "$TEST_TMP/xuser.XXXXXX")
	mkdir "$x/proj" "$x/other" "$x/other/sub" && chown -R "$TEST_USER:" "$x" && chmod -R 755 "$x"
	"$CORDON" -w "$x/proj" -- ln -s "$x/other" link
	out=$(setpriv --reuid="$TEST_USER" --regid="$TEST_USER" --clear-groups \
		env HOME=/nonexistent XDG_STATE_HOME="$TEST_TMP/xuser-state" \
		"$CORDON" -w "$x/proj/link/sub" -- pwd 2>&1)
	is "a symlink a root-run sandbox left in a user's directory is refused to that user's run" "$out" \
		"cordon: --workdir: $x/proj/link/sub: $x/proj/link is a symlink in a directory that was a sandbox's workdir, which may have planted it: cordon does not follow it (give the real path)"
	# root's umask 077 (sudo from such a user): its list stays readable to every user
	x=$(mktemp -d "$TEST_TMP/xumask.XXXXXX")
	mkdir "$x/proj" "$x/other" "$x/other/sub" && chown -R "$TEST_USER:" "$x" && chmod -R 755 "$x"
	(umask 077 && "$CORDON" -w "$x/proj" -- ln -s "$x/other" link)
	out=$(setpriv --reuid="$TEST_USER" --regid="$TEST_USER" --clear-groups \
		env HOME=/nonexistent XDG_STATE_HOME="$TEST_TMP/xuser-state" \
		"$CORDON" -w "$x/proj/link/sub" -- pwd 2>&1)
	like "... and so it is when root's umask was 077" "$out" "is a symlink in a directory that was a sandbox's workdir"
fi

# --- the list itself: kept out of the sandbox's reach, bucketed, pruned of what is gone when a
# bucket is full, and an earlier version's one-file list moved into it
st=$(mkwork)
mine "$st/state"
if is_user_mode; then
	out=$(as_caller env XDG_STATE_HOME="$st/state" "$CORDON" -w "$st" -- true 2>&1)
	is "a list of earlier workdirs inside the workdir (XDG_STATE_HOME) is refused" "$out" \
		"cordon: --workdir: $st: holds $st/state/cordon/workdirs.d, cordon's list of earlier workdirs (and beside it the layers' key), which the sandbox must not reach (set XDG_STATE_HOME elsewhere)"
	list=$USER_STATE/cordon/workdirs.d
	# every bucket full of directories long gone (their paths do not exist)
	python3 - "$list" <<'PY'
import os, sys
d = sys.argv[1]
for b in range(256):
    os.makedirs("%s/%02x" % (d, b), exist_ok=True)
    for i in range(320):
        ino = (0x100000 + i) << 8 | b
        os.symlink("/nonexistent/%x" % ino, "%s/%02x/1-%x-1.0" % (d, b, ino))
PY
	chown -R "$TEST_USER:" "$list"
	n=$(mktemp -d "$TEST_TMP/newest.XXXXXX") && mine "$n"
	cordon_bare -w "$n" -- true
	entry=$(find "$list" -type l -lname "$n")
	between "a full bucket drops the directories that are gone" \
		"$(find "$(dirname "${entry:-/nonexistent}")" -type l | wc -l)" 1 192
	between "... and the other buckets keep theirs (a run reads one bucket)" \
		"$(find "$list" -type l | wc -l)" $((255 * 320)) $((255 * 320 + 200))
	second "$f/link/sub"
	is "... and keeps those still there: the first workdir's symlink is still refused" "$rc" 125
	# an earlier version's list: one file, "dev ino sec.nsec hex(path)" per line
	old=$(mktemp -d "$TEST_TMP/oldlist.XXXXXX") && mine "$old" "$old/proj" "$old/other/sub"
	cordon_bare -w "$old/proj" -- ln -s "$old/other" link
	entry=$(find "$list" -type l -lname "$old/proj")
	line=$(python3 -c 'import os,sys; b=os.path.basename(sys.argv[1]); d,i,t=b.split("-"); print(d, i, t, sys.argv[2].encode().hex())' "$entry" "$old/proj")
	rm -f "$entry"
	# its last line cut short (a write that did not finish): the file is kept, and read
	printf '%s\nfe00 a7810b 6b1331b7.de' "$line" >"$USER_STATE/cordon/workdirs"
	chown "$TEST_USER:" "$USER_STATE/cordon/workdirs"
	cordon_bare -w "$n" -- true
	is "an earlier version's list with a line cut short is kept (read at every run)" \
		"$([ -e "$USER_STATE/cordon/workdirs" ] && echo kept)|$(find "$list" -type l -lname "$old/proj" | wc -l)" "kept|1"
	rm -f "$(find "$list" -type l -lname "$old/proj")"
	second "$old/proj/link/sub"
	is "... and its whole lines still count" "$rc" 125
	echo "$line" >"$USER_STATE/cordon/workdirs" && chown "$TEST_USER:" "$USER_STATE/cordon/workdirs"
	second "$old/proj/link/sub"
	is "a workdir in an earlier version's list is still an earlier workdir" "$rc" 125
	cordon_bare -w "$n" -- true # the next run that records its workdir moves the list
	is "... and that list is moved into the directory" \
		"$([ -e "$USER_STATE/cordon/workdirs" ] && echo file left)|$(find "$list" -type l -lname "$old/proj" | wc -l)" "|1"
	# the first workdir's bucket filled with entries whose directories may still be there (no
	# path known), then new workdirs until one lands in it: nothing still there is dropped (by
	# age it was, and a sandbox could have had its own workdir forgotten that way)
	fb=$(dirname "$(find "$list" -type l -lname "$f" | head -1)")
	python3 - "$fb" <<'PY'
import os, sys
for i in range(300):
    os.symlink("-", "%s/1-%x-2.0" % (sys.argv[1], 0x200000 + i))
PY
	chown -R "$TEST_USER:" "$fb"
	landed=
	for i in $(seq 2000); do
		nd=$(mktemp -d "$TEST_TMP/fill.XXXXXX") && mine "$nd"
		cordon_bare -w "$nd" -- true
		[ -n "$(find "$fb" -type l -lname "$nd")" ] && landed=$i && break
		rm -rf "$nd"
	done
	[ -n "$landed" ] && pass "a new workdir landed in that bucket (after $landed)" ||
		fail "a new workdir landed in that bucket"
	second "$f/link/sub"
	is "... and the first workdir is still remembered: its symlink is refused" "$rc" 125
else
	skip "a list of earlier workdirs inside the workdir is refused" "root's list is /var/lib/cordon"
	skip "a full bucket drops the directories that are gone" "root's list is the machine's"
	skip "... and the other buckets keep theirs" "root's list is the machine's"
	skip "... and keeps those still there" "root's list is the machine's"
	skip "an earlier version's list with a line cut short is kept" "root's list is the machine's"
	skip "... and its whole lines still count" "root's list is the machine's"
	skip "a workdir in an earlier version's list is still an earlier workdir" "root's list is the machine's"
	skip "... and that list is moved into the directory" "root's list is the machine's"
	skip "a new workdir landed in that bucket" "root's list is the machine's"
	skip "... and the first workdir is still remembered" "root's list is the machine's"
fi

# --- cordon's own programs: every sandbox runs cordon-init (and a session's cordon-agent); a
# sandbox that could write them would be the next one's pid 1, before any filter
bindir=$(dirname "$CORDON")
# helpers DIR: a copy of cordon and cordon-init in DIR, owned as installed ones are
helpers() {
	mine "$1" && cp "$CORDON" "$bindir/cordon-init" "$1/" && chmod 755 "$1/cordon" "$1/cordon-init"
	if [ -n "$host_root" ] && is_user_mode; then chown "$TEST_USER:" "$1/cordon" "$1/cordon-init"; fi
}
p=$TEST_TMP/project
helpers "$p/build"
(cd "$p" && as_caller "$p/build/cordon" -- sh -c "echo ran; : >$ran") >"$TEST_TMP/out" 2>"$TEST_TMP/stderr"
rc=$? out=$(cat "$TEST_TMP/out") err=$(cat "$TEST_TMP/stderr")
is "a workdir holding cordon-init (a build tree's) is refused, and nothing runs" \
	"$rc|$err|$out|$([ -e "$p/$ran" ] && echo ran)" \
	"125|cordon: --workdir: $p: holds cordon-init ($p/build), which every sandbox runs: a sandbox there could replace it (use an installed cordon, or a build outside the workdir)||"
e=$TEST_TMP/elsewhere
mine "$e"
(cd "$e" && as_caller "$p/build/cordon" -q -- true)
is "... and a refused run leaves no mark: its programs still run elsewhere" "$?" 0
# a directory that was a workdir once (its sandbox could have written there) holds them later
w2=$TEST_TMP/was-a-workdir
mine "$w2"
second "$w2"
helpers "$w2/sub"
(cd "$e" && as_caller "$w2/sub/cordon" -- true) 2>"$TEST_TMP/stderr"
rc=$? err=$(cat "$TEST_TMP/stderr")
is "cordon-init below an earlier sandbox's workdir is not run" "$rc|$err" \
	"125|cordon: libexec: cordon-init lies in a directory an earlier sandbox had as its workdir ($w2/sub): the program may be that sandbox's, and is not run"

done_testing
