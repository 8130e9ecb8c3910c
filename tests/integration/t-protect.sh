#!/usr/bin/env bash
# Protected paths (README "Protected paths"): every trick a sandbox has to change a protected
# file of the workdir (write, create, delete, rename away or over, chmod, a symlink or hard link,
# truncate, from a child process, python or perl, through a relative path or /proc/self/cwd,
# moving, replacing or removing its parent) must leave the host's file as it was; each attack
# has a control, the same trick with the protection off, that does change the host, so that each
# check can fail (the default set's entries: t-protect-list, which generates the same from the
# list). Then: paths that do not exist yet, --deny, git still working, linked worktrees (with
# --cow too), bad globs, and what a first run leaves for the next one.
# shellcheck source-path=SCRIPTDIR source=../lib/tap.sh
. "$TAP_LIB"

host_root=$([ "$(id -u)" = 0 ] && echo yes)
own() { if [ -n "$host_root" ] && is_user_mode; then chown -hR "$TEST_USER:" "$@"; fi; }
G=(git -c user.name=t -c user.email=t@example.com -c safe.directory='*' -c init.defaultBranch=main)
cleanup=()
trap 'for f in "${cleanup[@]}"; do rm -rf "$f"; done' EXIT

# state DIR REL: the host's view of REL below DIR: each component on the way (type, inode), and
# everything at and below REL (type, mode, size, inode, links, symlink target, SHA-256)
state() {
	(
		cd "$1" || exit
		p=
		IFS=/
		for c in $2; do
			p=${p:+$p/}$c
			if [ -e "$p" ] || [ -L "$p" ]; then find "$p" -maxdepth 0 -printf '%p %y %i\n'; else echo "$p absent"; fi
		done
		unset IFS
		if [ -e "$2" ] || [ -L "$2" ]; then
			find "$2" -printf '%p|%y|%m|%s|%i|%n|%l\n' | sort
			find "$2" -type f -exec sha256sum {} + | sort
		fi
	)
}

# --- the project every attack starts from: a real repository with every protected file
template=$TEST_TMP/template
mkdir -p "$template"
(
	cd "$template" && "${G[@]}" init -q . && echo '# project' >README.md &&
		"${G[@]}" add README.md && "${G[@]}" commit -qm init &&
		printf '[submodule "lib"]\n\tpath = lib\n\turl = https://example.com/lib\n' >.gitmodules &&
		echo '*.bin binary' >.git/info/attributes &&
		mkdir -p .claude .vscode conf && echo '{"hooks":{}}' >.claude/settings.json &&
		echo '{"version":"2.0.0"}' >.vscode/tasks.json && echo 'port: 80' >conf/app.yml &&
		echo 'notes' >conf/notes.txt && echo 'hunter2' >secret.txt && echo 'TOKEN=abc' >.env
) || fail "(the template repository could not be made)"
is "(the template has git's sample hooks)" "$(test -f "$template/.git/hooks/pre-commit.sample" && echo yes)" yes
fresh() {
	local d
	d=$(mkwork)
	cp -a "$template/." "$d/"
	own "$d"
	echo "$d"
}

# --- the attacks: one run per target and trick, and its control
# Each trick gets F (an existing file of the protected path), S (the protected path: F, or the
# protected directory holding it), NEW (a file to create in S when S is a directory), TOP (the
# first component of F when F is not at the top), DIR and BASE (F's directory and name).
declare -A trick
trick[write]='echo evil >> "$F"'
trick[create]='echo evil > "$NEW"'
trick[delete]='rm -f "$F"; [ "$S" = "$F" ] || rm -rf "$S"'
trick[rename-away]='mv -f "$F" ./away; [ "$S" = "$F" ] || mv "$S" ./away.d'
trick[rename-over]='echo evil > "$DIR/.ev"; mv -f "$DIR/.ev" "$F"; echo evil > .ev2; mv -f .ev2 "$F"
	if [ "$S" != "$F" ]; then mkdir .evd; echo evil > .evd/x; rm -rf "$S"; mv -T .evd "$S"; fi'
trick[chmod]='chmod 0777 "$F"; chmod 0777 "$S"'
trick[symlink]='ln -sfn /etc/passwd "$F" || { rm -f "$F"; ln -s /etc/passwd "$F"; }
	[ "$S" = "$F" ] || { rm -rf "$S"; ln -sfn /tmp "$S"; }'
