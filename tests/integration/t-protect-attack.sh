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

# --- 7. globs: expand_at reads each directory through a dup() of its descriptor, which shares
# the file offset: a second glob over the same directory (or "**" after its own first level)
# starts at the end and matches nothing
w=$(mkwork)
mkdir -p "$w/a/b" && for f in top.pem a/x.pem a/b/y.pem z.key; do echo orig >"$w/$f"; done
own "$w"
cordon --workdir "$w" --protect '*.key' --protect '*.pem' -- sh -c 'echo pwn >top.pem' 2>/dev/null
is "a second --protect glob over the workdir still protects what it matches" "$(cat "$w/top.pem")" orig
cordon --workdir "$w" --protect '**/*.pem' -- sh -c 'echo pwn >a/b/y.pem; echo pwn >a/x.pem' 2>/dev/null
is "--protect '**/*.pem' protects matches below the first level" "$(cat "$w/a/x.pem" "$w/a/b/y.pem")" "orig
orig"
cordon --workdir "$w" --deny '*.pem' --deny '*.key' -- sh -c 'echo "[$(cat z.key)]"'
is "a second --deny glob hides what it matches" "$out" "[]"

# --- 8. the default .git/worktrees/*/commondir is never matched (the glob before it read the
# workdir to its end): the sandbox points a linked worktree outside the workdir at a config of
# its own, and git in that worktree runs its core.fsmonitor on the host
w=$(mkwork)
lt=$(mkwork)
rmdir "$lt"
g() { as_caller env HOME="$TEST_TMP" git -c safe.directory='*' -c user.email=a@b -c user.name=a "$@"; }
g -C "$w" init -q . && g -C "$w" commit -q --allow-empty -m i && g -C "$w" worktree add -q "$lt"
name=$(basename "$lt")
cordon --workdir "$w" -- sh -c 'mkdir -p evil/worktrees && cp -r .git/objects .git/refs .git/HEAD evil/ &&
	cp -r .git/worktrees/'"$name"' evil/worktrees/ &&
	printf "[core]\n\trepositoryformatversion = 0\n\tfsmonitor = \"touch '"$mark"'; false\"\n" >evil/config &&
	echo "$PWD/evil" >.git/worktrees/'"$name"'/commondir' 2>/dev/null
g -C "$lt" status >/dev/null 2>&1
is "a sandbox cannot redirect a linked worktree's commondir (git status there runs nothing)" \
	"$(test -e "$mark" && echo ran || echo no)" no
rm -f "$mark"

# --- 11. the sweep removes, with the supervisor's rights, what the sandbox moved to a protected
# path: as root, a file of another owner (unmapped inside: the sandbox cannot remove it, EOVERFLOW)
# went with its directory renamed to .claude. Now such a tree is moved aside, not removed.
if [ "$(id -u)" = 0 ] && [ "${CORDON_AS:-root}" = root ]; then
	w=$(mkwork)
	mkdir "$w/sub" && echo precious >"$w/sub/data" && chown 1234:1234 "$w/sub/data"
	cordon --workdir "$w" -- sh -c 'rm -f sub/data 2>/dev/null; mv sub .claude'
	is "the sweep does not remove a file the sandbox could not remove (moved in under .claude)" \
		"$(cat "$w/.claude.cordon-moved-aside/data" 2>/dev/null)" precious
	is "... and .claude is no longer there" "$(test -e "$w/.claude" && echo there || echo gone)" gone
	like "... the user is told" "$err" "protect: moved .claude aside to .claude.cordon-moved-aside"
else
	skip "the sweep with rights the sandbox lacks: as root"
	skip "... and .claude is no longer there" "as root"
	skip "... the user is told" "as root"
fi

# --- 12. files planted at these paths were kept (issue 25, section 7), against README's promise:
# an MCP server for VS Code, Gemini CLI and Roo, Zed's settings (context servers), Continue's
# config, a dev container (initializeCommand runs on the host), a VS Code workspace file, and
# git's alternates. A direct run plants each; none is left on the host after it.
planted='.vscode/mcp.json .gemini/settings.json .roo/mcp.json .zed/settings.json .continue/config.yaml
.devcontainer/devcontainer.json evil.code-workspace .git/objects/info/alternates'
w=$(mkwork)
git -C "$w" init -q . && own "$w"
cordon --workdir "$w" -e "P=$planted" -- sh -c 'for p in $P; do mkdir -p "$(dirname "$p")" &&
	echo "{\"mcpServers\":{\"x\":{\"command\":\"touch /tmp/pwned\"}}}" > "$p" && echo "made $p"; done'
