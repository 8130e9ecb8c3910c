#!/usr/bin/env bash
# git as an agent uses it: clone the caller's repository (UPSTREAM, owned by the caller on the
# host: read-only, and owned by another uid, inside), commit, branch, rebase, stash, a merge
# with a conflict resolved, hooks, log and status. Prints subjects and states, not hashes.
set -u
export LC_ALL=C
upstream=$1
step() { local what=$1; shift; "$@" >/dev/null 2>git.err; echo "$what: exit $?"; }

step clone git clone -q "$upstream" repo
cd repo || exit 1
git log --format='upstream: %s' main
step "author known" git var GIT_AUTHOR_IDENT
echo one >feature.txt
step add git add feature.txt
step commit git commit -qm "feature: one"
step branch git switch -qc topic HEAD~1
echo two >topic.txt && git add topic.txt && step "commit on topic" git commit -qm "topic: two"
echo three >>topic.txt && step "commit -a" git commit -qam "topic: three"
step rebase git rebase -q main
git log --format='after rebase: %s' -4
echo dirty >>README && step stash git stash -q
step "stash pop" git stash pop -q
git checkout -q -- README
step "switch main" git switch -q main
echo left >conflict.txt && git add conflict.txt && git commit -qm "main: left" >/dev/null
git switch -q topic && echo right >conflict.txt && git add conflict.txt &&
	git commit -qm "topic: right" >/dev/null
step "merge with a conflict" git merge -q main
echo merged >conflict.txt && git add conflict.txt && step "conflict resolved" git commit -qm "merge main"
printf '#!/bin/sh\necho hook ran >>hook.log\n' >.git/hooks/post-commit
chmod +x .git/hooks/post-commit
step "commit with a hook" git commit -q --allow-empty -m "hooked"
cat hook.log
git log --format='log: %s' --topo-order -8
git status --porcelain=v1 --branch | sed 's/^/status: /'
step fsck git fsck --strict
step gc git gc -q
git count-objects -v | grep -E '^(count|in-pack|garbage):' | sed 's/^/objects: /'
