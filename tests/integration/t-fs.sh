#!/usr/bin/env bash
# The filesystem: read-only root, one writable workdir, fresh /proc /dev /tmp, /sys read-only,
# hidden places empty, and the options that change the layout.
. "$TAP_LIB"

w=$(mkwork)
c() { cordon --workdir "$w" "$@"; }

c -- "$PROBE" write /usr/cordon-test
is "the root is read-only (/usr)" "$out" EROFS
c -- "$PROBE" write /etc/cordon-test
is "the root is read-only (/etc)" "$out" EROFS
c -- "$PROBE" write /cordon-test
is "the root is read-only (/)" "$out" EROFS
c -- "$PROBE" mkdir /newdir
is "no new top-level directory" "$out" EROFS
c -- "$PROBE" write "$w/f"
is "the workdir is writable" "$out:$(cat "$w/f")" "ok:probe"
c -- sh -c 'pwd'
is "the command starts in the workdir" "$out" "$w"
c -- sh -c 'echo $HOME'
home_in=$out
c -- cat /proc/self/mountinfo
rw_mounts=$(awk '{print $5, $6}' <<<"$out" | grep -vE ' ro(,|$)' | awk '{print $1}' | sort | tr '\n' ' ')
is "writable mounts: the workdir, HOME, /proc (its knobs are read-only) and the scratch only" \
	"$rw_mounts" "$(printf '%s\n' /dev/pts /dev/shm "$home_in" /proc /tmp /var/tmp "$w" | sort | tr '\n' ' ')"
c -- sh -c 'grep -vE "nosuid" /proc/self/mountinfo | cut -d" " -f5'
is "every mount is nosuid" "$out" ""
c -- sh -c 'cut -d" " -f5,6 /proc/self/mountinfo | grep -v nodev | cut -d" " -f1 | grep -vE "^/dev/(null|zero|full|random|urandom|tty|pts)$"'
is "every mount but the device nodes and devpts is nodev" "$out" ""
# mountinfo: "... - TYPE SOURCE OPTIONS"; a fresh file system's source is its type, as mount(8)
# names it (the OCI runtime-spec's runtimetest compares it with config.json's mounts[].source)
c -- sh -c 'sed -n "s/.* - \([a-z0-9]*\) \([^ ]*\) .*/\1 \2/p" /proc/self/mountinfo | grep -E "^(proc|sysfs|tmpfs|devpts) " | sort -u'
is "fresh proc, sysfs, tmpfs and devpts mounts have their type as source" "$out" \
	"$(printf '%s\n' 'devpts devpts' 'proc proc' 'sysfs sysfs' 'tmpfs tmpfs')"

for d in /home /root /run /var /mnt /media /srv /boot; do
	c -- sh -c "ls -A $d"
	if [ "$d" = /var ]; then
		is "$d holds only a fresh tmp" "$rc:$out" "0:tmp"
	elif [ "$d" = "$home_in" ]; then
		is "$d is HOME: empty but for cordon's .gitconfig" "$rc:$out" "0:.gitconfig"
		continue
	elif [ "${home_in#$d/}" != "$home_in" ]; then
		is "$d is empty but for the way to HOME" "$rc:$out" "0:${home_in#$d/}"
	else
		is "$d is empty" "$rc:$out" "0:"
	fi
	c -- "$PROBE" write "$d/x"
	like_glob "$d is read-only" "$out" "E*"
done
# the visible system is an allow-list: the system trees, cordon's own, the hidden placeholders
host_top=/cordon-test-top.$$
mkdir -p "$host_top" 2>/dev/null && trap 'rmdir "$host_top" 2>/dev/null' EXIT
c -- sh -c 'ls -A / | tr "\n" " "'
extra=
for d in $out; do
	case " bin etc lib lib32 lib64 libx32 sbin usr dev proc sys tmp boot home lost+found media mnt root run snap srv var $(cut -d/ -f2 <<<"$w") " in
	*" $d "*) ;;
	*) extra+="$d " ;;
	esac
done
is "only the system trees, cordon's own and the hidden placeholders are at the top" "$rc:$extra" "0:"
if [ -d "$host_top" ]; then
	unlike "a top-level directory of the host that is not a system tree is not there" "$out" "${host_top#/}"
	[ -d /opt ] && unlike "... /opt neither" "$out" " opt "
