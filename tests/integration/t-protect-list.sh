#!/usr/bin/env bash
# The default protected paths (protected-paths/default.list), every entry attacked: the checks
# are generated from the list the binary carries (`cordon protect show`, itself checked against
# the source tree's list and README's table), so an entry cannot be added without its attacks,
# nor dropped without README's promise failing here. For every entry that exists, every trick of
# t-protect (write, delete, rename, chmod, symlinks, hard links, truncate, subprocesses,
# /proc/self/cwd, the parent moved, replaced or removed) must leave the host's file as it was,
# and the same trick without the defaults must change it (its control). For every entry that
# must not be created (refuse, drop): made during a direct run, swept after it and said; with
# --cow, refused inside (refuse) or refused by cordon apply (drop). The entries are batched:
# one sandbox a trick, every entry in it.
# shellcheck source-path=SCRIPTDIR source=../lib/tap.sh
. "$TAP_LIB"

src=$(cd "$(dirname "$TAP_LIB")/../.." && pwd)
own() { if [ "$(id -u)" = 0 ] && is_user_mode; then chown -hR "$TEST_USER:" "$@"; fi; }
# contains DESC HAYSTACK NEEDLE: NEEDLE is in HAYSTACK, literally (entries hold "*")
contains() {
	if [[ $2 == *"$3"* ]]; then pass "$1"; else
		fail "$1"
		diag "expected to contain: $3"
		diag "got:                 $2"
	fi
}
G=(git -c user.name=t -c user.email=t@example.com -c safe.directory='*' -c init.defaultBranch=main)

# --- the list in force: the binary's, as the source tree has it, as README promises it
as_caller "$CORDON" protect show >"$TEST_TMP/show" 2>"$TEST_TMP/show.err"
is "cordon protect show" "$?:$(cat "$TEST_TMP/show.err")" "0:"
like_glob "... says where the list comes from" "$(head -1 "$TEST_TMP/show")" "# *default.list: * entries"
# KIND PATH NEW, one a line, from the source file (comments and blank lines dropped)
sed -e 's/#.*//' -e 's/[[:space:]]\+/ /g' -e 's/^ //' -e 's/ $//' "$src/protected-paths/default.list" |
	grep -v '^$' >"$TEST_TMP/list"
grep -v '^#' "$TEST_TMP/show" | sed -e 's/[[:space:]]\+/ /g' -e 's/ $//' >"$TEST_TMP/shown"
case $(head -1 "$TEST_TMP/show") in
"# built-in:"*) is "the binary's list is the source tree's, entry for entry" "$(cat "$TEST_TMP/shown")" "$(cat "$TEST_TMP/list")" ;;
*) skip "the binary's list is the source tree's" "an installed list is in force: $(head -1 "$TEST_TMP/show")" ;;
esac
n_entries=$(wc -l <"$TEST_TMP/list")
between "... and it is not empty ($n_entries entries)" "$n_entries" 40 1024
as_caller "$CORDON" protect check "$src/protected-paths/default.list" >/dev/null 2>&1
is "cordon protect check accepts it" "$?" 0
printf 'protect .x/ refuse\nprotect .y drops\n' >"$TEST_TMP/bad.list"
chmod 644 "$TEST_TMP/bad.list"
rejects "cordon protect check: a bad list, one line naming the place, exit 125" \
	"cordon: $TEST_TMP/bad.list:2:12: unknown \"drops\" (refuse or drop, or nothing: only what exists)" \
	-- protect check "$TEST_TMP/bad.list"
rejects "cordon protect with no verb: usage, exit 125" \
	"cordon: protect: usage: cordon protect show [FILE] | check FILE" -- protect

# README's table: one column per kind, each listing exactly the entries of its kind
readme_col() { # N: the paths of column N of the row under the Protected paths table's header
	awk '/^### Protected paths/ { s = 1 } s && /^\|---/ { getline; print; exit }' "$src/README.md" |
		awk -F'|' -v n="$(($1 + 1))" '{ print $n }' | grep -o '`[^`]*`' | tr -d '`' | sort
}
list_col() { # KIND NEW: the list's paths of that kind
	awk -v k="$1" -v w="$2" '$1 == k && ($3 == w || (w == "-" && NF == 2)) { print $2 }' "$TEST_TMP/list" | sort
}
is "README's column \"read-only, and cannot be created\" is the list's protect ... refuse" \
	"$(readme_col 1)" "$(list_col protect refuse)"
