#!/usr/bin/env bash
# The layer store out of every sandbox's reach, and apply never trusting a manifest's path
# (README "Copy-on-write workdir", issue 25 §6): the review's forgery end to end (a store in the
# workdir refused at run time, through a symlink and through other mounts; a store a later
# direct run could write, its manifest rewritten to aim apply at a directory of the host:
# refused, nothing written anywhere), tampered manifests (the MAC, the workdir's device and
# inode, two layers' manifests swapped), a symlinked layer or manifest, a store or layer others
# can write, apply from another directory, an earlier cordon's layer without a MAC, the key out
# of the sandbox's sight, and the exact lines of bad input.
# shellcheck source-path=SCRIPTDIR source=../lib/tap.sh
. "$TAP_LIB"

host_root=$([ "$(id -u)" = 0 ] && echo yes)
own() { if [ -n "$host_root" ] && is_user_mode; then chown -hR "$TEST_USER:" "$@"; fi; }
L=$TEST_TMP/layers
mkdir -m 700 "$L" && own "$L"
if is_user_mode && [ -n "$host_root" ]; then key=$USER_STATE/cordon/layer.key; else
	key=${XDG_STATE_HOME:-$HOME/.local/state}/cordon/layer.key
	[ "$(id -u)" = 0 ] && key=/var/lib/cordon/layer.key
fi
mounts=()
cleanup() { for m in "${mounts[@]}"; do umount -l "$m" 2>/dev/null; done; }
trap cleanup EXIT

# the layer commands, as the caller, from directory $1: $rc $out $err
lc_in() {
	local dir=$1 cmd=$2
	shift 2
	out=$(cd "$dir" && as_caller "$CORDON" "$cmd" "$@" 2>"$TEST_TMP/lerr")
	rc=$?
	err=$(cat "$TEST_TMP/lerr")
}
lc() { lc_in "$TEST_TMP" "$@"; }
layer_of() { sed -n 's/.*kept as layer \([0-9a-f]\{16\}\).*/\1/p' <<<"$1" | head -1; }
one_line() { like_glob "$1" "$rc|$(wc -l <<<"$err")|$err" "125|1|cordon: *"; }
# a tree's every entry, inode and content: "nothing written" means this
state() { (cd "$1" && find . -printf '%y %m %i %s %p\n' | sort && find . -type f -exec sha256sum {} + | sort); }
# a workdir holding one file, and a layer of it that adds payload: $w $id
layer_in() {
	w=$(mkwork)
	echo keep >"$w/keep" && own "$w"
	cordon -w "$w" --cow --layer-dir "$1" -- sh -c 'echo evil > payload'
	id=$(layer_of "$err")
}

# --- does --cow work on this kernel?
layer_in "$L"
if [ "$rc" = 125 ] && [[ $err == *"user extended attributes"* ]]; then
	skip "the layer store" "--cow refused on this kernel: $err"
	done_testing
	exit
fi
is "(--cow runs here and keeps a layer)" "$rc:${#id}" "0:16"

# --- 1. the review's forgery, its first step: the store in the workdir, refused at run time
w=$(mkwork)
cordon -w "$w" --cow --layer-dir "$w/store" -- sh -c 'echo evil > payload'
is "a store inside the workdir: refused before the run, in one line" "$rc:$err" \
	"125:cordon: layer: layer store $w/store: inside the workdir, where the sandbox could replace or rewrite it: keep it outside the workdir"
is "... nothing made in the workdir (the store was not created there)" "$(ls -A "$w")" ""
mkdir -m 700 "$w/store" && own "$w/store"
cordon -w "$w" --cow --layer-dir "$w/store" -- true
like_glob "... nor when it exists already" "$rc:$err" "125:cordon: layer: layer store $(glob_quote "$w")/store: inside the workdir*"
chmod 700 "$w"
cordon -w "$w" --cow --layer-dir "$w" -- true
like_glob "the workdir itself as the store: refused" "$rc:$err" "125:cordon: layer: layer store $(glob_quote "$w"): inside the workdir*"
chmod 755 "$w"
ln -s "$w" "$TEST_TMP/to-work" && own "$TEST_TMP/to-work"
cordon -w "$w" --cow --layer-dir "$TEST_TMP/to-work/store2" -- true
is "a store reached through a symlink into the workdir: refused" "$rc:$err" \
	"125:cordon: layer: layer store $TEST_TMP/to-work/store2: to-work is a symlink (give the path without symlinks)"
