// tests/e2b/lifecycle.mjs - a server started with --idle-ttl 2s --max-sandboxes 2 (tests/e2b/run
// does): the third sandbox at once is refused (429, the SDK's RateLimitError), an idle sandbox
// is killed, one that is used is not. TAP on stdout.
import { Sandbox, RateLimitError } from 'e2b'
import { test, ok, done, poll, thrown, runid } from './tap.mjs'

const running = async s => { try { return await s.isRunning() } catch { return false } }

await test('--max-sandboxes 2 and --idle-ttl 2s', async () => {
  const a = await Sandbox.create({ timeoutMs: 300_000, metadata: { run: runid } })
  const touched = Date.now()    // a's last request: its create
  const b = await Sandbox.create({ timeoutMs: 300_000, metadata: { run: runid } })
  const e = await thrown(() => Sandbox.create({ timeoutMs: 300_000 }))
  ok(e instanceof RateLimitError || /429|limit/i.test(e && e.message), 'a third sandbox: refused (429)', e && `${e.constructor.name}: ${e.message}`)
  // b is kept busy by a command that streams; a is left alone
  const h = await b.commands.run('while :; do echo busy; sleep 0.2; done', { background: true, onStdout: () => {} })
  const t0 = Date.now()
  ok(await poll(async () => !(await Sandbox.list({ query: { metadata: { run: runid } } }).nextItems()).some(x => x.sandboxId === a.sandboxId), { deadline: 30_000, every: 250 }),
    'the idle sandbox is killed', Date.now() - t0)
  ok(Date.now() - touched >= 1500, '... not before its idle TTL', Date.now() - touched)
  ok(await running(b), 'the one followed by a stream lives on')
  await h.kill().catch(() => {})
  await b.kill().catch(() => {})
  const c = await Sandbox.create({ timeoutMs: 300_000, metadata: { run: runid } })
  ok(await running(c), 'a sandbox can be made again once one is gone')
  await c.kill()
}, { timeout: 120_000 })
done()