is "README's column \"a new one is not kept\" is the list's protect ... drop" "$(readme_col 2)" "$(list_col protect drop)"
is "README's column \"read-only where they exist\" is the list's protect entries" "$(readme_col 3)" "$(list_col protect -)"
is "README's column \"hidden\" is the list's deny entries" "$(readme_col 4)" "$(list_col deny -)"
is "(no entry outside README's four columns)" "$(awk '$1 == "deny" && NF == 3' "$TEST_TMP/list")" ""

# --- each entry as a path to attack: a glob's wildcards made a name ("*" -> "x"); a directory
# holds a file to attack (F) and room for a new one (NEW); TOP is F's first directory
declare -a E_PATH E_KIND E_NEW E_S E_F E_NEWF E_TOP E_DIR E_BASE
i=0
while read -r kind path new; do
	c=${path//\*\*/x}
	c=${c//\*/x}
	c=${c//\?/x}
	case $c in *'['*) fail "(the generator makes no name for $path)" ;; esac
	E_PATH[i]=$path E_KIND[i]=$kind E_NEW[i]=${new:--}
	if [ "${c%/}" != "$c" ]; then
		E_S[i]=${c%/} E_F[i]=${c%/}/cordon-probe E_NEWF[i]=${c%/}/cordon-new
	else
		E_S[i]=$c E_F[i]=$c E_NEWF[i]=
	fi
	case ${E_F[i]} in
	*/*) E_TOP[i]=${E_F[i]%%/*} E_DIR[i]=${E_F[i]%/*} E_BASE[i]=${E_F[i]##*/} ;;
	*) E_TOP[i]= E_DIR[i]=. E_BASE[i]=${E_F[i]} ;;
	esac
	i=$((i + 1))
done <"$TEST_TMP/list"
n=$i

# state ROOT: one line per entry, "I\tits view": each component of S on the way (type, inode),
# and everything at and below S (mode, size, inode, links, symlink target, SHA-256)
cat >"$TEST_TMP/state.py" <<'EOF'
import hashlib, os, stat, sys
root = sys.argv[1]
for line in sys.stdin:
    i, s = line.rstrip('\n').split(' ', 1)
    out, p = [], ''
    for c in s.split('/'):
        p = p + '/' + c if p else c
        try:
            st = os.lstat(os.path.join(root, p))
            out.append('%s %o %d' % (p, stat.S_IFMT(st.st_mode), st.st_ino))
        except FileNotFoundError:
            out.append(p + ' absent')
            break
    def walk(rel):
        full = os.path.join(root, rel)
        try:
            st = os.lstat(full)
        except OSError:
            return
        tgt = os.readlink(full) if stat.S_ISLNK(st.st_mode) else ''
        h = ''
        if stat.S_ISREG(st.st_mode):
            with open(full, 'rb') as f:
                h = hashlib.sha256(f.read()).hexdigest()
        out.append('%s|%o|%d|%d|%d|%s|%s' % (rel, st.st_mode, st.st_size, st.st_ino, st.st_nlink, tgt, h))
        if stat.S_ISDIR(st.st_mode):
            for name in sorted(os.listdir(full)):
                walk(rel + '/' + name)
    walk(s)
    print(i + '\t' + ' ; '.join(out))
EOF
states() { # DIR FILE: every entry's state, in FILE
	for ((k = 0; k < n; k++)); do echo "$k ${E_S[k]}"; done | python3 -I "$TEST_TMP/state.py" "$1" >"$2"
}

# --- the project every attack starts from: a repository holding every entry
template=$TEST_TMP/template
mkdir -p "$template"
(cd "$template" && "${G[@]}" init -q . && echo '# project' >README.md && "${G[@]}" add README.md &&
	"${G[@]}" commit -qm init) || fail "(the template repository could not be made)"
for ((k = 0; k < n; k++)); do
	f=$template/${E_F[k]}
	mkdir -p "$(dirname "$f")"
	[ -e "$f" ] || echo "probe ${E_PATH[k]}" >"$f"
done
is "(the template holds every entry)" \
	"$(for ((k = 0; k < n; k++)); do [ -e "$template/${E_F[k]}" ] || echo "${E_F[k]}"; done)" ""
fresh() {
	local d
	d=$(mkwork)
	cp -a "$template/." "$d/"
	own "$d"
	echo "$d"
}

