#!/usr/bin/env bash
# Who the sandbox runs as. Unprivileged: as the caller, inside uid = outside uid. Root: never host
# uid 0, nor anyone else's: a host id of its own from CORDON_ROOT_HOST_ID's range, the workdir
# id-mapped onto it, seen inside as the workdir's owner, or as the ordinary uid 65532 "cordon"
# (never 0 unless asked) when root owns it, so that tools behave as for a normal user.
. "$TAP_LIB"

w=$(mkwork)
me=$(caller_uid)
c() { cordon --workdir "$w" "$@"; }

# host uid of a process of the sandbox, seen from outside
host_uid_of_sandbox() {
	local marker="cordon-id-$$-$RANDOM"
	(exec_as_caller "$CORDON" --ro-bind "$PROBE_DIR" --workdir "$w" "$@" -- "$PROBE" sleep 10 "$marker") &
	local pid=$! i
	for i in $(seq 200); do
		uid=$(ps -eo uid=,args= | awk -v p="$PROBE" -v m="$marker" '$2 == p && $5 == m {print $1; exit}')
		[ -n "$uid" ] && break
		sleep 0.05
	done
	kill $pid 2>/dev/null
	wait $pid 2>/dev/null
	echo "$uid"
}

c -- "$PROBE" whoami
if is_user_mode; then
	is "unprivileged: inside uid = outside uid, no extra groups" "$out" \
		"uid=$me euid=$me suid=$me gid=$(id -g "$(id -un "$me")") egid=$(id -g "$(id -un "$me")") sgid=$(id -g "$(id -un "$me")") groups="
	is "unprivileged: the process holds the caller's uid on the host" "$(host_uid_of_sandbox)" "$me"
	c -- sh -c 'echo hi > f'
	is "files written in the workdir belong to the caller" "$(stat -c %u:%g "$w/f")" "$me:$(id -g "$(id -un "$me")")"
	c -- sh -c 'stat -c %u "$PWD"'
	is "the workdir shows the caller as its owner inside" "$out" "$me"
	c --uid 1234 --gid 4321 -- "$PROBE" whoami
	like_glob "--uid/--gid change the ids inside" "$out" "uid=1234 euid=1234 suid=1234 gid=4321 *"
	is "... while the host uid stays the caller's" "$(host_uid_of_sandbox --uid 1234)" "$me"
