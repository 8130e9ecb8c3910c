// tests/e2b/conns.mjs - the server's connection slots under a hostile client (raw sockets, loopback
// only), against a server of its own with --max-connections 64 (run: CORDON_MAX_CONNECTIONS):
// 300 half-sent requests without a key, a head trickled a byte at a time, one tenant holding many
// streams. Each time another tenant's create and command must still work, and the bound holds:
// at most a quarter of the slots for connections without credentials, a deadline for a request's
// head, a quarter of the slots for one tenant. TAP on stdout.
import { execFile } from 'node:child_process'
import net from 'node:net'
import { fileURLToPath } from 'node:url'
import { Sandbox } from 'e2b'
import { test, ok, done, poll, env, runid } from './tap.mjs'

const max = Number(process.env.CORDON_MAX_CONNECTIONS || 64)
const quarter = Math.max(1, Math.floor(max / 4))
const u = new URL(env.api)

// a socket that has sent `head` (no end to it), and notes when the server closes it
function holder(head) {
  return new Promise((resolve, reject) => {
    const s = net.connect({ host: u.hostname, port: Number(u.port) })
    s.gone = false
    s.data = ''
    s.on('data', d => { if (s.data.length < 4096) s.data += d.toString('latin1') })
    s.on('close', () => { s.gone = true })
    s.on('error', () => { s.gone = true })
    s.once('connect', () => { if (head) s.write(head); resolve(s) })
    s.once('error', reject)
  })
}

// another tenant's round trip (tenant.mjs: create, a command, kill) in a process of its own, on
// connections of its own, within a deadline: a failure, not a hang (the old server kept it
// waiting for a slot for ever)
async function otherTenant(name) {
  const r = await new Promise(resolve => execFile(process.execPath, [fileURLToPath(new URL('tenant.mjs', import.meta.url))],
    { timeout: 60_000, env: process.env }, (e, stdout, stderr) => resolve({ code: e ? (e.killed ? 'killed at 60 s' : e.code) : 0, stdout, stderr })))
  ok(r.code === 0 && r.stdout === 'still here\n', `${name}: another tenant's create and command work`, r)
}

await test('300 half-sent requests without a key', async () => {
  const held = []
  try {
    for (let i = 0; i < 300; i++)
      held.push(await holder('POST /sandboxes HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Le'))
    // the server closes the oldest as new ones come: at most a quarter of the slots stay theirs
    const open = () => held.filter(s => !s.gone).length
    ok(await poll(() => open() <= quarter, { deadline: 20_000 }), `at most ${quarter} of them kept open (a quarter of ${max})`, { open: open() })
    await otherTenant('with them held')
    ok(await poll(() => open() === 0, { deadline: 30_000 }), 'and every one of them is closed at its deadline', { open: open() })
  } finally {
    for (const s of held) s.destroy()
  }
}, { timeout: 240_000 })

await test('a head trickled a byte at a time', async () => {
  const s = await holder('GET /sandboxes HTTP/1.1\r\nHost: x\r\nX-Pad: ')
  const total = 240 // 60 s at 4 bytes a second: past the deadline, well within libmicrohttpd's idle timeout
  let sent = 0
  try {
    while (sent < total && !s.gone) {
      s.write('a')
      sent++
      await new Promise(r => setTimeout(r, 250))
    }
    if (!s.gone) s.write('\r\n\r\n')
    await poll(() => s.gone || s.data.includes('\r\n\r\n'), { deadline: 10_000 })
    ok(s.gone && sent < total && !s.data.startsWith('HTTP/'), 'the server closes it before the head is complete, unanswered',
      { closed: s.gone, sent, total, answer: s.data.slice(0, 80) })
  } finally {
    s.destroy()
  }
}, { timeout: 120_000 })

await test('one tenant holding many streams', async () => {
  const a = await Sandbox.create({ timeoutMs: 180_000, metadata: { run: runid, suite: 'conns' } })
  const held = []
  try {
    await a.commands.run('truncate -s 1G /home/user/big')
    const head = `GET /files?path=/home/user/big HTTP/1.1\r\nHost: x\r\nE2b-Sandbox-Id: ${a.sandboxId}\r\nE2b-Sandbox-Port: 49983\r\nX-Access-Token: ${a.envdAccessToken}\r\n\r\n`
    // downloads of 1 GiB that are never read: each holds its connection (the server blocks on a
    // full socket) until the client goes
    for (let i = 0; i < 2 * max; i++) {
      const s = await holder(head)
      s.once('data', () => s.pause())
      held.push(s)
    }
    const status = s => (s.data.match(/^HTTP\/1\.1 (\d+)/) || [])[1]
    await poll(() => held.every(s => status(s) || s.gone), { deadline: 30_000 })
    const served = held.filter(s => status(s) === '200').length
    const refused = held.filter(s => status(s) === '429').length
    ok(served <= quarter && served > 0, `at most ${quarter} of its ${2 * max} downloads served at once`, { served, refused })
    // the others: 429, or (the server full meanwhile: 128 at once against 64 slots) closed
    // unanswered for a newer one; none served, none left hanging
    const other = held.filter(s => status(s) !== '200' && status(s) !== '429' && !(status(s) === undefined && s.gone))
    ok(other.length === 0 && refused > 0, 'the others answered 429 or closed', { served, refused, other: other.map(s => s.data.slice(0, 40)) })
    ok(/"message":"[^"]*connections/.test(held.find(s => status(s) === '429')?.data || ''), '... saying why', held.find(s => status(s) === '429')?.data)
    await otherTenant('while it holds them')
  } finally {
    for (const s of held) s.destroy()
    await a.kill().catch(() => {})
  }
}, { timeout: 240_000 })

done()
