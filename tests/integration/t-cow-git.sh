#!/usr/bin/env bash
# The copy-on-write review flow once the run used git (issue 29; README "Copy-on-write workdir"):
# no placeholder makes a missing protected path exist inside (`test -e .git` stays false), yet
# what the sandbox makes there never reaches the host through cordon apply; `cordon diff
# --patch` is the work tree only (git apply --check takes it), `cordon diff --stat` lists the
# run's commits, `cordon apply` brings them in as refs/cordon/ID/... through git (objects
# checked) and drops the rest of the sandbox's git state, saying so; a hook, config or
# alternates the sandbox put in its .git runs nothing on the host, during diff or apply or
# after; a bad object is refused; the layer's id is in --report and the audit trail; and the
# README's copy-on-write example runs as written on a fresh clone.
# shellcheck source-path=SCRIPTDIR source=../lib/tap.sh
. "$TAP_LIB"

host_root=$([ "$(id -u)" = 0 ] && echo yes)
G=(git -c user.name=t -c user.email=t@example.com -c safe.directory='*' -c init.defaultBranch=main)
L=$TEST_TMP/layers
mkdir -m 700 "$L" && own "$L"
export LC_ALL=C
src=$(cd "$(dirname "$0")/../.." && pwd)

hg() { (cd "$1" && shift && as_caller "${G[@]}" "$@"); } # git on the host, as the caller
match() { # DESC TEXT ERE
	if [[ $2 =~ $3 ]]; then pass "$1"; else fail "$1"; diag "expected to match: $3"; diag "got: $2"; fi
}

w=$(mkwork)
cordon -w "$w" --cow --layer-dir "$L" -- true
if [ "$rc" != 0 ]; then
	skip "the copy-on-write review flow with git" "--cow refused here: $err"
	done_testing
	exit
fi

# --- 1. a protected path missing on the host is missing inside too
w=$(mkwork)
echo 'int main(void) { return 0; }' >"$w/hello.c" && own "$w"
cordon -w "$w" --cow --layer-dir "$L" -- sh -c 'for p in .git .git/hooks .envrc .vscode .claude .mcp.json; do test -e "$p" && echo "$p"; done; true'
is "--cow in a project without .git: no .git, .git/hooks, .envrc, .vscode, .claude, .mcp.json inside" "$rc:$out" "0:"
cordon -w "$w" --cow --layer-dir "$L" -- test -d .git
is "--cow: test -d .git is false where the host has no .git (GNU hello's build asks)" "$rc" 1
# the protection holds: what the sandbox makes there is refused by cordon apply
cordon -w "$w" --cow --layer-dir "$L" -- sh -c 'mkdir -p .git/hooks && printf "#!/bin/sh\ntouch %s/pwned-precommit\n" "$1" >.git/hooks/pre-commit && chmod +x .git/hooks/pre-commit && echo "touch $1/pwned-envrc" >.envrc && echo ok' sh "$TEST_TMP"
is "... the sandbox can make .git/hooks/pre-commit and .envrc inside" "$rc:$out" "0:ok"
id=$(layer_of "$err")
lc diff --stat "$id"
like "... cordon diff says which are protected (its patch holds them: git apply would write them)" \
	"$out" "A .envrc (protected: cordon apply refuses the layer)"
lc apply -w "$w" "$id"
match "... cordon apply refuses the layer, saying why" "$rc:$err" '^125:cordon: apply: .*protected'
is "... and neither reaches the host" "$(ls -A "$w")" "hello.c"
lc discard "$id"

# a bare repository (HEAD, objects, refs, config: no .git in its path) in a directory, or at the
# top: git on the host enters it from there and runs its config's pager; apply refuses it
for d in sub .; do
	w=$(mkwork)
	echo x >"$w/x" && own "$w"
	cordon -w "$w" --cow --layer-dir "$L" --git-identity 'a <a@example.com>' -- sh -c 'mkdir -p "$1" && cd "$1" && git init -q --bare . &&
		git config core.pager "touch $2/pager-$3; cat" && git update-ref refs/heads/master "$(git commit-tree -m x "$(git mktree </dev/null)")" && echo ok' sh "$d" "$TEST_TMP" "${d%.}"
	is "(a bare repository made inside, in ${d/./the top})" "$rc:$out" "0:ok"
	id=$(layer_of "$err")
	lc apply -w "$w" "$id"
	prefix=$([ "$d" = . ] || echo "$d/")
	match "... cordon apply refuses it" "$rc:$err" "^125:cordon: apply: ${prefix}HEAD: protected"
	(cd "$w/$d" && as_caller script -qc "git -c safe.directory='*' log -1" /dev/null >/dev/null 2>&1)
	is "... and git there runs nothing of its" "$(ls -A "$w" "$TEST_TMP" | grep -c pager)" 0
	lc discard "$id"
