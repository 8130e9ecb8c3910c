#!/usr/bin/env bash
# Which host directory may be the workdir, and how cordon finds it. What a sandbox writes in its
# workdir is used on the host afterwards, so cordon refuses, with one line naming the rule, exit
# 125 and nothing run: the system's trees and everything below them, /var's state, shared
# scratch, homes and what holds them, credential stores, the caller's PATH. Controls show the
# directories next to them are fine. The path is resolved without trusting a symlink someone
# else (or a sandbox) could have planted: a workdir given as a symlink, another uid's symlink on
# the way and, as root, a symlink choosing whose directory it is are refused; and a workdir
# swapped with a symlink while cordon starts never lets the command write where the symlink
# points.
. "$TAP_LIB"

host_root=$([ "$(id -u)" = 0 ] && echo yes)
ran=.cordon-ran # what the command leaves in its workdir when it runs
cleanup=()
xpid=
trap 'for f in "${cleanup[@]}"; do rm -rf "$f"; done; [ -n "$xpid" ] && kill $xpid 2>/dev/null' EXIT

sys='a system directory (/etc, /usr, /opt, /run, /dev, ... and everything below them)'
var="a system directory (/var holds the system's state; use a directory below /var/tmp or your home)"
shared='a directory every user shares (use a directory below it)'
home='a home directory, or one that holds home directories: they hold ~/.ssh and other secrets (use a project directory below one)'
store='a store of credentials or configuration (.ssh, .gnupg, .aws, .config, .local, ...)'
onpath='a directory on your PATH, or one that holds it: what the sandbox wrote there would run as you'

# absent DESC PATH: nothing is at PATH
absent() { if [ -e "$2" ]; then fail "$1"; else pass "$1"; fi; }
# mine PATH...: make directories (with their parents) owned by whoever runs cordon
mine() {
	mkdir -p "$@" && chmod 755 "$@"
	if [ -n "$host_root" ] && is_user_mode; then chown "$TEST_USER:" "$@"; fi
}
# mylink TARGET NAME: a symlink owned by whoever runs cordon
mylink() {
	ln -s "$1" "$2"
	if [ -n "$host_root" ] && is_user_mode; then chown -h "$TEST_USER:" "$2"; fi
}

# try DIR [env ARGS...]: cordon -w DIR, the caller's environment changed by ARGS (VAR=VALUE,
# -C DIR), on a command that says "ran" and leaves $ran in its workdir
try() {
	local dir=$1
	shift
	cleanup+=("$dir/$ran")
	rm -f "$dir/$ran" 2>/dev/null
	out=$(as_caller env "$@" "$CORDON" -w "$dir" -- sh -c "echo ran; : >$ran" 2>"$TEST_TMP/stderr")
	rc=$?
	err=$(cat "$TEST_TMP/stderr")
}
# what happened: status, stderr, stdout, and whether the marker is there
outcome() { echo "$rc|$err|$out|$([ -e "$1/$ran" ] && echo marker)"; }

# refused DESC LINE DIR [env ARGS...]: exactly LINE on stderr, 125, nothing ran
refused() {
	local desc=$1 line=$2 dir=$3
	shift 2
	try "$@"
	is "$desc" "$(outcome "$dir")" "125|$line||"
}
# refused_by DESC RULE DIR [env ARGS...]: the rules' line for DIR
refused_by() {
	refused "$1" "cordon: --workdir: $3: refusing to make it writable: $2" "${@:3}"
}
# accepted DESC DIR [env ARGS...]: the command ran in DIR
accepted() {
	local desc=$1 dir=$2
	shift
	try "$@"
	is "$desc" "$(outcome "$dir")" "0||ran|marker"
}

# --- the system's trees, and everything below them
for d in /etc/default /usr/local/bin /usr/lib /boot /opt /dev/shm /sys/fs /proc/sys /run/lock; do
	if [ -d "$d" ] && [ ! -L "$d" ]; then
		refused_by "$d: a system tree" "$sys" "$d"
	else
		skip "$d: a system tree" "no directory $d on this host"
	fi
done

# --- /var holds the system's state: refused, but below /var/tmp and inside a home there
for d in /var/lib /var/spool /var/cache /var/log; do
	refused_by "$d: the system's state" "$var" "$d"
done
refused_by "/tmp itself: shared scratch" "$shared" /tmp
refused_by "/var/tmp itself: shared scratch" "$shared" /var/tmp
vt=$(mktemp -d /var/tmp/cordon-wd.XXXXXX)
cleanup+=("$vt")
mine "$vt"
accepted "(control: a directory below /var/tmp is fine)" "$vt"
if [ -n "$host_root" ]; then
	vh=$(mktemp -d /var/lib/cordon-home.XXXXXX)
	cleanup+=("$vh")
	mine "$vh" "$vh/project"
	refused_by "a directory below /var/lib is refused ..." "$var" "$vh/project"
	accepted "... but not when it is below the caller's HOME" "$vh/project" HOME="$vh"
	refused_by "... a home under /var itself is still refused" "$var" "$vh" HOME="$vh"
