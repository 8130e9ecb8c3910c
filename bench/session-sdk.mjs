// session-sdk.mjs MODE N - the server side of bench/session: E2B's SDKs (e2b, @e2b/code-interpreter)
// against `cordon serve` (E2B_API_URL, E2B_SANDBOX_URL, E2B_API_KEY set by bench/session).
// Prints one "label value" line per sample (microseconds) or figure, as bench/session.c does.
//
//   create N   Sandbox.create() + commands.run('true'), N times (kill not timed)
//   exec N     one sandbox; commands.run('true'), N times (after 10 warm-ups)
//   runcode N  one code-interpreter sandbox; runCode('1+1'), N times (after a warm-up call)
//   context N  one code-interpreter sandbox; createCodeContext() + runCode('1+1') in it, N times
//              (its kernel started and ready; removeCodeContext not timed)
//   rate S     Sandbox.create() + kill() in a loop for S seconds: sandboxes per second
//   idle N     N idle sandboxes, then "ready"; kills them all when standard input closes
import { Sandbox } from 'e2b'
import { Sandbox as CiSandbox } from '@e2b/code-interpreter'
import { performance } from 'node:perf_hooks'

const [mode, arg] = process.argv.slice(2)
const n = Number(arg)
const us = (t0) => ((performance.now() - t0) * 1000).toFixed(1)
const out = (s) => process.stdout.write(s + '\n')

if (mode === 'create') {
  for (let i = 0; i < n; i++) {
    const t0 = performance.now()
    const s = await Sandbox.create()
    const t1 = performance.now()
    const r = await s.commands.run('true')
    if (r.exitCode !== 0) throw new Error(`exit ${r.exitCode}`)
    out(`create ${us(t0)}`)
    out(`create_only ${((t1 - t0) * 1000).toFixed(1)}`)
    const t2 = performance.now()
    await s.kill()
    out(`destroy ${us(t2)}`)
  }
} else if (mode === 'exec') {
  const s = await Sandbox.create()
  for (let i = 0; i < 10; i++) await s.commands.run('true')
  for (let i = 0; i < n; i++) {
    const t0 = performance.now()
    await s.commands.run('true')
    out(`exec ${us(t0)}`)
  }
  await s.kill()
} else if (mode === 'runcode') {
  const s = await CiSandbox.create()
  const w = await s.runCode('1+1')
  if (w.text !== '2') throw new Error(`runCode: ${JSON.stringify(w)}`)
  for (let i = 0; i < n; i++) {
    const t0 = performance.now()
    const r = await s.runCode('1+1')
    out(`runcode ${us(t0)}`)
    if (r.text !== '2') throw new Error(`runCode: ${JSON.stringify(r)}`)
  }
  await s.kill()
} else if (mode === 'context') {
  const s = await CiSandbox.create()
  for (let i = 0; i < n; i++) {
    const t0 = performance.now()
    const c = await s.createCodeContext()
    const t1 = performance.now()
    const r = await s.runCode('1+1', { context: c })
    out(`context ${us(t0)}`)
    out(`context_only ${((t1 - t0) * 1000).toFixed(1)}`)
    if (r.text !== '2') throw new Error(`runCode: ${JSON.stringify(r)}`)
    await s.removeCodeContext(c)
  }
  await s.kill()
} else if (mode === 'rate') {
  const t0 = performance.now()
  const end = t0 + n * 1000
  let count = 0
  let t
  do {
    const s = await Sandbox.create()
    await s.kill()
    count++
    t = performance.now()
  } while (t < end)
  out(`rate ${(count / ((t - t0) / 1000)).toFixed(2)}`)
} else if (mode === 'idle') {
  const v = []
  const t0 = performance.now()
  for (let i = 0; i < n; i++) v.push(await Sandbox.create())
  out(`idle_create_total ${us(t0)}`)
  out('ready')
  process.stdin.resume()
  await new Promise((resolve) => process.stdin.on('end', resolve))
  const t1 = performance.now()
  for (const s of v) await s.kill()
  out(`idle_destroy_total ${us(t1)}`)
} else {
  throw new Error(`unknown mode ${mode}`)
}
