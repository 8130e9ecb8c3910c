#!/usr/bin/env bash
# No setuid or setgid file comes out of a sandbox, by any route: every system call that sets a
# mode, real tools (chmod, cp -p, install -m, tar -p, python), O_TMPFILE + link, renames and hard
# links from elsewhere, file capabilities; whatever --seccomp-policy says. Each route is shown to
# work on the host first (the control), and the workdir is searched from the host afterwards.
. "$TAP_LIB"

w=$(mkwork)
c() { cordon --workdir "$w" "$@"; }
# what carries S_ISUID or S_ISGID in the workdir, seen from the host
left() { find "$w" -perm /6000 -printf '%P ' | sed 's/ $//'; }

# --- the control: on the host, without cordon, every route sets the bits
ctl=$(mktemp -d "$TEST_TMP/ctl.XXXXXX")
(cd "$ctl" && "$SYSPROBE" setuid) >"$TEST_TMP/ctl.out"
like_glob "(control: on the host every route leaves setuid and setgid files)" \
	"$(tr '\n' ' ' <"$TEST_TMP/ctl.out")" "*chmod-suid ok*mknodat-sgid ok*left: f-*"

# --- every system call route, under each policy
exact="chmod-suid EPERM chmod-sgid EPERM chmod-plain ok fchmod-suid EPERM fchmod-sgid EPERM fchmod-plain ok fchmodat-suid EPERM fchmodat-sgid EPERM fchmodat-plain ok fchmodat2-suid EPERM fchmodat2-sgid EPERM fchmodat2-plain ok creat-suid EPERM creat-sgid EPERM creat-plain ok open-suid EPERM open-sgid EPERM open-plain ok openat-suid EPERM openat-sgid EPERM openat-plain ok openat2-suid ENOSYS openat2-sgid ENOSYS openat2-plain ENOSYS tmpfile-suid EPERM tmpfile-sgid EPERM tmpfile-plain ok mknod-suid EPERM mknod-sgid EPERM mknod-plain ok mknodat-suid EPERM mknodat-sgid EPERM mknodat-plain ok io_uring_setup ENOSYS left:"
for policy in default none "$POLICY_DIR/default.policy"; do
	rm -rf "${w:?}"/f-*
	c --seccomp-policy "$policy" -- "$SYSPROBE" setuid
	out=$(tr '\n' ' ' <<<"$out")
	is "--seccomp-policy $(basename "$policy"): chmod, fchmod, fchmodat, fchmodat2, creat, open, openat, O_TMPFILE+link, mknod, mknodat with S_ISUID or S_ISGID: EPERM; without: ok; openat2, io_uring: ENOSYS" \
		"${out% }" "$exact"
	is "... and the host finds no setuid or setgid file in the workdir" "$(left)" ""
done
# strict.policy denies some of these calls itself (ENOSYS): denied either way
rm -rf "${w:?}"/f-*
c --seccomp-policy strict -- "$SYSPROBE" setuid
unlike_glob "--seccomp-policy strict: no route sets a bit" "$(tr '\n' ' ' <<<"$out")" "*-s[ug]id ok*"
is "... and the host finds no setuid or setgid file in the workdir" "$(left)" ""
rm -rf "${w:?}"/f-*
c --seccomp-log -- "$SYSPROBE" setuid
like_glob "--seccomp-log (learning mode) does not turn the baseline into logging" "$(tr '\n' ' ' <<<"$out")" \
	"chmod-suid EPERM *left: "

