#!/usr/bin/env bash
# The copy-on-write workdir (README "Copy-on-write workdir"): a run on a real repository makes
# every kind of change; the workdir stays as it was; the layer is listed, diffed (--stat, and a
# patch git applies to a clone), applied (the workdir then equals what the sandbox saw) or
# discarded; conflicts, a layer that fills up, --cow-from, bad input, the audit, ownership and
# setuid bits as root, and a symlink planted in the workdir before apply.
# shellcheck source-path=SCRIPTDIR source=../lib/tap.sh
. "$TAP_LIB"

host_root=$([ "$(id -u)" = 0 ] && echo yes)
G=(git -c user.name=t -c user.email=t@example.com -c safe.directory='*' -c init.defaultBranch=main)
L=$TEST_TMP/layers
mkdir -m 700 "$L" && own "$L"
export LC_ALL=C

# one_line DESC: exit 125 and exactly one line "cordon: ..." on stderr
one_line() { like_glob "$1" "$rc|$(wc -l <<<"$err")|$err" "125|1|cordon: *"; }

# --- does --cow work on this kernel?
w=$(mkwork)
cordon -w "$w" --cow --layer-dir "$L" -- true
if [ "$rc" = 125 ] && [[ $err == *"user extended attributes"* ]]; then
	skip "the copy-on-write workdir" "refused on this kernel: $err"
	done_testing
	exit
fi
is "(--cow runs here)" "$rc:$err" "0:"

# listing: what a tree holds (not .git, nor the empty placeholders a --cow sandbox sees at the
# protected paths that do not exist: the default list's "refuse" entries, README "Protected
# paths"), as lines: type, mode, size or target, path; then the SHA-256 of every file. The same
# text inside the sandbox and on the host.
skip_paths="-path ./.git$("$CORDON" protect show | awk '$3 == "refuse" { split($2, c, "/"); print c[1] }' |
	sort -u | sed 's|^| -o -path ./|' | tr -d '\n')"
listing='LC_ALL=C find . \( '"$skip_paths"' \) -prune -o -type d -printf "d %m %p\0" -o -type l -printf "l %p -> %l\0" -o -type f -printf "f %m %s %p\0" | LC_ALL=C sort -z | tr "\0" "\n"
	LC_ALL=C find . \( '"$skip_paths"' \) -prune -o -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum'
# what git tracks: files (mode 644 or 755) and symlinks, no directories
gitlisting='LC_ALL=C find . \( '"$skip_paths"' \) -prune -o -type l -printf "l %p -> %l\0" -o -type f -printf "f %m %s %p\0" | LC_ALL=C sort -z | tr "\0" "\n"
	LC_ALL=C find . \( '"$skip_paths"' \) -prune -o -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum'
host_listing() { (cd "$1" && sh -c "$listing"); }
host_git_listing() { (cd "$1" && sh -c "$gitlisting"); }
# the whole workdir, .git included, with inodes: "nothing changed" means this
host_all() { (cd "$1" && find . -printf '%y %m %i %s %p -> %l\n' | sort && find . -type f -exec sha256sum {} + | sort); }

# --- the repository: one of each kind of thing to change
mkrepo() {
	(
		cd "$1" && "${G[@]}" init -q . &&
			printf 'line1\nline2\nline3\n' >text.txt && printf 'BIN\000\001\002\003head' >bin.dat &&
			echo gone >del.txt && mkdir -p tree/sub d d2f sub && echo a >tree/a && echo b >tree/sub/b &&
			echo old1 >d/old1 && echo old2 >d/old2 && echo 'moved content' >mv-src.txt &&
			echo 'echo s' >script.sh && echo 'echo e' >exec.sh && chmod 755 exec.sh &&
			ln -s text.txt link-old && echo was-a-file >f2d && echo x >d2f/x && echo keep >sub/keep &&
			"${G[@]}" add -A && "${G[@]}" commit -qm base
	) >/dev/null && own "$1"
}
changes='
	printf "line1\nCHANGED\nline3\n" > text.txt
	echo added > added.txt
	printf "NEW\000\377\376binary" > added.bin
	printf "\000\001more" >> bin.dat
	rm del.txt
	rm -rf tree
	rm -rf d && mkdir d && echo new > d/new
	mv mv-src.txt mv-dst.txt
	chmod +x script.sh
	chmod -x exec.sh
	ln -s added.txt link-new
	ln -sfn README link-old
	rm f2d && mkdir f2d && echo inside > f2d/file
	rm -rf d2f && echo now-a-file > d2f
	echo s > "new file with spaces.txt"
	echo n > "$(printf "new\nline.txt")"
	echo u > "ünïcødé-😀.txt"
	echo sub > sub/x.txt'