done

# --- 2. a repository where the run edits, adds, deletes, renames, commits twice, makes a branch
repo() {
	local d
	d=$(mkwork)
	(cd "$d" && "${G[@]}" init -q . && "${G[@]}" config user.name t && "${G[@]}" config user.email t@example.com &&
		echo '# myproject' >README.md && printf 'one\ntwo\n' >a.txt && echo old >old.txt && echo gone >gone.txt && mkdir docs && echo d >docs/d.txt &&
		"${G[@]}" add -A && "${G[@]}" commit -qm base) >/dev/null
	own "$d"
	echo "$d"
}
w=$(repo)
git_state() { (cd "$1" && find .git -path .git/objects -prune -o -type f -print0 | sort -z | xargs -0 sha256sum && git -c safe.directory='*' for-each-ref); }
before=$(git_state "$w")
base=$(hg "$w" rev-parse HEAD)
cordon -w "$w" --cow --layer-dir "$L" -- sh -c '
	set -e
	echo three >>a.txt && echo new >new.txt && git rm -q gone.txt && git mv old.txt renamed.txt
	git add -A && git commit -qm first
	echo more >>new.txt && git commit -qam second
	git branch feature
	git checkout -qb topic && echo t >t.txt && git add t.txt && git commit -qm third && git checkout -q main
	echo uncommitted >>a.txt && echo' 2>/dev/null
is "the run edits, adds, deletes, renames, commits twice, branches" "$rc" 0
id=$(layer_of "$err")
lc diff --patch "$id"
patch=$out
unlike "cordon diff --patch: no .git path in it" "$patch" '(^|/)\.git/'
clone=$(mkwork)/clone
as_caller "${G[@]}" clone -q "$w" "$clone" 2>/dev/null
printf '%s\n' "$patch" >"$TEST_TMP/p.patch"
is "... git apply --check takes it (a clone at the run's start)" \
	"$(cd "$clone" && as_caller git apply --check "$TEST_TMP/p.patch" 2>&1 && echo ok)" ok
match "... edits, adds, deletes, renames" "$(grep -E '^(diff --git|rename|deleted|new file)' <<<"$patch" | tr '\n' ' ')" \
	'a/a.txt b/a.txt.*a/gone.txt.*deleted file.*a/new.txt.*new file.*rename from old.txt rename to renamed.txt'
lc diff --stat "$id"
stat=$out
like "cordon diff --stat: the files" "$stat" $'M a.txt\nD gone.txt\nA new.txt\nR old.txt -> renamed.txt\n'
match "... the commits on main, as commits" "$stat" $'git: refs/heads/main -> [0-9a-f]{12} \\(2 new commits\\)\n  [0-9a-f]+ second\n  [0-9a-f]+ first'
match "... the new branch and its commit" "$stat" 'git: refs/heads/topic -> [0-9a-f]{12} \(3 new commits\)'
match "... the git state not shown, said" "$stat" "git: [0-9]+ files of the run's git state .* not shown"
is "(diff ran no git of the host's: its git state unchanged)" "$(git_state "$w")" "$before"
lc apply -w "$w" "$id"
is "cordon apply: done" "$rc" 0
like "... says where the commits are" "$out" "the run's commits are in refs/cordon/$id/feature, refs/cordon/$id/main, refs/cordon/$id/topic"
match "... and that the rest of the git state was dropped" "$out" "files of the run's git state .* dropped"
is "... refs/cordon/$id/main: the two commits on the run's start" \
	"$(hg "$w" log --format=%s "refs/cordon/$id/main" | tr '\n' ' ')" "second first base "