else
	is "root, root-owned workdir: an ordinary uid inside (65532), no supplementary groups" "$out" "uid=65532 euid=65532 suid=65532 gid=65532 egid=65532 sgid=65532 groups="
	between "root: the process is NOT host uid 0 but an id of the range" "$(host_uid_of_sandbox)" \
		2000000000 2000065535
	c -- sh -c 'echo hi > f; mkdir d'
	is "root: files the sandbox writes belong to root on the host (id-mapped workdir)" \
		"$(stat -c %u:%g "$w/f" "$w/d" | tr '\n' ' ')" "0:0 0:0 "
	c -- sh -c 'stat -c %u:%g "$PWD"'
	is "root: the workdir is the sandbox user's own inside" "$out" "65532:65532"
	c -- sh -c 'id; whoami; echo "$HOME $USER"; python3 -c "import pwd, os; print(pwd.getpwuid(os.getuid()).pw_name)"'
	is "root: the inside uid has an account, its HOME the caller's (root's): id, whoami, HOME, USER, python's pwd" "$(echo $out)" \
		"uid=65532(cordon) gid=65532(cordon) groups=65532(cordon) cordon $(getent passwd 0 | cut -d: -f6) cordon cordon"
	c -- node -e 'console.log(require("os").userInfo().username)'
	is "... node's os.userInfo() too" "$out" cordon
	c -- sh -c 'git init -q r && cd r && git config user.email a@b && git config user.name a && echo x > f && git add f && git commit -qm m && git status --porcelain && echo clean'
	is "root: git sees the workdir as its own (no dubious ownership)" "$rc:$out" "0:clean"
	# real tools that misbehave under a capability-less uid 0: tar and python's tarfile chown
	tdir=$(mktemp -d "$TEST_TMP/tarsrc.XXXXXX") && echo data >"$tdir/member" && chown 1234:1234 "$tdir/member"
	tar -C "$tdir" -cf "$TEST_TMP/owned.tar" member && chmod 644 "$TEST_TMP/owned.tar"
	c --ro-bind "$TEST_TMP/owned.tar:/owned.tar" -- sh -c 'mkdir t1 t2; tar -C t1 -xf /owned.tar && echo tar-ok
		python3 -c "import tarfile; tarfile.open(\"/owned.tar\").extractall(\"t2\"); print(\"tarfile-ok\")"'
	is "root: tar -x and python's tarfile extract an archive of another owner's files" "$rc:$(echo $out)" "0:tar-ok tarfile-ok"
	c -- "$PROBE" status
	like "root: the inside uid holds no capability" "$out" "CapEff:	0000000000000000"
	echo top >/root/.cordon-test-secret && chmod 600 /root/.cordon-test-secret
	is "(root's file to read: 0600, root's)" "$(stat -c '%a %u' /root/.cordon-test-secret)" "600 0"
	c --ro-bind /root/.cordon-test-secret:/secret -- cat /secret
	is "root: a root-only file bound in explicitly stays unreadable" "$rc:$out:$err" \
		"1::cat: /secret: Permission denied"
	rm -f /root/.cordon-test-secret
	# a toolchain of root's, below /root (which the sandbox's host uid cannot enter): bound
	tool=/root/.cordon-test-tool.$$
	mkdir -p "$tool/bin" && printf '#!/bin/sh\necho tool-ran\n' >"$tool/bin/t" && chmod 755 "$tool" "$tool/bin" "$tool/bin/t"
	c --ro-bind "$tool:/opt/tool" -- /opt/tool/bin/t
	is "root: --ro-bind of a source below /root (a toolchain of root's) works" "$rc:$out" "0:tool-ran"
	rm -rf "$tool"
	chmod 640 /etc/shadow 2>/dev/null
	c -- "$PROBE" read /etc/shadow
	is "root: /etc/shadow (0640 root:shadow) is unreadable" "$out" EACCES
	c -- sh -c 'cat /proc/self/uid_map'
	like_glob "root: the uid map points at an unprivileged host id" "$out" "*65532*200[0-9][0-9][0-9][0-9][0-9][0-9][0-9]*1"
	c --uid 0 --gid 0 -- sh -c '"$0" whoami; "$0" status; echo x > z; stat -c %u:%g z; "$0" setuid0' "$PROBE"
	like_glob "root with --uid 0: uid 0 inside on request, without any capability" "$(echo $out)" \
		"uid=0 euid=0 suid=0 gid=0 egid=0 sgid=0 groups= *CapEff: 0000000000000000* 0:0 ok"
	is "... files still land root-owned on the host" "$(stat -c %u:%g "$w/z")" "0:0"
	between "... and the process is still not host uid 0" "$(host_uid_of_sandbox --uid 0)" \
		2000000000 2000065535

	c --uid 1000 --gid 1000 -- sh -c '"$0" whoami; echo x > g; stat -c %u:%g g' "$PROBE"
	like_glob "root with --uid: the chosen ids inside" "$out" "uid=1000 euid=1000 suid=1000 gid=1000 *1000:1000"
	is "root with --uid: files still land root-owned on the host" "$(stat -c %u:%g "$w/g")" "0:0"
	between "root with --uid: still not host uid 0" "$(host_uid_of_sandbox --uid 1000)" \
		2000000000 2000065535

	u=$(mktemp -d "$TEST_TMP/owned.XXXXXX")
	chown "$TEST_USER:" "$u"
	chmod 755 "$u"
	cordon --workdir "$u" -- sh -c '"$0" whoami; echo x > f' "$PROBE"
	tu=$(id -u "$TEST_USER") tg=$(id -g "$TEST_USER")
	is "root, workdir owned by a user: runs as that user inside" "$out" "uid=$tu euid=$tu suid=$tu gid=$tg egid=$tg sgid=$tg groups="
	is "... and what it writes belongs to that user" "$(stat -c %u:%g "$u/f")" "$tu:$tg"
	between "... while on the host it is an id of the range, not the user" \
		"$(host_uid_of_sandbox --workdir "$u")" 2000000000 2000065535
	chown "$TEST_USER:root" "$u"
	cordon --workdir "$u" -- "$PROBE" whoami
	unlike "... never with group 0, even if the workdir's group is root" "$out" "gid=0 "
fi

c -- "$PROBE" setuid0
is "setuid(0) fails: uid 0 does not exist in here" "$out" EINVAL
c -- sh -c 'id -un; echo $USER $LOGNAME'
if is_user_mode; then me=$TEST_USER; else me=cordon; fi
is "USER and LOGNAME name the inside user" "$(echo $out)" "$me $me $me"

# account and hosts files near cordon's 1 MiB bound each still get their lines (root: a private
# mount namespace binds large ones over the host's)
if [ "$(id -u)" = 0 ] && ! is_user_mode; then
	big=$(mkwork)
	python3 -c "import sys; sys.stdout.write(open('/etc/passwd').read() + ''.join('u%d:x:%d:%d::/nonexistent:/bin/false\\n' % (i, 300000 + i, 300000 + i) for i in range(13000)))" >"$big/passwd"
	python3 -c "import sys; sys.stdout.write(open('/etc/group').read() + ''.join('g%d:x:%d:\\n' % (i, 300000 + i) for i in range(30000)))" >"$big/group"
	python3 -c "import sys; sys.stdout.write(open('/etc/hosts').read() + ''.join('10.%d.%d.1 h%d\\n' % (i // 250, i % 250, i) for i in range(40000)))" >"$big/hosts"
	w=$(mkwork)
	out=$(unshare -m sh -c 'for f in passwd group hosts; do mount --bind "$1/$f" "/etc/$f"; done; cd "$2" && "$3" -q -- sh -c "id -un; hostname -i"' sh "$big" "$w" "$CORDON" 2>&1)
	is "host account and hosts files of ~600-900 KiB: the sandbox user and the hostname still resolve" "$out" "$(printf 'cordon\n127.0.1.1')"
