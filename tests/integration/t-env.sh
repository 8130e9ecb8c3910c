#!/usr/bin/env bash
# The environment is cleared: only a short safe set, plus what --env and --pass-env ask for.
. "$TAP_LIB"

w=$(mkwork)
c() { cordon --workdir "$w" "$@"; }
export OPENAI_API_KEY=sk-secret-123 AWS_SECRET_ACCESS_KEY=aws-secret SSH_AUTH_SOCK=/tmp/agent.sock
export LANG=C.UTF-8 LC_ALL=C.UTF-8 TZ=UTC TERM=xterm-test

HOME=$TEST_TMP/nohome c -- "$PROBE" env # no git identity of the caller's (t-hints)
names=$(cut -d= -f1 <<<"$out" | sort | tr '\n' ' ')
is "only the safe set is kept (and, without network, npm's and pip's retries off)" "$names" \
	"HOME LANG LC_ALL LOGNAME PATH PIP_RETRIES TERM TZ USER npm_config_fetch_retries "
unlike "no secret of the caller's leaks" "$out" "secret"
like "TERM, LANG, TZ pass" "$out" "TERM=xterm-test"
c --pass-env OPENAI_API_KEY -- "$PROBE" env
like "--pass-env keeps one variable" "$out" "OPENAI_API_KEY=sk-secret-123"
unlike "... and only that one" "$out" "aws-secret"
c --env FOO=bar --env 'SPACED=a b=c' --env EMPTY= -- sh -c 'echo "$FOO|$SPACED|${EMPTY-unset}"'
is "--env sets variables, values with spaces and = and empty" "$out" "bar|a b=c|"
c --env FOO=1 --env FOO=2 -- sh -c 'echo $FOO'
is "the last --env wins" "$out" 2
c --pass-env NOT_SET_ANYWHERE -- sh -c 'echo ${NOT_SET_ANYWHERE-unset}'
is "--pass-env of an unset variable passes nothing" "$out" unset
c --env HOME=/elsewhere -- sh -c 'echo $HOME'
is "--env can override HOME" "$out" /elsewhere
c --env PATH=/usr/bin -- sh -c 'echo $PATH'
is "--env can override PATH" "$out" /usr/bin
out=$(env -i PATH=/usr/bin:/bin "$CORDON" --ro-bind "$PROBE_DIR" --workdir "$w" -- sh -c 'echo $PATH' 2>&1)
is "PATH from the caller" "$out" /usr/bin:/bin
out=$(cd "$w" && env -i "$CORDON" --workdir "$w" -- /bin/sh -c 'echo $PATH' 2>&1)
is "a default PATH when the caller has none" "$out" /usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
c -- "$PROBE" hostname
is "hostname is cordon by default" "$out" cordon
c --hostname build-42 -- "$PROBE" hostname
is "--hostname" "$out" build-42
c -- "$PROBE" sethostname evil
is "the sandbox cannot change its hostname" "$out" EPERM
c --hostname build-42 -- sh -c 'hostname -i; hostname -f; python3 -c "import socket; print(socket.gethostbyname(socket.gethostname()))"; grep -c . /etc/hosts'
is "the hostname resolves on loopback (hostname -i, -f, gethostbyname), the host's /etc/hosts kept" \
	"$(echo $out)" "127.0.1.1 build-42 127.0.1.1 $(($(grep -c . /etc/hosts) + 1))"

# PATH: the directories the sandbox does not have are dropped (not taken from the next one)
hidden=$TEST_TMP/pybin
mkdir -p "$hidden" && printf '#!/bin/sh\necho shim\n' >"$hidden/python3" && chmod -R a+rx "$hidden"
out=$(env PATH="/home/nobody-here/.pyenv/shims:/usr/bin:/bin" "$CORDON" --ro-bind "$PROBE_DIR" --workdir "$w" -v -- sh -c 'echo $PATH' 2>"$TEST_TMP/v.err")
is "PATH inside drops what is hidden (a directory below /home)" "$out" /usr/bin:/bin
like "... and -v says so" "$(cat "$TEST_TMP/v.err")" "PATH: /home/nobody-here/.pyenv/shims is not in the sandbox, dropped"
out=$(env PATH="$hidden:/usr/bin:/bin" "$CORDON" --ro-bind "$PROBE_DIR" --ro-bind "$hidden" --workdir "$w" -- sh -c 'echo $PATH; python3' 2>&1)
is "... what is bound in stays, and is used" "$(echo $out)" "$hidden:/usr/bin:/bin shim"

# git has an identity inside when given one
c --git-identity 'Ann Example <ann@example.com>' -- sh -c 'rm -rf g && git init -q g && cd g && git commit -q --allow-empty -m m && git log --format="%an|%ae|%cn|%ce"'
is "--git-identity: git's author and committer" "$out" "Ann Example|ann@example.com|Ann Example|ann@example.com"
rejects "--git-identity without an email" 'cordon: --git-identity: "Ann" is not "Name <email>"' -- --git-identity Ann -- true
rejects "--git-identity with an empty email" 'cordon: --git-identity: "Ann <>" is not "Name <email>"' -- --git-identity 'Ann <>' -- true
rejects "--git-identity with a blank email" 'cordon: --git-identity: "Ann < >" is not "Name <email>"' -- --git-identity 'Ann < >' -- true
rejects "--git-identity with a > inside" 'cordon: --git-identity: "Ann <a>b>" is not "Name <email>"' -- --git-identity 'Ann <a>b>' -- true
rejects "--git-identity with an escape byte: refused, and shown as \\x1b" 'cordon: --git-identity: "Ann\x1b[31m <a@b>" is not "Name <email>"' -- --git-identity $'Ann\e[31m <a@b>' -- true
rejects "a value with a newline is shown on one line (no forged second line)" 'cordon: --hostname: "a\x0acordon: forged" is not a hostname (1-64 of a-z 0-9 - .)' -- --hostname $'a\ncordon: forged' -- true

done_testing