is "... refs/cordon/$id/topic: and the branch's" "$(hg "$w" log --format=%s "refs/cordon/$id/topic" | tr '\n' ' ')" \
	"third second first base "
is "... refs/cordon/$id/feature" "$(hg "$w" rev-parse "refs/cordon/$id/feature")" "$(hg "$w" rev-parse "refs/cordon/$id/main")"
is "... the host's branch, HEAD and index untouched (git state is not written as files)" \
	"$(hg "$w" rev-parse HEAD):$(hg "$w" diff --cached --name-only | wc -l)" "$base:0"
is "... the objects pass git fsck" "$(hg "$w" fsck --strict 2>&1 && echo ok)" ok
is "... the work tree is the run's" "$(cd "$w" && cat a.txt new.txt renamed.txt | tr '\n' ' ' && ls | tr '\n' ' ')" \
	"one two three uncommitted new more old README.md a.txt docs new.txt renamed.txt "
is "... and git sees it as the run's commit plus the uncommitted edit" \
	"$(cd "$w" && as_caller env GIT_INDEX_FILE="$w/.git/cordon-test-index" sh -c 'git -c safe.directory="*" read-tree "$1" && git -c safe.directory="*" add -A && git -c safe.directory="*" diff --cached --stat "$1" | tail -1; rm -f .git/cordon-test-index' sh "refs/cordon/$id/main")" \
	" 1 file changed, 1 insertion(+)"

# git gc inside: the objects in a new pack, the branches in packed-refs (their loose files gone)
w=$(repo)
cordon -w "$w" --cow --layer-dir "$L" -- sh -c 'echo x >>a.txt && git commit -qam packed && git branch side && git gc -q --prune=now' 2>/dev/null
id=$(layer_of "$err")
lc apply -w "$w" "$id"
is "git gc inside (a pack, packed-refs): the commit still arrives, on both branches" \
	"$rc:$(hg "$w" log --format=%s -1 "refs/cordon/$id/main"):$(hg "$w" log --format=%s -1 "refs/cordon/$id/side")" \
	"0:packed:packed"

# a repository of 30,000 refs (tags): their list is past what cordon reads of git's output
w=$(repo)
(h=$(hg "$w" rev-parse HEAD) && echo "# pack-refs with: peeled fully-peeled sorted" &&
	for i in $(seq 100000 130000); do echo "$h refs/tags/t$i"; done) >"$w/.git/packed-refs" && own "$w"
cordon -w "$w" --cow --layer-dir "$L" -- sh -c 'git commit -q --allow-empty -m many'
id=$(layer_of "$err")
lc diff --stat "$id"
match "30,000 refs: cordon diff lists the commit" "$out" $'\(1 new commit\)\n  [0-9a-f]+ many'
lc apply -w "$w" "$id"
is "... cordon apply brings it in" "$rc:$(hg "$w" log --format=%s -1 "refs/cordon/$id/main")" "0:many"

# root applying in another user's repository: git runs as that user (what it adds to .git is
# theirs, as apply's files are)
if [ -n "$host_root" ] && ! is_user_mode; then
	w=$(repo)
	chown -R "$TEST_USER:" "$w"
	cordon -w "$w" --cow --layer-dir "$L" -- sh -c 'echo x >>a.txt && git commit -qam inside'
	id=$(layer_of "$err")
	lc apply -w "$w" "$id"
	is "root, another user's repository: the commit arrives as a ref" \
		"$rc:$(git -c safe.directory='*' -C "$w" log --format=%s -1 "refs/cordon/$id/main")" "0:inside"
	is "... and nothing in its .git is root's" "$(find "$w/.git" -user 0 | head -3)" ""
	# that user, racing: the moment cordon's temporary repository in $TMPDIR is theirs, they put a
	# symlink in it (objects/info -> a directory of root's); root writes nothing through it
	w=$(repo)
	chown -R "$TEST_USER:" "$w"
	cordon -w "$w" --cow --layer-dir "$L" -- sh -c 'git commit -q --allow-empty -m inside'
	id=$(layer_of "$err")
	victim=$TEST_TMP/victim
	mkdir -m 755 "$victim"
	# a $TMPDIR of the test's own (sticky, as /tmp): the racer touches no other run's directory
	tmpd=$TEST_TMP/tmpdir
	mkdir -m 1777 "$tmpd"
	setpriv --reuid="$TEST_USER" --regid="$TEST_USER" --clear-groups /usr/bin/python3 -I -c '