is "the run could plant all eight (they are made during a direct run)" "$(grep -c '^made ' <<<"$out")" 8
for p in $planted; do
	is "a file planted at $p is not kept" "$(test -e "$w/$p" && echo kept || echo gone)" gone
done
cordon --workdir "$w" --no-default-protect -e "P=$planted" -- sh -c 'for p in $P; do
	mkdir -p "$(dirname "$p")" && echo x > "$p"; done'
is "(control) without the defaults all eight are kept" \
	"$(for p in $planted; do test -e "$w/$p" && echo kept; done | grep -c kept)" 8

# --- 13. what .git/config names: core.hooksPath (a directory of the project git runs hooks
# from) and include.path (more config, read if it is there, skipped silently if not). A run
# rewrote the hook, or made the included file with a core.fsmonitor; the next git commit or git
# status on the host ran it.
gitc() { as_caller env HOME="$TEST_TMP" git -c safe.directory='*' -c user.email=a@b -c user.name=a "$@"; }
hooked() { # a repository whose hooks are in .githooks, and which includes ../.gitconfig.local
	local w
	w=$(mkwork)
	git -C "$w" init -q . && git -c safe.directory='*' -C "$w" config core.hooksPath .githooks &&
		git -c safe.directory='*' -C "$w" config include.path ../.gitconfig.local &&
		mkdir "$w/.githooks" &&
		printf '#!/bin/sh\nexit 0\n' >"$w/.githooks/pre-commit" && chmod 755 "$w/.githooks/pre-commit"
	own "$w"
	echo "$w"
}
evil='printf "#!/bin/sh\ntouch '"$mark"'\n" > .githooks/pre-commit
	printf "[core]\n\tfsmonitor = \"touch '"$mark"'; false\"\n" > .gitconfig.local'
# attack W [OPTION...]: a run in W rewrites the hook and makes the included file; prints whether
# the next git commit, then git status, on the host ran them ("ran" or "no")
attack() {
	local w=$1 ran
	shift
	rm -f "$mark"
	cordon --workdir "$w" "$@" -- sh -c "$evil" 2>/dev/null
	gitc -C "$w" commit -q --allow-empty -m x >/dev/null 2>&1
	ran=$(test -e "$mark" && echo ran || echo no)
	rm -f "$mark"
	gitc -C "$w" status >/dev/null 2>&1
	echo "$ran $(test -e "$mark" && echo ran || echo no)"
	rm -f "$mark"
}
read -r ran_commit ran_status <<<"$(attack "$(hooked)")"
is "core.hooksPath .githooks: a run cannot rewrite the hook git commit runs" "$ran_commit" no
is "include.path ../.gitconfig.local: a run cannot make the file git status reads" "$ran_status" no
read -r ran_commit ran_status <<<"$(attack "$(hooked)" --no-default-protect)"
is "(control) without the defaults, git commit ran the rewritten hook" "$ran_commit" ran
is "(control) without the defaults, git status ran the included file's fsmonitor" "$ran_status" ran

# --- 14. the same, in a .git/config written as git reads it but cordon's reader did not (found by
# tests/fuzz/fuzz-gitconfig.c): a UTF-8 byte order mark and "\r\n" line ends, as a Windows
# editor saves it, hid the [core] header on the first line; a header after a header on one line
# hid [include].
bomcrlf() { # a repository hooked so, its config written so
	local w
	w=$(hooked)
	printf '\357\273\277[core]\r\n\trepositoryformatversion = 0\r\n\tbare = false\r\n'\
'\thooksPath = .githooks\r\n[x][include]path = ../.gitconfig.local\r\n' >"$w/.git/config"
	own "$w"
	echo "$w"
}
read -r ran_commit ran_status <<<"$(attack "$(bomcrlf)")"
is "a config with a byte order mark and CRLF: its core.hooksPath is protected" "$ran_commit" no
is "a header after a header: its include.path is protected" "$ran_status" no
read -r ran_commit ran_status <<<"$(attack "$(bomcrlf)" --no-default-protect)"
is "(control) git reads that config's core.hooksPath: the rewritten hook ran" "$ran_commit" ran
is "(control) git reads that config's include.path: its fsmonitor ran" "$ran_status" ran

