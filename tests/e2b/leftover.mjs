// tests/e2b/leftover.mjs - nothing left behind by a server killed with SIGKILL: 20 sandboxes, each
// running a sleep with a marker of its own in argv and env, then `kill -9` of the server
// (CORDON_SERVER_PID), then within 15 s: none of their processes, none of the server's
// descendants (supervisors, cordon-agent), no workdir in the state dir (CORDON_STATE_DIR), no
// cgroup of theirs, no mount naming the state dir. TAP on stdout.
import { readdirSync, readFileSync, existsSync } from 'node:fs'
import { Sandbox } from 'e2b'
import { test, ok, eq, skip, done, poll, note, runid, hostProcs } from './tap.mjs'

const N = 20
const serverPid = +process.env.CORDON_SERVER_PID
const stateDir = process.env.CORDON_STATE_DIR
const mark = `1000.${runid}`      // sleep 1000.<runid><NN>: unique to this run

function stat(pid) {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ')
    return { ppid: +f[1], start: f[19], comm: s.slice(s.indexOf('(') + 1, s.lastIndexOf(')')) }
  } catch { return null }
}
function descendants(root) {
  const kids = new Map()
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue
    const s = stat(d)
    if (!s) continue
    if (!kids.has(s.ppid)) kids.set(s.ppid, [])
    kids.get(s.ppid).push({ pid: +d, ...s })
  }
  const out = []
  const todo = [root]
  while (todo.length) for (const k of kids.get(todo.pop()) || []) { out.push(k); todo.push(k.pid) }
  return out
}
const alive = p => { const s = stat(p.pid); return s && s.start === p.start }
const cg2 = (() => {
  for (const l of readFileSync('/proc/self/mountinfo', 'utf8').split('\n')) {
    const [pre, post] = l.split(' - ')
    if (post && post.startsWith('cgroup2 ')) return pre.split(' ')[4]
  }
  return null
})()
function cgroupOf(pid) {
  try {
    const l = readFileSync(`/proc/${pid}/cgroup`, 'utf8').split('\n').find(x => x.startsWith('0::'))
    return l ? l.slice(3) : null
  } catch { return null }
}
function cgroupDirsNaming(ids) {
  const found = []
  const walk = (dir, depth) => {
    if (depth > 12) return
    let ents
    try { ents = readdirSync(dir, { withFileTypes: true }) } catch { return }
    for (const e of ents) {
      if (!e.isDirectory()) continue
      const p = `${dir}/${e.name}`
      if (ids.some(id => e.name.includes(id))) found.push(p)
      walk(p, depth + 1)
    }
  }
  walk('/sys/fs/cgroup', 0)
  return found
}
const mounts = () => readFileSync('/proc/self/mountinfo', 'utf8').split('\n').filter(l => stateDir && l.includes(stateDir))

let sbxs = []
await test(`${N} sandboxes, each running a sleep`, async () => {
  ok(serverPid > 1 && stat(serverPid), 'the server runs', serverPid)
  for (let i = 0; i < N; i += 5) {
    sbxs.push(...await Promise.all(Array.from({ length: Math.min(5, N - i) }, async (_, j) => {
      const k = String(i + j).padStart(2, '0')
      const s = await Sandbox.create({ timeoutMs: 600_000, metadata: { run: runid, suite: 'leftover' }, envs: { CORDON_E2B_MARK: `m${runid}-${k}` } })
      await s.commands.run(`exec sleep ${mark}${k}`, { background: true })
      return s
    })))
  }
  eq(sbxs.length, N, `${N} sandboxes made`)
  ok(await poll(() => hostProcs(mark).length === N, { deadline: 60_000 }), `${N} marked sleeps run (seen from the host)`, hostProcs(mark))
}, { timeout: 180_000 })

await test('kill -9 of the server: nothing left', async () => {
  const ids = sbxs.map(s => s.sandboxId)
  const tree = descendants(serverPid)
  const agents = tree.filter(p => p.comm === 'cordon-agent')
  ok(agents.length >= N, `the server has ${N} cordon-agent descendants or more`, agents.length)
  ok(tree.filter(p => hostProcs(mark).some(m => m.pid === p.pid)).length === N, 'the marked sleeps descend from the server')
  const cgroups = [...new Set(tree.map(p => cgroupOf(p.pid)).filter(c => c && c !== cgroupOf(serverPid) && c !== '/'))]
  note(`${tree.length} descendants, ${cgroups.length} cgroups of theirs, cgroup2 at ${cg2}`)
  // a workdir is named by the id the sandbox had when made (pooled ones: not the id create gave)
  const workdirs = readdirSync(stateDir)
  ok(workdirs.length >= N, `${N} workdirs or more in the state dir`, workdirs)
  ids.push(...workdirs.filter(w => !ids.includes(w)))
  process.kill(serverPid, 'SIGKILL')
  const t0 = Date.now()
  const deadline = 15_000
  ok(await poll(() => hostProcs(mark).length === 0, { deadline }), 'no marked sleep left', hostProcs(mark))
  ok(await poll(() => !tree.some(alive), { deadline }), 'none of the server\'s descendants left (supervisors, cordon-agent, commands)', tree.filter(alive))
  ok(await poll(() => !agents.some(alive), { deadline: 1000 }), 'no cordon-agent of that server left', agents.filter(alive))
  ok(await poll(() => hostProcs(stateDir).length === 0, { deadline }), 'no process naming the state dir (the server\'s forks)', hostProcs(stateDir))
  ok(await poll(() => readdirSync(stateDir).length === 0, { deadline }), 'no workdir left in the state dir', readdirSync(stateDir))
  ok(await poll(() => cgroupDirsNaming(ids).length === 0, { deadline }), 'no cgroup directory naming a sandbox id', cgroupDirsNaming(ids))
  if (cg2) ok(await poll(() => cgroups.every(c => !existsSync(`${cg2}${c}`)), { deadline }), 'the cgroups their processes were in are gone', cgroups.filter(c => existsSync(`${cg2}${c}`)))
  else skip('the cgroups their processes were in are gone', 'no cgroup2 mount on this host')
  ok(await poll(() => mounts().length === 0, { deadline }), 'no mount naming the state dir', mounts())
  note(`all clean ${Date.now() - t0} ms after the SIGKILL`)
}, { timeout: 120_000 })
done()
