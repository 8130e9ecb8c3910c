# tap.sh - TAP output and the helpers every integration test uses. Source it.
#
# Environment (set by tests/run):
#   CORDON        the cordon binary to test
#   PROBE         the probe helper (tests/helpers/probe.c)
#   CORDON_AS     root | user: who runs cordon (user: $TEST_USER through setpriv)
#   TEST_USER     the unprivileged account for CORDON_AS=user
#   TEST_TMP      a scratch directory, world-traversable, removed afterwards
set -u
PROBE_DIR=$(dirname "${PROBE:-/nonexistent/probe}")

_tap_n=0
_tap_failed=0
_tap_lib_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

_tap_result() { # ok|not ok, description, [directive]
	_tap_n=$((_tap_n + 1))
	# a "#" of the description is escaped: only the directive's says SKIP or TODO
	printf '%s %d - %s%s\n' "$1" "$_tap_n" "${2//#/\\#}" "${3:+ # $3}"
}

# A known bug, said so: between todo "why" and todo_end, a failure is "not ok ... # TODO why"
# (tests/run counts it as neither passed nor failed), a pass "ok ... # TODO why" (mended: drop
# the todo). The check still runs and still prints what it got.
_tap_todo=
todo() { _tap_todo=$1; }
todo_end() { _tap_todo=; }
pass() { _tap_result ok "$*" "${_tap_todo:+TODO $_tap_todo}"; }
fail() {
	_tap_result "not ok" "$*" "${_tap_todo:+TODO $_tap_todo}"
	[ -n "$_tap_todo" ] || _tap_failed=$((_tap_failed + 1))
}
skip() { _tap_result ok "$1" "SKIP ${2:-}"; }
diag() { printf '# %s\n' "$*" | sed '2,$s/^/# /'; }
done_testing() {
	printf '1..%d\n' "$_tap_n"
	[ "$_tap_failed" -eq 0 ]
}

# The unprivileged user's HOME does not exist: where its cordon remembers earlier workdirs
if [ "${CORDON_AS:-root}" = user ] && [ "$(id -u)" = 0 ] && [ -n "${TEST_TMP:-}" ]; then
	USER_STATE=$TEST_TMP/state-$TEST_USER
	mkdir -p "$USER_STATE" && chown "$TEST_USER:" "$USER_STATE"
fi

# Run cordon as the chosen identity; output in $out, stderr in $err, status in $rc.
# The probe's directory is bound read-only so that it can run inside.
as_caller() {
	if [ "${CORDON_AS:-root}" = user ] && [ "$(id -u)" = 0 ]; then
		setpriv --reuid="$TEST_USER" --regid="$TEST_USER" --clear-groups \
			env HOME="/home/$TEST_USER" USER="$TEST_USER" LOGNAME="$TEST_USER" \
			XDG_STATE_HOME="$USER_STATE" "$@"
	else
		"$@"
	fi
}

# Same, replacing the shell: for `( exec_as_caller ... ) &`, so that $! is cordon itself.
exec_as_caller() {
	if [ "${CORDON_AS:-root}" = user ] && [ "$(id -u)" = 0 ]; then
		exec setpriv --reuid="$TEST_USER" --regid="$TEST_USER" --clear-groups \
			env HOME="/home/$TEST_USER" USER="$TEST_USER" LOGNAME="$TEST_USER" \
			XDG_STATE_HOME="$USER_STATE" "$@"
	fi
	exec "$@"
}

# stderr as $err, without --cow's notice that directories cannot be renamed (every --cow run
# prints it first; t-cow-rename checks it): the suites compare the rest exactly
_cordon_err() { err=$(grep -v '^cordon: cow: directories of the workdir cannot be renamed' "$TEST_TMP/stderr"); }

cordon() {
	out=$(as_caller "$CORDON" --ro-bind "$PROBE_DIR" "$@" 2>"$TEST_TMP/stderr")
	rc=$?
	_cordon_err
	return 0
}

# cordon without the probe bind, for tests of the exact layout
cordon_bare() {
	out=$(as_caller "$CORDON" "$@" 2>"$TEST_TMP/stderr")
	rc=$?
	_cordon_err
	return 0
}

# A fresh workdir owned by whoever runs cordon.
mkwork() {
	local d
	d=$(mktemp -d "$TEST_TMP/work.XXXXXX")
	chmod 755 "$d"
	if [ "${CORDON_AS:-root}" = user ] && [ "$(id -u)" = 0 ]; then
		chown "$TEST_USER:" "$d"
	fi
	echo "$d"
}

# is "description" ACTUAL EXPECTED
is() {
	if [ "$2" = "$3" ]; then
		pass "$1"
	else
		fail "$1"
		diag "expected: $3"
		diag "got:      $2"
		[ -n "${err:-}" ] && diag "stderr:   $err"
	fi
	return 0
}

# isnt "description" ACTUAL UNEXPECTED: they differ
isnt() {
	if [ "$2" != "$3" ]; then
		pass "$1"
	else
		fail "$1"
		diag "must differ from: $3"
	fi
	return 0
}

# like "description" ACTUAL TEXT: ACTUAL contains TEXT, literally (no character of TEXT is a
# pattern: a namespace's "net:[4026531840]" is those 16 characters). For a pattern, like_glob.
like() {
	if [ -z "$3" ]; then # every text holds the empty one: a check that could not fail
		fail "$1"
		diag "like: an empty text to look for (a variable that was not set?)"
	elif [[ $2 == *"$3"* ]]; then
		pass "$1"
	else
		fail "$1"
		diag "expected to contain: $3"
		diag "got:                 $2"
		[ -n "${err:-}" ] && diag "stderr:              $err"
	fi
	return 0
}