# --- real tools
rm -rf "${w:?}"/*
c -- sh -c 'cp /bin/true x; chmod 4755 x; echo "chmod=$?"; chmod u+s,g+s x; echo "symbolic=$?"
	mkdir d; chmod g+s d; echo "dir=$?"; install -m 4755 /bin/true y; echo "install=$?"
	cp -p /usr/bin/passwd z 2>/dev/null; test -f z && echo copied' 2>/dev/null
is "chmod 4755, chmod u+s,g+s, chmod g+s on a directory, install -m 4755 fail and say so" \
	"$(tr '\n' ' ' <<<"$out")" "chmod=1 symbolic=1 dir=1 install=1 copied "
is "... and the copy cp -p made of a setuid file has no bit: the host finds none" "$(left)" ""
c -- python3 -c '
import os, shutil, stat
open("p", "w").close()
for f in (lambda: os.chmod("p", 0o4755), lambda: os.chmod("p", 0o2755),
          lambda: os.open("q", os.O_CREAT | os.O_WRONLY, 0o6755),
          lambda: shutil.copy2("/usr/bin/passwd", "r")):
    try: f(); print("ok", end=" ")
    except PermissionError: print("EPERM", end=" ")'
is "python: os.chmod, os.open, shutil.copy2 of a setuid file: EPERM" "$out" "EPERM EPERM EPERM EPERM "
is "... no setuid or setgid file left" "$(left)" ""

# an archive made on the host with a setuid and a setgid file, extracted with -p inside
src=$(mktemp -d "$TEST_TMP/tar.XXXXXX")
cp /bin/true "$src/suid" && chmod 4755 "$src/suid" && cp /bin/true "$src/sgid" && chmod 2755 "$src/sgid"
tar -C "$src" -cf "$TEST_TMP/suid.tar" suid sgid && chmod 644 "$TEST_TMP/suid.tar"
c --ro-bind "$TEST_TMP/suid.tar:/suid.tar" -- tar -xpf /suid.tar
like_glob "tar -xp of setuid and setgid members: tar says it could not set the mode" "$rc:$err" \
	"2:*suid: Cannot change mode to rwsr-xr-x: Operation not permitted*"
[ -f "$w/suid" ] && [ -f "$w/sgid" ] && pass "... both files are there" || fail "... both files are there"
is "... without the bits" "$(left)" ""

# renames and hard links of setuid files from elsewhere: the read-only root holds setuid files
# (/usr/bin/passwd), the tmpfs mounts could hold one; both are other mounts: EXDEV
c -- sh -c 'ln /usr/bin/passwd ./passwd-link 2>&1; mv /usr/bin/passwd ./passwd-moved 2>&1' 
like_glob "a hard link or a rename of the root's setuid file into the workdir fails" "$out" \
	"*passwd-link*Invalid cross-device link*"
is "... and nothing setuid is left" "$(left)" ""

# file capabilities need CAP_SETFCAP, which the command does not have
c -- python3 -c '
import os
open("cap", "w").close()
v = bytes.fromhex("0100000200200000000000000000000000000000")  # cap_net_raw, vfs v2
try: os.setxattr("cap", "security.capability", v); print("set")
except OSError as e: print(e.errno)'
is "a file capability (security.capability) cannot be set: EPERM" "$out" 1
is "... and the file has none on the host" "$(getfattr -n security.capability --only-values "$w/cap" 2>/dev/null | od -An -tx1 | tr -d ' ')" ""

# --- no nested user namespace, whatever the policy: its root would hold CAP_SETFCAP over
# the files of ids mapped into it, root's through the id-mapped workdir (a host file capability)
for mode in "" "--seccomp-policy none" "--seccomp-log"; do
	c $mode -- sh -c 'cat /proc/sys/user/max_user_namespaces; unshare -Ur true 2>/dev/null && echo nested || echo refused'
	is "no nested user namespace (${mode:-default policy}): the sandbox's limit is 0, unshare -Ur fails" \
		"$(echo $out)" "0 refused"
done
out=$(unshare -Ur true 2>/dev/null && echo nested)
is "(control: on the host, unshare -Ur works)" "$out" nested

# --- the id-mapped mode: root runs it in a root-owned workdir, and what it writes is root's
if [ "$(id -u)" = 0 ] && ! is_user_mode; then
	rw=$(mktemp -d "$TEST_TMP/rootwork.XXXXXX")
	chown root:root "$rw" && chmod 755 "$rw"
	cordon --workdir "$rw" -- sh -c 'cp /bin/bash x; chmod 4755 x; chmod 2755 x; touch y; echo done'
	is "root-owned workdir: the chmod 4755 of a copy of bash is refused" "$out" done
	is "... no setuid-root bash on the host" "$(find "$rw" -perm /6000)" ""
	is "... while what it wrote is root's on the host (the id-mapped mount works)" \
		"$(stat -c '%U %G' "$rw/x" "$rw/y" | sort -u)" "root root"
fi

done_testing
