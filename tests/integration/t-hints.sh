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
out=$(as_caller env PATH="$bin:/usr/bin:/bin" "$CORDON" --workdir "$w" -- sh -c mytool 2>&1)
is "through a shell (exit 127): the shell's line, then cordon's naming the dropped directory" \
	"$(sed 's/^sh: [0-9]*: /sh: /' <<<"$out")" "sh: mytool: not found
cordon: exit 127 (a command not found?): PATH's $bin was dropped (the sandbox does not have it: hidden, or not bound; --ro-bind it to keep it)"
out=$(as_caller env PATH="$bin:/usr/bin:/bin" "$CORDON" -q --workdir "$w" -- sh -c 'exit 127' 2>&1)
is "... not under -q" "$out" ""
out=$(as_caller env PATH="/usr/bin:/bin" "$CORDON" --workdir "$w" -- sh -c 'exit 127' 2>&1)
is "... nor when nothing was dropped" "$out" ""
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

# 7: git's identity inside defaults to the caller's own (its global git config), and only that
gh=$TEST_TMP/githome && mkdir -p "$gh" && printf '[user]\n\tname = Ann Caller\n\temail = ann@example.com\n' >"$gh/.gitconfig"
chmod -R a+rX "$gh"
commit='rm -rf g && git init -q g && cd g && git commit -q --allow-empty -m m && git log --format="%an|%ae|%cn|%ce"'
gc() { out=$(cd "$w" && as_caller env HOME="$1" "$CORDON" --workdir "$w" "${@:2}" 2>"$TEST_TMP/stderr"); rc=$?; err=$(cat "$TEST_TMP/stderr"); }
gc "$gh" -- sh -c "$commit"
is "no --git-identity: the first commit inside has the caller's git identity" "$rc:$out" \
	"0:Ann Caller|ann@example.com|Ann Caller|ann@example.com"
gc "$gh" -v -- true
like "... and -v says so" "$err" "git-identity: Ann Caller <ann@example.com>, your global git config's"
gc "$gh" --git-identity 'Bo <bo@example.com>' -- sh -c "$commit"
is "--git-identity wins over it" "$rc:$out" "0:Bo|bo@example.com|Bo|bo@example.com"
gc "$gh" --git-identity none -- sh -c 'echo "${GIT_AUTHOR_NAME-unset}"'
is "--git-identity none: the caller's is not taken" "$rc:$out" "0:unset"
gc "$TEST_TMP/nohome" -- sh -c 'echo "${GIT_AUTHOR_NAME-unset}"'
is "a caller without a git identity: none set" "$rc:$out" "0:unset"
# the workdir's repository is the sandbox's to write: its config neither names the identity nor
# runs anything on the host (cordon run from inside it, as a user would)
rm -rf "$w/g" && as_caller git init -q "$w/g" && as_caller git -C "$w/g" config user.name Evil &&
	as_caller git -C "$w/g" config user.email evil@example.com &&
	as_caller git -C "$w/g" config core.fsmonitor "touch $TEST_TMP/pwned-fsmonitor" &&
	as_caller git -C "$w/g" config core.pager "touch $TEST_TMP/pwned-pager"
out=$(cd "$w/g" && as_caller env HOME="$TEST_TMP/nohome" "$CORDON" --workdir "$w" -- sh -c 'echo "${GIT_AUTHOR_NAME-unset}"' 2>&1)
is "a workdir repository's user.name is not taken as the caller's" "$out" unset
out=$(cd "$w/g" && as_caller env HOME="$gh" "$CORDON" --workdir "$w" -- sh -c 'echo "$GIT_AUTHOR_NAME"' 2>&1)
is "... nor does it override the caller's global one" "$out" "Ann Caller"
ok_absent() { if [ -e "$1" ]; then fail "$2"; else pass "$2"; fi; }
ok_absent "$TEST_TMP/pwned-fsmonitor" "... and nothing of its config ran on the host (core.fsmonitor)"
ok_absent "$TEST_TMP/pwned-pager" "... (core.pager)"
rm -rf "$w/g"

# 9: a tarball unpacked in the workdir by root keeps its archive's owners: the sandbox cannot
# write those files; cordon says so at the start, and unpacked inside or with --no-same-owner
# they are the sandbox's
src=$TEST_TMP/tarsrc && mkdir -p "$src/proj" && printf '#!/bin/sh\necho configured > config.status\n' >"$src/proj/configure"
chmod 755 "$src/proj/configure" && cp /bin/true "$src/proj/suid" && chmod 4755 "$src/proj/suid"
tar -C "$src" --owner=1234 --group=1234 -czf "$TEST_TMP/proj.tgz" proj && chmod 644 "$TEST_TMP/proj.tgz"
w9=$(mkwork)
tar -C "$w9" -xzf "$TEST_TMP/proj.tgz" # as root: the archive's owners kept
cordon --workdir "$w9" -- sh -c 'cd proj && ./configure'
is "unpacked by root on the host: the sandbox cannot write it (as bubblewrap cannot)" "$rc" 2
owner=$(stat -c %u "$w9")
if is_user_mode; then # the caller cannot write them on the host either: nothing to tell
	is "... as on the host, where the caller cannot write them either: no notice" \
		"$(grep -c '^cordon: workdir:' <<<"$err")" 0
