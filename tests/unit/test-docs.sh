#!/usr/bin/env bash
# test-docs.sh - the manual and the README cannot drift from the programs: the options of
# `cordon --help`, of `cordon serve --help` and of the layer commands' usage are exactly those
# cordon(1), cordon-serve(1), README.md's options table and docs/e2b.md's document; cordon.h(3)
# has every function of include/cordon.h; cordon-policy(5)'s actions are the parser's, and its
# example compiles; every page renders without a warning; meson installs the pages and the
# completions. Run by tests/run (as "unit/test-docs.sh") with the build directory.
# Usage: test-docs.sh BUILD_DIR
set -u
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
build=$(cd "${1:?usage: test-docs.sh BUILD_DIR}" && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib/tap.sh
. "$here/../lib/tap.sh"
export LC_ALL=C
cordon=$build/cordon
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test-docs.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# help_tags CMD...: the options of a --help, one a line, as its left column shows each: "-w,
# --workdir DIR", "--cow". A value's name is one word or a quoted phrase; the help text after it
# starts in lower case or after two spaces.
help_tags() {
	"$@" | sed -nE "s/^ +((-[a-zA-Z], )?--[a-z0-9][a-z0-9-]*( ('[^']*'|[^ a-z][^ ]*))?).*/\1/p" | sort
}

# man_tags PAGE FROM TO: the tags (the line after each .TP) from the line FROM (a regex) to the
# next TO, in plain text
man_tags() {
	awk -v from="$2" -v to="$3" '
		$0 ~ from { on = 1; next }
		on && $0 ~ to { exit }
		on && tp { print; tp = 0; next }
		on && /^\.TP/ { tp = 1 }' "$1" |
		sed -E 's/\\f[BIRP]//g; s/\\-/-/g; s/\\&//g' | sort
}

# same DESC A B: the two lists (files) are the same, else each difference as a diagnostic
same() {
	local d
	d=$(diff "$2" "$3" | sed -n 's/^< /only in the first: /p; s/^> /only in the second: /p')
	if [ -z "$d" ] && [ -s "$2" ]; then
		pass "$1"
	else
		fail "$1"
		[ -s "$2" ] || diag "the first list is empty"
		diag "$d"
	fi
}

# names: the option names in text: --long and -s
names() { grep -oE -- '(^|[] `,(\[|])(--[a-z0-9][a-z0-9-]*|-[a-zA-Z])\b' | sed -E 's/^[] `,(\[|]//' | sort -u; }

# --- cordon(1) and --help
help_tags "$cordon" --help >"$tmp/help"
man_tags "$build/man/cordon.1" '^\.SH OPTIONS' '^\.S[HS] ' >"$tmp/man"
same "cordon(1)'s OPTIONS are cordon --help's (first: --help, second: the page)" \
	"$tmp/help" "$tmp/man"

# the options the layer commands' help names (-h, --help: it is their help)
{ "$cordon" layers --help | names && printf '%s\n' -h --help; } | sort -u >"$tmp/lhelp"
man_tags "$build/man/cordon.1" '^\.SS Options of the layer commands' '^\.S[HS] ' | names >"$tmp/lman"
same "cordon(1)'s options of the layer commands are those their --help names" \
	"$tmp/lhelp" "$tmp/lman"

# --- cordon-serve(1) and cordon serve --help
help_tags "$cordon" serve --help >"$tmp/shelp"
man_tags "$build/man/cordon-serve.1" '^\.SH OPTIONS' '^\.S[HS] ' >"$tmp/sman"
same "cordon-serve(1)'s OPTIONS are cordon serve --help's" "$tmp/shelp" "$tmp/sman"

# --- README.md's options table and docs/e2b.md's
names <"$tmp/help" >"$tmp/hnames"
awk '/^\| option \| meaning \|/ { on = 1; next } on && !/^\|/ { exit } on && !/^\|---/' \
	"$src/README.md" | sed 's/\\|/ /g' | cut -d'|' -f2 | names >"$tmp/rnames"
same "README.md's options table lists every option of cordon --help, and no other" \
	"$tmp/hnames" "$tmp/rnames"
names <"$tmp/shelp" >"$tmp/shnames"
awk '/^## Options/ { sec = 1 } sec && /^\| option \|/ { on = 1; next } on && !/^\|/ { exit }
	on && !/^\|---/' "$src/docs/e2b.md" | sed 's/\\|/ /g' | cut -d'|' -f2 | names |
	grep -vx -- '-h\|--help' >"$tmp/enames"
grep -vx -- '-h\|--help' "$tmp/shnames" >"$tmp/shnames2"
same "docs/e2b.md's options table lists every option of cordon serve --help, and no other" \
	"$tmp/shnames2" "$tmp/enames"

# --- the shell completion completes the values of options by name: each name must be an option
sort -u "$tmp/hnames" "$tmp/shnames" "$tmp/lhelp" >"$tmp/allnames"
for f in cordon.bash.in _cordon.in; do
	sed -nE '/^_cordon_(value|action)\(\)/,/^\}/p' "$src/completions/$f" |
		sed -e ':a' -e '/\\$/N; s/\\\n//; ta' | tr '\t' ' ' | grep -E '^\s*[-|a-zA-Z ]+\)' | cut -d')' -f1 |
		names >"$tmp/cnames"
	is "completions/$f completes the values of options that exist ($(wc -l <"$tmp/cnames") named)" \
		"$(comm -23 "$tmp/cnames" "$tmp/allnames" | tr '\n' ' ')" ""
done

# --- cordon.h(3): every function of the header
grep -E '^CORDON_PUBLIC' "$src/include/cordon.h" | grep -oE 'cordon_[a-z0-9_]+\(' | tr -d '(' |
	sort -u >"$tmp/funcs"
missing=
while read -r f; do
	grep -qE "(^| |\*)$f\(" "$build/man/cordon.h.3" || missing+=" $f"
done <"$tmp/funcs"
is "cordon.h(3) declares each of cordon.h's $(wc -l <"$tmp/funcs") functions" "${missing:-none}" none

# --- cordon-policy(5): the parser's actions, and an example that compiles
sed -nE 's/^\s*\{ "([a-z-]+)", SCMP_ACT_.*/\1/p' "$src/src/seccomp/policy.c" >"$tmp/pact"
echo errno >>"$tmp/pact"
sort -o "$tmp/pact" "$tmp/pact"
man_tags "$build/man/cordon-policy.5" '^\.SH ACTIONS' '^\.S[HS] ' | sed 's/^\.B //; s/ .*//' |
	sort >"$tmp/mact"
same "cordon-policy(5)'s ACTIONS are the parser's (src/seccomp/policy.c)" "$tmp/pact" "$tmp/mact"
bad=
while read -r a; do
	rule=$a
	[ "$a" = errno ] && rule="errno EPERM"
	printf 'default errno ENOSYS\n%s getppid\n' "$rule" >"$tmp/a.policy"
	"$cordon" policy check "$tmp/a.policy" >/dev/null 2>"$tmp/a.err" || bad+=" $a: $(cat "$tmp/a.err")"
done <"$tmp/mact"
is "each action cordon-policy(5) documents is taken by cordon policy check" "${bad:-none}" none
awk '/^\.SH EXAMPLE/ { on = 1 } on && /^\.EX/ { ex = 1; next } ex && /^\.EE/ { exit } ex' \
	"$build/man/cordon-policy.5" | sed 's/\\-/-/g; s/\\e/\\/g' >"$tmp/example.policy"
out=$("$cordon" policy check "$tmp/example.policy" 2>&1)
is "cordon-policy(5)'s EXAMPLE compiles (cordon policy check)" "$out" "$tmp/example.policy: ok"

# --- every page renders without a warning
for page in cordon.1 cordon-serve.1 cordon-policy.5 cordon.h.3; do
	if command -v man >/dev/null; then
		w=$(MANWIDTH=80 man --warnings -l "$build/man/$page" 2>&1 >/dev/null)
		text=$(MANWIDTH=80 man -l "$build/man/$page" 2>/dev/null | wc -l)
	elif command -v groff >/dev/null; then
		w=$(groff -man -ww -z "$build/man/$page" 2>&1)
		text=$(groff -man -Tascii "$build/man/$page" 2>/dev/null | wc -l)
	else
		skip "$page renders without warnings" "neither man nor groff is installed (man-db)"
		continue
	fi
	is "$page renders without warnings ($text lines)" "$w" ""
	# its NAME line, as mandb reads it for whatis and apropos
	if command -v lexgrog >/dev/null; then
		like "$page: lexgrog reads its NAME (whatis, apropos)" "$(lexgrog "$build/man/$page" 2>&1)" \
			": \"${page%.[0-9]} - "
	fi
done

# --- what meson installs
if command -v meson >/dev/null; then
	meson introspect --installed "$build" >"$tmp/installed.json" 2>/dev/null
	for want in man1/cordon.1 man1/cordon-serve.1 man5/cordon-policy.5 man3/cordon.h.3 \
		bash-completion/completions/cordon zsh/vendor-completions/_cordon; do
		like "meson install puts $want in place" "$(cat "$tmp/installed.json")" "/$want\""
	done
else
	skip "what meson installs" "meson is not installed"
fi
done_testing