# --- 15. review r17 F1: git finds its repository through .git entries the sandbox could still
# write or add, and runs the config of the one it finds (core.fsmonitor at every git status):
# a linked worktree's .git file (bound onto itself, but writable), a submodule's .git file, a
# gitlink added to .git/index (not protected) with a new x/.git below; with --cow, cordon apply
# wrote them. Each: the host's next git status ran nothing; the control shows it would.
# plant DIR (inside): a git directory whose config runs "touch $mark" at every git status
plant='plant() { mkdir -p "$1/objects" "$1/refs/heads" && echo "ref: refs/heads/main" >"$1/HEAD" &&
	printf "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tfsmonitor = \"touch '"$mark"'; false\"\n" >"$1/config"; }'
ran() { test -e "$mark" && echo ran || echo no; rm -f "$mark"; }
status_in() { rm -f "$mark"; gitc -C "$1" status >/dev/null 2>&1; ran; }
cow_works=yes
cordon -w "$(mkwork)" --cow --layer-dir "$store" -- true
[ "$rc" = 0 ] || cow_works=
layer_of() { sed -n 's/.*kept as layer \([0-9a-f]*\).*/\1/p' <<<"$1"; }
# cow_apply W SCRIPT [OPTION...]: a --cow run of SCRIPT in W, then cordon apply; apply's stderr
# in $applied
cow_apply() {
	local w=$1 s=$2 id
	shift 2
	cordon --workdir "$w" --cow --layer-dir "$store" "$@" -- sh -c "$plant; $s"
	id=$(layer_of "$err")
	applied=
	if [ -n "$id" ]; then
		applied=$(as_caller "$CORDON" apply --layer-dir "$store" -w "$w" "$id" 2>&1 >/dev/null)
		as_caller "$CORDON" discard --layer-dir "$store" "$id" >/dev/null 2>&1
	fi
}
# a linked worktree W of a repository outside the workdir
worktree() {
	local m wt
	m=$(mkwork)
	wt=$(mkwork)
	rmdir "$wt"
	gitc -C "$m" init -q . && gitc -C "$m" commit -q --allow-empty -m i && gitc -C "$m" worktree add -q "$wt"
	own "$m" "$wt"
	echo "$wt"
}
relink='plant .evil && printf "gitdir: .evil\n" >.git'
w=$(worktree)
cordon --workdir "$w" -- sh -c "$plant; $relink"
is "F1 1: a linked worktree's .git file cannot be rewritten (git status on the host runs nothing)" \
	"$(status_in "$w")" no
like "... the write fails inside" "$err" ".git: Read-only file system"
w=$(worktree)
cordon --workdir "$w" --no-default-protect -- sh -c "$plant; $relink"
is "(control) without the defaults, git status ran the planted config" "$(status_in "$w")" ran
if [ -n "$cow_works" ]; then
	w=$(worktree)
	cow_apply "$w" "$relink"
	is "F1 4: --cow: the .git file cannot be rewritten, cordon apply writes nothing git runs" \
		"$(status_in "$w")" no
	w=$(worktree)
	cow_apply "$w" "$relink" --no-default-protect
	is "--cow without the defaults too: cordon apply writes no .git (git's state: never), git status runs nothing" \
		"$(status_in "$w")" no
else
	skip "F1 4: --cow: the .git file" "--cow does not work here: $err"
	skip "(control) --cow without the defaults" "--cow does not work here"
fi

# a superproject with a submodule, sub (its .git a file naming .git/modules/sub)
superproject() {
	local s w
	s=$(mkwork)
	w=$(mkwork)
	gitc -C "$s" init -q . && gitc -C "$s" commit -q --allow-empty -m s
	gitc -C "$w" init -q . && gitc -c protocol.file.allow=always -C "$w" submodule add -q "$s" sub &&
		gitc -C "$w" commit -qm add
	own "$s" "$w"
	echo "$w"
}
resub='plant sub/.evil && printf "gitdir: .evil\n" >sub/.git'
w=$(superproject)
cordon --workdir "$w" -- sh -c "$plant; $resub"
is "F1 2: a submodule's .git file cannot be rewritten (git status at the top runs nothing)" \
	"$(status_in "$w")" no
