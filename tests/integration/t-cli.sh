#!/usr/bin/env bash
# The command line: help, version, and bad input of every kind: one line "cordon: <what>: <why>",
# exit 125, nothing started (the command would create a file; it must not exist afterwards).
. "$TAP_LIB"

w=$(mkwork)
cd "$w" || exit 1 # the default workdir: a sandbox started by mistake could leave the marker
marker="$w/started"
run="touch $marker"

cordon_bare --version
is "--version prints the version" "$rc:$out" "0:cordon 0.1.0"
cordon_bare --help
like_glob "--help shows the usage" "$rc:$out" '0:Usage: cordon \[OPTIONS\] \[--\] COMMAND*'
like_glob "--help lists every option" "$out" "*--workdir*--ro-bind*--tmpfs*--hide*--net*--timeout*--kill-after*--rlimit*--nofile*--fsize*--cpu-time*--env*--pass-env*--hostname*--uid*--gid*--report*--report-fd*--quiet*--verbose*"

# rejects DESCRIPTION EXPECTED-LINE -- ARGS...
rejects "no command" 'cordon: usage: no command given (cordon [OPTIONS] [--] COMMAND [ARG...])' --
rejects "only options, no command" 'cordon: usage: no command given (cordon [OPTIONS] [--] COMMAND [ARG...])' -- --net none
rejects "unknown long option" 'cordon: --bogus: unknown option (see cordon --help)' -- --bogus $run
rejects "unknown long option with =value" 'cordon: --bogus: unknown option (see cordon --help)' -- --bogus=1 $run
rejects "unknown short option" 'cordon: -x: unknown option (see cordon --help)' -- -x $run
rejects "missing value" 'cordon: --timeout: needs a value' -- --timeout
rejects "bad duration" 'cordon: --timeout: "5x" is not a duration (use 500ms, 30s, 2m, 1h)' -- --timeout 5x $run
rejects "negative duration" 'cordon: --timeout: "-1" is not a duration (use 500ms, 30s, 2m, 1h)' -- --timeout -1 $run
rejects "empty duration" 'cordon: --timeout: "" is not a duration (use 500ms, 30s, 2m, 1h)' -- --timeout "" $run
rejects "duration with junk after" 'cordon: --timeout: "10s!" is not a duration (use 500ms, 30s, 2m, 1h)' -- --timeout '10s!' $run
rejects "absurd duration" 'cordon: --timeout: "99999999999999999999" is too long (at most 100 years)' -- --timeout 99999999999999999999 $run
rejects "bad kill-after" 'cordon: --kill-after: "1y" is not a duration (use 500ms, 30s, 2m, 1h)' -- --kill-after 1y $run
rejects "bad size" 'cordon: --tmp-size: "12Q" is not a size (use 512K, 64M, 1G)' -- --tmp-size 12Q $run
rejects "zero size" 'cordon: --tmp-size: must be more than 0' -- --tmp-size 0 $run
rejects "huge size" 'cordon: --tmp-size: "99999999999999999999" is too large' -- --tmp-size 99999999999999999999 $run
rejects "bad tmpfs size" 'cordon: --tmpfs: "lots" is not a size (use 512K, 64M, 1G)' -- --tmpfs /scratch:lots $run
rejects "zero tmpfs size" 'cordon: --tmpfs: size must be more than 0' -- --tmpfs /scratch:0 $run
rejects "relative tmpfs" 'cordon: --tmpfs: "scratch" is not an absolute path without ".."' -- --tmpfs scratch $run
rejects "tmpfs on /" 'cordon: --tmpfs: "/": cannot replace the root directory' -- --tmpfs / $run
rejects "tmpfs under /proc" 'cordon: --tmpfs: "/proc/sys": /proc is managed by cordon' -- --tmpfs /proc/sys $run
rejects "bad net mode" 'cordon: --net: "foo" is not a network mode (none, host)' -- --net foo $run
rejects "rlimit without =" 'cordon: --rlimit: "nofile" is not NAME=SOFT[:HARD] (e.g. nofile=1024)' -- --rlimit nofile $run
rejects "unknown rlimit" 'cordon: --rlimit: unknown limit "files" (as, core, cpu, data, fsize, locks, memlock, msgqueue, nice, nofile, nproc, rss, rtprio, rttime, sigpending, stack)' -- --rlimit files=10 $run
rejects "rlimit soft above hard" 'cordon: --rlimit: nofile: soft limit 10 is above hard limit 5' -- --rlimit nofile=10:5 $run
rejects "rlimit bad value" 'cordon: --rlimit: as: "big" is not a size such as 64M, or unlimited' -- --rlimit as=big $run
rejects "rlimit above the hard limit" "cordon: --rlimit: nofile: 4294967295 is above the current hard limit $(ulimit -Hn), which cannot be raised" -- --rlimit nofile=4294967295 $run
rejects "bad --nofile" 'cordon: --nofile: "abc" is not a number, or unlimited' -- --nofile abc $run
rejects "bad --fsize" 'cordon: --fsize: "1Q" is not a size such as 64M, or unlimited' -- --fsize 1Q $run
rejects "zero --cpu-time" 'cordon: --cpu-time: must be more than 0' -- --cpu-time 0 $run
rejects "bad --cpu-time" 'cordon: --cpu-time: "soon" is not a duration (use 500ms, 30s, 2m, 1h)' -- --cpu-time soon $run
rejects "env without =" 'cordon: --env: "FOO" is not KEY=VALUE' -- --env FOO $run
rejects "env with empty name" 'cordon: --env: "=x" is not KEY=VALUE' -- --env =x $run
rejects "pass-env with =" 'cordon: --pass-env: "A=B" is not a variable name' -- --pass-env A=B $run
rejects "bad hostname" 'cordon: --hostname: "a b" is not a hostname (1-64 of a-z 0-9 - .)' -- --hostname "a b" $run
rejects "long hostname" "cordon: --hostname: \"$(printf 'h%.0s' {1..65})\" is not a hostname (1-64 of a-z 0-9 - .)" -- --hostname "$(printf 'h%.0s' {1..65})" $run
rejects "negative uid" 'cordon: --uid: "-1" is not a numeric id (0-4294967294)' -- --uid -1 $run
rejects "uid -1 as a number" 'cordon: --uid: "4294967295" is not a numeric id (0-4294967294)' -- --uid 4294967295 $run
rejects "bad gid" 'cordon: --gid: "staff" is not a numeric id (0-4294967294)' -- --gid staff $run
rejects "closed report fd" 'cordon: --report-fd: 99 is not an open file descriptor' -- --report-fd 99 $run
rejects "read-only report fd" 'cordon: --report-fd: 0 is not open for writing' -- --report-fd 0 $run </dev/null
rejects "report in a missing directory" 'cordon: --report: /nonexistent: No such file or directory' -- --report /nonexistent/r.json $run
rejects "missing workdir" 'cordon: --workdir: /nonexistent: No such file or directory' -- --workdir /nonexistent $run
rejects "workdir is a file" 'cordon: --workdir: /etc/passwd: not a directory' -- --workdir /etc/passwd $run
sys='a system directory (/etc, /usr, /opt, /run, /dev, ... and everything below them)'
home='a home directory, or one that holds home directories: they hold ~/.ssh and other secrets (use a project directory below one)'
for d in "/:the root directory" "/usr:$sys" "/etc:$sys" "/proc:$sys" "/dev:$sys" \
	"/var:a system directory (/var holds the system's state; use a directory below /var/tmp or your home)" \
	"/tmp:a directory every user shares (use a directory below it)" "/home:$home" "/root:$home"; do
	rejects "workdir ${d%%:*} refused, saying which rule" "cordon: --workdir: ${d%%:*}: refusing to make it writable: ${d#*:}" -- --workdir "${d%%:*}" $run