is "... nothing made" "$(ls -A "$w")" "store"
if [ -n "$host_root" ]; then
	mkdir "$TEST_TMP/other" "$TEST_TMP/sub-mnt" "$w/sub" && own "$w/sub"
	mount --bind "$w" "$TEST_TMP/other" && mounts+=("$TEST_TMP/other")
	cordon -w "$w" --cow --layer-dir "$TEST_TMP/other/store3" -- true
	like_glob "a store in another mount of the workdir: refused" "$rc:$err" \
		"125:cordon: layer: layer store $(glob_quote "$TEST_TMP")/other/store3: inside the workdir*"
	mount --bind "$w/sub" "$TEST_TMP/sub-mnt" && mounts+=("$TEST_TMP/sub-mnt")
	chmod 700 "$w/sub"
	cordon -w "$w" --cow --layer-dir "$TEST_TMP/sub-mnt" -- true
	like_glob "a store in a mount of a directory below the workdir: refused" "$rc:$err" \
		"125:cordon: layer: layer store $(glob_quote "$TEST_TMP")/sub-mnt: inside the workdir*"
	is "... nothing made in the workdir" "$(find "$w" -mindepth 1 -printf '%P\n' | sort | tr '\n' ' ')" "store sub "
else
	skip "a store in another mount of the workdir" "bind mounts need root"
	skip "a store in a mount of a directory below the workdir" "bind mounts need root"
	skip "... nothing made in the workdir" "bind mounts need root"
fi

# --- 2. its second step: a store a later direct run can write (its parent became a
# workdir), the manifest rewritten to aim apply at a directory of the host's (a fake /etc)
fake=$TEST_TMP/fake-etc
mkdir -p "$fake/cron.d" && echo 'root stuff' >"$fake/cron.d/keep" && own "$fake"
fake_before=$(state "$fake")
p=$(mkwork)
S=$p/store
mkdir -m 700 "$S" && own "$S"
layer_in "$S"
w_before=$(state "$w")
tid=$(stat -c '%d %i' "$fake/cron.d")
cordon -w "$p" -e "T=$fake/cron.d" -e "TID=$tid" -e "ID=$id" -- sh -c '
	sed -i "s|^workdir /.*|workdir $T|; s|^workdir-id .*|workdir-id $TID|" store/$ID/manifest &&
	grep "^workdir" store/$ID/manifest'
is "a direct run on the store's parent rewrites the manifest (the attack's first half)" \
	"$rc:$out" "0:workdir $fake/cron.d
workdir-id $tid"
lc_in "$fake/cron.d" apply --layer-dir "$S" "$id"
one_line "apply, run where the forged manifest points: refused, one line"
is "... the store is below an earlier sandbox's workdir" "$err" \
	"cordon: apply: layer store $S: $p was a sandbox's workdir, where the sandbox could have written it: keep it elsewhere"
mv "$S" "$TEST_TMP/moved-store"
S=$TEST_TMP/moved-store
lc_in "$fake/cron.d" apply --layer-dir "$S" "$id"
is "the store moved out of reach: the forged manifest itself is refused (its MAC)" "$rc:$err" \
	"125:cordon: apply: layer $id: its manifest's MAC does not match: changed since cordon saved it (or saved under another key): not read (discard it)"