w=$(mkwork)
mkrepo "$w"
before=$(host_all "$w")
orig=$(host_listing "$w")
cordon -w "$w" --cow --layer-dir "$L" -- sh -c "$changes
	echo ==== ; $listing; echo ==== ; $gitlisting"
sandbox_view=$(awk '/^====$/{n++; next} n==1' <<<"$out")
sandbox_git=$(awk '/^====$/{n++; next} n==2' <<<"$out")
id=$(layer_of "$err")
like_glob "a run with every kind of change: exit 0, kept as layer ID" "$rc:$err" "0:cordon: cow: * change(s) kept as layer [0-9a-f]*"
is "... the workdir is unchanged (.git included)" "$(host_all "$w")" "$before"
isnt "(the sandbox's view differs from the workdir's)" "$sandbox_view" "$orig"
lc layers
like_glob "cordon layers lists it, with its workdir" "$out" "*$(glob_quote "$id")  *  $(glob_quote "$w")  * changes*"

lc diff --stat "$id"
is "cordon diff --stat: exit 0" "$rc:$err" "0:"
stat_out=$out
for line in 'M text.txt' 'A added.txt' 'A added.bin (binary)' 'M bin.dat (binary)' 'D del.txt' \
	'D tree/' 'D tree/a' 'D tree/sub/' 'D tree/sub/b' 'A d/new' 'D d/old1' 'D d/old2' \
	'R mv-src.txt -> mv-dst.txt' 'mode 100644 -> 100755 script.sh' 'mode 100755 -> 100644 exec.sh' \
	'A link-new (symlink)' 'M link-old (symlink)' 'M f2d/ (file -> directory)' 'A f2d/file' \
	'M d2f (directory -> file)' 'D d2f/x' 'A new file with spaces.txt' 'A "new\nline.txt"' \
	'A "\303\274n\303\257c\303\270d\303\251-\360\237\230\200.txt"' 'A sub/x.txt'; do
	is "... lists: $line" "$(grep -cFx -- "$line" <<<"$stat_out")" 1
done
is "... and nothing else: one line per change, then the count" "$(wc -l <<<"$stat_out")" 26
like_glob "... the count line last" "$(tail -1 <<<"$stat_out")" "2[0-9] files changed, * insertion*(+), * deletion*(-)"
unlike_glob "... the directory d/, replaced, is no change of its own" "$stat_out" "*[AMD] d/
*"

lc diff --patch "$id"
is "cordon diff --patch: exit 0" "$rc:$err" "0:"
printf '%s\n' "$out" >"$TEST_TMP/p.patch"
clone=$TEST_TMP/clone
cp -a "$w" "$clone" # the workdir is as it was: the original state
(cd "$clone" && "${G[@]}" apply --check "$TEST_TMP/p.patch") 2>"$TEST_TMP/gerr"
is "git apply --check accepts the patch on a clone of the original" "$?:$(cat "$TEST_TMP/gerr")" "0:"
(cd "$clone" && "${G[@]}" apply "$TEST_TMP/p.patch") 2>"$TEST_TMP/gerr"
is "git apply applies it" "$?:$(cat "$TEST_TMP/gerr")" "0:"
is "... and the clone's files and symlinks are what the sandbox had" "$(host_git_listing "$clone")" "$sandbox_git"

