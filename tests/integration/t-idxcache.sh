#!/usr/bin/env bash
# The git index cache (src/sandbox/idxcache.h): a large index's reading is kept in the caller's
# state directory and taken by the next run while the index is as it was; a gitlink added
# between two runs (by the first run's sandbox, or by the user on the host in place, its mtime
# put back) is still found by the second (its sandbox's x/.git is moved aside, the host's git
# status runs nothing); a cache entry changed, or put there by another user, with another mode,
# as a symlink or a hard link, or by a sandbox whose workdir was the cache's directory, is not
# trusted; a reading made while a process holds the index open or mapped for writing is not
# kept (its later writes through a dirty page move no stamp), nor one of an index on tmpfs; 64
# entries at most.
. "$TAP_LIB"

own() { if is_user_mode && [ "$(id -u)" = 0 ]; then chown -hR "$TEST_USER:" "$@"; fi; }
gitr() { git -c safe.directory='*' "$@"; } # the test's own setup, as whoever runs it
gitc() { as_caller env HOME="$TEST_TMP" git -c safe.directory='*' -c user.email=a@b -c user.name=a "$@"; }
mark=$TEST_TMP/pwned-idxcache
chmod 1777 "$TEST_TMP" 2>/dev/null
# plant DIR (inside): a git directory whose config runs "touch $mark" at every git status
plant='plant() { mkdir -p "$1/objects" "$1/refs/heads" && echo "ref: refs/heads/main" >"$1/HEAD" &&
	printf "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tfsmonitor = \"touch '"$mark"'; false\"\n" >"$1/config"; }'
ran() { test -e "$mark" && echo ran || echo no; rm -f "$mark"; }
status_in() { rm -f "$mark"; gitc -C "$1" status >/dev/null 2>&1; ran; }
sha=1234567890123456789012345678901234567890

# the cache's directory, as cordon finds it for the caller
state=$(as_caller sh -c 'if [ "$(id -u)" = 0 ]; then echo /var/lib/cordon;
	elif [ -n "${XDG_STATE_HOME:-}" ]; then echo "$XDG_STATE_HOME/cordon";
	else echo "$HOME/.local/state/cordon"; fi')
cache=$state/gitindex.d
# entry W: the file of W's index in the cache (DEV-INO, hex)
entry() { printf '%s/%x-%x' "$cache" $(stat -c '%d %i' "$1/.git/index"); }
# what the cache held before: what the test adds is removed at its end (a cache: removing an entry
# another run added meanwhile costs that run's next reading, nothing else)
held=$(ls -A "$cache" 2>/dev/null)
# bigrepo [GITLINK]: a repository whose index holds 4,000 paths (320 KB: the cache keeps an index
# of 256 KiB or more), and the gitlink GITLINK; then a pause of 0.1 s, so that its stamps are
# older than the next run's reading by more than the racy window (two ticks of the clock)
bigrepo() {
	local w blob
	w=$(mkwork)
	gitr -C "$w" init -q . && blob=$(gitr -C "$w" hash-object -w --stdin </dev/null)
	for i in $(seq 4000); do printf '100644 %s\td%02d/f%d\n' "$blob" $((i % 50)) "$i"; done |
		gitr -C "$w" update-index --index-info
	[ -n "${1:-}" ] && gitr -C "$w" update-index --add --cacheinfo "160000,$sha,$1"
	own "$w"
	sleep 0.1
	echo "$w"
}
# the -v line saying what the cache did
said() { grep -m 1 -o 'git index cache: .*' <<<"$err"; }

fs=$(stat -f -c %T "$TEST_TMP")
case $fs in
ext2/ext3 | xfs | btrfs | f2fs) usable=yes ;;
*) usable= ;;
esac
if [ -z "$usable" ] || [ "$(cat /proc/sys/fs/leases-enable 2>/dev/null)" != 1 ]; then
	skip "the git index cache" "$TEST_TMP is on $fs, or leases are off: the cache is not used there"
	done_testing
	exit
fi