# --- the tricks, as t-protect has them; X is the entry's own prefix for scratch names
declare -A trick
trick[write]='echo evil >> "$F"'
trick[create]='echo evil > "$NEW"'
trick[delete]='rm -f "$F"; [ "$S" = "$F" ] || rm -rf "$S"'
trick[rename-away]='mv -f "$F" "./$X.away"; [ "$S" = "$F" ] || mv "$S" "./$X.away.d"'
trick[rename-over]='echo evil > "$DIR/$X.ev"; mv -f "$DIR/$X.ev" "$F"; echo evil > "$X.ev2"; mv -f "$X.ev2" "$F"
	if [ "$S" != "$F" ]; then mkdir "$X.evd"; echo evil > "$X.evd/x"; rm -rf "$S"; mv -T "$X.evd" "$S"; fi'
trick[chmod]='chmod 0777 "$F"; chmod 0777 "$S"'
trick[symlink]='ln -sfn /etc/passwd "$F" || { rm -f "$F"; ln -s /etc/passwd "$F"; }
	[ "$S" = "$F" ] || { rm -rf "$S"; ln -sfn /tmp "$S"; }'
trick[hardlink-in]='echo evil > "$DIR/$X.ev"; ln -f "$DIR/$X.ev" "$F"; echo evil > "$X.ev2"; ln -f "$X.ev2" "$F"
	[ -z "$NEW" ] || ln "$X.ev2" "$NEW"'
