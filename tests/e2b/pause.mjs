// tests/e2b/pause.mjs - pause, resume, autoPause and Sandbox.list's pages, with the pinned SDK,
// against a server started with --max-sandboxes 40 --max-paused-ttl 30s (tests/e2b/run does;
// CORDON_STATE_DIR is its state directory, where the test reads a sandbox's files from the host
// while the sandbox is paused). Whether pausing is possible here is probed as the library decides
// it (src/sandbox/cgroup.c): a cgroup2 mount, and root or a writable (delegated) own cgroup; the
// test then asserts the freezer's behaviour, or the clear refusal. TAP on stdout.
import { Sandbox, SandboxError, InvalidArgumentError } from 'e2b'
import { accessSync, constants, existsSync, readdirSync, readFileSync } from 'node:fs'
import { test, ok, eq, done, poll, thrown, runid, hostProcs, note } from './tap.mjs'

const stateDir = process.env.CORDON_STATE_DIR

function freezable() {
  const mnt = readFileSync('/proc/self/mounts', 'utf8').split('\n')
    .map(l => l.split(' ')).find(f => f[2] === 'cgroup2')
  if (!mnt) return false
  if (process.getuid() === 0) return true
  const own = (readFileSync('/proc/self/cgroup', 'utf8').split('\n').find(l => l.startsWith('0::')) || '0::/').slice(3)
  try { accessSync(mnt[1] + (own === '/' ? '' : own), constants.W_OK); return true } catch { return false }
}
const canPause = freezable()
note(`pausing is ${canPause ? '' : 'not '}possible here (uid ${process.getuid()})`)

// the counter a sandbox writes, read on the host (the sandbox's workdir under the state dir)
const counterName = `count-${runid}`
function hostCount() {
  for (const d of readdirSync(stateDir)) {
    const p = `${stateDir}/${d}/${counterName}`
    if (existsSync(p)) { const v = parseInt(readFileSync(p, 'utf8'), 10); return Number.isNaN(v) ? -1 : v }
  }
  return -1
}
const advancedPast = async v => poll(() => { const c = hostCount(); return c > v ? c : 0 }, { deadline: 30_000, every: 50 })
const tick = ms => new Promise(r => setTimeout(r, ms))
const listed = async (query, opts = {}) => {
  const p = Sandbox.list({ query: { metadata: { run: runid }, ...query }, ...opts })
  const all = []
  while (p.hasNext) all.push(...await p.nextItems())
  return all
}

// a counter, and a process whose only state is in its memory (a random number it answers with)
const counter = `i=0; while :; do i=$((i+1)); echo $i >${counterName}.new; mv ${counterName}.new ${counterName}; sleep 0.05; done`
const keeper = `x=$RANDOM$RANDOM; echo $x >secret-${runid}; while :; do if [ -e ask ]; then echo $x >answer.new; mv answer.new answer; rm ask; fi; sleep 0.05; done`