# --- 1. a large index read once, then taken from the cache
w=$(bigrepo)
cordon -v --workdir "$w" -- true
is "a large index is read, and its reading kept" "$(said)" \
	"git index cache: 0 from the cache, 1 read (1 kept)"
e=$(entry "$w")
is "... in the caller's state directory, a file of the caller's, mode 0600" \
	"$(stat -c '%u %a' "$e" 2>&1)" "$(caller_uid) 600"
cordon -v --workdir "$w" -- true
is "the next run takes it from the cache" "$(said)" "git index cache: 1 from the cache, 0 read (0 kept)"
w2=$(mkwork)
gitr -C "$w2" init -q . && own "$w2"
cordon -v --workdir "$w2" -- true
is "a small index is read, the cache not looked at" "$(said)" ""

# --- 2. a gitlink x added by the first run's sandbox, x/.git made by a later run
w=$(bigrepo)
cordon --workdir "$w" -- sh -c "$plant; plant x/.evil &&
	git -c safe.directory='*' update-index --add --cacheinfo 160000,$sha,x"
sleep 0.1
cordon -v --workdir "$w" -- true
cordon -v --workdir "$w" -- sh -c 'printf "gitdir: .evil\n" >x/.git'
is "a gitlink the first run's sandbox added: the third run takes the index from the cache" \
	"$(said)" "git index cache: 1 from the cache, 0 read (0 kept)"
like "... and finds the gitlink: the new x/.git is moved aside" "$err" \
	"protect: moved x/.git aside to x/.git.cordon-moved-aside"
is "... git status on the host runs nothing" "$(status_in "$w")" no
w=$(bigrepo)
cordon --workdir "$w" --no-default-protect -- sh -c "$plant; plant x/.evil &&
	git -c safe.directory='*' update-index --add --cacheinfo 160000,$sha,x"
cordon --workdir "$w" --no-default-protect -- sh -c 'printf "gitdir: .evil\n" >x/.git'
is "(control) without the defaults, git status ran the new submodule's config" "$(status_in "$w")" ran

# --- 3. the user makes a file of the index a gitlink in place, and puts its mtime back: the
# size, inode and mtime are as the cache has them; only ctime tells
w=$(bigrepo)
cordon -v --workdir "$w" -- true
before=$(stat -c '%i %s %.9Y' "$w/.git/index")
as_caller python3 -I - "$w/.git/index" <<'PY'
import sys
with open(sys.argv[1], "r+b") as f:
    b = f.read()
    at = b.index(b"d01/f1\0") - 62  # version 2: the entry's 62 bytes before its name
    f.seek(at + 24)
    f.write((0o160000).to_bytes(4, "big"))
PY
as_caller touch -m -d "@${before##* }" "$w/.git/index"
is "(the index's inode, size and mtime are as before)" "$(stat -c '%i %s %.9Y' "$w/.git/index")" \
	"$before"
sleep 0.1
cordon -v --workdir "$w" -- sh -c "$plant; plant d01/f1/.evil && printf 'gitdir: .evil\n' >d01/f1/.git"
is "a gitlink the user made in place: the next run reads the index again (its ctime moved)" \
	"$(said)" "git index cache: 0 from the cache, 1 read (1 kept)"
like "... finds it: the new d01/f1/.git is moved aside" "$err" \
	"protect: moved d01/f1/.git aside"
is "... git status on the host runs nothing" "$(status_in "$w")" no

# --- 4. entries not to be trusted: each is the true entry of an index with the gitlink x, made
# to leave x out; the next run's sandbox makes x/.git
# forge W: W's entry without x, its SHA-256 made anew (as whoever can write the file could)
forge() {
	local e body
	e=$(entry "$1")
	body=$(grep -v -e '^sha256 ' -e '^p 78$' "$e")
	printf '%s\nsha256 %s\n' "$body" "$(printf '%s\n' "$body" | sha256sum | cut -d' ' -f1)"
}
attack() { # W: a run that makes x/.git; $ran: did it stay (git status ran its config)?
	cordon -v --workdir "$1" -- sh -c "$plant; plant x/.evil && printf 'gitdir: .evil\n' >x/.git"
	ran=$(status_in "$1")
}
prepared() { # w: a repository with the gitlink x whose reading is kept; e: its entry
	w=$(bigrepo x)
	cordon --workdir "$w" -- true
	e=$(entry "$w")
}
prepared
as_caller sh -c "grep -v '^p 78\$' '$e' >'$e.t' && cat '$e.t' >'$e' && rm '$e.t'"
attack "$w"
is "an entry changed (x left out, its SHA-256 not made anew): not trusted, git status runs nothing" \
	"$ran" no
