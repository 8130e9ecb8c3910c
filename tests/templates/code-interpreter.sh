#!/usr/bin/env bash
# tests/templates/code-interpreter.sh CORDON - templates/code-interpreter/build, for real: a root
# made by mmdebstrap from the Debian mirror (a few minutes: run once by tests/run, as root,
# not per build and mode), then used as `cordon --rootfs` and as `cordon serve --template
# code-interpreter-v1=DIR` through the pinned SDK: python3 with numpy, pandas, matplotlib (a PNG
# drawn), ipykernel and jupyter-client (a kernel started, a cell run). Skips (with the reason) without root, mmdebstrap or the
# mirror. TAP.
set -u
here=$(cd "$(dirname "$0")" && pwd)
cordon=$(realpath "${1:-$here/../../build/cordon}")
mirror=${MIRROR:-http://deb.debian.org/debian}
suite=${SUITE:-bookworm}
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
notok() { n=$((n + 1)); echo "not ok $n - $1"; [ -n "${2:-}" ] && printf '%s\n' "$2" | sed 's/^/  # /'; }
check() { if [ "$2" = "$3" ]; then ok "$1"; else notok "$1" "got: $2"$'\n'"want: $3"; fi; }
skip_all() { echo "ok 1 - code-interpreter template # SKIP $1"; echo "1..1"; exit 0; }

[ "$(id -u)" = 0 ] || skip_all "not root (mmdebstrap's unshare mode needs subordinate ids)"
command -v mmdebstrap >/dev/null || skip_all "no mmdebstrap (apt-get install mmdebstrap)"
curl -sfI --max-time 20 -o /dev/null "$mirror/dists/$suite/Release" || skip_all "the mirror $mirror is unreachable"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/cordon-ci-template.XXXXXX")
server=
cleanup() { [ -n "$server" ] && kill -KILL "$server" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
chmod 755 "$tmp"
root=$tmp/root

if "$here/../../templates/code-interpreter/build" "$root" >"$tmp/build.log" 2>&1; then
	ok "templates/code-interpreter/build makes a root ($(du -sh "$root" | cut -f1))"
else
	notok "templates/code-interpreter/build makes a root" "$(tail -20 "$tmp/build.log")"
	echo "1..$n"
	exit 1
fi
check "it says what it is" "$(cat "$root/etc/cordon-template")" "code-interpreter"

w=$tmp/work
mkdir -p "$w" && chmod 777 "$w"
out=$("$cordon" --workdir "$w" --rootfs "$root" -- python3 -c '
import numpy, pandas, matplotlib, ipykernel, jupyter_client
matplotlib.use("Agg")
import matplotlib.pyplot as plt
plt.plot(numpy.arange(5), pandas.Series([1, 4, 2, 5, 3]))
plt.savefig("fig.png")
print("imports ok")' 2>&1)
check "cordon --rootfs: python3 imports numpy, pandas, matplotlib, ipykernel, jupyter_client" "$out" "imports ok"
check "... and matplotlib draws a PNG" "$(head -c 4 "$w/fig.png" | od -An -c | tr -d ' ')" "211PNG"
# a Jupyter kernel started by jupyter-client, as the code interpreter's bridge does
out=$(timeout 300 "$cordon" --workdir "$w" --rootfs "$root" -- python3 -c "
from jupyter_client.manager import start_new_kernel
km, kc = start_new_kernel(kernel_name='python3')
out = []
kc.execute_interactive('print(6 * 7)', timeout=120,
                       output_hook=lambda m: out.append(m['content'].get('text', '')))
print('result:', ''.join(out).strip())
kc.stop_channels()
km.shutdown_kernel(now=True)" 2>&1)
check "jupyter-client starts the python3 kernel, which runs a cell" "$(grep '^result:' <<<"$out")" "result: 42"

# the server with it as the code interpreter's template, through the pinned SDK
if [ ! -d "$here/../e2b/node_modules/e2b" ] || ! command -v node >/dev/null; then
	echo "ok $((n += 1)) - cordon serve --template code-interpreter-v1 # SKIP no node or SDK (tests/e2b: npm ci)"
else
	key=e2b_$(head -c 20 /dev/urandom | od -An -tx1 | tr -d ' \n')
	port=$(node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close() })')
	CORDON_SERVE_API_KEY=$key "$cordon" serve --listen "127.0.0.1:$port" --state-dir "$tmp/state" \
		--template code-interpreter-v1="$root" --pool 0 >"$tmp/serve.log" 2>&1 &
	server=$!
	for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/health" && break; sleep 0.1; done
	out=$(cd "$here/../e2b" && E2B_API_URL=http://127.0.0.1:$port E2B_SANDBOX_URL=http://127.0.0.1:$port \
		E2B_API_KEY=$key E2B_DOMAIN=cordon.invalid timeout 300 node --input-type=module -e '
import { Sandbox } from "@e2b/code-interpreter"
const s = await Sandbox.create({ timeoutMs: 120_000 })
const info = await s.getInfo()
const r = await s.commands.run("cat /etc/cordon-template; python3 -c \"import pandas, matplotlib, ipykernel; print(42)\"")
console.log(info.templateId, r.stdout.trim().split("\n").join(" "))
await s.kill()' 2>&1)
	check "cordon serve --template code-interpreter-v1=DIR: the SDK's default sandbox runs there" \
		"$out" "code-interpreter-v1 code-interpreter 42"
	kill -TERM "$server"; wait "$server"; server=
fi
echo "1..$n"