fi
c -- sh -c 'ls -A $HOME; touch $HOME/x && echo writable; stat -c %a $HOME; df -k $HOME | tail -1 | awk "{print \$2}"'
is "HOME is a writable private tmpfs of 1G, empty but for cordon's .gitconfig" "$out" "$(printf '.gitconfig\nwritable\n700\n1048576')"
c --home-size 300M -- sh -c 'df -k $HOME | tail -1 | awk "{print \$2}"'
is "--home-size sets its size" "$out" 307200
c -- sh -c 'cat $HOME/.gitconfig; echo "[user]" >> $HOME/.gitconfig && echo changed'
like_glob "... .gitconfig trusts every repository inside (git's safe.directory), and is the sandbox's to change" "$out" "*safe*directory = \**changed"
c -- "$PROBE" read /var/log/dpkg.log
is "/var/log is hidden" "$out" ENOENT

# workdir under a hidden directory stays reachable at its path
hw=$(mktemp -d /home/cordon-wd.XXXXXX)
chmod 755 "$hw"
is_user_mode && [ "$(id -u)" = 0 ] && chown "$TEST_USER:" "$hw"
echo hello >"$hw/in"
cordon --workdir "$hw" -- sh -c 'cat in; ls -A /home | grep -vxF "$(basename "$HOME")"; pwd'
is "a workdir under /home is reachable; the rest of /home is not" "$rc:$out" \
	"0:$(printf 'hello\n%s\n%s' "$(basename "$hw")" "$hw")"
rm -rf "$hw"