import os, sys
victim, stop, tmp = sys.argv[1], sys.argv[2], sys.argv[3]
old = set()
todo = []
while not os.path.exists(stop):
	new = [n for n in os.listdir(tmp) if n.startswith("cordon-git-") and n not in old]
	old.update(new)
	todo += [tmp + "/" + n + s for n in new for s in ("", "/repo")]
	for d in list(todo):
		try:
			os.mkdir(d + "/objects")
		except FileExistsError:
			pass
		except OSError:
			continue
		try:
			os.symlink(victim, d + "/objects/info")
		except OSError:
			pass
		todo.remove(d)' "$victim" "$TEST_TMP/stop" "$tmpd" &
	racer=$!
	TMPDIR=$tmpd lc diff --stat "$id"
	TMPDIR=$tmpd lc apply -w "$w" "$id"
	touch "$TEST_TMP/stop"
	wait "$racer"
	is "root in another user's repository: nothing written through their symlink in \$TMPDIR" \
		"$(ls -A "$victim")" ""
else
	skip "root applying in another user's repository" "as root only"
	skip "... nothing in its .git is root's" "as root only"
	skip "root in another user's repository: nothing written through their symlink" "as root only"
fi

# --- attacks: a sandbox without the default protection plants hooks, config, alternates and a
# filter in its .git; diff, apply and a later git on the host run none of them
w=$(repo)
mark=$TEST_TMP/marks
mkdir -p "$mark" && chmod 777 "$mark"
cfg_before=$(sha256sum <"$w/.git/config")
cordon -w "$w" --cow --layer-dir "$L" --no-default-protect -- sh -c '
	m=$1
	mkdir -p .git/hooks .git/evilhooks .git/info
	for h in pre-commit post-commit reference-transaction post-checkout post-merge pre-auto-gc post-rewrite fsmonitor-watchman; do
		printf "#!/bin/sh\ntouch %s/hook-%s 2>/dev/null\nexit 0\n" "$m" "$h" >.git/hooks/$h
		printf "#!/bin/sh\ntouch %s/hookspath-%s 2>/dev/null\nexit 0\n" "$m" "$h" >.git/evilhooks/$h
		chmod +x .git/hooks/$h .git/evilhooks/$h
	done
	git commit -q --allow-empty -m inside --no-verify
	git config core.fsmonitor "touch $m/fsmonitor; :"
	git config core.hooksPath .git/evilhooks
	git config filter.evil.clean "touch $m/filter-clean; cat"
	git config filter.evil.smudge "touch $m/filter-smudge; cat"
	git config core.pager "touch $m/pager; cat"
	git config alias.status "!touch $m/alias"
	echo "* filter=evil" >.git/info/attributes
	echo /nonexistent/objects >.git/objects/info/alternates
	echo planted' sh "$mark"
is "(the sandbox plants them in its .git, with --no-default-protect)" "$rc:$out" "0:planted"
id=$(layer_of "$err")
lc diff "$id"
is "cordon diff: ran" "$rc" 0
lc apply -w "$w" "$id"
is "cordon apply: ran" "$rc" 0
match "... the commit arrives as a ref" "$(hg "$w" log --format=%s "refs/cordon/$id/main" 2>&1 | head -1)" '^inside$'
hg "$w" status --short >/dev/null 2>&1
hg "$w" diff >/dev/null 2>&1
is "... nothing planted ran, during diff, apply, or a git status on the host after" "$(ls -A "$mark")" ""
is "... the host's .git/config is the user's" "$(sha256sum <"$w/.git/config")" "$cfg_before"
is "... no planted hook, attributes or alternates in the host's .git" \
	"$(ls "$w/.git/hooks" 2>/dev/null | grep -v sample; ls "$w/.git/evilhooks" "$w/.git/info/attributes" "$w/.git/objects/info/alternates" 2>/dev/null)" ""