else
	skip "a home under /var" "needs root to make one"
fi

# --- homes, and the directories that hold them
homes=$TEST_TMP/homes
mine "$homes/alice/project"
refused_by "the caller's HOME" "$home" "$homes/alice" HOME="$homes/alice"
refused_by "a directory that holds the caller's HOME" "$home" "$homes" HOME="$homes/alice"
accepted "(control: a project below HOME is fine)" "$homes/alice/project" HOME="$homes/alice"
refused_by "an account's home from /etc/passwd (/root), HOME being elsewhere" "$home" /root \
	HOME=/nonexistent
mine "$homes/real/bob"
mylink real "$homes/via"
refused_by "the caller's HOME through a symlink: its real directory" "$home" "$homes/real/bob" \
	HOME="$homes/via/bob"
refused_by "... and the real directory that holds it" "$home" "$homes/real" HOME="$homes/via/bob"

# --- credential and configuration stores, as any component of the path
stores=$TEST_TMP/stores
for n in .ssh .gnupg .aws .azure .cargo .config .docker .kube .local .mozilla .password-store .pki; do
	mine "$stores/$n"
	refused_by "a store: $n" "$store" "$stores/$n"
done
mine "$stores/.config/app" "$stores/deep/.local/share" "$stores/ssh"
refused_by "a directory below a store (.config/app)" "$store" "$stores/.config/app"
refused_by "a store deeper in the path (deep/.local/share)" "$store" "$stores/deep/.local/share"
accepted "(control: ssh without the dot is fine)" "$stores/ssh"

# --- the caller's PATH
tools=$TEST_TMP/tools
mine "$tools/bin"
refused_by "a directory on the caller's PATH" "$onpath" "$tools/bin" PATH="$tools/bin:/usr/bin:/bin"
refused_by "a directory that holds one" "$onpath" "$tools" PATH="/usr/bin:$tools/bin:/bin"
mine "$tools/real/bin"
mylink real "$tools/via"
refused_by "a PATH directory through a symlink: its real directory" "$onpath" "$tools/real/bin" \
	PATH="/usr/bin:$tools/via/bin:/bin"
refused_by "... the same one twice, and a missing one before it: still refused" "$onpath" \
	"$tools/real/bin" PATH="$tools/missing:$tools/via/bin:$tools/via/bin:/bin"
accepted "(control: the same directory off PATH is fine)" "$tools/bin"
accepted "(control: a relative PATH entry (.) is no place: the current directory is fine)" \
	"$tools/bin" -C "$tools/bin" PATH=".:/usr/bin:/bin"
accepted "(control: a plain project directory is fine)" "$(mkwork)"

# --- symlinks
links=$TEST_TMP/links
mine "$links" "$links/real" "$links/real/project"
mylink real "$links/wd-link"
refused "a workdir given as a symlink is refused" \
	"cordon: --workdir: $links/wd-link: is a symlink, which cordon does not follow here (a sandbox may have left it): give the real path" \
	"$links/wd-link"
absent "... and nothing ran where it points" "$links/real/$ran"
refused "... with a trailing / too" \
	"cordon: --workdir: $links/wd-link/: is a symlink, which cordon does not follow here (a sandbox may have left it): give the real path" \
	"$links/wd-link/"
try "$links/wd-link/."
like_glob "... and with a trailing /. (the same directory)" "$(outcome "$links/wd-link/.")" \
	"125|cordon: --workdir: $(glob_quote "$links")/wd-link*: is a symlink, which cordon does not follow here*||"

if [ -n "$host_root" ]; then
	if is_user_mode; then other=1; else other=$(id -u "$TEST_USER"); fi
	ln -s real "$links/others" && chown -h "$other" "$links/others"
	refused "a symlink of another uid ($other) on the way is refused" \
		"cordon: --workdir: $links/others/project: $links/others is a symlink owned by uid $other; cordon follows only symlinks owned by root or by you (give the real path)" \
		"$links/others/project"
	absent "... and nothing ran where it points" "$links/real/project/$ran"
else
	skip "a symlink of another uid on the way is refused" "needs root to make one"
fi
mylink real "$links/mine"
accepted "(control: the caller's own symlink on the way is followed)" "$links/mine/project"
if [ -n "$host_root" ] && is_user_mode; then
	ln -s real "$links/roots"
	accepted "(control: root's symlink on the way is followed)" "$links/roots/project"
