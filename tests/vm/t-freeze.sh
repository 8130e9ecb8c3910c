#!/usr/bin/env bash
# Freezing a session (cordon_session_freeze) on a pure cgroup v2 hierarchy, as root and as the
# user in its delegated cgroup: tests/helpers/session-test.c's freeze part (a counter that stands
# still while frozen and goes on when thawed, a frozen session killed leaves nothing), which
# here must take the freezer's path, not the refusal's. Runs only inside tests/vm/run's VM.
# shellcheck source-path=SCRIPTDIR source=../lib/tap.sh
. "$TAP_LIB"

st=$(dirname "$CORDON")/session-test
if [ ! -x "$st" ] || [ ! -x "$(dirname "$CORDON")/cordon-agent" ]; then
	fail "session-test and cordon-agent are in the image (tests/vm/run copies them from the build)"
	done_testing
	exit
fi
w=$(mkwork)
as_caller env SESSION_TEST_ONLY=freeze "$st" "$w"