# conflict: the workdir changed since the run
echo host-edit >>"$w/text.txt"
before=$(host_all "$w")
lc apply -w "$w" "$id"
one_line "apply after the workdir changed: exit 125, one line"
like_glob "... naming the path" "$err" "cordon: apply: text.txt: *"
is "... and nothing of the workdir changed" "$(host_all "$w")" "$before"
lc layers
like "... the layer is kept" "$out" "$id"
(cd "$w" && "${G[@]}" checkout -q -- text.txt)

lc apply -w "$w" "$id"
is "cordon apply: exit 0" "$rc:$err" "0:"
is "... the workdir is what the sandbox saw" "$(host_listing "$w")" "$sandbox_view"
is "... git sees the change to text.txt" "$("${G[@]}" -C "$w" diff --stat -- text.txt | tail -1)" " 1 file changed, 1 insertion(+), 1 deletion(-)"
lc layers
unlike "... the layer is gone from the store" "$out" "$id"
is "... and its directory" "$(ls -A "$L" | grep -cF "$id")" 0
lc apply -w "$w" "$id"
one_line "a second apply of the same id: exit 125, one line"
like "... saying there is no such layer" "$err" "no layer $id"
if [ -n "$host_root" ]; then
	is "the applied files are owned by the workdir's owner" "$(find "$w" -path "$w/.git" -prune -o ! -user "$(stat -c %u "$w")" -print)" ""
fi

# --- discard
w=$(mkwork)
mkrepo "$w"
before=$(host_all "$w")
cordon -w "$w" --cow --layer-dir "$L" -- sh -c 'echo x > new.txt; rm text.txt'
id=$(layer_of "$err")
lc discard "$id"
is "cordon discard ID: exit 0" "$rc:$err" "0:"
lc layers
unlike "... the layer is gone" "$out" "$id"
is "... the workdir untouched" "$(host_all "$w")" "$before"
lc diff "$id"
one_line "... and it can no longer be diffed"
cordon -w "$w" --cow --layer-dir "$L" -- true
is "a run that changed nothing keeps no layer" "$rc:$err:$(ls -A "$L" | grep -v '^\.' | wc -l)" "0::0"

# --- --cow-from
w=$(mkwork)
mkrepo "$w"
cordon -w "$w" --cow --layer-dir "$L" -- sh -c 'echo first > first.txt; rm del.txt; echo one >> text.txt'
id1=$(layer_of "$err")
cordon -w "$w" --cow-from "$id1" --layer-dir "$L" -- sh -c 'cat first.txt; test -e del.txt || echo no-del; tail -1 text.txt; echo second > second.txt'
is "--cow-from ID: the run sees the first run's changes" "$rc:$out" "0:first
no-del
one"
id2=$(layer_of "$err")
lc diff --stat "$id2"
like_glob "... and keeps its own layer with both runs' changes" "$out" "*A first.txt*A second.txt*"
is "... the workdir is still untouched" "$(test -e "$w/first.txt" || test -e "$w/second.txt" || echo none)" none
w2=$(mkwork)
cordon -w "$w2" --cow-from "$id1" --layer-dir "$L" -- sh -c ': > ran'
one_line "--cow-from a layer of another workdir: exit 125, one line"
like_glob "... saying so" "$err" "cordon: --cow-from: layer $(glob_quote "$id1") holds changes of another workdir*"
is "... the command did not run" "$(test -e "$w2/ran" && echo ran)" ""
lc discard --all

