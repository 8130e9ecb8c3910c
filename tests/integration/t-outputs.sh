#!/usr/bin/env bash
# cordon's own files, --report, --audit and --capture, are written by the launcher on the host
# with the caller's rights. None may be inside the workdir, by any path to it (a symlink into it,
# another mount of it), where the sandbox could replace or rewrite it: refused with one line,
# exit 125, nothing run. Each is created anew and renamed into place, so that a symlink, a hard
# link or a FIFO waiting at its name is replaced, never followed, truncated or opened; and its
# directory is found without following another uid's symlink.
. "$TAP_LIB"

host_root=$([ "$(id -u)" = 0 ] && echo yes)
w=$(mkwork)         # the workdir
o=$(mkwork)         # where the outputs go
v=$TEST_TMP/victim  # files that stand for /etc/shadow and the like: they must never change
mounts=()
trap 'for m in "${mounts[@]}"; do umount "$m"; done' EXIT

# mine PATH...: make directories (with their parents) owned by whoever runs cordon
mine() {
	mkdir -p "$@" && chmod 755 "$@"
	if [ -n "$host_root" ] && is_user_mode; then chown "$TEST_USER:" "$@"; fi
}
# own PATH...: hand files (symlinks themselves) to whoever runs cordon
own() { if [ -n "$host_root" ] && is_user_mode; then chown -h "$TEST_USER:" "$@"; fi; }

mine "$w/sub" "$v"
for f in shadow passwd sudoers hosts group gshadow motd; do echo "precious $f" >"$v/$f"; done
own "$v"/*
# untouched DESC VICTIM: the victim still holds what it held
untouched() { is "$1" "$(cat "$v/$2")" "precious $2"; }

# c ARGS...: cordon with the workdir and ARGS, on a command that says "ran" and leaves .ran
c() { cordon_bare -w "$w" "$@" -- sh -c 'echo ran; : >.ran'; }
# what is in the workdir, seen from the host
contents() { find "$w" -mindepth 1 -printf '%P ' | sed 's/ $//'; }
# refused DESC LINE ARGS...: exactly LINE, 125, nothing ran, nothing made in the workdir
refused() {
	local desc=$1 line=$2 was
	shift 2
	was=$(contents)
	c "$@"
	is "$desc" "$rc|$err|$out|$(contents)" "125|$line||$was"
}
inside() { echo "cordon: --$1: $2: inside the workdir, where the sandbox could replace or rewrite it: write it outside the workdir"; }

# kind PATH: what is at PATH: nothing, a symlink, a fifo, a report, an audit log, or a file
kind() {
	python3 - "$1" <<'EOF'
import json, os, stat, sys
p = sys.argv[1]
try:
    st = os.lstat(p)
except FileNotFoundError:
    sys.exit(print("nothing"))
if not stat.S_ISREG(st.st_mode):
    sys.exit(print("not a regular file:", stat.filemode(st.st_mode)))
text = open(p, errors="replace").read()
try:
    e = [json.loads(l) for l in text.splitlines()]
    if len(e) == 1 and "outcome" in e[0]:
        sys.exit(print("a report, outcome", e[0]["outcome"]))
    if e[0]["event"] == "start" and e[-1]["event"] == "exit":
        sys.exit(print("an audit log, start to exit"))
except (ValueError, KeyError, IndexError, TypeError):
    pass
print("a file holding", repr(text[:60]))
EOF
}

# --- inside the workdir: by its path, through a symlink into it, through another mount of it
refused "--report inside the workdir" "$(inside report "$w/r.json")" --report "$w/r.json"
refused "--audit in a directory below the workdir" "$(inside audit "$w/sub/a.jsonl")" --audit "$w/sub/a.jsonl"
refused "--capture inside the workdir" "$(inside capture "$w/cap")" --capture "$w/cap"
refused "--capture the workdir itself" "$(inside capture "$w")" --capture "$w"
up="$o/../${w##*/}/a.jsonl"
refused "--audit by a path climbing .. into the workdir" "$(inside audit "$up")" --audit "$up"
into=$TEST_TMP/into
ln -s "$w" "$into" && own "$into"
refused "--report through the caller's symlink into the workdir" "$(inside report "$into/r.json")" --report "$into/r.json"
refused "--audit through it" "$(inside audit "$into/sub/a.jsonl")" --audit "$into/sub/a.jsonl"
refused "--capture through it" "$(inside capture "$into/cap")" --capture "$into/cap"
if [ -n "$host_root" ]; then
	bound=$TEST_TMP/bound
	mkdir "$bound" && mount --bind "$w" "$bound" && mounts+=("$bound")
	refused "--report in a bind mount of the workdir" "$(inside report "$bound/r.json")" --report "$bound/r.json"
	refused "--audit in it" "$(inside audit "$bound/a.jsonl")" --audit "$bound/a.jsonl"
	refused "--capture in it" "$(inside capture "$bound/cap")" --capture "$bound/cap"
	# the files of $w/sub are the workdir's too, wherever $w/sub is mounted
	boundsub=$TEST_TMP/boundsub
	mkdir "$boundsub" && mount --bind "$w/sub" "$boundsub" && mounts+=("$boundsub")
	refused "--audit in a bind mount of a directory below the workdir" \
		"$(inside audit "$boundsub/a.jsonl")" --audit "$boundsub/a.jsonl"
