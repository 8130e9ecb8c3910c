#!/usr/bin/env bash
# The copy-on-write workdir and protected paths on the VM's kernel (Debian 12's, Linux 6.1):
# its tmpfs has no user extended attributes (Linux 6.6 has them), so --cow is refused there
# with the reason and nothing of the workdir changes; protected paths in a direct workdir need
# nothing newer and work. On a kernel with them, --cow works.
# Runs only inside tests/vm/run's VM.
# shellcheck source-path=SCRIPTDIR source=../lib/tap.sh
. "$TAP_LIB"

w=$(mkwork)
layers=$(mkwork) # the caller's own, 0700: a layer store
chmod 700 "$layers"
c() { cordon --workdir "$w" --layer-dir "$layers" "$@"; }
kernel=$(uname -r)
major=${kernel%%.*}
rest=${kernel#*.}
minor=${rest%%.*}
as_caller sh -c "echo old > '$w/a.txt'"

c --cow -- sh -c 'echo new > a.txt'
if [ "$major" -lt 6 ] || { [ "$major" -eq 6 ] && [ "$minor" -lt 6 ]; }; then
	is "--cow on Linux $kernel: refused (exit 125)" "$rc" 125
	like_glob "... with the reason, in one line" "$err" "cordon: *tmpfs has no user extended attributes*6.6*"
	is "... before the command ran: the workdir is unchanged" "$(cat "$w/a.txt")" old
else
	is "--cow on Linux $kernel: runs" "$rc" 0
	like "... and keeps a layer" "$err" "kept as layer"
	is "... the workdir is unchanged" "$(cat "$w/a.txt")" old
fi

# direct workdir: the default protected paths, with mounts the 6.1 kernel has
as_caller sh -c "mkdir -p '$w/.git/hooks' && echo '[core]' > '$w/.git/config'"
c -- sh -c 'echo x > .git/hooks/pre-commit; echo y >> .git/config; mv .git .git2; mkdir -p .claude && echo z > .claude/settings.json; echo done'
is "a direct run with protected paths runs" "$rc:$out" "0:done"
is "no hook was planted" "$(ls "$w/.git/hooks")" ""
is ".git/config is unchanged" "$(cat "$w/.git/config")" "[core]"
is ".git was not moved" "$(test -d "$w/.git" && echo yes)" yes
is ".claude, made at a protected path, was removed after the run" "$(test -e "$w/.claude" && echo there || echo gone)" gone
like "... and the user was told" "$err" "protect: removed .claude"
done_testing