# --- a layer that fills up
w=$(mkwork)
echo keep >"$w/keep" && own "$w"
cordon -w "$w" --cow --cow-size 1M --layer-dir "$L" -- sh -c 'echo small > small.txt; head -c 5000000 /dev/zero > big; echo "dd=$?"'
like_glob "--cow-size 1M and 5 MB written: the command sees its write fail" "$out" "dd=[1-9]*"
like "... cordon says the layer is full" "$err" "the layer is full"
id=$(layer_of "$err")
lc diff --stat "$id"
like_glob "... what fit is kept" "$rc:$out" "0:*A big*A small.txt*"
big=$(find "$L/$id/tree" -name big -printf %s 2>/dev/null)
between "... big holds what fit: some of it, not all" "${big:-0}" 1 4999999
lc discard --all

# --- sparse files (review F4): the save keeps holes, and so do apply and --cow-from; a layer's
# files total at most 2 x --cow-size at their apparent size, or the save is refused
sparse='for f in "$@"; do printf head >"$f" && truncate -s 3M "$f" && printf tail >>"$f"; done'
ref=$TEST_TMP/sparse-ref
mkdir -p "$ref" && (cd "$ref" && sh -c "$sparse" sh s1 s2)
blocks_kib() { du -k "$@" | awk '{ t += $1 } END { print t }'; }
w=$(mkwork)
cordon -w "$w" --cow --cow-size 4M --layer-dir "$L" -- sh -c "$sparse" sh s1 s2
id=$(layer_of "$err")
like_glob "two sparse files of 3 MiB, --cow-size 4M: kept" "$rc:$err" "0:*kept as layer*"
cordon -w "$w" --cow-from "$id" --layer-dir "$L" -- sh -c 'stat -c "%s %b %B" s1 s2; cat s1 s2 | sha256sum'
read -r size1 b1 bs1 size2 b2 bs2 seen _ <<<"$(tr '\n' ' ' <<<"$out")"
is "--cow-from: the sandbox sees them whole" "$rc:$size1:$size2:$seen" "0:3145732:3145732:$(cat "$ref/s1" "$ref/s2" | sha256sum | cut -d' ' -f1)"
between "... with their holes in its upper (KiB allocated)" "$(((b1 * bs1 + b2 * bs2) / 1024))" 0 64
if [ "$(blocks_kib "$ref/s1")" -gt 64 ]; then
	skip "apply keeps holes" "$TEST_TMP's filesystem has no holes"
else
	lc apply -w "$w" "$id"
	is "cordon apply of the sparse files: exit 0" "$rc:$err" "0:"
	is "... the files are the sandbox's, byte for byte (cmp)" "$(cmp "$ref/s1" "$w/s1" && cmp "$ref/s2" "$w/s2" && echo same)" same
	is "... of their apparent size" "$(stat -c %s "$w/s1" "$w/s2" | tr '\n' ' ')" "3145732 3145732 "
	between "... with their holes: the workdir got at most 64 KiB for them, not 6 MiB (du)" "$(blocks_kib "$w/s1" "$w/s2")" 0 64
fi
lc discard --all
w=$(mkwork)
cordon -w "$w" --cow --cow-size 4M --layer-dir "$L" -- sh -c "$sparse" sh s1 s2 s3
one_line "three sparse files of 3 MiB, --cow-size 4M: 9 MiB of files, past 2 x 4M: refused, 125"
like_glob "... saying which file and the bound" "$err" "cordon: layer: s3: a file of 3145732 bytes or more takes the layer's files past 8388608 bytes in all (2 x --cow-size, *"
lc layers
unlike "... nothing kept" "$out" "$w"

