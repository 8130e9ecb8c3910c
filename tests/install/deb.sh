#!/usr/bin/env bash
# tests/install/deb.sh - the Debian package (debian/) as README's Install makes it:
# `dpkg-buildpackage -us -uc -b` in a copy of the tree, then `dpkg -i`, the installed cordon used
# (--version; a sandboxed command as root and as the unprivileged user, which finds cordon-init
# where the package put it), then `dpkg -r` and `dpkg -P` leaving none of its files. Root only
# (dpkg -i); it skips where a cordon is installed already, which it must not replace. TAP.
set -u
. "$(dirname "$0")/../lib/tap.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
export PATH=$PATH:/usr/sbin:/sbin

why=""
[ "$(id -u)" = 0 ] || why="not root (dpkg -i)"
for t in dpkg-buildpackage dh dh_apparmor git; do
	[ -n "$why" ] || command -v "$t" >/dev/null || why="no $t (Debian packages dpkg-dev, debhelper, dh-apparmor, git)"
done
if [ -z "$why" ] && dpkg-query -W -f '${Status}' cordon 2>/dev/null | grep installed >/dev/null; then
	why="a cordon package is installed here already: the test does not replace it"
fi
[ -n "$why" ] || [ ! -e /usr/bin/cordon ] || why="/usr/bin/cordon exists: the test does not replace it"
if [ -n "$why" ]; then
	skip "the Debian package builds, installs, runs and is removed" "$why"
	done_testing
	exit
fi

T=$(mktemp -d /tmp/cordon-deb.XXXXXX)
chmod 755 "$T"
installed=0
cleanup() {
	[ "$installed" = 0 ] || dpkg -P cordon >/dev/null 2>&1
	rm -rf "$T"
}
trap cleanup EXIT

# the tree as git sees it (tracked and new files, not what .gitignore leaves out: build dirs)
mkdir "$T/cordon"
(cd "$root" && git ls-files -co --exclude-standard -z | xargs -0 cp --parents -t "$T/cordon")
if (cd "$T/cordon" && DEB_BUILD_OPTIONS=nocheck dpkg-buildpackage -us -uc -b) >"$T/build.log" 2>&1; then
	pass "dpkg-buildpackage -us -uc -b"
else
	fail "dpkg-buildpackage -us -uc -b"
	diag "$(tail -30 "$T/build.log")"
	done_testing
	exit
fi
deb=$(ls "$T"/cordon_*.deb)
dpkg-deb -c "$deb" | awk '{ print $6 }' | sed 's|^\./|/|' >"$T/files"
for f in /usr/bin/cordon /usr/lib/cordon/cordon-init /usr/lib/cordon/cordon-agent \
	/usr/lib/cordon/cordon-serve /usr/include/cordon.h \
	/usr/share/cordon/seccomp-policies/default.policy /usr/share/cordon/protected-paths/default.list; do
	grep -Fx "$f" "$T/files" >/dev/null && pass "the package holds $f" || fail "the package holds $f"
done
n=$(grep -c '^/usr/share/man/man./.' "$T/files")
[ "$n" -gt 0 ] && pass "the package holds the man pages ($n)" || fail "the package holds the man pages (none)"
# the AppArmor profile where this machine's AppArmor knows its userns rule (-Dapparmor=auto)
if apparmor_parser -QTK "$root/apparmor/userns-probe" >/dev/null 2>&1; then
	grep -Fx /etc/apparmor.d/cordon "$T/files" >/dev/null &&
		pass "the package holds /etc/apparmor.d/cordon" ||
		fail "the package holds /etc/apparmor.d/cordon"
else
	grep -Fx /etc/apparmor.d/cordon "$T/files" >/dev/null &&
		fail "no /etc/apparmor.d/cordon where AppArmor predates userns rules" ||
		pass "no /etc/apparmor.d/cordon: this machine's AppArmor predates userns rules (it would fail at boot)"
fi

if dpkg -i "$deb" >"$T/install.log" 2>&1; then
	installed=1
	pass "dpkg -i $(basename "$deb")"
else
	fail "dpkg -i $(basename "$deb")"
	diag "$(tail -20 "$T/install.log")"
	done_testing
	exit
fi
version=$(grep -m1 -o "version : '[^']*'" "$root/meson.build" | cut -d"'" -f2)
out=$(/usr/bin/cordon --version 2>&1)
[ "$out" = "cordon $version" ] && pass "cordon --version: $out" || fail "cordon --version: $out (want cordon $version)"

# the unprivileged user (tests/run's) has no HOME: where its cordon keeps its state
TEST_USER=${TEST_USER:-cordon-test}
USER_STATE=$T/state-user
mkdir "$USER_STATE" && chown "$TEST_USER:" "$USER_STATE"
for mode in root user; do
	w=$(mktemp -d "$T/work.XXXXXX")
	[ "$mode" = root ] || chown "$TEST_USER:" "$w"
	out=$(cd "$w" && CORDON_AS=$mode as_caller /usr/bin/cordon -- sh -c 'echo sandboxed > f; true' 2>&1)
	rc=$?
	if [ "$rc" = 0 ] && [ "$(cat "$w/f" 2>/dev/null)" = sandboxed ]; then
		pass "the installed cordon runs a sandboxed command ($mode)"
	else
		fail "the installed cordon runs a sandboxed command ($mode): status $rc"
		diag "$out"
	fi
done

if dpkg -r cordon >"$T/remove.log" 2>&1 && dpkg -P cordon >>"$T/remove.log" 2>&1; then
	installed=0
	pass "dpkg -r cordon, dpkg -P cordon"
else
	fail "dpkg -r cordon, dpkg -P cordon"
	diag "$(tail -20 "$T/remove.log")"
fi
left=$(while read -r f; do [ -d "$f" ] || [ ! -e "$f" ] && [ ! -L "$f" ] || echo "$f"; done <"$T/files")
[ -z "$left" ] && pass "none of the package's files is left" || { fail "files left: $left"; }
done_testing