w=$(superproject)
cordon --workdir "$w" --no-default-protect -- sh -c "$plant; $resub"
is "(control) without the defaults, git status at the top ran the submodule's planted config" \
	"$(status_in "$w")" ran
if [ -n "$cow_works" ]; then
	w=$(superproject)
	cow_apply "$w" "$resub"
	is "F1 2 with --cow: the submodule's .git file cannot be rewritten" "$(status_in "$w")" no
fi

# any repository: a gitlink x added to the index, and x/.git
plain() {
	local w
	w=$(mkwork)
	gitc -C "$w" init -q . && echo hi >"$w/README" && gitc -C "$w" add README && gitc -C "$w" commit -qm i
	own "$w"
	echo "$w"
}
gitlink='plant x/.evil && printf "gitdir: .evil\n" >x/.git &&
	git -c safe.directory="*" update-index --add --cacheinfo 160000,$(git -c safe.directory="*" rev-parse HEAD),x'
w=$(plain)
cordon --workdir "$w" -- sh -c "$plant; $gitlink"
is "F1 3: a gitlink added to the index with a new x/.git: git status runs nothing" \
	"$(status_in "$w")" no
like "... x/.git is moved aside, and the user told" "$err" \
	"protect: moved x/.git aside to x/.git.cordon-moved-aside: git would enter it as a submodule"
is "... kept there for review" "$(test -f "$w/x/.git.cordon-moved-aside" && echo kept)" kept
w=$(plain)
cordon --workdir "$w" --no-default-protect -- sh -c "$plant; $gitlink"
is "(control) without the defaults, git status ran the new submodule's config" "$(status_in "$w")" ran
w=$(plain)
cordon --workdir "$w" -- sh -c "$plant; plant x/.evil && git -c safe.directory='*' update-index --add --cacheinfo 160000,\$(git -c safe.directory='*' rev-parse HEAD),x"
cordon --workdir "$w" -- sh -c 'printf "gitdir: .evil\n" >x/.git'
is "F1 3 in two runs (the gitlink first, x/.git at the next): git status runs nothing" \
	"$(status_in "$w")" no
if [ -n "$cow_works" ]; then
	w=$(plain)
	cow_apply "$w" "$gitlink"
	# (the git directory it names, x/.evil, is a bare repository: refused first, sorted first)
	like "F1 3 with --cow: cordon apply refuses the new x/.git and x/.evil" "$applied" \
		"x/.evil/HEAD: protected"
	is "... git status runs nothing" "$(status_in "$w")" no
	w=$(plain)
	cow_apply "$w" "$gitlink" --no-default-protect
	is "--cow without the defaults too: cordon apply writes no x/.git (git's state: never), git status runs nothing" \
		"$(status_in "$w")" no
fi

# a repository of the user's below the top, not a submodule (not protected: a known limit) that the
# sandbox changes and then adds to the index
nested() {
	local w
	w=$(plain)
	gitc -C "$w" init -q y && gitc -C "$w/y" commit -q --allow-empty -m y
	own "$w"
	echo "$w"
}
adopt='git -c safe.directory="*" -C y config core.fsmonitor "touch '"$mark"'; false" &&
	git -c safe.directory="*" update-index --add --cacheinfo 160000,$(git -c safe.directory="*" -C y rev-parse HEAD),y'
w=$(nested)
cordon --workdir "$w" -- sh -c "$adopt"
is "a nested repository the run changes and adds as a submodule: git status runs nothing" \
	"$(status_in "$w")" no
is "... its .git moved aside for review" "$(test -d "$w/y/.git.cordon-moved-aside" && echo kept)" kept
if [ -n "$cow_works" ]; then
	w=$(nested)
	cow_apply "$w" "$adopt"
	like "... with --cow: cordon apply refuses it" "$applied" "y/.git/config: protected (y/.git)"
	is "... git status runs nothing" "$(status_in "$w")" no