# unlike "description" ACTUAL TEXT: ACTUAL does not contain TEXT, literally
unlike() {
	if [[ $2 != *"$3"* ]]; then
		pass "$1"
	else
		fail "$1"
		diag "must not contain: $3"
		diag "got:              $2"
	fi
	return 0
}

# like_glob "description" ACTUAL GLOB: the whole of ACTUAL matches the bash pattern GLOB (*, ?,
# [...]; @(a|b) where the suite turned extglob on). Data spliced into GLOB goes through
# glob_quote, so that it stands for itself: like_glob "..." "$err" "cordon: $(glob_quote "$d"): *"
like_glob() {
	# (case, not [[ == ]], which reads every pattern as extglob: "*(+)" is not "*" then "(+)")
	# shellcheck disable=SC2254
	case $2 in
	$3) pass "$1" ;;
	*)
		fail "$1"
		diag "expected to match: $3"
		diag "got:               $2"
		[ -n "${err:-}" ] && diag "stderr:            $err"
		;;
	esac
	return 0
}

# unlike_glob "description" ACTUAL GLOB: the whole of ACTUAL does not match GLOB
unlike_glob() {
	# shellcheck disable=SC2254
	case $2 in
	$3)
		fail "$1"
		diag "must not match: $3"
		diag "got:            $2"
		;;
	*) pass "$1" ;;
	esac
	return 0
}

# glob_quote TEXT: TEXT with each character a pattern gives a meaning escaped, to splice data
# into a like_glob pattern
glob_quote() {
	local s=$1 out='' c i
	for ((i = 0; i < ${#s}; i++)); do
		c=${s:i:1}
		case $c in
		'*' | '?' | '[' | ']' | '\' | '(' | ')' | '|' | '@' | '+' | '!') out+="\\$c" ;;
		*) out+=$c ;;
		esac
	done
	printf '%s' "$out"
}

# wait_until SECONDS CMD...: poll CMD every 0.05 s until it succeeds (status 0) or time is up (1)
wait_until() {
	local end=$((SECONDS + $1 + 1))
	shift
	until "$@"; do
		[ "$SECONDS" -ge "$end" ] && return 1
		sleep 0.05
	done
}

# between DESC VALUE MIN MAX: VALUE is an integer in [MIN, MAX]
between() {
	if [[ $2 =~ ^[0-9]+$ ]] && [ "$2" -ge "$3" ] && [ "$2" -le "$4" ]; then pass "$1"; else
		fail "$1"
		diag "expected an integer in [$3, $4]"
		diag "got:      ${2:-(nothing)}"
		[ -n "${err:-}" ] && diag "stderr:   $err"
	fi
	return 0
}

# rejects "description" EXPECTED_STDERR -- cordon args...: exit 125 and exactly that line
rejects() {
	local desc=$1 want=$2
	shift 3
	cordon_bare "$@"
	if [ "$rc" = 125 ] && [ "$err" = "$want" ] && [ -z "$out" ]; then
		pass "$desc"
	else
		fail "$desc"
		diag "expected: rc=125 stderr=$want"
		diag "got:      rc=$rc stderr=$err stdout=$out"
	fi
}

# tap_include CMD...: run a TAP producer (a C helper); its results become ours (renumbered), its
# other lines comments; one that exits non-zero without a failure fails, and so does one whose
# stream is not whole (no plan, results missing: tapcheck.awk beside this file)
tap_include() {
	local line out status failed=$_tap_failed d
	out=$("$@" 2>&1)
	status=$?
	out=$(awk -v name="$1" -f "$_tap_lib_dir/tapcheck.awk" <<<"$out") || fail "$1: tapcheck.awk"
	while IFS= read -r line; do
		case $line in
		"not ok "*) fail "${line#not ok * - }" ;;
		"ok "*"# SKIP"*) d=${line#ok * - } && skip "${d%% # SKIP*}" "${d##*# SKIP }" ;;
		"ok "*) pass "${line#ok * - }" ;;
		"1.."*) ;;
		"#"*) printf '%s\n' "$line" ;;
		*) printf '# %s\n' "$line" ;;
		esac
	done <<<"$out"
	[ "$status" = 0 ] || [ "$_tap_failed" -gt "$failed" ] || fail "$1 exited with status $status"
}

is_user_mode() { [ "${CORDON_AS:-root}" = user ]; }

# host uid cordon runs as
caller_uid() {
	if is_user_mode && [ "$(id -u)" = 0 ]; then id -u "$TEST_USER"; else id -u; fi
}

# --- the copy-on-write suites' common ground (t-cow, t-cow-git, t-cow-rename)

# own PATH...: the caller's, when root runs the suite as the unprivileged user
own() { if is_user_mode && [ "$(id -u)" = 0 ]; then chown -hR "$TEST_USER:" "$@"; fi; }
# layer_of TEXT: the id of the layer a --cow run's stderr says it kept
layer_of() { sed -n 's/.*kept as layer \([0-9a-f]\{16\}\).*/\1/p' <<<"$1" | head -1; }
# lc CMD ARG...: a layer command (layers, diff, apply, discard) on the store $L, as the caller:
# $rc $out $err
lc() {
	local cmd=$1
	shift
	out=$(as_caller "$CORDON" "$cmd" --layer-dir "$L" "$@" 2>"$TEST_TMP/lerr")
	rc=$?
	err=$(cat "$TEST_TMP/lerr")
}
