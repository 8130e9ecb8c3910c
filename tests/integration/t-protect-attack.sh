#!/usr/bin/env bash
# Attacks on protected paths and the copy-on-write workdir (review r15): each test fails while
# the hole is open.
. "$TAP_LIB"

own() { if is_user_mode && [ "$(id -u)" = 0 ]; then chown -hR "$TEST_USER:" "$@"; fi; }
store=$(mkwork)
chmod 700 "$store"
own "$store"
mark=$TEST_TMP/pwned
rm -f "$mark"
chmod 1777 "$TEST_TMP" 2>/dev/null

# --- 1. .git/commondir: git then reads config (core.fsmonitor) and hooks from a directory the
# sandbox wrote; .git/config's protection is bypassed and `git status` on the host runs code
w=$(mkwork)
git -C "$w" init -q . && echo hi >"$w/f"
own "$w"
cordon --workdir "$w" -- sh -c 'mkdir -p evil && cp -r .git/objects .git/refs evil/ &&
	printf "[core]\n\trepositoryformatversion = 0\n\tfsmonitor = \"touch '"$mark"'; false\"\n" >evil/config &&
	echo ../evil >.git/commondir'
as_caller env HOME="$TEST_TMP" git -c safe.directory='*' -C "$w" status >/dev/null 2>&1
is "a sandbox cannot redirect git's config through .git/commondir (git status runs nothing)" \
	"$(test -e "$mark" && echo ran || echo no)" no
rm -f "$mark"

# --- 2. a protected path below a directory that does not exist: the sandbox makes that
# directory a symlink, and the sweep (RESOLVE_NO_SYMLINKS on the parent) leaves it all
w=$(mkwork)
cordon --workdir "$w" -- sh -c 'mkdir vs && echo "{\"tasks\":[]}" >vs/tasks.json && ln -s vs .vscode'
is "a direct run leaves no .vscode/tasks.json reached through a planted .vscode symlink" \
	"$(test -e "$w/.vscode/tasks.json" && echo there || echo gone)" gone

# --- 3. the sweep removes the user's own symlink at a protected path (there before the run)
w=$(mkwork)
mkdir "$w/real" && echo 'export X=1' >"$w/real/envrc" && ln -s real/envrc "$w/.envrc"
own "$w"
cordon --workdir "$w" -- true
is "a run that does nothing keeps the user's .envrc symlink" \
	"$(test -L "$w/.envrc" && echo kept || echo removed)" kept

# --- 4. a sparse file in the upper (no blocks in the tmpfs) is saved as zeros in full
w=$(mkwork)
cordon --workdir "$w" --cow --cow-size 8M --layer-dir "$store" -- truncate -s 1G sparse
used=$(du -sm "$store" | cut -f1)
is "a sparse file of 1G in an 8M layer does not take 1G of the store (${used}M)" \
	"$([ "$used" -lt 64 ] && echo bounded || echo unbounded)" bounded
rm -rf "${store:?}"/* "$store"/.[!.]* 2>/dev/null

# --- 5. hard links: one inode in the upper, one full copy per name in the store
w=$(mkwork)
cordon --workdir "$w" --cow --cow-size 8M --layer-dir "$store" -- sh -c \
	'dd if=/dev/zero of=a bs=1M count=4 2>/dev/null; i=0; while [ $i -lt 50 ]; do ln a l$i; i=$((i+1)); done'
used=$(du -sm "$store" | cut -f1)
is "50 hard links to a 4M file in an 8M layer do not take 200M of the store (${used}M)" \
	"$([ "$used" -lt 64 ] && echo bounded || echo unbounded)" bounded
rm -rf "${store:?}"/* "$store"/.[!.]* 2>/dev/null

# --- 6. deep trees of long names: each change's full path is kept in memory and the manifest
w=$(mkwork)
cordon --workdir "$w" --cow --cow-size 8M --layer-dir "$store" -- python3 -c '
import os
n = "d" * 250
for i in range(800):
    os.mkdir(n); os.chdir(n)
for j in range(800):
    open("f%d" % j, "w").close()'
used=$(du -sm "$store" | cut -f1)
is "a deep tree of 1600 empty entries in an 8M layer does not make a ${used}M manifest" \
	"$([ "$used" -lt 64 ] && echo bounded || echo unbounded)" bounded
rm -rf "${store:?}"/* "$store"/.[!.]* 2>/dev/null

done_testing
