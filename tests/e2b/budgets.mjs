// tests/e2b/budgets.mjs - one tenant cannot take another's per-user kernel budgets (docs/e2b.md
// "Tenants"): tenant A takes every inotify instance and watch it can and holds them; tenant B
// then still makes an instance and a watch. As root each sandbox has a host id of its own; run
// unprivileged, the server gives each sandbox its share of the user's (--max-sandboxes + --pool
// + 1). tests/helpers/inotify-hog.py does the work inside. TAP on stdout.
import { readFileSync } from 'node:fs'
import { Sandbox } from 'e2b'
import { test, ok, done, note, poll } from './tap.mjs'

const hog = readFileSync(new URL('../helpers/inotify-hog.py', import.meta.url)).toString()

await test('one tenant exhausts its inotify budgets, another keeps its own', async () => {
  const a = await Sandbox.create({ timeoutMs: 180_000 })
  const b = await Sandbox.create({ timeoutMs: 180_000 })
  try {
    for (const s of [a, b]) await s.files.write('/home/user/inotify-hog.py', hog)
    const h = await a.commands.run('python3 /home/user/inotify-hog.py hog /tmp /home/user/ready > /home/user/hog.out',
      { background: true })
    ok(await poll(() => a.files.exists('/home/user/ready'), { deadline: 120_000 }), 'tenant A holds all it could take')
    const took = (await a.files.read('/home/user/hog.out')).trim()
    ok(/^hog: \d+ instances \(EMFILE\), \d+ watches \(ENOSPC\)$/.test(took), 'tenant A was refused more (EMFILE, ENOSPC)', took)
    note(took)
    const probe = await b.commands.run('python3 /home/user/inotify-hog.py probe /tmp')
    ok(probe.stdout.trim() === 'probe: instance ok, watch ok', 'tenant B still makes an inotify instance and a watch', probe.stdout + probe.stderr)
    await h.kill()
  } finally {
    await a.kill().catch(() => {})
    await b.kill().catch(() => {})
  }
}, { timeout: 300_000 })

done()
