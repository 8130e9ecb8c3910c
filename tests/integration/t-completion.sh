#!/usr/bin/env bash
# Shell completion (completions/): bash's _cordon, driven through COMP_WORDS/COMP_CWORD as bash
# drives it, and zsh's _cordon, through a real interactive zsh on a pseudo-terminal (zpty): each
# offers cordon's options (every one --help lists), a value's choices, the policy names of the
# installed directory and the ids of the layers `cordon layers` lists, as the caller.
# shellcheck source-path=SCRIPTDIR source=../lib/tap.sh
. "$TAP_LIB"
comp=$(cd "$(dirname "$0")/../../completions" && pwd)
export LC_ALL=C

# a policy directory of its own (the completion reads the installed one: @POLICY_DIR@), with a
# policy, and groups.policy (a part of policies, not one)
P=$TEST_TMP/policies
mkdir -p "$P" && printf 'default allow\n' >"$P/mine.policy" && cp "$P/mine.policy" "$P/groups.policy"
chmod -R a+rX "$P"
sed "s|@POLICY_DIR@|$P|" "$comp/cordon.bash.in" >"$TEST_TMP/cordon.bash"
mkdir -p "$TEST_TMP/zfunc" && sed "s|@POLICY_DIR@|$P|" "$comp/_cordon.in" >"$TEST_TMP/zfunc/_cordon"
chmod -R a+rX "$TEST_TMP/cordon.bash" "$TEST_TMP/zfunc"

# a kept layer, made by a real --cow run, in a store of the test's
L=$TEST_TMP/layers
mkdir -m 700 "$L"
if [ "$(id -u)" = 0 ] && is_user_mode; then chown "$TEST_USER:" "$L"; fi
w=$(mkwork)
cordon_bare -w "$w" --cow --layer-dir "$L" -- sh -c 'echo new >file'
layer=$(sed -n 's/.*kept as layer \([0-9a-f]\{16\}\).*/\1/p' <<<"$err")
if [ "$rc" = 125 ] && [[ $err == *"user extended attributes"* || $err == *overlay* ]]; then
	layer=
	diag "no --cow here ($err): the layer ids are not tested"
else
	like "a --cow run kept a layer" "$layer" "$(printf '%.16s' "$layer")"
fi

