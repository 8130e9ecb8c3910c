#!/usr/bin/env bash
# Nothing of the caller inside a sandbox (README "Security"): the process that makes a sandbox
# (the cordon command, a harness through the library, cordon serve: tests/e2b) may hold secrets in
# its argv, environment and heap; pid 1 is a fresh exec of cordon-init, so no process the sandbox
# can see holds any of them. tests/helpers/find-secrets.py searches, from inside, every
# /proc/PID/cmdline, environ and readable memory; a CONTROL secret given to the scan's shell must
# be found, so that a scan that reads nothing cannot pass.
. "$TAP_LIB"

scanner=$(dirname "$0")/../helpers/find-secrets.py
command -v python3 >/dev/null || { skip "find-secrets" "no python3"; done_testing; exit; }
hex() { head -c 20 /dev/urandom | od -An -tx1 | tr -d ' \n'; }
# masked.json beside the scanner in DIR: each NAME=VALUE, the value's bytes XOR 0x5a, in hex
plant() {
	local dir=$1 kv name value first=1
	shift
	cp "$scanner" "$dir/find-secrets.py"
	{
		printf '{'
		for kv in "$@"; do
			name=${kv%%=*} value=${kv#*=}
			[ $first = 1 ] || printf ', '
			first=0
			printf '"%s": "' "$name"
			printf '%s' "$value" | od -An -tx1 -v | tr -s ' \n' '\n\n' | grep -v '^$' |
				while read -r b; do printf '%02x' $((0x$b ^ 0x5a)); done
			printf '"'
		done
		printf '}\n'
	} >"$dir/masked.json"
	chmod -R a+rX "$dir"
}

# --- the cordon command: a secret in its argv (an output path) and in its environment
w=$(mkwork)
argv_secret=$(hex) env_secret=$(hex) control=$(hex)
out=$TEST_TMP/out-$argv_secret
mkdir -p "$out" && chmod 777 "$out"
plant "$w" argv="$argv_secret" env="$env_secret" control="$control"
res=$(cd "$w" && as_caller env CORDON_TEST_SECRET="$env_secret" "$CORDON" -q \
	--report "$out/report.json" -e CONTROL="$control" -- \
	sh -c "python3 $w/find-secrets.py $w/masked.json; :" 2>&1)
like "cordon: the scan ran" "$res" "scanned "
unlike "cordon: its argv (a --report path) is in no process of the sandbox" "$res" "found argv "
unlike "cordon: its environment is in no process of the sandbox" "$res" "found env "
like_glob "cordon: the scan reads another process's environment (CONTROL in sh's)" "$res" \
	"*found control in /proc/*/environ (sh)*"
like_glob "cordon: the scan reads another process's memory (CONTROL in sh's)" "$res" \
	"*found control in /proc/*/mem (sh)*"
pid1=$(cd "$w" && as_caller "$CORDON" -q -- sh -c 'tr "\0" " " </proc/1/cmdline; echo; cat /proc/1/comm')
is "pid 1 is cordon-init: its argv and name are its own" "$pid1" "cordon-init 
cordon-init"
diag "$res"

# --- a harness through the library: argv, environment, heap, another session's state
if [ -x "${CALLER_SECRETS:-}" ]; then
	base=$(mkwork)
	tap_include as_caller env CALLER_SECRET_ENV="$(hex)" "$CALLER_SECRETS" "$base" "$scanner" "$(hex)"
else
	skip "caller-secrets" "not built (tests/helpers/caller-secrets.c)"
fi
done_testing
