#!/usr/bin/env bash
# Renaming a directory under --cow (issue 29, item 3): the overlay is made in the sandbox's user
# namespace (userxattr: no redirect_dir), so rename(2) of a workdir directory fails with EXDEV.
# The run says so first on stderr (one line, not with -q); mv's copy fallback is saved, diffed
# and applied so that the host tree equals what the sandbox saw; the overlay's redirect xattrs
# cannot be forged from inside.
# shellcheck source-path=SCRIPTDIR source=../lib/tap.sh
. "$TAP_LIB"

L=$TEST_TMP/layers
mkdir -m 700 "$L" && own "$L"
export LC_ALL=C
NOTE='cordon: cow: directories of the workdir cannot be renamed inside (EXDEV: *'

# cordon with its stderr as it is ($err), the notice included
raw() {
	out=$(as_caller "$CORDON" --ro-bind "$PROBE_DIR" "$@" 2>"$TEST_TMP/stderr")
	rc=$?
	err=$(cat "$TEST_TMP/stderr")
}
# listing: a tree's directories and files, then their SHA-256 (not .git, nor the empty
# placeholders a --cow sandbox sees at protected paths that do not exist: t-cow's rule)
skip_paths="-path ./.git$("$CORDON" protect show | awk '$3 == "refuse" { split($2, c, "/"); print c[1] }' |
	sort -u | sed 's|^| -o -path ./|' | tr -d '\n')"
listing='find . \( '"$skip_paths"' \) -prune -o -type d -printf "d %m %p\n" -o -type f -printf "f %m %s %p\n" | sort
	find . \( '"$skip_paths"' \) -prune -o -type f -print0 | sort -z | xargs -0 sha256sum'
host_listing() { (cd "$1" && sh -c "$listing"); }

# --- does --cow work on this kernel?
w=$(mkwork)
raw -w "$w" --cow --layer-dir "$L" -- true
if [ "$rc" = 125 ] && [[ $err == *"user extended attributes"* ]]; then
	skip "the copy-on-write workdir" "refused on this kernel: $err"
	done_testing
	exit
fi

# --- the notice: first, once, one line; none with -q, none without --cow
like_glob "a --cow run says first that directories cannot be renamed" "$rc|$(head -1 <<<"$err")" "0|$NOTE"
is "... once" "$(grep -c '^cordon: cow: directories of the workdir cannot be renamed' <<<"$err")" 1
is "... on one line, and nothing else for a run without changes" "$(wc -l <<<"$err")" 1
raw -w "$w" --cow --layer-dir "$L" -- sh -c 'echo from-the-command >&2'
like_glob "... before the command's own output" "$(head -2 <<<"$err")" "$NOTE
from-the-command"
raw -q -w "$w" --cow --layer-dir "$L" -- true
is "-q: no notice" "$rc:$err" "0:"
raw -w "$w" -- true
is "without --cow: no notice" "$rc:$err" "0:"

# --- what the notice says is true: rename(2) of a workdir directory fails with EXDEV
w=$(mkwork)
mkdir -p "$w/docs/sub" && echo a >"$w/docs/a" && echo b >"$w/docs/sub/b" && echo c >"$w/docs/c"
own "$w"
raw -w "$w" --cow --layer-dir "$L" -- python3 -c '
import errno, os
try:
    os.rename("docs", "documentation")
    print("renamed")
except OSError as e:
    print(errno.errorcode[e.errno])
os.makedirs("made/inside")
os.rename("made", "made2")
print(sorted(os.listdir("made2")))'
is "os.rename of a workdir directory: EXDEV; of one made inside: works" "$rc|$out" "0|EXDEV
['inside']"
like_glob "... after the notice" "$(head -1 <<<"$err")" "$NOTE"
# shellcheck disable=SC2016 # $G is the sandbox's shell's
raw -w "$w" --cow --layer-dir "$L" -- sh -c 'G="git -c user.name=t -c user.email=t@e -c safe.directory=*"
	$G init -q . && $G add docs && $G mv docs documentation 2>&1; echo "status $?"'
like_glob "git mv of a workdir directory fails as the notice says" "$rc|$out" \
	"0|*renaming 'docs' failed: Invalid cross-device link*status 128"

# --- mv copies instead: saved, diffed and applied as the sandbox saw it
orig=$(host_listing "$w")
raw -w "$w" --cow --layer-dir "$L" -- sh -c "mv docs documentation && echo x >>documentation/a &&
	echo new >documentation/new && rm documentation/sub/b && $listing"
sandbox_view=$out
id=$(layer_of "$err")
like_glob "mv docs documentation, then edits inside: exit 0, a layer" "$rc:$id" "0:[0-9a-f]*"
is "... the workdir is unchanged" "$(host_listing "$w")" "$orig"
lc diff --stat "$id"
stat_out=$out
diag "$stat_out"
for line in 'D docs/' 'D docs/a' 'R docs/c -> documentation/c' 'D docs/sub/' 'D docs/sub/b' \
	'A documentation/' 'A documentation/a' 'A documentation/new' 'A documentation/sub/'; do
	is "cordon diff --stat lists: $line" "$(grep -cFx -- "$line" <<<"$stat_out")" 1
done
lc apply -w "$w" "$id"
is "cordon apply: exit 0" "$rc:$err" "0:"
is "... the workdir is what the sandbox saw" "$(host_listing "$w")" "$sandbox_view"

# --- attack: the overlay's own xattrs (a redirect to a path outside, opacity) set from inside
# land escaped in the upper (user.overlay.overlay.*: Linux 6.7), which nothing interprets; and
# set on the workdir by a direct run before, they make the --cow overlay follow nothing (one
# lower layer, redirect_dir=nofollow). Either way the save, diff and apply see plain directories
# and read nothing outside the workdir.
w=$(mkwork)
mkdir -p "$w/d" "$w/e" && echo a >"$w/d/a" && echo e >"$w/e/e"
own "$w"
raw -w "$w" -- python3 -c '
import os
for name, v in (("user.overlay.redirect", b"/../../../etc"), ("user.overlay.opaque", b"y")):
    os.setxattr("e", name, v)
print(os.listxattr("e"))'
if [ "$rc" != 0 ]; then
	skip "a direct run forges overlay xattrs on the workdir" "the workdir has no user xattrs: $err"
fi
raw -w "$w" --cow --layer-dir "$L" -- sh -c 'python3 -c "
import os
os.mkdir(\"n\")
for path in (\"d\", \"n\"):
    for name in (\"user.overlay.redirect\", \"user.overlay.opaque\", \"user.overlay.metacopy\"):
        try:
            os.setxattr(path, name, b\"/../../etc\" if name.endswith(\"redirect\") else b\"y\")
        except OSError as e:
            print(path, name, e)
" && echo more >>e/e && echo new >d/new && '"$listing"
sandbox_view=$out
id=$(layer_of "$err")
like_glob "forged overlay xattrs, then edits in both directories: exit 0, a layer" "$rc:$id" "0:[0-9a-f]*"
lc diff --stat "$id"
is "... the layer holds the edits and the new directory, nothing else" "$rc|$(head -n -1 <<<"$out")" "0|A d/new
M e/e
A n/"
lc apply -w "$w" "$id"
is "cordon apply: exit 0" "$rc:$err" "0:"
is "... the workdir is what the sandbox saw" "$(host_listing "$w")" "$sandbox_view"
xa=$(cd "$w" && python3 -c 'import os; print([(p, n) for p in ("d", "n") for n in os.listxattr(p)])')
is "... and no overlay xattr reached the workdir" "$xa" "[]"

done_testing