trick[hardlink-out]='ln "$F" "./$X.hl" && echo evil >> "./$X.hl"'
trick[truncate]='truncate -s 0 "$F"'
trick[child-sh]='sh -c "sh -c '\''echo evil >> \"\$F\"'\''" & wait; (chmod 0777 "$F")'
# (python: one interpreter goes through every entry, as the loop below does)
trick[python]='python3 -c "
import os
for e in os.environ[\"E\"].splitlines():
    k, f = e.split(\"|\")[0], e.split(\"|\")[2]
    for op in (lambda: open(f, \"a\").write(\"evil\"), lambda: os.chmod(f, 0o777),
               lambda: os.rename(f, \".t\" + k + \".away\"), lambda: os.unlink(f)):
        try: op()
        except OSError: pass"'
trick[perl]='perl -e "my \$h; open(\$h, q(>>), \$ENV{F}) and print \$h q(evil) and close \$h;
	chmod 0777, \$ENV{F}; rename \$ENV{F}, \$ENV{X}.q(.away); unlink \$ENV{F}"'
trick[cd-relative]='cd "$DIR" && { echo evil >> "$BASE"; mv -f "$BASE" "$BASE.away"; rm -f "$BASE"; }'
trick[proc-cwd]='echo evil >> "/proc/self/cwd/$F"; cd "$DIR" && echo evil >> "/proc/self/cwd/$BASE"'
trick[move-parent]='mv "$TOP" "$TOP.moved" && echo evil >> "$TOP.moved/${F#"$TOP"/}"'
trick[parent-symlink]='mv "$TOP" "$TOP.moved" || cp -a "$TOP" "$TOP.moved"; rm -rf "$TOP"
	ln -s "$TOP.moved" "$TOP"; echo evil >> "$F"'
trick[rm-rf-parent]='rm -rf "$TOP"'
tricks=(write create delete rename-away rename-over chmod symlink hardlink-in hardlink-out truncate
	child-sh python perl cd-relative proc-cwd move-parent parent-symlink rm-rf-parent)
has_perl=$(command -v perl >/dev/null && echo yes)

# applies T K: does trick T apply to entry K?
applies() {
	case $1 in
	create) [ -n "${E_NEWF[$2]}" ] ;;
	move-parent | parent-symlink | rm-rf-parent) [ -n "${E_TOP[$2]}" ] ;;
	*) true ;;
	esac
}

# inside: each entry's trick in a subshell of its own, its variables exported
loop='printf "%s\n" "$E" | while IFS="|" read -r K S F NEW TOP DIR BASE; do
	X=.t$K; export S F NEW TOP DIR BASE X
	( eval "$TRICK" ) </dev/null >/dev/null 2>&1
done; true'

# run_trick T OPTS...: a fresh copy, every entry's trick T in one sandbox; the entries' states
# before and after in $TEST_TMP/before, $TEST_TMP/after
run_trick() {
	local t=$1 d e= k
	shift
	for ((k = 0; k < n; k++)); do
		applies "$t" "$k" || continue
		e+="$k|${E_S[k]}|${E_F[k]}|${E_NEWF[k]}|${E_TOP[k]}|${E_DIR[k]}|${E_BASE[k]}"$'\n'
	done
	d=$(fresh)
	states "$d" "$TEST_TMP/before"
	if [ "$t" = python ]; then
		cordon -w "$d" "$@" -e "E=$e" -- sh -c "${trick[$t]}; true"
	else
		cordon -w "$d" "$@" -e "E=$e" -e "TRICK=${trick[$t]}" -- sh -c "$loop"
	fi
	states "$d" "$TEST_TMP/after"
	rm -rf "$d"
}

# judge T WANT LABEL: each entry T applies to, its state compared (WANT: same or changed)
judge() {
	local t=$1 want=$2 label=$3 k b a
	declare -A before after
	while IFS=$'\t' read -r k b; do before[$k]=$b; done <"$TEST_TMP/before"
	while IFS=$'\t' read -r k a; do after[$k]=$a; done <"$TEST_TMP/after"
	for ((k = 0; k < n; k++)); do
		applies "$t" "$k" || continue
		if [ "$rc" = 0 ] && { { [ "$want" = same ] && [ "${after[$k]}" = "${before[$k]}" ]; } ||
			{ [ "$want" = changed ] && [ "${after[$k]}" != "${before[$k]}" ]; }; }; then
			pass "${E_PATH[k]}: $t $label"
		else
			fail "${E_PATH[k]}: $t $label"
			diag "rc=$rc"
			diag "before: ${before[$k]}"
			diag "after:  ${after[$k]}"
			diag "stderr: $err"
		fi
	done
}

for t in "${tricks[@]}"; do
	if [ "$t" = perl ] && [ -z "$has_perl" ]; then
		skip "every entry: perl" "no perl here"
		continue
	fi
	run_trick "$t"
	judge "$t" same "leaves the host's file as it was"
	run_trick "$t" --no-default-protect
	judge "$t" changed "(control: without the defaults, the same trick changes it)"
done

# --- hidden (deny) entries: nothing of what they hold reaches the sandbox
# deny_read OPTS...: "K:what reading it gave inside", for each deny entry K, in $out
deny_read() {
	local d e= k
	for ((k = 0; k < n; k++)); do [ "${E_KIND[k]}" = deny ] && e+="$k|${E_F[k]}"$'\n'; done
	d=$(fresh)
	cordon -w "$d" "$@" -e "E=$e" -- sh -c 'printf "%s" "$E" | while IFS="|" read -r K F; do
		printf "%s:%s\n" "$K" "$(head -c 100 "$F" 2>/dev/null)"; done'
	rm -rf "$d"
}
deny_read
hidden=$out
deny_read --no-default-protect
shown=$out
for ((k = 0; k < n; k++)); do
	[ "${E_KIND[k]}" = deny ] || continue
	is "${E_PATH[k]}: hidden: the sandbox reads nothing of it" "$(grep "^$k:" <<<"$hidden")" "$k:"
	is "${E_PATH[k]}: (control: without the defaults, the sandbox reads it)" \
		"$(grep "^$k:" <<<"$shown")" "$k:probe ${E_PATH[k]}"
done

# --- entries that must not be created (refuse, drop), in a repository that has none of them
fresh_bare() {
	local d
	d=$(mkwork)
	(cd "$d" && "${G[@]}" init -q --template= . && echo x >README.md) >/dev/null
	own "$d"
	echo "$d"
}
# make_script K...: create each entry K (a file in it, for a directory); print "made K" inside
make_script() {
	local k s=
	for k in "$@"; do
		p=${E_NEWF[k]:-${E_F[k]}}
		s+="mkdir -p '$(dirname "$p")' 2>/dev/null; echo evil > '$p' 2>/dev/null && echo 'made $k'; "
	done
	echo "$s true"
}
creatable=()
refused=()
dropped=()
for ((k = 0; k < n; k++)); do
	case ${E_NEW[k]} in
	refuse) creatable+=("$k") refused+=("$k") ;;
	drop) creatable+=("$k") dropped+=("$k") ;;
	esac
done
between "(the list has entries that refuse and drop)" "$((${#refused[@]} > 0 ? ${#dropped[@]} : 0))" 1 1024

