// tests/e2b/metrics.mjs - getMetrics (GET /sandboxes/{id}/metrics) with the pinned SDK: one
// sample in E2B's SandboxMetric shape, whose figures follow what the sandbox does (200 MB held
// inside, a busy loop, a file written), and E2B's errors. Where the sandbox has no cgroup (this
// host: no cgroup v2 controllers) the figures are its processes' (docs/e2b.md); the cgroup path
// is t-session-watch's in the VM tier. TAP on stdout.
import { Sandbox, SandboxNotFoundError } from 'e2b'
import { test, ok, eq, done, poll, thrown, env, note, skip } from './tap.mjs'

await test('getMetrics: E2B\'s shape, sane figures', async () => {
  const sbx = await Sandbox.create({ timeoutMs: 180_000 })
  try {
    const m = await sbx.getMetrics()
    ok(Array.isArray(m) && m.length === 1, 'one sample', m)
    const s = m[0]
    note(JSON.stringify(s))
    eq(Object.keys(s).sort(), ['cpuCount', 'cpuUsedPct', 'diskTotal', 'diskUsed', 'memCache', 'memTotal', 'memUsed', 'timestamp'],
      'the SDK\'s fields')
    ok(s.timestamp instanceof Date && Math.abs(s.timestamp - Date.now()) < 120_000, 'a timestamp of now', s.timestamp)
    ok(Number.isInteger(s.cpuCount) && s.cpuCount >= 1, 'cpuCount >= 1')
    ok(s.cpuUsedPct >= 0 && s.cpuUsedPct <= 100, 'cpuUsedPct within 0-100')
    ok(s.memUsed > 0 && s.memTotal >= s.memUsed, 'memUsed within memTotal')
    ok(s.diskTotal > 0 && s.diskUsed >= 0 && s.diskUsed <= s.diskTotal, 'diskUsed within diskTotal')
    // the REST answer itself: timestampUnix too
    const raw = await (await fetch(`${env.api}/sandboxes/${sbx.sandboxId}/metrics`, { headers: { 'X-API-Key': env.key } })).json()
    ok(Number.isInteger(raw[0].timestampUnix) && typeof raw[0].timestamp === 'string', 'timestamp and timestampUnix', raw)
    const none = await (await fetch(`${env.api}/sandboxes/${sbx.sandboxId}/metrics?end=1000`, { headers: { 'X-API-Key': env.key } })).json()
    eq(none, [], 'an interval in the past: no sample')

    await sbx.commands.run("python3 -c 'import os, time\nb = bytearray(200 << 20)\nfor i in range(0, len(b), 4096): b[i] = 1\nopen(\"/home/user/held\", \"w\").close()\nwhile not os.path.exists(\"/home/user/stop\"): time.sleep(0.05)'",
      { background: true })
    ok(await poll(() => sbx.files.exists('/home/user/held'), { deadline: 60_000 }), '200 MB held inside')
    const big = (await sbx.getMetrics())[0]
    note(`memUsed ${s.memUsed} -> ${big.memUsed}`)
    ok(big.memUsed >= s.memUsed + 180 * 1024 * 1024, 'memUsed grows by it', { before: s.memUsed, after: big.memUsed })
    await sbx.files.write('/home/user/stop', '')

    const spin = await sbx.commands.run('while [ ! -e /home/user/stop2 ]; do :; done', { background: true })
    const busy = await poll(async () => { const x = (await sbx.getMetrics())[0]; return x.cpuUsedPct > 0 && x })
    ok(busy, 'a busy loop: cpuUsedPct above 0', busy)
    await sbx.files.write('/home/user/stop2', '')
    await spin.wait().catch(() => {})

    await sbx.commands.run('head -c 5000000 /dev/urandom > /home/user/five-mb')
    const disk = await poll(async () => { const x = (await sbx.getMetrics())[0]; return x.diskUsed >= s.diskUsed + 4_000_000 && x })
    ok(disk, 'a file of 5 MB: diskUsed grows (counted every 2 s)', disk)
  } finally {
    await sbx.kill().catch(() => {})
  }
})

await test('getMetrics of a paused sandbox: no sample', async () => {
  const sbx = await Sandbox.create({ timeoutMs: 60_000 })
  try {
    let paused = false
    const e = await thrown(async () => { paused = await Sandbox.betaPause(sbx.sandboxId) })
    if (!paused) {
      skip('a paused sandbox', `it cannot be paused here: ${e && e.message}`)
      return
    }
    eq(await Sandbox.getMetrics(sbx.sandboxId), [], 'paused: []')
    await Sandbox.connect(sbx.sandboxId)
    eq((await sbx.getMetrics()).length, 1, 'resumed: a sample again')
  } finally {
    await sbx.kill().catch(() => {})
  }
})

await test('getMetrics of a sandbox that is gone: SandboxNotFoundError', async () => {
  const sbx = await Sandbox.create({ timeoutMs: 60_000 })
  const id = sbx.sandboxId
  await sbx.kill()
  const e = await thrown(() => Sandbox.getMetrics(id))
  ok(e instanceof SandboxNotFoundError, 'SandboxNotFoundError', e)
})

done()