fi

if [ -n "$host_root" ] && ! is_user_mode; then
	# root runs the sandbox as the workdir's owner: a symlink must not choose that owner
	tu=$(id -u "$TEST_USER")
	mkdir -p "$links/users/project" && chown -R "$TEST_USER:" "$links/users"
	ln -s users "$links/to-user"
	refused "root: root's own symlink leading into $TEST_USER's directory is refused" \
		"cordon: --workdir: $links/users/project: reached through a symlink, and owned by uid $tu: cordon run as root does not let a symlink choose whose files the sandbox writes (give the real path)" \
		"$links/to-user/project"
	accepted "(control: the same directory given directly runs ...)" "$links/users/project"
	is "... as $TEST_USER" "$(stat -c %u "$links/users/project/$ran")" "$tu"
	ln -s real "$links/to-root"
	accepted "(control: root's symlink into root's directory is followed)" "$links/to-root/project"
fi

# --- the swap race: the workdir's name exchanged with a symlink to a victim while cordon starts
# (the victim stands for /etc: root's when root runs cordon; another directory of the caller's
# otherwise). Each run must write in the real directory or be refused; never in the victim.
race=$TEST_TMP/race
mine "$race" "$race/wd" "$race/victim"
mylink "$race/victim" "$race/alt"
"$PROBE" exchange "$race/wd" "$race/alt" 120 >"$TEST_TMP/exchange.out" 2>&1 &
xpid=$!
wait_until 10 grep -q running "$TEST_TMP/exchange.out" ||
	diag "the exchanger did not start: $(cat "$TEST_TMP/exchange.out")"
runs=0 ok=0 odd=()
declare -A refusals=([symlink]=0 [appeared]=0 [replaced]=0)
end=$((SECONDS + 90))
while [ "$runs" -lt 150 ] && [ "$SECONDS" -lt "$end" ]; do
	runs=$((runs + 1))
	o=$(as_caller timeout 20 "$CORDON" -q -w "$race/wd" -- touch "m.$runs" 2>&1)
	st=$?
	case "$st:$o" in
	0:) ok=$((ok + 1)) ;;
	"125:cordon: --workdir: $race/wd: is a symlink, which cordon does not follow here (a sandbox may have left it): give the real path")
		refusals[symlink]=$((refusals[symlink] + 1)) ;;
	"125:cordon: --workdir: $race/"*": a symlink appeared in its path while cordon was starting")
		refusals[appeared]=$((refusals[appeared] + 1)) ;;
	"125:cordon: --workdir: $race/"*": replaced by another directory while cordon was starting")
		refusals[replaced]=$((refusals[replaced] + 1)) ;;
	*) odd+=("run $runs: status $st: $o") ;;
	esac
done
kill $xpid 2>/dev/null
wait $xpid 2>/dev/null
xpid=
real=$race/wd
[ -L "$real" ] && real=$race/alt
diag "race: $runs runs, $ok ran; refused: ${refusals[symlink]} as a symlink, ${refusals[appeared]} as a symlink appeared, ${refusals[replaced]} as replaced"
is "race: the command never wrote in the victim ($runs runs)" "$(ls -A "$race/victim")" ""
is "race: every run ran in the real directory or was refused with one of cordon's lines" \
	"${odd[*]}" ""
is "race: every run that ran left its marker in the real directory" \
	"$(find "$real" -name 'm.*' | wc -l)" "$ok"

# --- a mount below the workdir stays read-only inside (the workdir is the one writable place):
# a bind of root's files there would otherwise be written as root through the id-mapped workdir
if [ "$(id -u)" = 0 ]; then
	sw=$(mktemp -d "$TEST_TMP/subm.XXXXXX")
	victim=$(mktemp -d "$TEST_TMP/subm-victim.XXXXXX")
	mkdir "$sw/etc" && chmod 755 "$sw" "$victim" && echo precious >"$victim/file"
	mine "$sw"
	if mount --bind "$victim" "$sw/etc"; then
		cordon_bare -w "$sw" -- sh -c 'echo pwned > etc/file; echo pwned > etc/new; echo ok > top'
		is "a mount below the workdir is read-only inside: the bound files stay untouched" \
			"$(cat "$victim/file"):$([ -e "$victim/new" ] && echo new)" "precious:"
		is "... while the workdir itself is writable" "$(cat "$sw/top" 2>/dev/null)" ok
		umount "$sw/etc"
	else
		skip "a mount below the workdir is read-only inside" "cannot bind-mount here"
	fi
else
	skip "a mount below the workdir is read-only inside" "needs root to make the mount"
fi

done_testing
