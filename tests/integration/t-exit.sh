#!/usr/bin/env bash
# Exit status: the command's own; 128+N for signal N; 126 not executable; 127 not found; 125 when
# setup fails inside, with the step named.
. "$TAP_LIB"

w=$(mkwork)
c() { cordon --workdir "$w" "$@"; }

c -- /bin/true
is "true exits 0" "$rc:$err" "0:"
c -- /bin/false
is "false exits 1" "$rc" 1
for n in 2 42 124 125 126 127 255; do
	c -- "$PROBE" exit $n
	is "exit $n passes through" "$rc" $n
done
c -- "$PROBE" signal 9
is "SIGKILL -> 137" "$rc" 137
c -- "$PROBE" signal 15
is "SIGTERM -> 143" "$rc" 143
c -- "$PROBE" signal 11
is "SIGSEGV -> 139 (no core file: cores are off)" "$rc:$(ls "$w")" "139:"
c -- sh -c 'kill -ABRT $$'
is "a shell killed by SIGABRT -> 134" "$rc" 134

c -- no-such-command-xyz
is "command not found -> 127" "$rc" 127
is "... with one line saying so" "$err" "cordon: exec: no-such-command-xyz: No such file or directory"
c -- /no/such/path
is "missing path -> 127" "$rc:$err" "127:cordon: exec: /no/such/path: No such file or directory"
printf '#!/bin/sh\necho hi\n' >"$w/script"
chmod 644 "$w/script"
c -- "$w/script"
is "not executable -> 126" "$rc:$err" "126:cordon: exec: $w/script: Permission denied"
c -- "$w"
is "a directory -> 126" "$rc:$err" "126:cordon: exec: $w: Permission denied"
printf '\x7fELFjunk' >"$w/badelf"
chmod 755 "$w/badelf"
c -- "$w/badelf"
is "not a valid executable -> 126" "$rc:$err" "126:cordon: exec: $w/badelf: Exec format error"
chmod 755 "$w/script"
c -- "$w/script"
is "a script with a shebang runs" "$rc:$out" "0:hi"
mkdir -p "$w/bin" && cp "$w/script" "$w/bin/myscript"
c --env PATH="$w/bin:/usr/bin:/bin" -- myscript
is "PATH lookup uses the sandbox's PATH" "$rc:$out" "0:hi"
chmod 644 "$w/bin/myscript"
c --env PATH="$w/bin" -- myscript
is "found on PATH but not executable -> 126" "$rc:$err" "126:cordon: exec: myscript: Permission denied"

c --chdir /nonexistent -- /bin/true
is "a missing --chdir fails inside with its step, 125" "$rc:$err" "125:cordon: --chdir: /nonexistent: No such file or directory"
c --ro-bind /etc/hostname:"$w/missing/file" -- /bin/true
is "no mount point is created in the workdir" "$rc:$err" "125:cordon: mount: mount point $w/missing does not exist in the workdir (cordon does not create files in the workdir)"
[ -e "$w/missing" ] && fail "... and nothing was created" || pass "... and nothing was created"
c --ro-bind /etc/hostname:"$w/m1/m2/file" -- /bin/true
is "no mount point is created in the workdir, two levels down" "$rc:$err" "125:cordon: mount: mount point $w/m1/m2 does not exist in the workdir (cordon does not create files in the workdir)"
[ -e "$w/m1" ] && fail "... and nothing was created there" || pass "... and nothing was created there"
# ... nor through a symlink elsewhere in the new root that leads into the workdir
src=$TEST_TMP/src-into-w
mkdir -p "$src" && chmod 755 "$src" && ln -sfn "$w" "$src/l"
c --ro-bind "$src:/opt/cordon-src" --tmpfs /opt/cordon-src/l/cordon-newdir -- /bin/true
is "no mount point is made in the workdir through a symlink in a --ro-bind source" "$rc:$err" \
	"125:cordon: mount: mount point /opt/cordon-src/l/cordon-newdir does not exist in the workdir (cordon does not create files in the workdir)"
[ -e "$w/cordon-newdir" ] && fail "... and nothing was created there" || pass "... and nothing was created there"
c --ro-bind /etc/hostname:/opt/cordon-a/b/c/file -- cat /opt/cordon-a/b/c/file
is "a mount point outside the workdir: its missing parents made, in the new root" "$rc:$out" "0:$(cat /etc/hostname)"

trap '' PIPE HUP USR2
c -- grep -E '^Sig(Blk|Ign)' /proc/self/status
trap - PIPE HUP USR2
is "signals the caller ignores: back at their defaults in the command, none blocked" "$rc:$out" \
	"0:$(printf 'SigBlk:\t%016x\nSigIgn:\t%016x' 0 0)"
c -- sh -c 'exit 3' extra args
is "arguments reach the command" "$rc" 3
c -- sh -c 'printf "%s|" "$@"' sh 'a b' '' 'c"d' "$(printf 'e\nf')"
is "arguments arrive intact (spaces, empty, quotes, newline)" "$out" "$(printf 'a b||c"d|e\nf|')"

done_testing