if (canPause) {
  await test('pause and resume', async () => {
    const s = await Sandbox.create({ timeoutMs: 300_000, metadata: { run: runid } })
    await s.commands.run(counter, { background: true, cwd: '/home/user' })
    await s.commands.run(keeper, { background: true, cwd: '/home/user' })
    ok(await advancedPast(0), 'the counter runs')
    const secret = await poll(() => s.files.read(`/home/user/secret-${runid}`))
    eq(await s.pause(), true, 'pause: true (it was running)')
    const a = hostCount()
    await tick(500) // frozen: it cannot move, however long we look
    const b = hostCount()
    ok(a > 0 && a === b, 'paused: the counter stands still', { a, b })
    eq((await Sandbox.getInfo(s.sandboxId)).state, 'paused', 'getInfo: state paused')
    eq((await listed({ state: ['paused'] })).map(x => x.sandboxId), [s.sandboxId], 'list state paused: it')
    eq((await listed({ state: ['running'] })).length, 0, 'list state running: not it')
    eq((await listed({})).map(x => x.state), ['paused'], 'list (both states by default): it, paused')
    eq(await s.isRunning(), false, 'isRunning: false (502, as E2B)')
    const e = await thrown(() => s.commands.run('echo no'))
    // the server's 502 says it is paused; the SDK, as with E2B's proxy, reports a sandbox not running
    ok(e && /not running|paused/.test(e.message), 'a command: refused (502: not running)', e && e.message)
    eq(hostCount(), b, '... and the counter still stands')
    eq(await s.pause(), false, 'pause again: false (409)')
    const c = await Sandbox.connect(s.sandboxId)
    eq((await Sandbox.getInfo(s.sandboxId)).state, 'running', 'connect resumes it: state running')
    ok(await advancedPast(b), 'resumed: the counter goes on', { b, now: hostCount() })
    await c.files.write('/home/user/ask', '')
    const answer = await poll(() => c.files.read('/home/user/answer'))
    eq(answer, secret, 'resumed: the background process kept its memory')
    eq((await c.commands.run('echo yes')).stdout, 'yes\n', 'resumed: commands run')
    const e2 = await thrown(() => c.pause({ keepMemory: false }))
    ok(e2 && /memory/.test(e2.message), 'pause keepMemory false: refused (400), saying why', e2 && e2.message)
    eq(await c.pause(), true, 'paused again')
    await c.kill()
    ok(await poll(async () => !(await listed({})).length), 'killed while paused: not listed')
    ok(await poll(() => hostProcs(counterName).length === 0, { deadline: 15_000 }), 'killed while paused: none of its processes is left', hostProcs(counterName))
    eq(hostCount(), -1, 'killed while paused: its workdir is gone')
  }, { timeout: 180_000 })

  await test('autoPause (lifecycle.onTimeout pause)', async () => {
    const s = await Sandbox.create({ timeoutMs: 2_000, metadata: { run: runid }, lifecycle: { onTimeout: 'pause' } })
    const info = await Sandbox.getInfo(s.sandboxId)
    eq(info.lifecycle && info.lifecycle.onTimeout, 'pause', 'getInfo: lifecycle.onTimeout pause')
    await s.commands.run(counter, { background: true, cwd: '/home/user' })
    ok(await poll(async () => (await Sandbox.getInfo(s.sandboxId)).state === 'paused', { deadline: 60_000, every: 250 }),
      'at its timeout: paused, not killed')
    const a = hostCount()
    await tick(500)
    eq(hostCount(), a, 'auto-paused: the counter stands still')
    const c = await Sandbox.connect(s.sandboxId, { timeoutMs: 300_000 })
    ok(await advancedPast(a), 'connect resumes it: the counter goes on')
    eq((await c.commands.run('echo back')).stdout, 'back\n', 'resumed: commands run')
    await c.kill()
  }, { timeout: 180_000 })

  await test('autoResume: its own traffic resumes it', async () => {
    const s = await Sandbox.create({ timeoutMs: 300_000, metadata: { run: runid }, lifecycle: { onTimeout: 'pause', autoResume: true } })
    eq((await Sandbox.getInfo(s.sandboxId)).lifecycle.autoResume, true, 'getInfo: lifecycle.autoResume')
    eq(await s.pause(), true, 'paused')
    const r = await fetch(`${process.env.E2B_SANDBOX_URL}/health`, { headers: { 'E2b-Sandbox-Id': s.sandboxId, 'E2b-Sandbox-Port': '49983' } })
    eq(r.status, 502, 'an anonymous /health does not resume it (502)')
    eq((await Sandbox.getInfo(s.sandboxId)).state, 'paused', '... still paused')
    eq((await s.commands.run('echo woke')).stdout, 'woke\n', 'a command (its token): resumed, and it runs')
    eq((await Sandbox.getInfo(s.sandboxId)).state, 'running', 'state running')
    await s.kill()
  }, { timeout: 120_000 })

  await test('--max-paused-ttl 30s', async () => {
    const s = await Sandbox.create({ timeoutMs: 300_000, metadata: { run: runid } })
    await s.pause()
    eq((await Sandbox.getInfo(s.sandboxId)).state, 'paused', 'paused')
    ok(await poll(async () => !(await listed({})).length, { deadline: 120_000, every: 500 }),
      'a sandbox paused past --max-paused-ttl is killed')
  }, { timeout: 180_000 })
} else {
  await test('no cgroup of its own: pause refused', async () => {
    const s = await Sandbox.create({ timeoutMs: 300_000, metadata: { run: runid } })
    await s.commands.run(counter, { background: true, cwd: '/home/user' })
    const e = await thrown(() => s.pause())
    ok(e instanceof SandboxError && /501/.test(e.message) && /no cgroup of its own/.test(e.message),
      'pause: 501, saying the sandbox has no cgroup of its own', e && e.message)
    eq((await Sandbox.getInfo(s.sandboxId)).state, 'running', 'still running')
    const a = hostCount()
    ok(await advancedPast(a), 'its counter runs on')
    await s.kill()
    const e2 = await thrown(() => Sandbox.create({ timeoutMs: 5_000, metadata: { run: runid }, lifecycle: { onTimeout: 'pause' } }))
    ok(e2 instanceof InvalidArgumentError || (e2 && /400/.test(e2.message) && /could not be paused/.test(e2.message)),
      'autoPause: refused at create (400), saying why', e2 && e2.message)
    eq((await listed({})).length, 0, 'nothing left of the refused create')
  }, { timeout: 120_000 })
}