# direct: made during the run, gone after it, said
d=$(fresh_bare)
cordon -w "$d" -- sh -c "$(make_script "${creatable[@]}")"
for k in "${creatable[@]}"; do
	s=${E_S[k]}
	is "${E_PATH[k]}: direct: can be made during the run" "$rc:$(grep -cx "made $k" <<<"$out")" "0:1"
	is "${E_PATH[k]}: direct: gone from the host after it" "$(test -e "$d/$s" || test -L "$d/$s" || echo none)" none
	contains "${E_PATH[k]}: direct: cordon says so" "$err" "cordon: protect: removed $s, which the sandbox made at a protected path (${E_PATH[k]})"
done
rm -rf "$d"
d=$(fresh_bare)
cordon -w "$d" --no-default-protect -- sh -c "$(make_script "${creatable[@]}")"
for k in "${creatable[@]}"; do
	s=${E_S[k]}
	is "${E_PATH[k]}: (control) without the defaults, what the run made stays" \
		"$rc:$(test -e "$d/$s" && echo there)" "0:there"
done
unlike "... and nothing is swept" "$err" "protect: removed"
rm -rf "$d"

# --cow: refuse and drop alike: nothing holds the place of a path that does not exist (a
# placeholder would change what programs see: `test -d .git`, issue 29), so it is made inside,
# and cordon apply refuses the layer
L=$TEST_TMP/layers
mkdir -m 700 "$L" && own "$L"
cordon -w "$(mkwork)" --cow --layer-dir "$L" -- true
cow_ok=yes
if [ "$rc" != 0 ]; then
	cow_ok=
	cow_why=$err
fi
layer_of() { sed -n 's/.*kept as layer \([0-9a-f]*\).*/\1/p' <<<"$1"; }
if [ -n "$cow_ok" ]; then
	d=$(fresh_bare)
	missing=()
	for k in "${creatable[@]}"; do missing+=("${E_S[k]}"); done
	cordon -w "$d" --cow --layer-dir "$L" -- sh -c 'for p in "$@"; do test -e "$p" && echo "there $p"; done; echo ok > ok.txt' sh "${missing[@]}"
	is "--cow: no protected path missing on the host exists inside (no placeholder)" "$rc:$out" "0:"
	id=$(layer_of "$err")
	as_caller "$CORDON" discard --layer-dir "$L" "$id" >/dev/null 2>&1
	for k in "${refused[@]}" "${dropped[@]}"; do
		cordon -w "$d" --cow --layer-dir "$L" -- sh -c "$(make_script "$k")"
		is "${E_PATH[k]}: --cow: made inside" "$rc:$(grep -cx "made $k" <<<"$out")" "0:1"
		id=$(layer_of "$err")
		as_caller "$CORDON" apply --layer-dir "$L" -w "$d" "$id" >/dev/null 2>"$TEST_TMP/apply.err"
		a_rc=$?
		is "${E_PATH[k]}: --cow: cordon apply refuses the layer" "$a_rc" 125
		contains "${E_PATH[k]}: --cow: ... saying why" "$(cat "$TEST_TMP/apply.err")" "protected (${E_PATH[k]%/})"
		is "${E_PATH[k]}: --cow: ... and the host has nothing at ${E_S[k]}" "$(test -e "$d/${E_S[k]}" || test -L "$d/${E_S[k]}" || echo none)" none
		as_caller "$CORDON" discard --layer-dir "$L" "$id" >/dev/null 2>&1
	done
	cordon -w "$d" --cow --layer-dir "$L" --no-default-protect -- sh -c "$(make_script "${dropped[@]}")"
	id=$(layer_of "$err")
	as_caller "$CORDON" apply --layer-dir "$L" -w "$d" "$id" >/dev/null 2>&1
	for k in "${dropped[@]}"; do
		if [[ ${E_S[k]} == .git/* ]]; then # git's state is never written as files (t-cow-git)
			is "${E_PATH[k]}: --cow without the defaults too: git's state, not applied" \
				"$(test -e "$d/${E_S[k]}" || echo none)" none
			continue
		fi
		is "${E_PATH[k]}: --cow (control) without the defaults: applied, it is on the host" \
			"$(test -e "$d/${E_S[k]}" && echo there)" there
	done
	as_caller "$CORDON" discard --layer-dir "$L" "$id" >/dev/null 2>&1
	rm -rf "$d"
else
	skip "--cow: the entries that refuse and drop" "--cow refused here: $cow_why"
fi

done_testing
