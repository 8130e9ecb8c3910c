#!/usr/bin/env bash
# Where a new user is stuck, a hint: a command not found because its PATH directory was dropped,
# -C relative to the workdir, git's identity, HOME at the caller's home path, tarballs with
# foreign owners, the terminal inside (issue 29, items 6, 7, 9, 10, 11).
. "$TAP_LIB"

w=$(mkwork)
c() { cordon --workdir "$w" "$@"; }

# 6: a PATH directory the sandbox does not have holds the command: say so without -v
bin=$TEST_TMP/mybin
mkdir -p "$bin" && printf '#!/bin/sh\necho mine\n' >"$bin/mytool" && chmod -R a+rx "$bin"
out=$(as_caller env PATH="$bin:/usr/bin:/bin" "$CORDON" --workdir "$w" -- mytool 2>"$TEST_TMP/e6")
rc=$?
is "a command only in a dropped PATH directory: not found (127)" "$rc" 127
is "... and one line names the directory, without -v" "$(cat "$TEST_TMP/e6")" \
	"cordon: exec: mytool: not found: PATH's $bin was dropped (the sandbox does not have it: hidden, or not bound; --ro-bind it to keep it)"
out=$(as_caller env PATH="$bin:/usr/bin:/bin" "$CORDON" --workdir "$w" -- no-such-tool-29 2>&1)
is "a command found nowhere: the plain line" "$out" "cordon: exec: no-such-tool-29: No such file or directory"

# 11: -C relative to the workdir; one that climbs out of it is refused
mkdir -p "$w/sub/deeper" && { ! is_user_mode || chown -R "$TEST_USER:" "$w/sub"; }
c -C sub -- pwd
is "-C sub: the workdir's sub" "$out" "$w/sub"
c -C ./sub/deeper/.. -- pwd
is "-C ./sub/deeper/..: the same" "$out" "$w/sub"
c -C . -- pwd
is "-C .: the workdir" "$out" "$w"
rejects "-C .. is refused" 'cordon: --chdir: "..": outside the workdir' -- --workdir "$w" -C .. -- true
rejects "-C sub/../.. is refused" 'cordon: --chdir: "sub/../..": outside the workdir' -- --workdir "$w" -C sub/../.. -- true

done_testing