lc_in "$w" apply --layer-dir "$S" "$id"
is "... from the real workdir too" "$rc:$(wc -l <<<"$err")" "125:1"
lc diff --layer-dir "$S" "$id"
like_glob "... and by diff" "$rc:$err" "125:cordon: diff: layer $(glob_quote "$id"): its manifest's MAC does not match*"
is "nothing was written in the fake /etc" "$(state "$fake")" "$fake_before"
is "... nor in the workdir" "$(state "$w")" "$w_before"
lc layers --layer-dir "$S"
like_glob "cordon layers lists it as unreadable, saying why" "$rc:$out" "0:$(glob_quote "$id")  cannot be read: layer $(glob_quote "$id"): its manifest's MAC does not match*"
lc discard --layer-dir "$S" "$id"
is "... and it can be discarded" "$rc:$err:$(ls -A "$S")" "0::"

# --- 3. tampered manifests in a store the caller's own: the workdir's device and inode
# swapped for another workdir's, two layers' manifests swapped
layer_in "$L"
w1=$w id1=$id
layer_in "$L"
w2=$w id2=$id
w2_before=$(state "$w2")
cp -p "$L/$id1/manifest" "$TEST_TMP/m1"
sed -i "s|^workdir-id .*|workdir-id $(stat -c '%d %i' "$w2")|; s|^workdir /.*|workdir $w2|" "$L/$id1/manifest"
lc_in "$w2" apply --layer-dir "$L" "$id1"
like_glob "a manifest given another workdir's device and inode: refused" "$rc:$err" \
	"125:cordon: apply: layer $(glob_quote "$id1"): its manifest's MAC does not match*"
cp -p "$L/$id2/manifest" "$L/$id1/manifest"
lc_in "$w2" apply --layer-dir "$L" "$id1"
like_glob "another layer's genuine manifest put in its place: refused (the MAC names the layer)" "$rc:$err" \
	"125:cordon: apply: layer $(glob_quote "$id1"): its manifest's MAC does not match*"
is "... nothing written" "$(state "$w2")" "$w2_before"
cp -p "$TEST_TMP/m1" "$L/$id1/manifest"

# --- 4. apply writes only where it is asked to: the current directory, or -w DIR
lc_in "$w2" apply --layer-dir "$L" "$id1"
is "apply of a genuine layer from another workdir: refused, one line" "$rc:$err" \
	"125:cordon: apply: $w2 is not the workdir of layer $id1 ($w1): not applied (apply it from there)"
is "... nothing written there" "$(state "$w2")" "$w2_before"
lc_in "$TEST_TMP" apply --layer-dir "$L" "$id1"
is "... nor from a directory that is no workdir" "$rc:$(wc -l <<<"$err")" "125:1"
lc_in "$w2" apply --layer-dir "$L" -w "$w2" "$id1"
like_glob "... nor with -w naming another directory" "$rc:$err" "125:cordon: apply: $(glob_quote "$w2") is not the workdir of layer $(glob_quote "$id1")*"
lc_in "$TEST_TMP" apply --layer-dir "$L" -w "$w1" "$id1"
is "apply -w the layer's workdir, from elsewhere: applied" "$rc:$err:$(cat "$w1/payload")" "0::evil"
lc_in "$w2" apply --layer-dir "$L"
is "apply without an ID, in a workdir: its newest layer, there" "$rc:$err:$(cat "$w2/payload")" "0::evil"
w=$(mkwork)
rmdir "$w" && mkdir "$w" && own "$w" # the same path, another directory
layer_of_w=$(mkwork)
echo x >"$layer_of_w/x" && own "$layer_of_w"
cordon -w "$layer_of_w" --cow --layer-dir "$L" -- sh -c 'echo evil > payload'
id=$(layer_of "$err")
mv "$layer_of_w" "$layer_of_w.old" && mkdir "$layer_of_w" && own "$layer_of_w"
lc_in "$layer_of_w" apply --layer-dir "$L" "$id"
is "the workdir replaced by another directory at its path: refused" "$rc:$err" \
	"125:cordon: apply: $layer_of_w: not the directory the run had (replaced since): layer $id not applied"
is "... nothing written" "$(ls -A "$layer_of_w")" ""
lc discard --layer-dir "$L" "$id"

