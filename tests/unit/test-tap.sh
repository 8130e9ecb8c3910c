#!/usr/bin/env bash
# test-tap.sh - the test harness itself, so that a check cannot pass by construction: tap.sh's
# like/unlike match literally (a namespace string "net:[4026531840]" is not a pattern), like_glob
# with glob_quote; lib/tapcheck.awk finds a stream that is not whole; and tests/run fails a
# suite that stops half-way, has no plan, or gives more or fewer results than it planned. Run by
# tests/run (as "unit/test-tap.sh"); needs only bash and awk.
set -u
here=$(cd "$(dirname "$0")" && pwd)
lib=$here/../lib
# shellcheck source=../lib/tap.sh
. "$lib/tap.sh"
# shellcheck source=../lib/tiers.sh
. "$lib/tiers.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/test-tap.XXXXXX") || exit 1
chmod 755 "$tmp"
trap 'rm -rf "$tmp"' EXIT

# results CMD...: the TAP lines a helper gives, run apart (its counters are not ours)
results() { (_tap_n=0 _tap_failed=0 err= && "$@") | grep -E '^(not )?ok' | sed -E 's/ [0-9]+ - / - /'; }

# --- like, unlike: literal
ns='net:[4026531840]'
is "unlike: a namespace string against itself fails (its brackets are no pattern)" \
	"$(results unlike "own namespace" "$ns" "$ns")" "not ok - own namespace"
is "unlike: ... against another passes" "$(results unlike "own" 'net:[4026532001]' "$ns")" "ok - own"
is "like: a string holding the text passes" "$(results like "x" "a $ns b" "$ns")" "ok - x"
is "like: a string matching it only as a pattern fails" "$(results like "x" 'net:4' "$ns")" \
	"not ok - x"
is "like: \"*\" is a star" "$(results like "x" "abc" "*")" "not ok - x"
is "like: an empty text fails (it is in every string: a variable left empty)" \
	"$(results like "x" "abc" "")" "not ok - x"
is "unlike: an empty text fails too" "$(results unlike "x" "abc" "")" "not ok - x"
is "isnt: equal strings fail" "$(results isnt "x" "$ns" "$ns")" "not ok - x"

# --- like_glob: a pattern, where data is quoted
is "like_glob: a pattern" "$(results like_glob "x" "125: cordon: why" "125: cordon: *")" "ok - x"
is "like_glob: the whole string" "$(results like_glob "x" "1125: cordon" "125: *")" "not ok - x"
is "like_glob with glob_quote: the data stands for itself" \
	"$(results like_glob "x" 'net:4 in' "$(glob_quote "$ns") *")" "not ok - x"
is "... and matches itself" "$(results like_glob "x" "$ns in" "$(glob_quote "$ns") *")" "ok - x"
is "glob_quote: every character a pattern gives a meaning" "$(glob_quote 'a*b?[c]\d(e)|f@+!')" \
	'a\*b\?\[c\]\\d\(e\)\|f\@\+\!'
is "like_glob: no extglob unless the suite asks (\"*(+)\" is a star, then \"(+)\")" \
	"$(results like_glob "x" "11 insertions(+)" "* insertion*(+)")" "ok - x"