# --- bash: complete WORD... (the last one the word being completed), as the caller
bcomplete() {
	# shellcheck disable=SC2016 # the script's own variables, expanded by the bash it runs in
	out=$(as_caller env CORDON_LAYER_DIR="${STORE:-}" bash --norc -c '
		. "$1"; shift
		COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=()
		_cordon cordon "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
		printf "%s\n" "${COMPREPLY[@]}" | sort -u' bash "$TEST_TMP/cordon.bash" "$@" 2>&1)
}
words() { tr '\n' ' ' <<<"$1"; }

every=$("$CORDON" --help | sed -nE 's/^ +(-[a-zA-Z], )?(--[a-z0-9-]+).*/\2/p' | sort)
bcomplete "$CORDON" --
is "bash: cordon --<TAB> offers every long option of --help" "$(grep -- '^--' <<<"$out")" "$every"
bcomplete "$CORDON" --co
is "bash: --co<TAB>" "$(words "$out")" "--cow --cow-from --cow-size "
bcomplete "$CORDON" --net ""
is "bash: --net <TAB>: the modes" "$(words "$out")" "host none "
bcomplete "$CORDON" --seccomp-policy ""
is "bash: --seccomp-policy <TAB>: the installed directory's policies and the built-in ones" \
	"$(words "$out")" "default mine none strict "
bcomplete "$CORDON" --seccomp-policy = m
is "bash: --seccomp-policy=m<TAB>" "$(words "$out")" "mine "
bcomplete "$CORDON" policy check ""
is "bash: cordon policy check <TAB>: the policies" "$(words "$out")" "default mine none strict "
bcomplete "$CORDON" -w "$TEST_TMP/polic"
is "bash: -w DIR<TAB>: directories" "$(words "$out")" "$P "
bcomplete "$CORDON" serve --max-s
is "bash: cordon serve --max-s<TAB>: the server's options" "$(words "$out")" "--max-sandboxes "
bcomplete "$CORDON" diff --
is "bash: cordon diff --<TAB>" "$(words "$out")" "--help --layer-dir --patch --stat "
bcomplete "$CORDON" --cow -w "$TEST_TMP" printe
is "bash: the command: command names" "$(words "$out")" "printenv "
bcomplete "$CORDON" --cow -- cat "$TEST_TMP/polic"
is "bash: the command's arguments: files (or its own completion, with bash-completion)" \
	"$(words "$out")" "$P "
if [ -n "$layer" ]; then
	bcomplete "$CORDON" diff --layer-dir "$L" ""
	is "bash: cordon diff --layer-dir STORE <TAB>: the layer's id" "$out" "$layer"
	STORE=$L bcomplete "$CORDON" apply ""
	is "bash: cordon apply <TAB>, \$CORDON_LAYER_DIR: the layer's id" "$out" "$layer"
	bcomplete "$CORDON" --layer-dir "$L" --cow-from ""
	is "bash: --cow-from <TAB>: the layer's id" "$out" "$layer"
fi

# a name is offered as it is, never expanded (compgen -W expands its words: $(...) would run)
evil='$(id>&2).policy'
printf 'default allow\n' >"$P/$evil" && chmod a+r "$P/$evil"
bcomplete "$CORDON" --seccomp-policy '$'
is "bash: a policy file named \$(id>&2): offered as it is, nothing run" "$out" '$(id>&2)'
rm -f "$P/$evil"

# --- zsh, on a terminal: the lines shown after each TAB
if ! command -v zsh >/dev/null; then
	skip "zsh completion" "zsh is not installed (Debian package zsh)"
	done_testing
	exit
fi
cat >"$TEST_TMP/zdrive.zsh" <<'ZEOF'
# zdrive.zsh FPATH_DIR LINE...: type each LINE and a TAB in an interactive zsh, print what it shows
zmodload zsh/zpty || exit 2
fdir=$1; shift
# Each line is typed once zle reads the terminal (its zle-line-init hook prints <ZLE-READY>,
# typed as \x3c...): typed earlier, while the tty is still cooked, the line is echoed and
# its ^U taken by the tty itself, and no TAB completes.
zpty z 'TERM=dumb zsh -f -i'
zpty -w z "PS1='%% '; unset zle_bracketed_paste; zle-line-init() { print -rn -- \$'\\x3cZLE-READY\\x3e' }; zle -N zle-line-init; fpath=($fdir \$fpath); autoload -U compinit; compinit -u -D; unsetopt listambiguous; setopt nobeep; LISTMAX=100000; COLUMNS=300"
zpty -w z "print -r -- E''NDMARK"
zpty -r z out '*ENDMARK*<ZLE-READY>*' || exit 3
for l in "$@"; do
  zpty -w -n z "$l"$'\t'
  zpty -w -n z $'\C-e\C-u'
  zpty -w z "print -r -- E''NDMARK"
  out=
  zpty -r z out '*ENDMARK*<ZLE-READY>*' || exit 3
  print -r -- "=== $l"
  print -r -- "${out//$'\r'/}"
done
zpty -d z
ZEOF
chmod a+r "$TEST_TMP/zdrive.zsh"
# zcomplete LINE: $out, what the terminal showed after LINE and a TAB
# (in an empty directory: the files a value may also be are not listed among the names)
mkdir -p "$TEST_TMP/zcwd" && chmod 755 "$TEST_TMP/zcwd"
zcomplete() {
	out=$(cd "$TEST_TMP/zcwd" && as_caller env CORDON_LAYER_DIR="${STORE:-}" HOME="$TEST_TMP" \
		timeout 120 zsh -f "$TEST_TMP/zdrive.zsh" "$TEST_TMP/zfunc" "$1" 2>&1)
}
zcomplete "$CORDON --co"
like "zsh: --co<TAB> lists --cow-from" "$out" "--cow-from"
like "zsh: ... and --cow-size, with its help" "$out" "size cap of the layer"
zcomplete "$CORDON --seccomp-policy "
for p in default mine none strict; do
	like_glob "zsh: --seccomp-policy <TAB>: the installed directory's policies and the built-in ones: $p" \
		"$out" "*[[:space:]]${p}[[:space:]]*"
done
unlike "zsh: ... not groups.policy" "$out" "groups"
zcomplete "$CORDON --net "
like_glob "zsh: --net <TAB>: the modes" "$out" "*"$'\n'"host  none"$'\n'"*"
zcomplete "$CORDON serve --max-s"
like "zsh: cordon serve --max-s<TAB> completes --max-sandboxes" "$out" "--max-sandboxes"
if [ -n "$layer" ]; then
	zcomplete "$CORDON diff --layer-dir $L "
	like "zsh: cordon diff --layer-dir STORE <TAB>: the layer's id" "$out" "diff --layer-dir $L $layer"
	STORE=$L zcomplete "$CORDON discard "
	like "zsh: cordon discard <TAB>, \$CORDON_LAYER_DIR: the layer's id" "$out" "discard $layer"
fi
done_testing
