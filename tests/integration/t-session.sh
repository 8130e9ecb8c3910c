#!/usr/bin/env bash
# Sessions (cordon.h "sessions"): a sandbox that stays up and runs many commands, through the
# library. tests/helpers/session-test.c does the work against a fresh directory of the caller's
# (each session a directory below it) and speaks TAP; this script runs it as the caller and
# passes its results on.
. "$TAP_LIB"

if [ -z "${SESSION_TEST:-}" ] || [ ! -x "$SESSION_TEST" ]; then
	skip "session-test" "not built (tests/helpers/session-test.c)"
	done_testing
	exit
fi
[ -x "$(dirname "$SESSION_TEST")/cordon-agent" ] && [ -x "$(dirname "$SESSION_TEST")/cordon-init" ] || fail "cordon-agent and cordon-init sit beside session-test"

w=$(mkwork)
as_caller "$SESSION_TEST" "$w"