is "unlike_glob: a match fails" "$(results unlike_glob "x" "a [b]" "a \[*")" "not ok - x"

# --- tapcheck.awk: a stream that is not whole
check() { awk -v name=s -f "$lib/tapcheck.awk" | grep '^not ok - s: '; }
is "tapcheck: a whole stream, plan last" "$(printf 'ok 1 - a\nnot ok 2 - b\n1..2\n' | check)" ""
is "tapcheck: a whole stream, plan first" "$(printf '1..2\nok 1 - a\nok 2 - b # SKIP c\n' | check)" ""
is "tapcheck: stopped half-way, before its plan" "$(printf 'ok 1 - a\nok 2 - b\n' | check)" \
	"not ok - s: no plan: it stopped before the end (2 results)"
is "tapcheck: stopped half-way after a plan given first" "$(printf '1..3\nok 1 - a\n' | check)" \
	"not ok - s: planned 3 results, gave 1"
is "tapcheck: results after a plan given last" "$(printf 'ok 1\n1..1\nok 2\n' | check)" \
	"not ok - s: planned 1 results, gave 2"
is "tapcheck: two plans" "$(printf '1..1\nok 1\n1..1\n' | check)" "not ok - s: 2 plans"
is "tapcheck: a result missing in the numbering" "$(printf 'ok 1\nok 3\n1..2\n' | check)" \
	"not ok - s: result 2 is numbered 3"
is "tapcheck: a bail-out" "$(printf 'ok 1\nBail out! no disk\n1..1\n' | check)" \
	"not ok - s: Bail out! no disk"
is "tapcheck: a plan in the middle" "$(printf 'ok 1\n1..3\nok 2\nok 3\n' | check)" \
	"not ok - s: the plan came after 1 of its 3 results"
is "tapcheck: a plan of nothing" "$(printf '1..0\n' | check)" \
	"not ok - s: a plan of nothing (1..0) without a reason (# SKIP ...)"
is "tapcheck: a plan of nothing, said why" "$(printf '1..0 # SKIP no node\n' | check)" ""
is "tapcheck: no output at all" "$(printf '' | check)" \
	"not ok - s: no plan: it stopped before the end (0 results)"

# --- tests/run: a suite that is not whole fails the run
fake=$tmp/build
mkdir -p "$fake/tests"
for f in cordon cordon-serve cordon-agent cordon-init tests/probe tests/sysprobe tests/session-test \
	tests/remover-test tests/caller-secrets; do
	printf '#!/bin/sh\nexit 0\n' >"$fake/$f"
	chmod 755 "$fake/$f"
done
# suite NAME BODY: a unit test of the fake build
suite() { printf '#!/bin/sh\n%s\n' "$2" >"$fake/tests/test-$1" && chmod 755 "$fake/tests/test-$1"; }
suite tapfake-whole 'echo "ok 1 - a"; echo "ok 2 - b"; echo "1..2"'
suite tapfake-halfway 'echo "ok 1 - a"; exit 0; echo "ok 2 - b"; echo "1..2"'
suite tapfake-planfirst 'echo "1..3"; echo "ok 1 - a"; exit 0'
suite tapfake-noplan 'echo "ok 1 - a"'
suite tapfake-died 'echo "ok 1 - a"; echo "1..1"; exit 3'
suite tapfake-todo 'echo "not ok 1 - a # TODO known"; echo "not ok 2 - b \\# TODO in its name"; echo "1..2"'
chmod -R a+rX "$fake"
run() { # NAME: tests/run's summary line and its exit status
	local out st
	# (the tiers .ci/run asks of the real run are not the fake build's)
	out=$(without_tiers CORDON_TEST_LOG="$tmp/log" "$here/../run" "$fake" "$1" 2>&1)
	st=$?
	echo "$(tail -1 <<<"$out") (exit $st)"
}
is "tests/run: a whole suite passes" "$(run tapfake-whole)" "2 passed, 0 failed, 0 skipped (exit 0)"
is "tests/run: a suite that stops half-way fails" "$(run tapfake-halfway)" \
	"1 passed, 1 failed, 0 skipped (exit 1)"
is "tests/run: a suite that gives fewer results than its plan fails" "$(run tapfake-planfirst)" \
	"1 passed, 1 failed, 0 skipped (exit 1)"
is "tests/run: a suite without a plan fails" "$(run tapfake-noplan)" \
	"1 passed, 1 failed, 0 skipped (exit 1)"
is "tests/run: a suite that exits non-zero fails" "$(run tapfake-died)" \
	"1 passed, 1 failed, 0 skipped (exit 1)"
is "tests/run: a TODO directive is no failure; \"# TODO\" in a description is (escaped)" \
	"$(run tapfake-todo)" "0 passed, 1 failed, 0 skipped (exit 1)"
is "fail: a \"#\" of the description is escaped (no directive of its data)" \
	"$(results fail "a # TODO b")" 'not ok - a \# TODO b'

# every tier .ci/run sets for tests/run is one without_tiers takes away (lib/tiers.sh)
ci_tiers=$(grep -oE 'CORDON_[A-Z_]+=' "$here/../../.ci/run" | tr -d = | sort -u | tr '\n' ' ')
isnt "lib/tiers.sh: .ci/run sets tiers" "$ci_tiers" ""
is "lib/tiers.sh: its list is every tier .ci/run sets" \
	"$(printf '%s\n' "${CORDON_TIERS[@]}" | sort -u | tr '\n' ' ')" "$ci_tiers"
is "without_tiers: none of them reaches the command" \
	"$(CORDON_VM=1 CORDON_MUTATE=5 without_tiers env | grep -cE '^(CORDON_VM|CORDON_MUTATE)=')" "0"

done_testing