# --- 5. a symlinked layer directory or manifest
layer_in "$L"
w_before=$(state "$w")
mv "$L/$id" "$L/real" && ln -s real "$L/$id" && own "$L/$id"
lc_in "$w" apply --layer-dir "$L" "$id"
is "a layer that is a symlink in the store: refused" "$rc:$err" \
	"125:cordon: apply: layer $id: a symlink in the store, not a layer cordon saved: not followed (discard it)"
rm "$L/$id" && mv "$L/real" "$L/$id"
mv "$L/$id/manifest" "$L/$id/m.real" && ln -s m.real "$L/$id/manifest" && own "$L/$id/manifest"
lc_in "$w" apply --layer-dir "$L" "$id"
is "a manifest that is a symlink: refused" "$rc:$err" \
	"125:cordon: apply: layer $id: its manifest is a symlink: not followed (discard it)"
rm "$L/$id/manifest" && mv "$L/$id/m.real" "$L/$id/manifest"
is "... nothing written" "$(state "$w")" "$w_before"

# --- 6. a store, layer or manifest others can write
chmod 770 "$L"
lc_in "$w" apply --layer-dir "$L" "$id"
is "a group-writable store: refused" "$rc:$err" \
	"125:cordon: apply: layer store $L: mode 0770, not 0700 (chmod 0700 $L, after checking who could have written there)"
chmod 700 "$L"
chmod 770 "$L/$id"
lc_in "$w" apply --layer-dir "$L" "$id"
is "a group-writable layer directory: refused" "$rc:$err" \
	"125:cordon: apply: layer $id: its directory has mode 0770: others could write it: not read (discard it)"
chmod 700 "$L/$id"
chmod 622 "$L/$id/manifest"
lc_in "$w" diff --layer-dir "$L" "$id"
is "an other-writable manifest: refused" "$rc:$err" \
	"125:cordon: diff: layer $id: its manifest has mode 0622: others could write it: not read (discard it)"
chmod 600 "$L/$id/manifest"
if [ -n "$host_root" ]; then
	other=$(mktemp -d "$TEST_TMP/other-owned.XXXXXX")
	chmod 755 "$other" # readable: what is refused is its owner
	if is_user_mode; then chown root: "$other"; else chown "$TEST_USER:" "$other"; fi
	lc_in "$w" layers --layer-dir "$other"
	is "a store owned by another user: refused" "$rc:$err" \
		"125:cordon: layers: layer store $other: owned by uid $(stat -c %u "$other"), not by us (uid $(caller_uid)): use a directory of your own"
	if is_user_mode; then chown root: "$L/$id/manifest"; else chown "$TEST_USER:" "$L/$id/manifest"; fi
	lc_in "$w" apply --layer-dir "$L" "$id"
	like_glob "a manifest owned by another user: refused" "$rc:$err" \
		"125:cordon: apply: layer $(glob_quote "$id"): its manifest is owned by uid *, not by us*"
	chown --reference="$L" "$L/$id/manifest"
else
	skip "a store owned by another user" "needs root to make one"
	skip "a manifest owned by another user" "needs root to make one"
fi
mv "$L/$id/tree/payload" "$TEST_TMP/payload" && mkfifo -m 600 "$L/$id/tree/payload" && own "$L/$id/tree/payload"
out=$(cd "$w" && as_caller timeout 60 "$CORDON" apply --layer-dir "$L" "$id" 2>"$TEST_TMP/lerr")
rc=$? err=$(cat "$TEST_TMP/lerr")
is "a FIFO put in the layer's tree: apply refuses it (does not hang on it)" "$rc:$err" \
	"125:cordon: apply: layer $id: tree/payload is not a file (damaged layer)"
rm "$L/$id/tree/payload" && mv "$TEST_TMP/payload" "$L/$id/tree/payload"
is "... nothing written" "$(state "$w")" "$w_before"
lc_in "$w" apply --layer-dir "$L" "$id"
is "(control: all put back, the layer applies)" "$rc:$err:$(cat "$w/payload")" "0::evil"