trick[hardlink-in]='echo evil > "$DIR/.ev"; ln -f "$DIR/.ev" "$F"; echo evil > .ev2; ln -f .ev2 "$F"
	[ -z "$NEW" ] || ln .ev2 "$NEW"'
trick[hardlink-out]='ln "$F" ./hl && echo evil >> ./hl'
trick[truncate]='truncate -s 0 "$F"'
trick[child-sh]='sh -c "sh -c '\''echo evil >> \"\$F\"'\''" & wait; (chmod 0777 "$F")'
trick[python]='python3 -c "
import os
f = os.environ[\"F\"]
for op in (lambda: open(f, \"a\").write(\"evil\"), lambda: os.chmod(f, 0o777),
           lambda: os.rename(f, \"away\"), lambda: os.unlink(f)):
    try: op()
    except OSError: pass"'
trick[perl]='perl -e "my \$h; open(\$h, q(>>), \$ENV{F}) and print \$h q(evil) and close \$h;
	chmod 0777, \$ENV{F}; rename \$ENV{F}, q(away); unlink \$ENV{F}"'
trick[cd-relative]='cd "$DIR" && { echo evil >> "$BASE"; mv -f "$BASE" "$BASE.away"; rm -f "$BASE"; }'
trick[proc-cwd]='echo evil >> "/proc/self/cwd/$F"; cd "$DIR" && echo evil >> "/proc/self/cwd/$BASE"'
trick[move-parent]='mv "$TOP" "$TOP.moved" && echo evil >> "$TOP.moved/${F#"$TOP"/}"'
trick[parent-symlink]='mv "$TOP" "$TOP.moved" || cp -a "$TOP" "$TOP.moved"; rm -rf "$TOP"
	ln -s "$TOP.moved" "$TOP"; echo evil >> "$F"'
trick[rm-rf-parent]='rm -rf "$TOP"'
tricks=(write create delete rename-away rename-over chmod symlink hardlink-in hardlink-out truncate
	child-sh python perl cd-relative proc-cwd move-parent parent-symlink rm-rf-parent)
has_perl=$(command -v perl >/dev/null && echo yes)
has_python=$(command -v python3 >/dev/null && echo yes)

# attack NAME F S NEW -- PROTECT_OPTS -- CONTROL_OPTS
attack() {
	local name=$1 F=$2 S=$3 NEW=$4 TOP= t d before after opts=() ctl=() env
	shift 5
	while [ "$1" != -- ]; do opts+=("$1"); shift; done
	shift
	ctl=("$@")
	case "$F" in */*) TOP=${F%%/*} ;; esac
	for t in "${tricks[@]}"; do
		case $t in
		create) [ -n "$NEW" ] || continue ;;
		move-parent | parent-symlink | rm-rf-parent) [ -n "$TOP" ] || continue ;;
		perl) [ -n "$has_perl" ] || { skip "$name: $t" "no perl here"; continue; } ;;
		python) [ -n "$has_python" ] || { skip "$name: $t" "no python3 here"; continue; } ;;
		esac
		env=(-e "F=$F" -e "S=$S" -e "NEW=$NEW" -e "TOP=$TOP" -e "DIR=$(dirname "$F")" -e "BASE=$(basename "$F")")
		d=$(fresh)
		before=$(state "$d" "$S")
		cordon -w "$d" "${opts[@]}" "${env[@]}" -- sh -c "${trick[$t]}; true"
		after=$(state "$d" "$S")
		if [ "$rc" = 0 ] && [ "$after" = "$before" ]; then
			pass "$name: $t leaves the host's $S as it was"
		else
			fail "$name: $t leaves the host's $S as it was"
			diag "rc=$rc"
			diag "before: $before"
			diag "after:  $after"
			diag "stderr: $err"
		fi
		rm -rf "$d"
		d=$(fresh)
		before=$(state "$d" "$S")
		cordon -w "$d" "${ctl[@]}" "${env[@]}" -- sh -c "${trick[$t]}; true"
		after=$(state "$d" "$S")
		if [ "$rc" = 0 ] && [ "$after" != "$before" ]; then
			pass "$name: $t (control: unprotected, the same trick changes it)"
		else
			fail "$name: $t (control: unprotected, the same trick changes it)"
			diag "rc=$rc, state unchanged: $after"
			diag "stderr: $err"
		fi
		rm -rf "$d"
	done
}

# (the default set's entries: t-protect-list, generated from the list)
attack "--protect 'conf/*.yml'" conf/app.yml conf/app.yml "" -- --protect 'conf/*.yml' --
attack "--deny secret.txt" secret.txt secret.txt "" -- --deny secret.txt --

# what the checks above stand on: the protection says why, in the sandbox
d=$(fresh)
cordon -w "$d" -- sh -c 'echo evil >> .git/config; mv .git .git2; ln .git/config hl'
like_glob "writing .git/config inside fails with EROFS, moving .git with EBUSY, a hard link with EXDEV" "$rc:$err" \
	"[1-9]*:*Read-only file system*busy*cross-device*"
cordon -w "$d" --deny secret.txt -- sh -c 'cat secret.txt; wc -c < secret.txt'
is "--deny secret.txt: the sandbox reads it empty" "$rc:$out" "0:0"
cordon -w "$d" --protect 'conf/*.yml' -- sh -c 'echo more >> conf/notes.txt && cat conf/notes.txt'
is "--protect 'conf/*.yml' leaves the rest of conf/ writable" "$rc:$out" "0:notes
more"
rm -rf "$d"

# --- paths that do not exist yet
fresh_bare() { # a repository with no hooks directory and none of the agents' files
	local d
	d=$(mkwork)
	(cd "$d" && "${G[@]}" init -q --template= . && echo x >README.md) >/dev/null
	own "$d"
	echo "$d"
}
L=$TEST_TMP/layers-protect
mkdir -m 700 "$L" && own "$L"
cordon -w "$(mkwork)" --cow --layer-dir "$L" -- true
cow_ok=yes
if [ "$rc" != 0 ]; then
	cow_ok=
	cow_why=$err
fi
# (each entry of the default set made where it did not exist: t-protect-list)
d=$(fresh_bare)
cordon -w "$d" --no-default-protect -- sh -c 'mkdir -p .git/hooks && printf "#!/bin/sh\necho hook\n" > .git/hooks/pre-commit'
is "(control) --no-default-protect: .git/hooks/pre-commit is written, and stays" "$rc:$(cat "$d/.git/hooks/pre-commit" 2>&1 | tail -1)" "0:echo hook"
unlike "... and nothing is swept" "$err" "protect: removed"
d=$(fresh)
cordon -w "$d" --no-default-protect -- sh -c 'echo evil > .git/hooks/pre-commit'
is "(control) --no-default-protect: a hook is written into an existing .git/hooks" "$rc:$(cat "$d/.git/hooks/pre-commit" 2>&1)" "0:evil"
rm -rf "$d"
d=$(fresh)
cordon -w "$d" -- sh -c 'echo evil > .git/hooks/pre-commit'
is "... with the defaults: refused" "$rc:$(test -e "$d/.git/hooks/pre-commit" || echo none)" "2:none"
rm -rf "$d"
d=$(fresh)
cordon -w "$d" --protect newdir/x -- sh -c 'mkdir -p newdir && echo evil > newdir/x; echo fine > newdir/y'
is "--protect of a literal path that does not exist: made during the run, removed after" \
	"$rc:$(test -e "$d/newdir/x" || echo none):$(cat "$d/newdir/y")" "0:none:fine"
like "... said" "$err" "cordon: protect: removed newdir/x,"
rm -rf "$d"

# --- --deny .env (and .env by default)
d=$(fresh)
before=$(state "$d" .env)
cordon -w "$d" --deny .env -- cat .env
is "--deny .env: cat .env prints nothing" "$rc:$out" "0:"
cordon -w "$d" -- cat .env
is ".env is hidden by default too" "$rc:$out" "0:"
cordon -w "$d" -- sh -c 'echo STOLEN=1 > .env; echo more >> .env; rm -f .env; mv .env x'
is "... and cannot be changed: the host's .env is intact" "$(state "$d" .env)" "$before"
cordon -w "$d" --no-default-protect -- cat .env
is "(control) --no-default-protect: the sandbox reads it" "$rc:$out" "0:TOKEN=abc"
rm -rf "$d"

# --- git still works inside, with the defaults on
gitrun='git -c user.name=t -c user.email=t@example.com -c init.defaultBranch=main'
for mode in direct cow; do
	m=()
	if [ "$mode" = cow ]; then
		[ -n "$cow_ok" ] || { skip "git init/add/commit with --cow" "--cow refused here: $cow_why"; continue; }
		m=(--cow --layer-dir "$L")
	fi
	d=$(mkwork)
	cordon -w "$d" "${m[@]}" -- sh -c "$gitrun init -q . && echo a > a && $gitrun add a && $gitrun commit -qm one && $gitrun log --format=%s"
	is "$mode: git init, add and commit in a fresh workdir" "$rc:$out" "0:one"
	if [ "$mode" = direct ]; then
		is "... the commit is on the host, and no hook was copied" \
			"$("${G[@]}" -C "$d" log --format=%s 2>&1):$(ls -A "$d/.git/hooks" 2>/dev/null)" "one:"
	fi
	d=$(fresh)
	cordon -w "$d" "${m[@]}" -- sh -c "echo b > b && $gitrun add b && $gitrun commit -qm two && $gitrun log --format=%s | head -1"
	is "$mode: git add and commit in an existing repository" "$rc:$out" "0:two"
	if [ "$mode" = direct ]; then
		is "... the commit is on the host" "$("${G[@]}" -C "$d" log --format=%s | head -1)" two
	else
		is "... the host's repository is as it was" "$("${G[@]}" -C "$d" log --format=%s | head -1)" init
	fi
	as_caller "$CORDON" discard --all --layer-dir "$L" >/dev/null 2>&1
	rm -rf "$d"
done

# --- linked worktrees. First the everyday one: the workdir is a worktree whose git directory is
# in the main repository, outside the workdir (read-only inside like the rest of the host).
b=$(mkwork)
(
	cd "$b" && "${G[@]}" init -q repo && cd repo && echo m >m && "${G[@]}" add m &&
		"${G[@]}" commit -qm main && "${G[@]}" worktree add -q ../feat 2>/dev/null
) && own "$b"
is "(a linked worktree: .git is a file naming the main repository's git directory)" "$(cat "$b/feat/.git" 2>&1)" "gitdir: $b/repo/.git/worktrees/feat"
cordon -w "$b/feat" -- sh -c 'echo ran'
is "cordon runs in a linked worktree (its git directory outside the workdir), with the defaults on" "$rc:$out" "0:ran"
cordon -w "$b/feat" --no-default-protect -- sh -c 'echo ran'
is "(control) ... it does with --no-default-protect" "$rc:$out" "0:ran"
rm -rf "$b"

# Then the one plan_gitdir protects (protect.c): the workdir is the worktree, the main repository
# inside it; the worktree's git directory's hooks/ (uncreatable), config and info/attributes are
# protected as .git's are.
b=$(mkwork)
(
	cd "$b" && "${G[@]}" init -q repo && cd repo && echo m >m && "${G[@]}" add m &&
		"${G[@]}" commit -qm main && "${G[@]}" worktree add -q ../wt 2>/dev/null &&
		cd .. && mv repo wt/repo && "${G[@]}" -C wt/repo worktree repair "$b/wt" >/dev/null 2>&1 &&
		echo '[core]' >wt/repo/.git/worktrees/wt/config
) && own "$b"
wt=$b/wt
gd=repo/.git/worktrees/wt
is "(the worktree's .git names its git directory inside the workdir)" "$(cat "$wt/.git" 2>&1)" "gitdir: $wt/$gd"
is "(and git sees the worktree)" "$("${G[@]}" -C "$wt" log --format=%s 2>&1)" main
before=$(state "$wt" "$gd/config")
cordon -w "$wt" -- sh -c "echo evil >> $gd/config; mv $gd/config $gd/c2; rm -f $gd/config; echo ran"
is "a linked worktree inside the workdir: its git directory's config stays as it was" \
	"$rc:$out:$(state "$wt" "$gd/config")" "0:ran:$before"
cordon -w "$wt" -- sh -c "mkdir -p $gd/hooks && echo evil > $gd/hooks/pre-commit; echo ran"
is "... its hooks/ cannot be made (swept after the run)" "$rc:$out:$(test -e "$wt/$gd/hooks" || echo none)" "0:ran:none"
like "... said" "$err" "cordon: protect: removed $gd/hooks,"
cordon -w "$wt" -- sh -c 'echo v >> m && git add m && git -c user.name=t -c user.email=t@e commit -qm in-wt && echo committed'
is "... and git works in it" "$rc:$out" "0:committed"
cordon -w "$wt" --no-default-protect -- sh -c "echo evil >> $gd/config"
is "(control) --no-default-protect: the worktree's config is writable" "$rc:$(tail -1 "$wt/$gd/config")" "0:evil"
# what git really runs for a linked worktree: the common directory's hooks and config
# (repo/.git/hooks, repo/.git/config), and its own config.worktree
before=$(state "$wt" repo/.git/hooks)$(state "$wt" repo/.git/config)
cordon -w "$wt" -- sh -c 'echo evil > repo/.git/hooks/pre-commit; echo "[core] hooksPath = /tmp" >> repo/.git/config; echo ran'
is "a linked worktree: the common git directory's hooks/ and config, which git runs for it, stay as they were" \
	"$rc:$out:$(state "$wt" repo/.git/hooks)$(state "$wt" repo/.git/config)" "0:ran:$before"
if [ -n "$cow_ok" ]; then
	cordon -w "$wt" --cow --layer-dir "$L" -- sh -c 'cat .git && git status --porcelain && echo clean'
	like_glob "--cow in a linked worktree: its .git file is there inside (no placeholder hides it), and git works" \
		"$rc:$out" "0:gitdir: $(glob_quote "$wt")/$(glob_quote "$gd")*clean"
	as_caller "$CORDON" discard --all --layer-dir "$L" >/dev/null 2>&1
else
	skip "--cow in a linked worktree: git works" "--cow refused here: $cow_why"
fi
rm -rf "$b"

# --- git's other ways in: a commondir file in .git makes another directory git's config and hooks
commondir_plant='mkdir -p evil/hooks && cp -r .git/objects .git/refs .git/HEAD evil/ &&
	printf "[core]\n\trepositoryformatversion = 0\n\tfsmonitor = \"echo PWNED >&2; false\"\n" > evil/config &&
	echo ../evil > .git/commondir'
worktree_plant='printf "[core]\n\tfsmonitor = \"echo PWNED >&2; false\"\n" > .git/config.worktree'
# (the controls: each plant made on the host, not by a sandbox, does run git's core.fsmonitor)
d=$(fresh)
(cd "$d" && sh -c "$commondir_plant")
like "(the control: a .git/commondir planted on the host gives git that config: PWNED)" \
	"$("${G[@]}" -C "$d" status 2>&1 >/dev/null)" "PWNED"
rm -rf "$d"
d=$(fresh)
"${G[@]}" -C "$d" config extensions.worktreeConfig true
(cd "$d" && sh -c "$worktree_plant")
like "(the control: a .git/config.worktree planted on the host is git's config: PWNED)" \
	"$("${G[@]}" -C "$d" status 2>&1 >/dev/null)" "PWNED"
rm -rf "$d"
d=$(fresh)
cordon -w "$d" -- sh -c "$commondir_plant"
"${G[@]}" -C "$d" status >/dev/null 2>"$TEST_TMP/git-status.err"
unlike "a .git/commondir planted by the sandbox does not give git a config of its making (core.fsmonitor runs)" \
	"$(cat "$TEST_TMP/git-status.err")" "PWNED"
rm -rf "$d"
d=$(fresh)
"${G[@]}" -C "$d" config extensions.worktreeConfig true && own "$d"
cordon -w "$d" -- sh -c "$worktree_plant"
"${G[@]}" -C "$d" status >/dev/null 2>"$TEST_TMP/git-status.err"
unlike "with extensions.worktreeConfig (git sparse-checkout sets it), a .git/config.worktree of the sandbox's is not git's config" \
	"$(cat "$TEST_TMP/git-status.err")" "PWNED"
rm -rf "$d"

# --- bad globs: exit 125, one line, the command not run
w=$(mkwork)
badglob() { # DESC OPTION GLOB LINE-GLOB
	cordon_bare -w "$w" "$2" "$3" -- sh -c ': > ran'
	like_glob "$1: exit 125, one line" "$rc|$(wc -l <<<"$err")|$err" "125|1|$4"
	is "... the command did not run" "$(test -e "$w/ran" && echo ran)" ""
}
badglob "--protect /abs" --protect /abs "cordon: --protect: *"
badglob "--protect ''" --protect '' "cordon: --protect: *"
badglob "--protect ../x" --protect ../x "cordon: --protect: *"
badglob "--protect a/../b" --protect a/../b "cordon: --protect: *"
badglob "--protect a//b" --protect a//b "cordon: --protect: *"
badglob "--deny '**'" --deny '**' "cordon: --deny: *"
badglob "--deny /etc/shadow" --deny /etc/shadow "cordon: --deny: *"
cordon_bare -w "$w" --protect ok/path -- sh -c ': > ran'
is "(control) a good glob runs" "$rc:$(test -e "$w/ran" && echo ran)" "0:ran"

# --- what a first run leaves for the next one. The first run is unprotected (as an older cordon
# or --no-default-protect would leave it) and plants symlinks to a victim outside the workdir at
# protected paths, and hard links of a host file; the second run (as root when the suite runs
# as root) must not follow them: the victim is untouched.
v=$TEST_TMP/victim
mkdir -p "$v/hooks" && echo precious >"$v/file" && echo hook >"$v/hooks/keep" && echo '[core]' >"$v/config"
chmod -R go-w "$v"
vstate() { state "$TEST_TMP" victim; }
vbefore=$(vstate)
d=$(fresh_bare)
echo source >"$d/precious" && own "$d"
cordon -w "$d" --no-default-protect -e "V=$v" -- sh -c '
	ln -s "$V" .claude; ln -s "$V/hooks" .git/hooks; ln -s "$V/file" .mcp.json; ln -s "$V/file" .env
	ln -s "$V/config" .gitmodules; mkdir -p .vscode && ln -s "$V/file" .vscode/tasks.json
	ln -s "$V" .husky; ln precious .envrc; ln precious .git/info-attr-hl; echo planted'
is "(the first run planted its symlinks and hard links)" "$rc:$out" "0:planted"
is "(they are there on the host)" "$(cd "$d" && stat -c '%n:%F' .claude .git/hooks .mcp.json .env .envrc | tr '\n' ' ')" \
	".claude:symbolic link .git/hooks:symbolic link .mcp.json:symbolic link .env:symbolic link .envrc:regular file "
cordon_bare -w "$d" -- sh -c 'cat .env .gitmodules .mcp.json 2>/dev/null; echo x > .claude/new; echo x >> .envrc; echo x > .git/hooks/pre-commit; echo second'
like_glob "the second run runs (or refuses in one clear line)" "$rc:$out:$(wc -l <<<"$err")" "0:second:*"
is "... the victim outside the workdir is untouched" "$(vstate)" "$vbefore"
is "... the hard-linked host file of the workdir is untouched" "$(cat "$d/precious")" source
is "... nothing of the victim's was read" "$(grep -c precious <<<"$out")" 0
if [ -n "$cow_ok" ]; then
	cordon_bare -w "$d" --cow --layer-dir "$L" -- sh -c 'echo x > .claude/new; echo x >> .envrc; echo second'
	is "a --cow second run over the planted links runs" "$rc:$out" "0:second"
	id=$(sed -n 's/.*kept as layer \([0-9a-f]*\).*/\1/p' <<<"$err")
	if [ -n "$id" ]; then
		as_caller "$CORDON" apply --layer-dir "$L" -w "$d" "$id" >/dev/null 2>&1
		as_caller "$CORDON" discard --layer-dir "$L" "$id" >/dev/null 2>&1
	fi
	is "... and, applied, leaves the victim untouched" "$(vstate)" "$vbefore"
	is "... and the hard-linked file" "$(cat "$d/precious")" source
else
	skip "a --cow second run over the planted links" "--cow refused here: $cow_why"
fi
# the second run's own sandbox plants at paths that are swept after it: the sweep must unlink the
# links, not follow them
d=$(fresh_bare)
echo source >"$d/precious" && own "$d"
cordon_bare -w "$d" -e "V=$v" -- sh -c '
	ln -s "$V" .claude; mkdir -p .codex/sub && ln -s "$V" .codex/link && ln -s "$V/file" .codex/sub/f
	ln precious .mcp.json; mkdir .cursor && ln precious .cursor/hl; ln -s "$V/hooks" .husky; echo made'
is "a run plants links at paths swept after it" "$rc:$out" "0:made"
like "... they are swept" "$err" "protect: removed .c"
is "... the victim is untouched" "$(vstate)" "$vbefore"
is "... the hard-linked file of the workdir too" "$(cat "$d/precious"):$(stat -c %h "$d/precious")" "source:1"
is "... and nothing is left at the protected paths" \
	"$(cd "$d" && ls -A | grep -E '^\.(claude|codex|mcp\.json|cursor|husky)$' | tr '\n' ' ')" ""

done_testing