# a bad object: a commit git's fsck refuses, on a branch: apply refuses the layer, writes nothing
w=$(repo)
cordon -w "$w" --cow --layer-dir "$L" -- python3 -I -c '
import hashlib, os, zlib
body = b"tree 0000000000000000000000000000000000000000\nauthor nobody\n\nbad\n"
obj = b"commit %d\0" % len(body) + body
h = hashlib.sha1(obj).hexdigest()
os.makedirs(".git/objects/" + h[:2], exist_ok=True)
open(".git/objects/%s/%s" % (h[:2], h[2:]), "wb").write(zlib.compress(obj))
open(".git/refs/heads/evil", "w").write(h + "\n")
open("ok.txt", "w").write("ok\n")
print("planted")'
is "(a bad commit on a branch, made inside)" "$rc:$out" "0:planted"
id=$(layer_of "$err")
lc apply -w "$w" "$id"
match "... cordon apply refuses it (git's fsck), in one line" "$rc:$(wc -l <<<"$err"):$err" '^125:1:cordon: apply: .*'
is "... and writes nothing: no ref, no file" "$(hg "$w" for-each-ref 'refs/cordon/' | wc -l):$(test -e "$w/ok.txt" || echo none)" "0:none"
lc discard "$id"

# a protected path in a commit, gone from the work tree: the commit would bring it to the host
# (a user merges refs/cordon/ID/main), so apply refuses the layer as it refuses the file
w=$(repo)
cordon -w "$w" --cow --layer-dir "$L" -- sh -c 'echo "touch /tmp/x" >.envrc && mkdir .vscode && echo "{}" >.vscode/tasks.json &&
	git add -f .envrc .vscode && git commit -qm tidy && git rm -rq --cached .envrc .vscode && git commit -qm "tidy 2" && rm -r .envrc .vscode && echo x >ok.txt'
id=$(layer_of "$err")
lc diff --stat "$id"
match "cordon diff: a commit that changes a protected path (.envrc) is named, and apply's refusal" \
	"$out" "git: layer $id: a commit of the run changes \.envrc, protected .*cordon apply refuses the layer"
lc apply -w "$w" "$id"
match "... cordon apply refuses the layer, in one line" "$rc:$(wc -l <<<"$err"):$err" '^125:1:cordon: apply: .*\.envrc, protected'
is "... and writes nothing: no ref, no file" "$(hg "$w" for-each-ref 'refs/cordon/' | wc -l):$(test -e "$w/ok.txt" || echo none)" "0:none"
lc discard "$id"

# a bare repository in a commit, gone from the work tree: checked out on the host, git would
# enter it and run its config's pager; apply refuses the layer
w=$(repo)
cordon -w "$w" --cow --layer-dir "$L" -- sh -c 'mkdir -p sub/objects sub/refs && echo "ref: refs/heads/main" >sub/HEAD &&
	printf "[core]\n\tpager = touch /tmp/x; cat\n" >sub/config && touch sub/objects/k sub/refs/k &&
	git add -f sub && git commit -qm vendor && git rm -rq --cached sub && git commit -qm unvendor && rm -r sub && echo x >ok.txt'
id=$(layer_of "$err")
lc apply -w "$w" "$id"
match "cordon apply: a commit that makes a bare repository (sub/HEAD, objects, refs) is refused" \
	"$rc:$err" '^125:cordon: apply: .*a commit of the run makes sub/HEAD part of a bare repository'
is "... and writes nothing: no ref, no file" "$(hg "$w" for-each-ref 'refs/cordon/' | wc -l):$(test -e "$w/ok.txt" || echo none)" "0:none"
lc discard "$id"