else
	skip "large account and hosts files" "needs root for a private mount namespace"
fi

# an account whose home is no clean absolute path (empty, relative, with ..): the sandbox gets
# /home/NAME, and the run goes on (root: the workdir's owner's account, in a private mount
# namespace's /etc/passwd)
if [ "$(id -u)" = 0 ] && ! is_user_mode; then
	acc=$(mkwork)
	{ cat /etc/passwd
	  echo 'cdempty:x:4242:4242:gecos::/bin/sh'
	  echo 'cdrel:x:4243:4243::relative/home:/bin/sh'
	  echo 'cddots:x:4244:4244::/home/../etc:/bin/sh'; } >"$acc/passwd"
	for u in 4242:cdempty 4243:cdrel 4244:cddots; do
		w=$(mkwork)
		chown "${u%%:*}:${u%%:*}" "$w"
		out=$(unshare -m sh -c 'mount --bind "$1/passwd" /etc/passwd; cd "$2" && "$3" -q -- sh -c "id -un; echo \$HOME"' sh "$acc" "$w" "$CORDON" 2>&1)
		is "an account whose home is no clean path (${u#*:}): HOME is /home/NAME" "$out" \
			"$(printf '%s\n/home/%s' "${u#*:}" "${u#*:}")"
	done
else
	skip "accounts whose home is no clean path" "needs root for a private mount namespace"
fi

# uid 0 of a user namespace of its own (rootless podman runs its OCI runtime so): unprivileged
# when that namespace maps 0 to a user, whose files then land as that user (and cordon's helpers,
# root's files, show as the overflow uid there, as cordon itself does); when it maps 0 to the
# host's root (unshare -r by root), root's careful path: never a sandbox of host uid 0
w=$(mkwork)
out=$(cd "$w" && as_caller unshare -Ur "$CORDON" -q -- sh -c 'echo hi > f; id -u' 2>&1)
if is_user_mode; then
	is "uid 0 of a user namespace that maps it to the caller: runs, as uid 0 inside" "$out" "0"
	is "... and what it writes lands on the host as the caller's" "$(stat -c %u "$w/f" 2>&1)" "$(caller_uid)"
else
	like "uid 0 of a user namespace that maps it to host root: refused, never run as host root" \
		"$out" "no unprivileged host id"
	is "... and nothing was written" "$(ls -A "$w")" ""
fi

# uid 0 that maps to a non-zero id of its parent namespace, which itself maps that id to the
# host's root (root's `unshare --map-user=4242` and, inside it, `unshare -r`): the host's root
# still, whatever the nearest map says; refused as root is, never a sandbox of host uid 0
if [ "$(id -u)" = 0 ] && ! is_user_mode; then
	w=$(mkwork)
	out=$(cd "$w" && unshare --map-user=4242 --map-group=4242 -- \
		unshare -r "$CORDON" -q -- sh -c 'echo hi > f; id -u' 2>&1)
	like "uid 0 whose parent id is host root through a second map: refused as host root" \
		"$out" "no unprivileged host id"
	is "... and nothing was written as host root" "$(ls -A "$w")" ""
else
	skip "uid 0 mapped to host root through two maps" "needs root"
fi
# the other way: a user's namespace, and inside it one mapping 0 to 0, is that user still
if is_user_mode; then
	w=$(mkwork)
	out=$(cd "$w" && as_caller unshare -r unshare --map-user=0 --map-group=0 \
		"$CORDON" -q -- sh -c 'echo hi > f; id -u' 2>&1)
	is "uid 0 mapped to 0 of a user's namespace: the user, runs as uid 0 inside" "$out" "0"
	is "... and what it writes lands on the host as the caller's" \
		"$(stat -c %u "$w/f" 2>&1)" "$(caller_uid)"
else
	skip "uid 0 mapped to 0 of a user's namespace" "the unprivileged run's case"
fi

# ... and there, where every file not of the caller shows as the overflow uid, as cordon does: a
# helper another user planted beside cordon (a directory others may write, as /tmp) is not run
if is_user_mode && [ "$(id -u)" = 0 ]; then
	d=$(mktemp -d "$TEST_TMP/shared.XXXXXX")
	chmod 1777 "$d"
	cp "$CORDON" "$d/cordon"
	cp "$(dirname "$CORDON")/cordon-init" "$d/cordon-init"
	chown 4343:4343 "$d/cordon-init"
	w=$(mkwork)
	out=$(cd "$w" && as_caller unshare -Ur "$d/cordon" -q -- sh -c 'echo ran' 2>&1)
	like "uid 0 of the caller's namespace: a cordon-init of another uid beside cordon is not run" \
		"$out" "libexec"
else
	skip "a helper of another uid in a user namespace of the caller's" "needs root to plant it"
fi

done_testing