else
	skip "outputs in a bind mount of the workdir" "needs root to mount"
fi

# --- planted at the output's name: a symlink, a hard link, a FIFO
ln -s "$v/shadow" "$o/r-sym.json"
ln -s "$v/passwd" "$o/a-sym.jsonl"
ln "$v/sudoers" "$o/r-hard.json"
ln "$v/hosts" "$o/a-hard.jsonl"
mkfifo "$o/r-fifo.json" "$o/a-fifo.jsonl"
own "$o"/*
c --report "$o/r-sym.json"
untouched "a symlink at --report's name to a victim: the victim is untouched" shadow
is "... and the name now holds the report" "$(kind "$o/r-sym.json")" "a report, outcome exited"
c --audit "$o/a-sym.jsonl"
untouched "a symlink at --audit's name: the victim is untouched" passwd
is "... and the name now holds the audit log" "$(kind "$o/a-sym.jsonl")" "an audit log, start to exit"
c --report "$o/r-hard.json"
untouched "a hard link at --report's name to a victim: the victim is untouched" sudoers
is "... and the name now holds the report" "$(kind "$o/r-hard.json")" "a report, outcome exited"
c --audit "$o/a-hard.jsonl"
untouched "a hard link at --audit's name: the victim is untouched" hosts
is "... and the name now holds the audit log" "$(kind "$o/a-hard.jsonl")" "an audit log, start to exit"
out=$(as_caller timeout 20 "$CORDON" -w "$w" --report "$o/r-fifo.json" -- true 2>&1)
is "a FIFO at --report's name: cordon does not block on it" "$?:$out" "0:"
is "... and the name now holds the report" "$(kind "$o/r-fifo.json")" "a report, outcome exited"
out=$(as_caller timeout 20 "$CORDON" -w "$w" --audit "$o/a-fifo.jsonl" -- true 2>&1)
is "a FIFO at --audit's name: cordon does not block on it" "$?:$out" "0:"
is "... and the name now holds the audit log" "$(kind "$o/a-fifo.jsonl")" "an audit log, start to exit"

# --capture DIR: a symlink or a file there is refused; in a directory, its files are replaced
mine "$o/cap-target"
ln -s cap-target "$o/cap-link" && own "$o/cap-link"
refused "--capture DIR that is a symlink is refused" "cordon: --capture: $o/cap-link: Not a directory" \
	--capture "$o/cap-link"
is "... and nothing is written where it points" "$(ls -A "$o/cap-target")" ""
: >"$o/cap-file" && own "$o/cap-file"
refused "--capture DIR that is a file is refused" "cordon: --capture: $o/cap-file: Not a directory" \
	--capture "$o/cap-file"
mine "$o/cap-s" "$o/cap-h"
ln -s "$v/group" "$o/cap-s/stdout"
ln "$v/gshadow" "$o/cap-h/stdout"
ln "$v/motd" "$o/cap-h/stderr"
own "$o"/cap-[sh]/*
capture() { as_caller timeout 20 "$CORDON" -w "$w" --capture "$1" -- sh -c 'echo to-out; echo to-err >&2' >/dev/null 2>&1; }
capture "$o/cap-s"
untouched "a symlink at --capture's stdout to a victim: the victim is untouched" group
is "... and the files hold what the command wrote" "$(kind "$o/cap-s/stdout"; kind "$o/cap-s/stderr")" \
	"$(printf '%s\n' "a file holding 'to-out\\n'" "a file holding 'to-err\\n'")"
capture "$o/cap-h"
is "hard links at --capture's stdout and stderr to victims: the run goes on" "$?" 0
untouched "... stdout's victim is untouched" gshadow
untouched "... stderr's too" motd
mine "$o/cap2"
mkfifo "$o/cap2/stdout" && own "$o/cap2/stdout"
out=$(as_caller timeout 20 "$CORDON" -w "$w" --capture "$o/cap2" -- echo to-out 2>&1)
is "a FIFO at --capture's stdout: cordon does not block on it" "$?:$out" "0:to-out"
is "... and replaces it" "$(kind "$o/cap2/stdout")" "a file holding 'to-out\\n'"

# --- the output's directory: another uid's symlink on the way is not followed
if [ -n "$host_root" ]; then
	if is_user_mode; then other=1; else other=$(id -u "$TEST_USER"); fi
	mine "$o/d"
	ln -s "$o/d" "$TEST_TMP/others" && chown -h "$other" "$TEST_TMP/others"
	link="cordon: --%s: $TEST_TMP/others: $TEST_TMP/others is a symlink owned by uid $other; cordon follows only symlinks owned by root or by you (give the real path)"
	# shellcheck disable=SC2059
	refused "--report through another uid's ($other) symlink is refused" "$(printf "$link" report)" \
		--report "$TEST_TMP/others/r.json"
	# shellcheck disable=SC2059
	refused "--capture through it too" "$(printf "$link" capture)" --capture "$TEST_TMP/others/cap"
	is "... and nothing is written where it points" "$(ls -A "$o/d")" ""
	ln -s "$o/d" "$TEST_TMP/roots"
	c --report "$TEST_TMP/roots/r.json"
	is "(control: root's symlink on the way is followed)" "$rc:$(kind "$o/d/r.json")" "0:a report, outcome exited"
else
	skip "another uid's symlink on the way to an output" "needs root to make one"
fi
mine "$o/e"
ln -s "$o/e" "$TEST_TMP/mine" && own "$TEST_TMP/mine"
c --audit "$TEST_TMP/mine/a.jsonl"
is "(control: the caller's own symlink on the way is followed)" "$rc:$(kind "$o/e/a.jsonl")" "0:an audit log, start to exit"

# --- the report is written beside its name and renamed at the end, out of the command's reach
rm -f "$w/started" "$w/go"
(exec_as_caller "$CORDON" -w "$w" --report "$o/late.json" -- sh -c \
	": >started; ls -A '$o' 2>/dev/null; while [ ! -e go ]; do sleep 0.05; done" >"$TEST_TMP/late.out" 2>&1) &
pid=$!
wait_until 20 test -e "$w/started"
during=$(find "$o" -maxdepth 1 -name '*late*' -printf '%f %m\n')
: >"$w/go"
wait $pid
like_glob "while the command runs, the report is a hidden temporary file (0600) beside its name" \
	"$during" ".late.json.* 600"
is "the command could not see the outputs' directory" "$(cat "$TEST_TMP/late.out")" ""
is "... and the report is whole after the run" "$(kind "$o/late.json")" "a report, outcome exited"

done_testing
