// tests/e2b/wedge.mjs - SIGTERM stops the server within its minute while a sandbox is wedged:
// its code kernel reads no request (the pipe full of one: an execution is writing it), its
// terminal's program reads no input (a SendInput is writing it), a stream of a flooding
// process reads nothing, and an execution's client reads nothing. Sends SIGTERM to the server
// (CORDON_SERVER_PID) itself and waits for it to go; tests/e2b/run then checks its exit status
// (0: it stopped; 1: it gave up after a minute) and that nothing is left. Before the fix, the
// server's threads blocked for ever on the pipe and the pty, and its stop waited for them. TAP.
import http from 'node:http'
import { existsSync, readFileSync } from 'node:fs'
import { Sandbox } from '@e2b/code-interpreter'
import { test, ok, done, poll, note, env, runid } from './tap.mjs'
import { arm, hostileContext, hostileEnvs } from './hostile.mjs'

const serverPid = +process.env.CORDON_SERVER_PID
const tick = ms => new Promise(r => setTimeout(r, ms))

function stalled(sbx, path, body) {
  return new Promise((resolve, reject) => {
    const u = new URL(env.sandbox)
    const execute = path === '/execute'
    const req = http.request({ host: u.hostname, port: u.port, path, method: 'POST', agent: false,
      headers: { 'E2b-Sandbox-Id': sbx.sandboxId, 'E2b-Sandbox-Port': execute ? '49999' : '49983',
        'X-Access-Token': sbx.envdAccessToken, 'Content-Length': body.length,
        'Content-Type': execute ? 'application/json' : 'application/connect+json', 'Connect-Protocol-Version': '1' } })
    req.on('response', res => { res.pause(); resolve(req) })
    req.on('error', reject)
    req.end(body)
  })
}

await test('SIGTERM with a wedged sandbox', async () => {
  const s = await Sandbox.create({ timeoutMs: 600_000, envs: hostileEnvs, metadata: { run: runid, suite: 'wedge' } })
  await arm(s)
  const context = await hostileContext(s)
  const fill = await s.runCode(`
import fcntl, os, time
fcntl.fcntl(req_fd, 1031, 4096)
os.write(ev_fd, b'{"type":"end_of_execution"}\\n')
time.sleep(3600)`, { context, timeoutMs: 30_000 })
  ok(!fill.error, 'a cell stops its kernel reading requests', fill.error)
  const pending = []
  // an execution whose request (200 KB) the kernel never reads
  pending.push(s.runCode(`x = 1  # ${'y'.repeat(200_000)}`, { context, timeoutMs: 0, requestTimeoutMs: 0 }).catch(e => e))
  // a terminal whose program never reads, fed
  const pty = await s.pty.create({ cols: 80, rows: 24, onData: () => {}, timeoutMs: 0 })
  await s.pty.sendInput(pty.pid, new TextEncoder().encode('stty raw -echo; exec sleep 3600\n'))
  await tick(500)
  pending.push((async () => { for (let i = 0; i < 64; i++) await s.pty.sendInput(pty.pid, new Uint8Array(65536).fill(97), { requestTimeoutMs: 0 }) })().catch(e => e))
  // a flooding process followed by a stream that reads nothing, and an execution's likewise
  const msg = Buffer.from(JSON.stringify({ process: { cmd: '/bin/bash', args: ['-c', 'exec yes'] } }))
  const env5 = Buffer.concat([Buffer.from([0, 0, 0, 0, 0]), msg]); env5.writeUInt32BE(msg.length, 1)
  const held = [await stalled(s, '/process.Process/Start', env5)]
  const c2 = await s.createCodeContext()
  held.push(await stalled(s, '/execute', Buffer.from(JSON.stringify({ context_id: c2.id, code: 'while True: print("z" * 10000)' }))))
  await tick(1000)
  note('wedged; SIGTERM to the server')
  const t0 = Date.now()
  process.kill(serverPid, 'SIGTERM')
  // up to 70 s: the server gives up after a minute (exit 1), which tests/e2b/run reports
  const gone = await poll(() => !existsSync(`/proc/${serverPid}`) || /^State:\s+Z/m.test(String(readStatus())), { deadline: 70_000, every: 100 })
  ok(gone, 'the server ends')
  note(`the server ended ${Date.now() - t0} ms after SIGTERM`)
  for (const r of held) r.destroy()
  await Promise.all(pending)
}, { timeout: 150_000 })

function readStatus() {
  try { return readFileSync(`/proc/${serverPid}/status`, 'utf8') } catch { return '' }
}
done()
