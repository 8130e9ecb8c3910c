#!/usr/bin/env bash
# tests/install/apparmor.sh BUILD - cordon's AppArmor profile (apparmor/cordon.in) as BUILD
# configured it: it attaches to the programs meson installs, grants `userns` to each, and
# apparmor_parser takes it (parse only: -QTK, nothing loaded). A parser older than AppArmor 4
# does not know the userns rule or abi 4.0: it then checks the rest, and the whole is skipped
# with the reason. TAP.
set -u
. "$(dirname "$0")/../lib/tap.sh"
build=$(cd "${1:?usage: apparmor.sh BUILD}" && pwd)
root=$(cd "$(dirname "$0")/../.." && pwd)
profile=$build/apparmor-cordon
T=$(mktemp -d /tmp/cordon-apparmor.XXXXXX)
trap 'rm -rf "$T"' EXIT

[ -s "$profile" ] && pass "meson configured the profile ($profile)" ||
	fail "meson configured the profile ($profile)"

# where meson installs the programs, from the build's own options
opt() { meson introspect --buildoptions "$build" |
	python3 -c "import json,sys; print(next(o['value'] for o in json.load(sys.stdin) if o['name']=='$1'))"; }
prefix=$(opt prefix) bindir=$(opt bindir) libexecdir=$(opt libexecdir)
case $bindir in /*) ;; *) bindir=$prefix/$bindir ;; esac
case $libexecdir in /*) ;; *) libexecdir=$prefix/$libexecdir ;; esac
for p in "cordon $bindir/cordon" "cordon-serve $libexecdir/cordon-serve"; do
	name=${p%% *} path=${p#* }
	# the profile's block for it, from its header to the closing brace
	block=$(awk -v h="profile $name $path flags=(unconfined) {" \
		'$0 == h { on = 1 } on { print } on && /^}/ { exit }' "$profile")
	if [ -z "$block" ]; then
		fail "profile $name attaches to $path, unconfined"
		diag "$(grep '^profile' "$profile")"
		continue
	fi
	pass "profile $name attaches to $path, unconfined"
	case $'\n'$block$'\n' in
	*$'\n  userns,\n'*) pass "profile $name grants userns" ;;
	*) fail "profile $name grants userns" ;;
	esac
done

parser=$(PATH=$PATH:/usr/sbin:/sbin command -v apparmor_parser)
if [ -z "$parser" ]; then
	skip "apparmor_parser takes the profile" "no apparmor_parser (Debian package apparmor)"
	skip "apparmor_parser takes the profile as written" "no apparmor_parser (Debian package apparmor)"
	done_testing
	exit
fi
version=$("$parser" --version | sed -n '1s/.*version //p')
if "$parser" -QTK "$root/apparmor/userns-probe" >"$T/probe.out" 2>&1; then
	if "$parser" -QTK "$profile" >"$T/out" 2>&1; then
		pass "apparmor_parser $version takes the profile"
		pass "apparmor_parser $version takes the profile as written"
	else
		fail "apparmor_parser $version takes the profile"
		fail "apparmor_parser $version takes the profile as written"
		diag "$(cat "$T/out")"
	fi
	done_testing
	exit
fi
# AppArmor 3: the rest of the profile (attachments, flags, includes) through this parser
sed -e 's|^abi <abi/4.0>,|abi <abi/3.0>,|' -e '/^  userns,$/d' "$profile" >"$T/cordon-3"
if "$parser" -QTK "$T/cordon-3" >"$T/out" 2>&1; then
	pass "apparmor_parser $version takes the profile (its userns rules and abi 4.0 left out)"
else
	fail "apparmor_parser $version takes the profile (its userns rules and abi 4.0 left out)"
	diag "$(cat "$T/out")"
fi
skip "apparmor_parser takes the profile as written" \
	"apparmor_parser $version predates the userns rule (AppArmor 4.0): $(tail -1 "$T/probe.out")"
done_testing