is "... the index was read" "$(said)" "git index cache: 0 from the cache, 1 read (1 kept)"

prepared
as_caller sh -c "cat >'$e'" <<<"$(forge "$w")"
attack "$w"
is "(control) a forged entry of the caller's, 0600, one link: trusted, x/.git stays" \
	"$ran" ran
is "... it was taken from the cache" "$(said)" "git index cache: 1 from the cache, 0 read (0 kept)"

prepared
as_caller sh -c "cat >'$e'" <<<"$(forge "$w")"
if is_user_mode && [ "$(id -u)" = 0 ]; then chown root: "$e"; else chown nobody: "$e"; fi
attack "$w"
is "the forged entry owned by another user: not trusted, git status runs nothing" \
	"$ran" no
is "... the index was read (the entry is replaced)" "$(said)" "git index cache: 0 from the cache, 1 read (1 kept)"

prepared
as_caller sh -c "cat >'$e' && chmod 0644 '$e'" <<<"$(forge "$w")"
attack "$w"
is "the forged entry with mode 0644: not trusted" "$ran" no
is "... the index was read (the entry is replaced)" "$(said)" "git index cache: 0 from the cache, 1 read (1 kept)"

prepared
forge "$w" >"$TEST_TMP/forged"
chmod 600 "$TEST_TMP/forged" && own "$TEST_TMP/forged"
as_caller ln -sf "$TEST_TMP/forged" "$e"
attack "$w"
is "the forged entry through a symlink: not followed" "$ran" no
is "... the index was read (the entry is replaced)" "$(said)" "git index cache: 0 from the cache, 1 read (1 kept)"

prepared
as_caller sh -c "cat >'$e'" <<<"$(forge "$w")"
as_caller ln -f "$e" "$cache/.second-name"
attack "$w"
is "the forged entry with a second name (a hard link): not trusted" "$ran" no
is "... the index was read (the entry is replaced)" "$(said)" "git index cache: 0 from the cache, 1 read (1 kept)"
rm -f "$cache/.second-name" "$TEST_TMP/forged"

# --- 5. a writer at work while the index is read: a shared mapping whose page is already dirty
# is written without a fault, so without moving a stamp; so is a write() under way. A reading
# made while anyone holds the index open for writing is not kept.
w=$(bigrepo)
exec 9>>"$w/.git/index"
cordon -v --workdir "$w" -- true
is "the index open for writing elsewhere: read, not kept" "$(said)" \
	"git index cache: 0 from the cache, 1 read (0 kept)"
exec 9>&-
cordon -v --workdir "$w" -- true
is "... closed: kept" "$(said)" "git index cache: 0 from the cache, 1 read (1 kept)"

w=$(bigrepo)
rm -f "$TEST_TMP/go" "$TEST_TMP/ready" && mkfifo "$TEST_TMP/go"
python3 -I - "$w/.git/index" "$TEST_TMP/go" "$TEST_TMP/ready" <<'PY' &
import mmap, os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
m = mmap.mmap(fd, 0)  # shared, writable
at = m.find(b"d01/f1\0") - 62 + 24  # the entry's mode (version 2)
m[at] = m[at]  # the page made dirty: a write fault, which stamps the file, now
open(sys.argv[3], "w").close()
open(sys.argv[2]).read()  # until told
m[at:at + 4] = (0o160000).to_bytes(4, "big")  # a gitlink: no fault, no stamp
m.close()
PY
writer=$!
wait_until 10 test -e "$TEST_TMP/ready"
sleep 0.1 # the fault's stamps older than the reading by more than two ticks
stamps=$(stat -c '%i %s %.9Y %.9Z' "$w/.git/index")
cordon -v --workdir "$w" -- true
is "a process with the index mapped for writing: read, not kept" "$(said)" \
	"git index cache: 0 from the cache, 1 read (0 kept)"