await test('Sandbox.list pages', async () => {
  const tag = `pages-${runid}`
  const made = []
  for (let i = 0; i < 25; i += 5)
    made.push(...await Promise.all([0, 1, 2, 3, 4].map(() =>
      Sandbox.create({ timeoutMs: 300_000, metadata: { run: runid, tag } }))))
  const ids = new Set(made.map(s => s.sandboxId))
  const q = { query: { metadata: { tag } }, limit: 10 }
  for (const order of ['desc', 'asc']) {
    const p = Sandbox.list({ ...q, order })
    const sizes = [], seen = []
    while (p.hasNext) { const page = await p.nextItems(); sizes.push(page.length); seen.push(...page.map(x => x.sandboxId)) }
    eq(sizes, [10, 10, 5], `${order}: 25 sandboxes, limit 10: pages of 10, 10, 5`)
    eq([...seen].sort(), [...ids].sort(), `${order}: each seen exactly once`)
    ok(seen.every(id => ids.has(id)), `${order}: nothing else`)
  }
  // sandboxes made and killed between pages: those there throughout are each seen once
  for (const order of ['desc', 'asc']) {
    const p = Sandbox.list({ ...q, order })
    const first = await p.nextItems()
    const seen = first.map(x => x.sandboxId)
    const unseen = [...ids].filter(id => !seen.includes(id))
    const gone = [first[3].sandboxId, unseen[4]]
    await Promise.all(gone.map(id => Sandbox.kill(id)))
    const fresh = await Promise.all([0, 1].map(() => Sandbox.create({ timeoutMs: 300_000, metadata: { run: runid, tag } })))
    while (p.hasNext) seen.push(...(await p.nextItems()).map(x => x.sandboxId))
    const throughout = [...ids].filter(id => !gone.includes(id))
    eq(seen.filter(id => throughout.includes(id)).sort(), throughout.sort(),
      `${order}: with kills and creates between pages, each there throughout seen once`)
    eq(new Set(seen).size, seen.length, `${order}: no sandbox twice`)
    ok(!seen.includes(gone[1]), `${order}: one killed before its page: not seen`)
    for (const id of gone) ids.delete(id)
    for (const s of fresh) ids.add(s.sandboxId)
  }
  const e = await thrown(() => Sandbox.list({ nextToken: 'not-a-token' }).nextItems())
  ok(e && /400/.test(e.message) && /nextToken/.test(e.message), 'a bad nextToken: 400, naming it', e && e.message)
  const e2 = await thrown(() => Sandbox.list({ limit: 101 }).nextItems())
  ok(e2 && /400/.test(e2.message) && /limit/.test(e2.message), 'limit 101: 400 (E2B\'s most is 100)', e2 && e2.message)
  await Promise.all([...ids].map(id => Sandbox.kill(id)))
  eq((await listed({})).length, 0, 'all killed')
}, { timeout: 300_000 })

done()
