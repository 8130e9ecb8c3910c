// tests/e2b/watch.mjs - files.watchDir (envd's WatchDir stream) and the polling watchers
// (CreateWatcher, GetWatcherEvents, RemoveWatcher), as the pinned SDK and raw Connect use them:
// events in E2B's shape for what a command does, recursive watches following new
// subdirectories, envd's errors, the watch's end (stopped, the sandbox killed: nothing of it left
// in the server), and a flood that overflows the kernel's queue and says so. The server's pid is
// CORDON_SERVER_PID (its descriptors and threads are counted). TAP on stdout.
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs'
import { Sandbox, FileNotFoundError } from 'e2b'
import { test, ok, eq, done, poll, thrown, env, note, runid, skip } from './tap.mjs'

const server = process.env.CORDON_SERVER_PID
// the server's descriptors but its TCP connections' (which come and go with the client's
// keep-alive): what a watcher would leak (its channel, a unix socket) shows here
function fds() {
  const tcp = new Set()
  for (const f of ['tcp', 'tcp6'])
    for (const l of readFileSync(`/proc/${server}/net/${f}`).toString().split('\n').slice(1))
      if (l.trim()) tcp.add(l.trim().split(/\s+/)[9])
  let n = 0
  for (const d of readdirSync(`/proc/${server}/fd`)) {
    let t
    try { t = readlinkSync(`/proc/${server}/fd/${d}`) } catch { continue }
    const m = t.match(/^socket:\[(\d+)\]$/)
    if (!m || !tcp.has(m[1])) n++
  }
  return n
}
const threads = () => readdirSync(`/proc/${server}/task`).length
const rssKb = () => +readFileSync(`/proc/${server}/status`).toString().match(/VmRSS:\s+(\d+)/)[1]
const has = (events, type, name) => events.some(e => e.type === type && e.name === name)

// a Connect unary call of envd's filesystem service
async function envd(sbx, method, body) {
  const r = await fetch(`${env.sandbox}/filesystem.Filesystem/${method}`, {
    method: 'POST', body: JSON.stringify(body),
    headers: { 'E2b-Sandbox-Id': sbx.sandboxId, 'E2b-Sandbox-Port': '49983', 'X-Access-Token': sbx.envdAccessToken,
      'Content-Type': 'application/json' } })
  return { status: r.status, body: await r.json() }
}

await test('watchDir sees what a command does, in E2B\'s shape', async () => {
  const sbx = await Sandbox.create({ timeoutMs: 120_000 })
  try {
    await sbx.files.makeDir('/home/user/w')
    const events = []
    const h = await sbx.files.watchDir('/home/user/w', e => { events.push(e) })
    await sbx.commands.run('cd /home/user/w && echo one > a && echo two >> a && mv a b && chmod 600 b && rm b')
    ok(await poll(() => has(events, 'remove', 'b')), 'the last event came', events)
    for (const [type, name] of [['create', 'a'], ['write', 'a'], ['rename', 'a'], ['create', 'b'],
      ['chmod', 'b'], ['remove', 'b']])
      ok(has(events, type, name), `${type} ${name}`, events)
    ok(events.every(e => Object.keys(e).sort().join() === 'entry,name,type' && e.entry === undefined),
      'each event is {name, type} (no entry unless asked)', events[0])
    const i = events.findIndex(e => e.type === 'create' && e.name === 'a')
    const j = events.findIndex(e => e.type === 'remove' && e.name === 'b')
    ok(i >= 0 && i < j, 'in the order they happened')
    // relative paths resolve against the workdir, as envd's do
    const rel = []
    const h2 = await sbx.files.watchDir('w', e => { rel.push(e) })
    await sbx.commands.run('touch /home/user/w/c')
    ok(await poll(() => has(rel, 'create', 'c')), 'a relative path: the workdir\'s', rel)
    // the sandbox's own view: its /tmp, not the host's
    const tmp = []
    const h3 = await sbx.files.watchDir('/tmp', e => { tmp.push(e) })
    await sbx.commands.run(`touch /tmp/inside-${runid}`)
    ok(await poll(() => has(tmp, 'create', `inside-${runid}`)), 'its /tmp is the sandbox\'s', tmp)
    ok(!existsSync(`/tmp/inside-${runid}`), 'not the host\'s')
    await h.stop()
    await h2.stop()
    await h3.stop()
  } finally {
    await sbx.kill().catch(() => {})
  }
})