echo go >"$TEST_TMP/go"
wait "$writer"
sleep 0.1
if [ "$(stat -c '%i %s %.9Y %.9Z' "$w/.git/index")" = "$stamps" ]; then
	cordon -v --workdir "$w" -- sh -c "$plant; plant d01/f1/.evil && printf 'gitdir: .evil\n' >d01/f1/.git"
	like "... it then wrote a gitlink through its dirty page (no stamp moved): the next run finds it" \
		"$err" "protect: moved d01/f1/.git aside"
	is "... git status on the host runs nothing" "$(status_in "$w")" no
else
	skip "a write through a dirty page moved no stamp" "the page was written back meanwhile (a sync)"
	skip "... git status on the host runs nothing" "the page was written back meanwhile"
fi

# --- 6. tmpfs: a mapped page is written without a stamp: never kept
if [ "$(id -u)" = 0 ] && mkdir "$TEST_TMP/shm" && mount -t tmpfs -o size=16m,mode=755 tmpfs "$TEST_TMP/shm"; then
	t=$(TEST_TMP=$TEST_TMP/shm mkwork)
	gitr -C "$t" init -q . && cp "$(bigrepo)/.git/index" "$t/.git/index" && own "$t"
	sleep 0.1
	cordon -v --workdir "$t" -- true
	cordon -v --workdir "$t" -- true
	is "an index on tmpfs: read at every run, the cache not looked at" "$(said)" ""
	umount "$TEST_TMP/shm"
else
	skip "an index on tmpfs" "cannot mount a tmpfs here (not root)"
fi

# --- 7. bounded: 64 entries at most, the oldest written go first
for i in $(seq 80); do
	as_caller sh -c "printf x >'$cache/ffff-$i' && chmod 600 '$cache/ffff-$i' &&
		touch -m -d '@$((1700000000 + i))' '$cache/ffff-$i'"
done
w=$(bigrepo)
cordon -v --workdir "$w" -- true
between "80 more entries, then one kept: at most 64 are left" \
	"$(find "$cache" -mindepth 1 -maxdepth 1 -name '[!.]*' | wc -l)" 1 64
is "... the new one among them, the oldest gone, the newest of them kept" \
	"$(test -f "$(entry "$w")" && echo new) $(test -e "$cache/ffff-1" && echo oldest) $(test -e "$cache/ffff-80" && echo newest)" \
	"new  newest"
as_caller sh -c "rm -f '$cache'/ffff-*"

# --- 7. a sandbox whose workdir was the cache's directory (a user's state directory can hold
# workdirs): it forges an entry there; later runs do not use that directory
if is_user_mode && [ "$(id -u)" = 0 ]; then # the test's own state directory (tap.sh)
	prepared
	forge "$w" >"$TEST_TMP/forged"
	chmod 644 "$TEST_TMP/forged"
	cordon --workdir "$cache" --ro-bind "$TEST_TMP/forged" -- sh -c \
		"cat '$TEST_TMP/forged' >'${e##*/}' && chmod 600 '${e##*/}'"
	is "(a sandbox ran in the cache's directory and wrote the forged entry)" \
		"$rc $(cmp -s "$TEST_TMP/forged" "$e" && echo written)" "0 written"
	attack "$w"
	is "a run after it does not use the cache: git status runs nothing" "$ran" no
	like_glob "... -v says why" "$(said)" "git index cache: not used: *was a sandbox's workdir"
	rm -f "$TEST_TMP/forged"
elif is_user_mode; then
	skip "a sandbox whose workdir was the cache's directory" \
		"it would leave your own cache's directory marked as a workdir (run as root)"
else
	skip "a sandbox whose workdir was the cache's directory" \
		"root's state is below /var, which is never a workdir"
fi

for f in $(comm -13 <(sort <<<"$held") <(ls -A "$cache" 2>/dev/null | sort)); do
	as_caller rm -f "$cache/$f"
done
done_testing
