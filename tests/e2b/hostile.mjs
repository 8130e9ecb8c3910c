// tests/e2b/hostile.mjs - a hostile code kernel, as a tenant can have one: a sandbox created with
// hostileEnvs finds its own python3 first on its PATH, which the server runs as a context's
// bridge; arm() writes it (a wrapper that runs hostile_bridge.py for the contexts whose cwd is
// HOSTILE_CWD, and /usr/bin/python3 for everything else). Cells in such a context hold the
// server's pipes (req_fd, ev_fd), as the tests of the server's bounds need.
import { readFileSync } from 'node:fs'

export const HOSTILE_CWD = '/home/user/.hostile'
export const hostileEnvs = { PATH: `${HOSTILE_CWD}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin` }
const bridge = readFileSync(new URL('./hostile_bridge.py', import.meta.url), 'utf8')

export async function arm(s) {
  await s.files.write(`${HOSTILE_CWD}/bridge.py`, bridge)
  await s.files.write(`${HOSTILE_CWD}/python3`, [
    '#!/bin/sh',
    `[ "$PWD" = ${HOSTILE_CWD} ] && [ "$1" = -u ] && [ "$3" = -c ] && exec /usr/bin/python3 -u ${HOSTILE_CWD}/bridge.py`,
    'exec /usr/bin/python3 "$@"', ''].join('\n'))
  await s.commands.run(`chmod +x ${HOSTILE_CWD}/python3`)
}

// a context whose bridge is the hostile one
export async function hostileContext(s, opts = {}) {
  return s.createCodeContext({ ...opts, cwd: HOSTILE_CWD })
}