else
	is "... and the run says why, at the start" "$(head -1 <<<"$err")" \
		"cordon: workdir: proj belongs to uid 1234, not to the workdir's owner (uid $owner): the sandbox cannot write it (unpacked as root? tar --no-same-owner, or unpack inside; chown -R $owner:$(stat -c %g "$w9") gives it back)"
fi
cordon --workdir "$w9" --seccomp-policy "$TEST_TMP/no-such.policy" -- true
is "... bad input still gets its one line, not the notice before it" \
	"$rc:$(wc -l <<<"$err")" "125:1"
cordon -q --workdir "$w9" -- true
is "... not under -q" "$rc:$err" "0:"
w9=$(mkwork)
as_caller tar -C "$w9" --no-same-owner -xzf "$TEST_TMP/proj.tgz" 2>/dev/null ||
	{ tar -C "$w9" --no-same-owner -xzf "$TEST_TMP/proj.tgz" && chown -R "$(stat -c %u:%g "$w9")" "$w9/proj"; }
cordon --workdir "$w9" -- sh -c 'cd proj && ./configure && cat config.status'
is "unpacked with --no-same-owner: configure writes, no notice" "$rc:$out:$err" "0:configured:"
w9=$(mkwork)
cordon --workdir "$w9" --ro-bind "$TEST_TMP/proj.tgz:/proj.tgz" -- sh -c 'tar -xzf /proj.tgz && cd proj && ./configure && cat config.status'
is "unpacked inside, as the sandbox's user: configure writes" "$rc:$out" "0:configured"
w9=$(mkwork)
cordon --workdir "$w9" --uid 0 --ro-bind "$TEST_TMP/proj.tgz:/proj.tgz" -- sh -c 'tar -xpzf /proj.tgz 2>/dev/null; cd proj && ./configure && cat config.status'
is "unpacked inside as uid 0 (tar -p tries the archive's owners, fails): configure writes" "$rc:$out" "0:configured"
is "... and on the host every file is the workdir owner's, no setuid bit" \
	"$(find "$w9/proj" ! -uid "$(stat -c %u "$w9")" -o -perm /6000 | wc -l)" 0

# 10: HOME inside is the caller's home path, so that ~ in cordon's own arguments points at it
home=$(getent passwd "$(caller_uid)" | cut -d: -f6)
c -- sh -c 'echo "$HOME"; stat -c %a "$HOME"; ls -A "$HOME"'
is "HOME inside is the caller's home path, an empty tmpfs but for cordon's .gitconfig" \
	"$(echo $out)" "$home 700 .gitconfig"
made_home=
if [ ! -d "$home" ] && [ "$(id -u)" = 0 ]; then
	mkdir -p "$home" && chown "$(caller_uid)" "$home" && made_home=$home
fi
dot=$home/.cordon-t-hints.$$
if printf '[user]\n\tname = Dot File\n\temail = dot@example.com\n' >"$dot" &&
	{ [ "$(id -u)" != 0 ] || chown "$(caller_uid)" "$dot"; }; then
	c --ro-bind "$dot" -- sh -c 'cat "$HOME/${1##*/}" | grep -c "Dot File"' _ "$dot"
	is "--ro-bind of a dotfile of the caller's home lands in HOME" "$rc:$out" "0:1"
	c --ro-bind "$dot:$home/.gitconfig" -- git config --global user.email
	is "... so does one bound as HOME's .gitconfig: git reads it" "$rc:$out" "0:dot@example.com"
	rm -f "$dot"
else
	skip "--ro-bind of a dotfile of the caller's home lands in HOME" "cannot write in $home"
	skip "... so does one bound as HOME's .gitconfig: git reads it" "cannot write in $home"
fi
[ -n "$made_home" ] && rmdir "$made_home"
c --tmpfs "$home:3G" -- sh -c 'df -k "$HOME" | tail -1 | awk "{print \$2}"'
is "--tmpfs \$HOME:3G sizes HOME" "$rc:$out" "0:3145728"

# 11: under a terminal, the command gets the caller's pty itself: isatty() and /dev/tty work,
# `tty` has no name for it (the sandbox's devpts is its own), and -v says why
if command -v script >/dev/null; then
	out=$(cd "$w" && as_caller script -qec "$CORDON --workdir $w -- sh -c 'tty; test -t 0 && echo isatty; stty size </dev/tty >/dev/null && echo dev-tty'" /dev/null 2>&1 | tr -d '\r')
	is "under a terminal: tty has no name inside, isatty() and /dev/tty work" "$out" "not a tty
isatty
dev-tty"
	out=$(cd "$w" && as_caller script -qec "$CORDON -v --workdir $w -- true" /dev/null 2>&1 | tr -d '\r')
	like_glob "... and -v says why" "$out" "*terminal: /dev/pts/*, the caller's, is the command's own (not a copy): it has no name inside (the sandbox's devpts is its own): \`tty\` says \"not a tty\"*"
else
	skip "under a terminal: tty has no name inside, isatty() and /dev/tty work" "no script(1) (bsdutils)"
	skip "... and -v says why" "no script(1) (bsdutils)"
fi

done_testing
