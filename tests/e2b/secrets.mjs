// tests/e2b/secrets.mjs - nothing of the server inside a sandbox (docs/e2b.md "Tenants"). The
// server holds secrets: the API key (in its memory: tests/e2b/run passes it as documented, in
// CORDON_SERVE_API_KEY, which the server wipes from its environment; never in its argv), a
// variable of its environment (CORDON_TEST_SECRET, set by run), a request in flight to another
// sandbox carrying a header, that sandbox's access token. From inside a second sandbox,
// tests/helpers/find-secrets.py searches every /proc/PID/cmdline, environ and readable memory for
// them: none may be found, while CONTROL, given to the scan's shell, must be (a scan that reads
// nothing cannot pass). TAP on stdout.
import { readFileSync } from 'node:fs'
import { randomBytes } from 'node:crypto'
import { Sandbox } from 'e2b'
import { test, ok, done, note, env } from './tap.mjs'

const hex = () => randomBytes(20).toString('hex')
const api = (path, init = {}) => fetch(`${env.api}${path}`, { ...init, headers: { 'X-API-Key': env.key, 'Content-Type': 'application/json', ...(init.headers || {}) } })
const scanner = readFileSync(new URL('../helpers/find-secrets.py', import.meta.url))
const mask = s => Buffer.from(s).map(b => b ^ 0x5a).toString('hex')

// a process started in sandbox id, its stream held open (a request in flight) with a header
function inFlight(id, token, header) {
  const msg = Buffer.from(JSON.stringify({ process: { cmd: '/bin/sh', args: ['-c', 'sleep 60'] } }))
  const frame = Buffer.concat([Buffer.from([0]), Buffer.alloc(4), msg])
  frame.writeUInt32BE(msg.length, 1)
  const ac = new AbortController()
  const done = fetch(`${env.sandbox}/process.Process/Start`, {
    method: 'POST', body: frame, signal: ac.signal,
    headers: { 'Content-Type': 'application/connect+json', 'E2b-Sandbox-Id': id,
      'E2b-Sandbox-Port': '49983', 'X-Access-Token': token, 'X-Cordon-Test-Secret': header },
  }).then(r => r.body && r.body.getReader().read()).catch(() => {})
  return { stop: () => ac.abort(), started: done }
}

await test('the server\'s secrets are in no sandbox', async () => {
  const header = hex(), control = hex()
  const secrets = { apikey: env.key, env: process.env.CORDON_TEST_SECRET || '', header }
  ok(secrets.env.length >= 20, 'the server was given an environment secret (CORDON_TEST_SECRET)')
  // tenant A: made through REST to know its token, then a request in flight to it
  const r = await api('/sandboxes', { method: 'POST', body: JSON.stringify({ templateID: 'base', timeout: 120 }) })
  const a = await r.json()
  ok(r.status === 201 && a.envdAccessToken, 'tenant A created', a)
  secrets.tokenA = a.envdAccessToken
  const flight = inFlight(a.sandboxID, a.envdAccessToken, header)
  await flight.started
  // tenant B scans
  const b = await Sandbox.create({ timeoutMs: 120_000 })
  try {
    const masked = Object.fromEntries(Object.entries(secrets).map(([k, v]) => [k, mask(v)]))
    await b.files.write('/home/user/find-secrets.py', scanner.toString())
    await b.files.write('/home/user/masked.json', JSON.stringify(masked))
    const run = await b.commands.run('python3 /home/user/find-secrets.py /home/user/masked.json; :',
      { envs: { CONTROL: control }, timeoutMs: 60_000 })
    const out = run.stdout
    ok(/scanned \d+ processes/.test(out), 'the scan ran', out + run.stderr)
    for (const name of Object.keys(secrets))
      ok(!out.includes(`found ${name} `), `tenant B finds no ${name} of the server's`, out)
    // CONTROL: found only if the test's own secret reached the shell, masked; so give it too
    const b2 = await b.commands.run(`printf '{"control": "%s"}' ${mask(control)} > /home/user/ctl.json; python3 /home/user/find-secrets.py /home/user/ctl.json; :`,
      { envs: { CONTROL: control }, timeoutMs: 60_000 })
    ok(/found control in \/proc\/\d+\/environ \((sh|bash)\)/.test(b2.stdout) && /found control in \/proc\/\d+\/mem \((sh|bash)\)/.test(b2.stdout),
      'the scan reads another process\'s environment and memory (CONTROL in the shell\'s)', b2.stdout)
    const pid1 = await b.commands.run('tr "\\0" " " </proc/1/cmdline')
    ok(pid1.stdout.trim() === 'cordon-init', 'pid 1 is cordon-init, its argv its own', pid1.stdout)
    note(out.trim().split('\n').slice(-1)[0])
  } finally {
    flight.stop()
    await b.kill().catch(() => {})
    await api(`/sandboxes/${a.sandboxID}`, { method: 'DELETE' }).catch(() => {})
  }
})

done()