# --- cordon diff holds no big file in memory (review F5): past 8 MiB a file is binary to the
# diff, read through in pieces; its blob id is still git's
w=$(mkwork)
cordon -w "$w" --cow --cow-size 16M --layer-dir "$L" -- sh -c 'printf x >big && truncate -s 24M big && seq 3 >small'
id=$(layer_of "$err")
like_glob "a sparse file of 24 MiB, --cow-size 16M: kept" "$rc:$err" "0:*kept as layer*"
printf x >"$ref/big" && truncate -s 24M "$ref/big"
# the same binary's own peak RSS (KiB) doing nothing: an ASan build's is some 24 MiB alone
base_rss=$(as_caller /usr/bin/time -f 'maxrss=%M' "$CORDON" --version 2>&1 >/dev/null | sed -n 's/^maxrss=//p')
# diff_rss ARGS: cordon diff ARGS as the caller; its output to $out, its peak RSS (KiB) to $rss
diff_rss() {
	rss=$(as_caller /usr/bin/time -f 'maxrss=%M' "$CORDON" diff --layer-dir "$L" "$@" 2>&1 >"$TEST_TMP/dout" | sed -n 's/^maxrss=//p')
	out=$(cat "$TEST_TMP/dout")
}
diff_rss --stat "$id"
is "cordon diff --stat: the big file binary, the small one counted" "$out" "A big (binary)
A small
2 files changed, 3 insertions(+)"
between "... in less than 16 MiB of memory above the binary's own ${base_rss:-?} KiB (max RSS, KiB; the file is 24 MiB)" "$rss" 1 $((${base_rss:-0} + 16383))
diff_rss --patch "$id"
like_glob "cordon diff --patch: \"Binary files ... differ\", git's blob id" "$out" "*new file mode 100644
index 0000000000000000000000000000000000000000..$("${G[@]}" hash-object --no-filters "$ref/big")
Binary files /dev/null and b/big differ
diff --git a/small b/small*"
between "... in less than 16 MiB of memory above the binary's own ${base_rss:-?} KiB (max RSS, KiB; the file is 24 MiB)" "$rss" 1 $((${base_rss:-0} + 16383))
lc discard --all

# --- bad input
w=$(mkwork)
lc diff 0123456789abcdef
one_line "cordon diff of a layer that does not exist: 125, one line"
is "... saying so" "$err" "cordon: diff: no layer 0123456789abcdef in the store"
lc diff zzzz
one_line "cordon diff zzzz: 125, one line"
like "... saying it is no layer id" "$err" '"zzzz" is not a layer id'
lc apply ../../etc
one_line "cordon apply ../../etc: 125, one line"
loose=$TEST_TMP/loose
mkdir -m 755 "$loose" && own "$loose"
out=$(as_caller "$CORDON" apply --layer-dir "$loose" 0123456789abcdef 2>"$TEST_TMP/lerr")
rc=$? err=$(cat "$TEST_TMP/lerr")
one_line "cordon apply with a 0755 layer dir: 125, one line"
like "... saying why" "$err" "0700"
: >"$TEST_TMP/afile" && own "$TEST_TMP/afile"
cordon -w "$w" --cow --layer-dir "$TEST_TMP/afile" -- sh -c ': > ran'
one_line "--layer-dir naming a file: 125, one line"
like_glob "... saying so" "$err" "cordon: *layer store $(glob_quote "$TEST_TMP")/afile*"
is "... the command did not run" "$(test -e "$w/ran" && echo ran)" ""
cordon -w "$TEST_TMP/afile" --cow --layer-dir "$L" -- sh -c ': > ran'
one_line "--workdir naming a file, with --cow: 125, one line"
like_glob "... saying so" "$err" "cordon: --workdir: *not a directory*"
cordon -w "$w" --cow-from badid --layer-dir "$L" -- sh -c ': > ran'
one_line "--cow-from badid: 125, one line"
like "... saying it is no layer id" "$err" '"badid" is not a layer id'
is "... the command did not run" "$(test -e "$w/ran" && echo ran)" ""
cordon -w "$w" --cow-from 0123456789abcdef --layer-dir "$L" -- sh -c ': > ran'
one_line "--cow-from a well-formed id not in the store: 125, one line"

# --- the audit's file events come from the layer
w=$(mkwork)
mkrepo "$w"
o=$(mkwork)
cordon -w "$w" --cow --layer-dir "$L" --audit "$o/audit.jsonl" -- sh -c 'echo new > new.txt; echo more >> text.txt; rm del.txt; cat README 2>/dev/null; true'
is "--audit with --cow: file events for exactly the changes" \
	"$(python3 -c '