# --- 7. an earlier cordon's layer (format 1, no MAC)
layer_in "$L"
sed -i '1s/.*/cordon-layer 1/; $d' "$L/$id/manifest"
lc_in "$w" diff --layer-dir "$L" "$id"
is "a layer without a MAC: refused with why, in one line" "$rc:$err" \
	"125:cordon: diff: layer $id: saved by an earlier cordon, without a MAC: it cannot be told from a forgery, so it is not read (discard it)"
lc layers --layer-dir "$L"
like "... listed as such" "$out" "$id  cannot be read: layer $id: saved by an earlier cordon"
lc discard --all --layer-dir "$L"
is "... discard --all removes it (and every other)" "$rc:$err:$(ls -A "$L")" "0::"

# --- 8. the key: made 0600 outside every store, never in the sandbox's sight
is "the layers' key: 32 bytes, mode 0600, the caller's" "$(stat -c '%s %a %u' "$key")" "32 600 $(caller_uid)"
cordon -w "$(mkwork)" -e "K=$key" -- sh -c 'cat "$K" >/dev/null 2>&1 && echo read || echo unread'
is "the sandbox cannot read it" "$rc:$out" "0:unread"
if is_user_mode && [ -n "$host_root" ]; then # the user's own key (root's is shared: left alone)
	chmod 644 "$key"
	lc layers --layer-dir "$L"
	is "a key others can read: refused, in one line" "$rc:$err" \
		"125:cordon: layers: the layers' key $key: its mode is not 0600: not used (if nobody else made it so, remove it: a new one is made, and the layers kept under the old one can only be discarded)"
	chmod 600 "$key"
	ln -s "$USER_STATE" "$TEST_TMP/state-link" && own "$TEST_TMP/state-link"
	out=$(as_caller env XDG_STATE_HOME="$TEST_TMP/state-link" "$CORDON" -w "$(mkwork)" --cow --layer-dir "$L" -- true 2>"$TEST_TMP/lerr")
	rc=$? err=$(cat "$TEST_TMP/lerr")
	is "the key's directory reached through a symlink: refused before the run" "$rc:$err" \
		"125:cordon: layer: the layers' key's directory $TEST_TMP/state-link/cordon: state-link is a symlink (cordon follows none on the way to its key: set XDG_STATE_HOME to a path without symlinks)"
else
	skip "a key others can read" "root's key is shared by every root run: not changed here"
	skip "the key's directory reached through a symlink" "XDG_STATE_HOME is not root's"
fi

# --- 9. bad input: one line, exit 125
lc apply --layer-dir "$L" --bogus
is "apply --bogus" "$rc:$err" "125:cordon: apply: unknown option --bogus (cordon apply --help)"
lc diff --layer-dir "$L" -w "$w" 0123456789abcdef
is "diff -w (apply's only)" "$rc:$err" "125:cordon: diff: -w, --workdir: apply's only (cordon --help)"
lc apply --layer-dir "$L" -w "$TEST_TMP/nonexistent" 0123456789abcdef
is "apply of a layer not in the store" "$rc:$err" "125:cordon: apply: no layer 0123456789abcdef in the store"
layer_in "$L"
lc apply --layer-dir "$L" -w "$TEST_TMP/nonexistent" "$id"
one_line "apply -w a directory that does not exist: one line"
like_glob "... naming it" "$err" "cordon: apply: *$(glob_quote "$TEST_TMP")/nonexistent*"
lc apply --layer-dir "$L" -w "$TEST_TMP/nonexistent"
is "apply -w a directory that does not exist, no ID" "$rc:$err" \
	"125:cordon: apply: $TEST_TMP/nonexistent: No such file or directory"
ln -s "$w" "$TEST_TMP/wlink" && own "$TEST_TMP/wlink"
lc apply --layer-dir "$L" -w "$TEST_TMP/wlink" "$id"
is "apply -w a symlink to the workdir: refused (not followed)" "$rc:$err" \
	"125:cordon: apply: $TEST_TMP/wlink: is a symlink, which cordon does not follow here (a sandbox may have left it): give the real path"
is "... nothing written" "$(test -e "$w/payload" && echo written)" ""
lc discard --all --layer-dir "$L"

done_testing