await test('recursive: a new subdirectory\'s files', async () => {
  const sbx = await Sandbox.create({ timeoutMs: 120_000 })
  try {
    await sbx.files.makeDir('/home/user/r/old')
    const deep = [], flat = []
    const h = await sbx.files.watchDir('/home/user/r', e => { deep.push(e) }, { recursive: true })
    const f = await sbx.files.watchDir('/home/user/r', e => { flat.push(e) })
    await sbx.commands.run('cd /home/user/r && echo x > old/f && mkdir -p new/deeper && echo y > new/deeper/g')
    ok(await poll(() => has(deep, 'create', 'new/deeper/g')), 'a file in a new subdirectory, named below the root', deep)
    ok(has(deep, 'create', 'old/f'), 'a file in an existing subdirectory', deep)
    ok(has(deep, 'create', 'new') && has(deep, 'create', 'new/deeper'), 'the new subdirectories', deep)
    await sbx.commands.run('mv /home/user/r/new /home/user/r/moved && touch /home/user/r/moved/deeper/h')
    ok(await poll(() => has(deep, 'create', 'moved/deeper/h')), 'a moved subdirectory: its new name', deep)
    ok(await poll(() => has(flat, 'create', 'new')), 'not recursive: the subdirectory itself', flat)
    ok(!flat.some(e => e.name.includes('/')), 'not recursive: nothing below it', flat)
    await h.stop()
    await f.stop()
  } finally {
    await sbx.kill().catch(() => {})
  }
})

await test('envd\'s errors', async () => {
  const sbx = await Sandbox.create({ timeoutMs: 120_000 })
  try {
    const e = await thrown(() => sbx.files.watchDir('/home/user/no-such-dir', () => {}))
    ok(e instanceof FileNotFoundError, 'a missing directory: FileNotFoundError', e)
    ok(e && /no-such-dir/.test(e.message), 'naming the path', e && e.message)
    await sbx.files.write('/home/user/file', 'x')
    const e2 = await thrown(() => sbx.files.watchDir('/home/user/file', () => {}))
    ok(e2 && /not a directory/.test(e2.message), 'a file: not a directory', e2 && e2.message)
    const r = await envd(sbx, 'CreateWatcher', { path: '/home/user/no-such-dir' })
    eq([r.status, r.body.code], [404, 'not_found'], 'CreateWatcher of a missing directory: not_found')
    const g = await envd(sbx, 'GetWatcherEvents', { watcherId: 'w0000' })
    eq([g.status, g.body.code], [404, 'not_found'], 'an unknown watcher: not_found')
    // at most 16 watchers a sandbox (docs/e2b.md Tenants)
    const ids = []
    for (let i = 0; i < 16; i++) ids.push((await envd(sbx, 'CreateWatcher', { path: '/home/user' })).body.watcherId)
    ok(ids.every(Boolean), '16 watchers', ids)
    const over = await envd(sbx, 'CreateWatcher', { path: '/home/user' })
    eq([over.status, over.body.code], [429, 'resource_exhausted'], 'a 17th: resource_exhausted')
    const e3 = await thrown(() => sbx.files.watchDir('/home/user', () => {}))
    ok(e3 && /16 watchers/.test(e3.message), 'a 17th by watchDir: refused, saying why', e3 && e3.message)
    await envd(sbx, 'RemoveWatcher', { watcherId: ids[0] })
    const h = await sbx.files.watchDir('/home/user', () => {})
    ok(h, 'one removed: another may start')
    await h.stop()
  } finally {
    await sbx.kill().catch(() => {})
  }
})

await test('polled watchers: create, events, remove', async () => {
  const sbx = await Sandbox.create({ timeoutMs: 120_000 })
  try {
    const c = await envd(sbx, 'CreateWatcher', { path: '/home/user', recursive: true })
    ok(c.status === 200 && /^w[0-9a-f]{16}$/.test(c.body.watcherId), 'a watcher id', c)
    await sbx.commands.run('mkdir -p /home/user/p && touch /home/user/p/q')
    const got = []
    ok(await poll(async () => {
      const g = await envd(sbx, 'GetWatcherEvents', { watcherId: c.body.watcherId })
      got.push(...(g.body.events || []))
      return got.some(e => e.name === 'p/q' && e.type === 'EVENT_TYPE_CREATE')
    }), 'the events, with envd\'s enum names', got)
    eq((await envd(sbx, 'RemoveWatcher', { watcherId: c.body.watcherId })).status, 200, 'removed')
    eq((await envd(sbx, 'GetWatcherEvents', { watcherId: c.body.watcherId })).body.code, 'not_found', 'gone once removed')
  } finally {
    await sbx.kill().catch(() => {})
  }
})