# /tmp, /var/tmp, /dev/shm: fresh, private, capped
# (the one name in /tmp is the path down to the workdir, the scratch tree's top, when under /tmp)
top=$(case "$w" in /tmp/*) w_rest=${w#/tmp/}; echo "${w_rest%%/*}" ;; esac)
c -- sh -c 'ls -A /tmp | grep -vxF "$1"; ls -A /var/tmp; ls -A /dev/shm; echo x > /tmp/x && echo ok' sh "${top:-/}"
is "/tmp, /var/tmp and /dev/shm are fresh" "$out" ok
c --tmp-size 1M -- sh -c 'head -c 2M /dev/zero > /tmp/big; echo $?; stat -c %s /tmp/big'
like_glob "--tmp-size caps /tmp" "$out" "1*1048576"
c -- sh -c 'df -k /tmp | tail -1' ; size=$(awk '{print $2}' <<<"$out")
is "/tmp is 256M by default" "$size" 262144

# /dev
c -- sh -c 'ls /dev | tr "\n" " "'
is "/dev holds only the safe nodes" "$out" "fd full null ptmx pts random shm stderr stdin stdout tty urandom zero "
c -- sh -c 'echo x > /dev/null && head -c 4 /dev/zero | od -An -tx1 && head -c 8 /dev/urandom | wc -c'
is "/dev/null, zero, urandom work" "$out" "$(printf ' 00 00 00 00\n8')"
c -- "$PROBE" mknod "$w/sda"
is "no device nodes can be made" "$out" EPERM
c -- "$PROBE" write /dev/newfile
is "/dev is read-only" "$out" EROFS
c -- python3 -c 'import os,pty; m,s=pty.openpty(); print(os.ttyname(s))'
is "a new devpts: ptys work" "$rc:$out" "0:/dev/pts/0"

# /proc
c -- sh -c 'ls /proc | grep -E "^[0-9]+$" | tr "\n" " "'
like_glob "/proc shows only the sandbox's processes: pid 1 ..." "$out" "1 [0-9]* "
between "... and the few of this pipeline, not the host's" "$(wc -w <<<"$out")" 2 6
# (proc files all say size 0: what counts is what a read returns)
c -- sh -c 'for f in kallsyms keys sched_debug timer_list vmallocinfo; do [ -e /proc/$f ] && printf "%s:%s " $f $(cat /proc/$f 2>/dev/null | wc -c); done'
unlike_glob "kernel symbols and knobs in /proc (kallsyms, keys, sched_debug, timer_list, vmallocinfo) read empty" "$out" "*:[1-9]*"
like "... kallsyms among them" "$out" "kallsyms:0"
between "(control: the host's /proc/kallsyms is not empty for the caller)" "$(as_caller cat /proc/kallsyms | head -c 1000 | wc -c)" 1 1000
c -- "$PROBE" write /proc/sys/kernel/hostname
like_glob "/proc/sys is read-only" "$out" "E*"
c -- "$PROBE" write /proc/sysrq-trigger
like_glob "/proc/sysrq-trigger is read-only" "$out" "E*"
c -- sh -c 'ls -A /proc/acpi 2>/dev/null | wc -l'
is "/proc/acpi is masked" "$out" 0

# /sys
c -- "$PROBE" write /sys/kernel/uevent_helper
like_glob "/sys is read-only" "$out" "E*"
c -- ls /sys/class/net
is "/sys shows the sandbox's network devices only" "$out" lo
c -- sh -c 'ls -A /sys/firmware | wc -l'
is "/sys/firmware is masked" "$out" 0

# --ro-bind, --tmpfs, --hide, --workdir-target, --chdir
mkdir -p "$TEST_TMP/data/sub"
echo secret-data >"$TEST_TMP/data/sub/file"
chmod -R a+rX "$TEST_TMP/data"
c --ro-bind "$TEST_TMP/data:/data" -- sh -c 'cat /data/sub/file; echo x > /data/new'
like_glob "--ro-bind SRC:DST: readable" "$out" "secret-data*"
like "--ro-bind: read-only" "$err" "Read-only file system"
c --ro-bind "$TEST_TMP/data" -- cat "$TEST_TMP/data/sub/file"
is "--ro-bind SRC: at the same path" "$out" secret-data
c --tmpfs /scratch:2M -- sh -c 'echo x > /scratch/a && cat /scratch/a && df -k /scratch | tail -1 | awk "{print \$2}"'
is "--tmpfs PATH:SIZE: writable, capped" "$out" "$(printf 'x\n2048')"
c --tmpfs /scratch -- sh -c 'df -k /scratch | tail -1 | awk "{print \$2}"'
is "--tmpfs default size 64M" "$out" 65536
c --tmpfs /usr/cordon-scratch -- true
is "a mount point in the read-only root cannot be made: clear error, 125" "$rc:$err" \
	"125:cordon: mount: create mount point /usr/cordon-scratch: Read-only file system"
# pid 1 fails while the launcher sends it START: its error, not the broken pipe (it was
# "seccomp: hand the filter to the sandbox: Broken pipe" in 2-3% of runs)
n=0 others=
for i in $(seq 60); do
	c --tmpfs /usr/cordon-scratch -- true
	if [ "$err" = "cordon: mount: create mount point /usr/cordon-scratch: Read-only file system" ]; then
		n=$((n + 1))
	else
		others+="[$rc: $err] "
	fi
done
err=$others is "... the same error in each of 60 runs" "$n" 60
c --hide /etc/passwd -- sh -c 'wc -c < /etc/passwd; echo x > /etc/passwd'
like_glob "--hide FILE: empty" "$out" "0*"
like "--hide FILE: read-only" "$err" "Read-only file system"
mkdir -p "$w/.secrets" && echo token >"$w/.secrets/key" && echo ok >"$w/visible"
is_user_mode && [ "$(id -u)" = 0 ] && chown -R "$TEST_USER:" "$w"
c --hide "$w/.secrets" -- sh -c 'ls -A .secrets | wc -l; cat visible; touch .secrets/x'
is "--hide a directory inside the workdir: empty" "$out" "$(printf '0\nok')"
like "... and read-only" "$err" "Read-only file system"
is "... and the host's copy is untouched" "$(cat "$w/.secrets/key")" token
c --hide /nonexistent/thing -- true
is "--hide of a missing path is fine: nothing to hide" "$rc" 0
c --workdir-target /work -- sh -c 'pwd; cat visible; ls -d '"$w"' 2>&1 | grep -c "No such"'
is "--workdir-target /work" "$out" "$(printf '/work\nok\n1')"
mkdir -p "$w/sub"
is_user_mode && [ "$(id -u)" = 0 ] && chown -R "$TEST_USER:" "$w"
c --chdir "$w/sub" -- pwd
is "--chdir" "$out" "$w/sub"

# --rootfs: a minimal root of our own
r="$TEST_TMP/rootfs"
mkdir -p "$r/bin" "$r/etc"
cp "$(command -v busybox 2>/dev/null || echo /bin/busybox)" "$r/bin/busybox" 2>/dev/null
if [ -x "$r/bin/busybox" ] && file "$r/bin/busybox" 2>/dev/null | grep -q static || ldd "$r/bin/busybox" 2>&1 | grep -q "not a dynamic"; then
	ln -s busybox "$r/bin/sh"
	echo "rootfs-marker" >"$r/etc/marker"
	chmod -R a+rX "$r"
	cordon_bare --workdir "$w" --rootfs "$r" -- /bin/sh -c 'cat /etc/marker; ls /usr 2>&1 | grep -c "No such"; /bin/busybox ls -A /'
	like_glob "--rootfs replaces the root" "$rc:$out" "0:rootfs-marker*1*"
	like_glob "--rootfs gets /proc /dev /tmp and the workdir" "$out" "*dev*proc*tmp*"
	# below a directory only its owner may enter (a server's state directory): root's
	# supervisor clones the root's entries from what it opened, pid 1 looks up nothing
	mkdir -p "$TEST_TMP/closed" && cp -a "$r" "$TEST_TMP/closed/" && chmod 700 "$TEST_TMP/closed"
	is_user_mode && [ "$(id -u)" = 0 ] && chown "$TEST_USER:" "$TEST_TMP/closed"
	cordon_bare --workdir "$w" --rootfs "$TEST_TMP/closed/rootfs" -- /bin/sh -c 'cat /etc/marker'
	is "--rootfs below a directory of mode 0700" "$rc:$out" "0:rootfs-marker"
else
	skip "--rootfs replaces the root" "no static busybox (apt-get install busybox-static)"
	skip "--rootfs gets /proc /dev /tmp and the workdir" "no static busybox"
	skip "--rootfs below a directory of mode 0700" "no static busybox"
fi

# symlinks planted in the workdir cannot redirect a mount outside the sandbox
ln -sfn /etc "$w/link-to-etc"
is_user_mode && [ "$(id -u)" = 0 ] && chown -h "$TEST_USER:" "$w/link-to-etc"
c --tmpfs "$w/link-to-etc" -- sh -c 'ls -A /etc | wc -l; touch /etc/x && echo wrote'
is "--tmpfs through a planted workdir symlink resolves inside the new root" "$rc:$out" "0:$(printf '0\nwrote')"
[ -e /etc/x ] && fail "... and never reaches the host's /etc" || pass "... and never reaches the host's /etc"

# everyday tools work
c -- sh -c 'printf "int main(void){return 7;}" > t.c && cc -o t t.c && ./t; echo $?'
like_glob "gcc compiles and runs" "$out" "*7"
c -- sh -c 'printf "all:\n\t@echo made\n" > Makefile && make'
is "make works" "$out" made
c -- python3 -c 'import subprocess; print(subprocess.run(["echo","py"],capture_output=True,text=True).stdout.strip())'
is "python3 works and spawns" "$out" py
c -- sh -c 'git init -q r && cd r && git -c user.email=a@b -c user.name=a commit -q --allow-empty -m x && git log --oneline | wc -l'
is "git works in the workdir" "$out" 1
if command -v node >/dev/null; then
	c -- node -e 'console.log(1+1)'
	is "node works" "$out" 2
else
	skip "node works" "node not installed"
fi

# an option's mount on /etc (or above a file cordon makes there) wins over cordon's files
etc=$(mkwork) && echo "10.9.9.9 mine" >"$etc/hosts" && chmod 644 "$etc/hosts"
c --hide /etc -- sh -c 'ls -A /etc | wc -l'
is "--hide /etc: the run goes on, /etc empty (no /etc/hosts of cordon's)" "$rc:$out" "0:0"
c --tmpfs /etc -- sh -c 'ls -A /etc | wc -l'
is "--tmpfs /etc: the run goes on, /etc empty" "$rc:$out" "0:0"
c --ro-bind "$etc:/etc" -- cat /etc/hosts
is "--ro-bind DIR:/etc: the bound directory's hosts file, not the host's with cordon's line" "$rc:$out" "0:10.9.9.9 mine"
c -- sh -c 'echo "$HOME"' && home_in=$out
c --tmpfs "$home_in:32M" -- sh -c 'cat "$HOME/.gitconfig" | grep -c directory'
is "--tmpfs \$HOME: HOME still gets cordon's .gitconfig" "$rc:$out" "0:1"

done_testing
