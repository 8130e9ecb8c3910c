#!/usr/bin/env bash
# A session's watched directories (cordon_session_watch: inotify by the agent inside) and what
# it uses now (cordon_session_usage), through the library: tests/helpers/session-watch-test.c
# does the work in a fresh directory of the caller's and speaks TAP; this script runs it as the
# caller. The cgroup path of the usage needs cgroup v2 controllers: the VM tier's (tests/vm).
. "$TAP_LIB"

if [ -z "${SESSION_WATCH_TEST:-}" ] || [ ! -x "$SESSION_WATCH_TEST" ]; then
	skip "session-watch-test" "not built (tests/helpers/session-watch-test.c)"
	done_testing
	exit
fi
w=$(mkwork)
as_caller "$SESSION_WATCH_TEST" "$w"