# a protected path's name is the sandbox's (lefthook*): apply's refusal and diff's line show its
# control characters escaped, for a file of the work tree and for a path in a commit
nonprint() { LC_ALL=C tr -d '\n -~' <<<"$1" | od -An -c | tr -d ' \n'; }
w=$(repo)
cordon -w "$w" --cow --layer-dir "$L" -- sh -c 'echo x >"$(printf "lefthook\033[2K\rfine")"'
id=$(layer_of "$err")
lc apply -w "$w" "$id"
is "cordon apply: a protected file's name, escape sequences as text" "$rc:$(nonprint "$err")" "125:"
like "... shown escaped" "$err" 'lefthook\x1b[2K\x0dfine'
lc discard "$id"
w=$(repo)
cordon -w "$w" --cow --layer-dir "$L" -- sh -c 'f=$(printf "lefthook\033[2K\rfine") && echo x >"$f" && git add "$f" && git commit -qm c && git rm -q "$f" && git commit -qm d'
id=$(layer_of "$err")
lc diff --stat "$id"
is "cordon diff: a commit's protected path, escape sequences as text" "$rc:$(nonprint "$out")" "0:"
lc apply -w "$w" "$id"
is "cordon apply: the same" "$rc:$(nonprint "$err")" "125:"
lc discard "$id"

# a commit's subject is the sandbox's text on the reviewer's terminal: cordon diff writes its
# control characters escaped (ESC, CR, BEL, a C1 CSI), as it quotes file names
w=$(repo)
cordon -w "$w" --cow --layer-dir "$L" -- sh -c 'git commit -q --allow-empty -m "$(printf "ok\r\033[2K\302\233\033]52;c;eA==\007hidden")"'
id=$(layer_of "$err")
lc diff --stat "$id"
is "cordon diff: a commit subject's escape sequences reach the terminal as text" \
	"$rc:$(LC_ALL=C tr -d '\n -~' <<<"$out" | od -An -c | tr -d ' \n')" "0:"
like "... and are shown escaped" "$out" ' ok\015\033[2K\302\233\033]52;c;eA==\007hidden'
lc discard "$id"

# --- 4. the layer's id in --report and the audit trail
w=$(repo)
o=$(mkwork)
cordon -w "$w" --cow --layer-dir "$L" --report "$o/r.json" --audit "$o/a.jsonl" -- sh -c 'echo x >x'
id=$(layer_of "$err")
is "--report: the layer's id and changes" \
	"$(python3 -c 'import json,sys; l=json.load(open(sys.argv[1]))["layer"]; print(l["id"], l["changes"], l["error"])' "$o/r.json")" "$id 1 None"
is "--audit: the exit event has it too" \
	"$(python3 -c 'import json,sys; print([json.loads(x)["layer"]["id"] for x in open(sys.argv[1]) if json.loads(x)["event"] == "exit"][0])' "$o/a.jsonl")" "$id"
cordon -w "$w" --report "$o/r2.json" -- true
is "--report without --cow: layer is null" "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["layer"])' "$o/r2.json")" None
lc discard "$id"

# --- README's copy-on-write example, run as written on a fresh clone (each "$ " line of its
# first example block, in order)
example=$(awk '/^### Copy-on-write workdir/ { s = 1 } s && n && !/^    / { exit } s && /^    \$ / { sub(/^    \$ /, ""); print; n++ }' "$src/README.md")
match "(README's copy-on-write example: edit, commit inside, diff, git apply --check, apply, the ref)" \
	"$(tr '\n' ' ' <<<"$example")" 'cordon --cow .*git commit.*cordon diff.*git apply --check.*cordon apply.*refs/cordon'
origin=$(repo)
home=$TEST_TMP/home
rm -rf "$home" && mkdir -p "$home" && own "$home" && (cd "$home" && as_caller "${G[@]}" clone -q "$origin" myproject 2>/dev/null &&
	cd myproject && as_caller git config user.name t && as_caller git config user.email t@example.com)
printf 'set -e\nexport CORDON_LAYER_DIR=%q PATH=%q:$PATH\ncd %q\n%s\n' "$L" "$(dirname "$CORDON")" "$home" "$example" >"$TEST_TMP/example.sh"
chmod 755 "$TEST_TMP/example.sh"
out=$(as_caller bash "$TEST_TMP/example.sh" 2>&1)
rc=$?
is "README's example runs as written (every line succeeds)" "$rc" 0 || diag "$out"
is "... the commit made inside arrives as a ref of its own" \
	"$(hg "$home/myproject" for-each-ref --format='%(refname)' 'refs/cordon/' | sed 's|refs/cordon/[0-9a-f]*/|refs/cordon/ID/|')" "refs/cordon/ID/main"

done_testing