import json, sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e.get("event") == "file":
        print(e["change"], e["path"], e["type"])' "$o/audit.jsonl" | sort)" \
	"created new.txt file
deleted del.txt file
modified text.txt file"
lc discard --all

# --- as root: ownership and setuid bits
if [ -n "$host_root" ]; then
	w=$(mkwork)
	mkrepo "$w"
	chown -R "$TEST_USER:" "$w"
	cordon -w "$w" --cow --layer-dir "$L" -- sh -c 'echo new > made.txt; mkdir -p newdir && echo x > newdir/f
		cp /bin/true suid && chmod u+s,g+s suid; chmod u+s script.sh; echo ok'
	id=$(layer_of "$err")
	if [ "$rc" = 0 ] && [ -n "$id" ]; then
		lc apply -w "$w" "$id"
		is "apply into a workdir of $TEST_USER's: exit 0" "$rc:$err" "0:"
		is "... what the sandbox made is owned by the workdir's owner" \
			"$(stat -c %U "$w/made.txt" "$w/newdir" "$w/newdir/f" "$w/suid" | sort -u)" "$TEST_USER"
		is "... no setuid or setgid bit survives" "$(find "$w" -perm /6000 -printf '%P ')" ""
		is "... the file made setuid is there, executable" "$(stat -c %a "$w/suid")" 755
	else
		fail "a run on a workdir of $TEST_USER's, as root (rc=$rc): $err"
	fi
else
	w=$(mkwork)
	cordon -w "$w" --cow --layer-dir "$L" -- sh -c 'cp /bin/true suid && chmod u+s,g+s suid'
	id=$(layer_of "$err")
	lc apply -w "$w" "$id"
	is "apply of a file made setuid inside: no setuid or setgid bit on the host" "$rc:$(find "$w" -perm /6000 -printf '%P ')" "0:"
fi

# --- a symlink planted in the workdir before apply
w=$(mkwork)
mkrepo "$w"
elsewhere=$TEST_TMP/elsewhere
mkdir -p "$elsewhere" && echo mine >"$elsewhere/keep" && own "$elsewhere"
cordon -w "$w" --cow --layer-dir "$L" -- sh -c 'echo evil > sub/x.txt; echo evil >> sub/keep'
id=$(layer_of "$err")
mv "$w/sub" "$w/sub.real" && ln -s "$elsewhere" "$w/sub" && own "$w/sub"
elsebefore=$(cd "$elsewhere" && find . -printf '%p %s %i\n' | sort; cat keep)
lc apply -w "$w" "$id"
one_line "apply where a directory of the workdir became a symlink: 125, one line"
is "... nothing written through the symlink" "$(cd "$elsewhere" && find . -printf '%p %s %i\n' | sort; cat keep)" "$elsebefore"
rm "$w/sub" && mv "$w/sub.real" "$w/sub"
lc apply -w "$w" "$id"
is "(control: with the directory back, the same layer applies)" "$rc:$(cat "$w/sub/x.txt")" "0:evil"

# --- where the workdir is on the host: a --cow sandbox's mount table names only the overlay's
# root and staging paths inside (a direct workdir's shows its host path: README, Known limits)
w=$(mkwork)
cordon_bare -w "$w" --workdir-target /work --cow --layer-dir "$L" -- sh -c 'cat /proc/self/mountinfo /proc/self/mounts'
is "--cow: /proc/self/mountinfo and mounts name the workdir's host path nowhere" \
	"$rc:$(grep -c -F "$w" <<<"$out")" "0:0"
cordon_bare -w "$w" --workdir-target /work -- cat /proc/self/mountinfo
is "(control: a direct workdir's mount root is its host path, as documented)" \
	"$rc:$(grep -c -F " $w /work " <<<"$out")" "0:1"

done_testing
