#!/usr/bin/env bash
# A session's usage from its cgroup (cordon_session_usage: the supervisor reads memory.current,
# memory.stat, memory.max, cpu.stat): tests/helpers/session-watch-test.c --cgroup, as root and
# as the user (in the delegated cgroup). Runs only inside tests/vm/run's VM.
# shellcheck source-path=SCRIPTDIR source=../lib/tap.sh
. "$TAP_LIB"

t=$(dirname "$CORDON")/session-watch-test
[ -x "$t" ] && [ -x "$(dirname "$CORDON")/cordon-agent" ] || fail "session-watch-test and cordon-agent are in the image"
w=$(mkwork)
as_caller "$t" --cgroup "$w"
