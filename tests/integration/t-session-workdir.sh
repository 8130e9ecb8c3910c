#!/usr/bin/env bash
# A session's workdir removed by cordon_session_destroy() (CORDON_SESSION_REMOVE_WORKDIR) when
# its supervisor died without a result: what is removed is the sandbox's workdir, never what the
# path named for an instant.
. "$TAP_LIB"

# Root's session removes its workdir at destroy when its supervisor died (SIGKILL): what it
# removes is what the sandbox had, never what another user's symlink on the way pointed at when
# create looked (the owner of a directory on the path swaps it with a symlink of its own to
# root's files; swap-shim.so wins that race every time: workdir-swap.c)
if is_user_mode || [ "$(id -u)" != 0 ]; then
	skip "root's session: a workdir path another user swaps removes nothing of root's" \
		"the attacker is another user than the caller: as root only"
elif [ -z "${WORKDIR_SWAP:-}" ] || [ ! -e "$(dirname "$WORKDIR_SWAP")/swap-shim.so" ]; then
	skip "root's session: a workdir path another user swaps removes nothing of root's" \
		"not built (tests/helpers/workdir-swap.c, swap-shim.c)"
else
	b=$(mkwork)
	mkdir -p "$b/att/link/wd" "$b/victim/wd/sub"
	echo precious >"$b/victim/wd/keep"
	echo precious >"$b/victim/wd/sub/keep2"
	chown -R "$TEST_USER:" "$b/att"
	out=$(CORDON_TEST_SWAP="$b/att/link $b/att/link.sym $b/att/real $b/att/link" \
		LD_PRELOAD="$(dirname "$WORKDIR_SWAP")/swap-shim.so" \
		ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 \
		"$WORKDIR_SWAP" "$b/att" "$b/victim" "$(id -u "$TEST_USER")" "$(id -g "$TEST_USER")" 2>&1)
	is "root's session: a workdir path another user swaps removes nothing of root's" \
		"$(cd "$b" && find victim | sort | tr '\n' ' ')" "victim victim/wd victim/wd/keep victim/wd/sub victim/wd/sub/keep2 "
	like_glob "... create refuses the other user's symlink, in one line" "$out" \
		"create refused: $b/att/link/wd: $b/att/link is a symlink owned by uid $(id -u "$TEST_USER");*"
fi
done_testing