done
rejects "workdir /usr/.. resolves to / and is refused" 'cordon: --workdir: /: refusing to make it writable: the root directory' -- --workdir /usr/.. $run
rejects "relative workdir-target" 'cordon: --workdir-target: "work" is not an absolute path without ".."' -- --workdir "$w" --workdir-target work $run
rejects "workdir-target with .." 'cordon: --workdir-target: "/a/../b" is not an absolute path without ".."' -- --workdir "$w" --workdir-target /a/../b $run
rejects "workdir-target /" 'cordon: --workdir-target: "/": cannot replace the root directory' -- --workdir "$w" --workdir-target / $run
rejects "workdir-target in /dev" 'cordon: --workdir-target: "/dev/w": /dev is managed by cordon' -- --workdir "$w" --workdir-target /dev/w $run
rejects "relative chdir out of the workdir" 'cordon: --chdir: "sub/../..": outside the workdir' -- --chdir sub/../.. $run
rejects "missing rootfs" 'cordon: --rootfs: /nonexistent: No such file or directory' -- --rootfs /nonexistent $run
rejects "missing ro-bind source" 'cordon: --ro-bind: /nonexistent: No such file or directory' -- --ro-bind /nonexistent $run
rejects "relative ro-bind destination" 'cordon: --ro-bind: "rel" is not an absolute path without ".."' -- --ro-bind /etc:rel $run
rejects "empty ro-bind destination" 'cordon: --ro-bind: "/etc:": empty destination after '"':'" -- --ro-bind /etc: $run
rejects "ro-bind into /sys" 'cordon: --ro-bind: "/sys/x": /sys is managed by cordon' -- --ro-bind /etc:/sys/x $run
rejects "relative hide" 'cordon: --hide: "etc" is not an absolute path without ".."' -- --hide etc $run
rejects "two mounts on one path" 'cordon: mount: --tmpfs and --ro-bind both mount on "/opt/x"' -- --tmpfs /opt/x --ro-bind /etc:/opt/x $run
rejects "hide and tmpfs on one path" 'cordon: mount: --hide and --tmpfs both mount on "/srv/x"' -- --hide /srv/x --tmpfs /srv/x $run
rejects "... a path that reads like the library's words stays as given" 'cordon: mount: --hide and --tmpfs both mount on "/srv/a tmpfs mount"' -- --hide '/srv/a tmpfs mount' --tmpfs '/srv/a tmpfs mount' $run

