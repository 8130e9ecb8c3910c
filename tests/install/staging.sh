#!/usr/bin/env bash
# tests/install/staging.sh - `meson install --destdir` of a fresh build (prefix /usr, the
# AppArmor profile on) into a staging directory: it holds the programs, the policies, the
# protected paths, the man pages (each rendered by `man -l` without a warning), the bash and zsh
# completions and the AppArmor profile. Whatever meson installs into share/man is checked; none
# is a failure. TAP.
set -u
. "$(dirname "$0")/../lib/tap.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d /tmp/cordon-staging.XXXXXX)
trap 'rm -rf "$T"' EXIT

if ! meson setup "$T/build" "$root" --prefix=/usr -Dtests=false -Dapparmor=enabled \
	>"$T/setup.log" 2>&1 || ! ninja -C "$T/build" >"$T/build.log" 2>&1; then
	fail "a fresh build (meson setup --prefix=/usr -Dapparmor=enabled)"
	diag "$(tail -n 20 "$T/setup.log" "$T/build.log")"
	done_testing
	exit
fi
S=$T/stage
if meson install -C "$T/build" --no-rebuild --destdir "$S" >"$T/install.log" 2>&1; then
	pass "meson install --destdir STAGE"
else
	fail "meson install --destdir STAGE"
	diag "$(tail -20 "$T/install.log")"
fi

for f in usr/bin/cordon usr/libexec/cordon-init usr/libexec/cordon-agent usr/libexec/cordon-serve; do
	[ -x "$S/$f" ] && pass "$f" || fail "$f"
done
for f in include/cordon.h lib/x86_64-linux-gnu/pkgconfig/cordon.pc; do
	[ -f "$S/usr/$f" ] || [ -f "$S/usr/${f/x86_64-linux-gnu\//}" ] && pass "usr/$f" || fail "usr/$f"
done
for p in default strict groups baseline; do
	f=usr/share/cordon/seccomp-policies/$p.policy
	cmp -s "$S/$f" "$root/seccomp-policies/$p.policy" && pass "$f, as shipped" || fail "$f, as shipped"
done
f=usr/share/cordon/protected-paths/default.list
cmp -s "$S/$f" "$root/protected-paths/default.list" && pass "$f, as shipped" || fail "$f, as shipped"

# the AppArmor profile, where AppArmor looks, for the programs as installed
f=etc/apparmor.d/cordon
if [ -f "$S/$f" ] && grep -Fx 'profile cordon /usr/bin/cordon flags=(unconfined) {' "$S/$f" >/dev/null &&
	grep -Fx 'profile cordon-serve /usr/libexec/cordon-serve flags=(unconfined) {' "$S/$f" >/dev/null; then
	pass "/$f, attached to /usr/bin/cordon and /usr/libexec/cordon-serve"
else
	fail "/$f, attached to /usr/bin/cordon and /usr/libexec/cordon-serve"
fi

# the man pages, each rendered without a warning from man or groff
mapfile -t pages < <(cd "$S" && find usr/share/man -type f 2>/dev/null | sort)
if [ ${#pages[@]} -eq 0 ]; then
	fail "man pages installed in usr/share/man (none)"
else
	pass "man pages installed in usr/share/man (${#pages[@]}: $(basename -a "${pages[@]}" | tr '\n' ' '))"
fi
if ! command -v man >/dev/null; then
	skip "man -l renders each page" "no man (Debian package man-db)"
else
	for p in "${pages[@]}"; do
		if MANWIDTH=80 man --warnings -l "$S/$p" >"$T/out" 2>"$T/err" && [ -s "$T/out" ] &&
			[ ! -s "$T/err" ]; then
			pass "man -l $p renders ($(wc -l <"$T/out") lines, no warning)"
		else
			fail "man -l $p renders without a warning"
			diag "$(head -5 "$T/err")"
		fi
	done
fi

# the completions: bash's where bash-completion looks, zsh's in a directory of its fpath
mapfile -t bash_c < <(cd "$S" && find usr/share/bash-completion/completions -type f 2>/dev/null)
mapfile -t zsh_c < <(cd "$S" && find usr/share/zsh -type f -name '_*' 2>/dev/null)
if [ ${#bash_c[@]} -eq 0 ]; then
	fail "bash completion in usr/share/bash-completion/completions (none)"
else
	for c in "${bash_c[@]}"; do
		bash -n "$S/$c" 2>"$T/err" && pass "$c (bash -n)" || { fail "$c (bash -n)"; diag "$(cat "$T/err")"; }
	done
fi
if [ ${#zsh_c[@]} -eq 0 ]; then
	fail "zsh completion in usr/share/zsh (none)"
else
	for c in "${zsh_c[@]}"; do
		if ! command -v zsh >/dev/null; then
			pass "$c (installed; no zsh here to read it)"
		elif zsh -n "$S/$c" 2>"$T/err"; then
			pass "$c (zsh -n)"
		else
			fail "$c (zsh -n)"
			diag "$(cat "$T/err")"
		fi
	done
fi

# README's Install command as written, as root on a machine where sudo fails (a fresh Debian has
# none): in a copy of the tree, installed into a staging directory (DESTDIR)
cmd=$(awk '/^## Install/ { on = 1 } on && /^    / { sub(/^    /, ""); print; exit }' "$root/README.md")
if [ "$(id -u)" != 0 ]; then
	skip "README's Install command, as root without sudo" "not root"
elif [ -z "$cmd" ]; then
	fail "README's Install command, as root without sudo (no command under ## Install)"
else
	mkdir -p "$T/readme/src" "$T/nosudo"
	printf '#!/bin/sh\necho "sudo: not on this machine" >&2\nexit 1\n' >"$T/nosudo/sudo"
	chmod 755 "$T/nosudo/sudo"
	(cd "$root" && git ls-files -co --exclude-standard -z | xargs -0 cp --parents -t "$T/readme/src")
	if (cd "$T/readme/src" && PATH=$T/nosudo:$PATH DESTDIR=$T/readme/stage \
		bash -c "$cmd" >"$T/readme.log" 2>&1) &&
		[ -x "$T/readme/stage/usr/local/bin/cordon" ]; then
		pass "README's Install command, as root without sudo, installs /usr/local/bin/cordon"
	else
		fail "README's Install command, as root without sudo"
		diag "$cmd"
		diag "$(tail -n 10 "$T/readme.log")"
	fi
fi
done_testing