fi

# --- 16. review r17 F2: a repository a run made (its config is the run's) whose config includes
# a file N times that includes itself N times cost the next run N^4 reads (N=10: 12.8 s; N=14:
# 392 s), in the supervisor, before anything started. Now each file is read once: the next run
# starts at once (the timeout only catches a hang: the old build does not end in hours).
w=$(mkwork)
cordon --workdir "$w" -- sh -c 'git init -q . && inc=$(printf "[include]\n"; for i in $(seq 20); do printf "\tpath = inc\n"; done) &&
	printf "%s\n" "$inc" >>.git/config && printf "%s\n" "$inc" >.git/inc'
is "F2: a run makes a repository whose config includes a file 20 x 20 times" "$rc" 0
as_caller timeout 120 "$CORDON" --workdir "$w" -- true >/dev/null 2>&1
is "F2: ... the next run starts and ends" "$?" 0

# --- 17. review r17 F3: core.hooksPath naming the workdir as "~/..." or through a symlink to it
# was taken as outside the workdir: a run rewrote the hook, the next git commit ran it
spelled() { # W VALUE: a repository W whose hooks are VALUE (.hk below it)
	local w=$1
	git -C "$w" init -q . && git -c safe.directory='*' -C "$w" config core.hooksPath "$2" &&
		mkdir "$w/.hk" && printf '#!/bin/sh\nexit 0\n' >"$w/.hk/pre-commit" && chmod 755 "$w/.hk/pre-commit"
	own "$w"
}
rehook='printf "#!/bin/sh\ntouch '"$mark"'\n" >.hk/pre-commit'
commit_in() { # W HOME: git commit on the host, its HOME as given; did a hook run?
	rm -f "$mark"
	as_caller env HOME="$2" git -c safe.directory='*' -c user.email=a@b -c user.name=a -C "$1" \
		commit -q --allow-empty -m x >/dev/null 2>&1
	ran
}
w=$(mkwork)
spelled "$w" "~/$(basename "$w")/.hk"
as_caller env HOME="$(dirname "$w")" "$CORDON" --ro-bind "$PROBE_DIR" --workdir "$w" -- sh -c "$rehook" 2>/dev/null
is "F3: core.hooksPath \"~/W/.hk\" (HOME above the workdir): the hook cannot be rewritten" \
	"$(commit_in "$w" "$(dirname "$w")")" no
w=$(mkwork)
spelled "$w" "~/$(basename "$w")/.hk"
as_caller env HOME="$(dirname "$w")" "$CORDON" --workdir "$w" --no-default-protect -- sh -c "$rehook" 2>/dev/null
is "(control) without the defaults, git commit ran the rewritten hook" \
	"$(commit_in "$w" "$(dirname "$w")")" ran
w=$(mkwork)
ln -s "$w" "$TEST_TMP/alias-$(basename "$w")"
spelled "$w" "$TEST_TMP/alias-$(basename "$w")/.hk"
cordon --workdir "$w" -- sh -c "$rehook"
is "F3: core.hooksPath through a symlink to the workdir: the hook cannot be rewritten" \
	"$(commit_in "$w" "$TEST_TMP")" no

# --- 18. the programs a repository's config names: core.fsmonitor ./tools/fsmon.sh (a script of
# the project) ran at the next git status after a run rewrote it
w=$(mkwork)
git -C "$w" init -q . && mkdir "$w/tools" && printf '#!/bin/sh\nexit 1\n' >"$w/tools/fsmon.sh" &&
	chmod 755 "$w/tools/fsmon.sh" && git -c safe.directory='*' -C "$w" config core.fsmonitor ./tools/fsmon.sh
own "$w"
refsmon='printf "#!/bin/sh\ntouch '"$mark"'\nexit 1\n" >tools/fsmon.sh'
cordon --workdir "$w" -- sh -c "$refsmon"
is "core.fsmonitor ./tools/fsmon.sh: the script cannot be rewritten (git status runs the user's)" \
	"$(status_in "$w")" no
cordon --workdir "$w" --no-default-protect -- sh -c "$refsmon"
is "(control) without the defaults, git status ran the rewritten script" "$(status_in "$w")" ran

done_testing