[ -e "$marker" ] && fail "nothing ran on bad input" || pass "nothing ran on bad input"

# the first bad option wins, and the command's own options are left alone
rejects "the first bad option is reported" 'cordon: --timeout: "x" is not a duration (use 500ms, 30s, 2m, 1h)' -- --timeout x --net bad $run
cordon --workdir "$w" -- "$PROBE" exit 0 --timeout x
is "options after the command belong to the command" "$rc" 0
cordon_bare --workdir "$w" -q --timeout 0 -- /bin/sh -c 'echo ran'
is "--timeout 0 means no timeout; -q and short options work" "$rc:$out" "0:ran"
cordon_bare --workdir="$w" --net=none -- /bin/sh -c 'echo ran'
is "--opt=value form" "$rc:$out" "0:ran"

# CORDON_TIMING=1 (bench/phases reads it): a line per step on stderr as it is, from every
# process of the run: the CLI, the supervisor (through the library's log callback), pid 1,
# cordon-init and the command before its exec; with -v the log's lines besides; without it none
timing_line='^cordon-timing [0-9][0-9]* [0-9][0-9]* [0-9][0-9]* .'
CORDON_TIMING=1 cordon_bare --workdir "$w" -- /bin/true
is "CORDON_TIMING=1: runs" "$rc" 0
is "... every line on stderr a timing line: microseconds, pid, page faults, step" \
	"$(grep -vc "$timing_line" <<<"$err")" 0
for step in "main" "options parsed" "sandbox opened (workdir, outputs)" "protected paths planned" \
	"cloned" "pid 1 born" "pid 1: mounts made" "pid 1: cordon-init" "command: set up" \
	"EXIT received" "sandbox ended" "run returned"; do
	is "... the step \"$step\"" "$(sed -n 's/^cordon-timing [0-9]* [0-9]* [0-9]* //p' <<<"$err" |
		grep -cFx -- "$step")" 1
done
CORDON_TIMING=1 cordon_bare -v --workdir "$w" -- /bin/true
like_glob "... with -v, the log's lines too" "$err" "*cordon-timing *cordon: sandbox: ended, exit code 0*"
cordon_bare -v --workdir "$w" -- /bin/true
is "without CORDON_TIMING: no timing line, even with -v" "$(grep -c '^cordon-timing' <<<"$err")" 0

done_testing