if (!server) {
  ok(false, 'CORDON_SERVER_PID is not set (tests/e2b/run sets it)')
} else {
  await test('a watch ends: stopped, or with its sandbox (nothing of it left in the server)', async () => {
    const base = fds(), th00 = threads() // the server without this sandbox (--pool 0)
    const sbx = await Sandbox.create({ timeoutMs: 120_000 })
    try {
      await sbx.commands.run('true') // its first connections are made
      const fd0 = fds(), th0 = threads()
      const hs = []
      for (let i = 0; i < 4; i++) hs.push(await sbx.files.watchDir('/home/user', () => {}, { recursive: true }))
      ok(fds() > fd0, 'watching holds descriptors', { before: fd0, now: fds() })
      for (const h of hs) await h.stop()
      ok(await poll(() => fds() <= fd0 && threads() <= th0), 'stopped: the server\'s descriptors and threads as before',
        { fds: [fd0, fds()], threads: [th0, threads()] })
      const workers = (await sbx.commands.run('ls /proc | grep -c "^[0-9]"', { })).stdout.trim()
      note(`processes inside after the stops: ${workers}`)
      let exited = null
      await sbx.files.watchDir('/home/user', () => {}, { onExit: err => { exited = err || 'clean' } })
      for (let i = 0; i < 8; i++) await envd(sbx, 'CreateWatcher', { path: '/home/user' })
      await sbx.kill()
      ok(await poll(() => exited), 'the sandbox killed: the watch ends (onExit)', exited)
      ok(await poll(() => fds() <= base && threads() <= th00),
        'killed: the server\'s descriptors and threads as before the sandbox (its polled watchers\' too)',
        { fds: [base, fds()], threads: [th00, threads()] })
    } finally {
      await sbx.kill().catch(() => {})
    }
  })

  await test('a flood of 100,000 files: bounded, and the overflow said', async () => {
    const sbx = await Sandbox.create({ timeoutMs: 300_000 })
    try {
      await sbx.files.makeDir('/home/user/flood')
      const rss0 = rssKb()
      // polled: nobody reads while the files are made
      const c = await envd(sbx, 'CreateWatcher', { path: '/home/user/flood' })
      // streamed: the client reads nothing (its first event waits) until the files are made
      let release, first = true, n = 0, exited = null
      const held = new Promise(r => { release = r })
      const h = await sbx.files.watchDir('/home/user/flood', async () => { n++; if (first) { first = false; await held } },
        { onExit: err => { exited = err || 'clean' }, timeoutMs: 0 })
      // in the background (a command's stream of over ~40 s ends without its result: another
      // matter), its end a file
      await sbx.commands.run(
        'cd /home/user/flood && seq -f "file-with-a-rather-long-name-so-that-events-weigh-%06g" 1 100000 | xargs touch && ls | wc -l > /home/user/made.tmp && mv /home/user/made.tmp /home/user/made',
        { background: true })
      ok(await poll(() => sbx.files.exists('/home/user/made'), { deadline: 240_000 }), 'the files made')
      eq((await sbx.files.read('/home/user/made')).trim(), '100000', '100,000 files')
      const rss1 = rssKb()
      note(`server RSS: ${rss0} kB before, ${rss1} kB after the flood`)
      if (readFileSync(`/proc/${server}/maps`).toString().includes('libasan'))
        skip('the server grew less than 64 MiB', 'a sanitized server keeps what it frees (quarantine)')
      else
        ok(rss1 - rss0 < 64 * 1024, 'the server grew less than 64 MiB', { rss0, rss1 })
      let total = 0, last
      for (let i = 0; i < 100; i++) {
        last = await envd(sbx, 'GetWatcherEvents', { watcherId: c.body.watcherId })
        if (last.status !== 200) break
        ok(last.body.events.length <= 10000, `a poll answers at most 10000 events (${last.body.events.length})`)
        total += last.body.events.length
      }
      note(`polled: ${total} events, then ${JSON.stringify(last.body).slice(0, 200)}`)
      eq(last.body.code, 'internal', 'polled: the overflow is an error (envd\'s code)')
      ok(/overflow/.test(last.body.message), 'polled: saying overflow', last.body)
      ok(total < 200000, 'polled: fewer events than happened (some were lost)', total)
      release()
      ok(await poll(() => exited, { deadline: 120_000 }), 'streamed: the watch ends', { n, exited })
      ok(exited instanceof Error && /overflow/.test(exited.message), 'streamed: with the overflow said', exited)
      note(`streamed: ${n} events before the overflow`)
      await h.stop()
    } finally {
      await sbx.kill().catch(() => {})
    }
  }, { timeout: 400_000 })
}

done()
