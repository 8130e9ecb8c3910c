// tests/e2b/sdk.mjs - E2B's own SDKs (e2b, @e2b/code-interpreter), unchanged, against `cordon
// serve`: sandboxes, commands, files, runCode and its contexts, lifecycle, keys and tokens,
// isolation between sandboxes. TAP on stdout. The server and key come from E2B_API_URL,
// E2B_SANDBOX_URL, E2B_API_KEY (tests/e2b/run sets them).
import { createHash, randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import {
  Sandbox as Base, CommandExitError, TimeoutError, AuthenticationError, NotFoundError, SandboxError,
} from 'e2b'
import { Sandbox } from '@e2b/code-interpreter'
import { test, ok, eq, skip, note, done, poll, thrown, env, runid, hostProcs } from './tap.mjs'

const sha256 = b => createHash('sha256').update(b).digest('hex')
const errName = e => e && `${e.constructor && e.constructor.name}: ${e.message}`
const sandboxes = []
async function make(opts = {}) {
  const s = await Sandbox.create({ timeoutMs: 300_000, ...opts, metadata: { suite: 'e2b', run: runid, ...(opts.metadata || {}) } })
  sandboxes.push(s)
  return s
}
const running = async s => { try { return await s.isRunning() } catch { return false } }
const listed = async (query = { metadata: { run: runid } }) => (await Base.list({ query }).nextItems())

let sbx
await test('create with metadata, envs and timeoutMs', async () => {
  const t0 = Date.now()
  sbx = await make({ timeoutMs: 240_000, metadata: { purpose: 'main' }, envs: { CREATE_ENV: 'from create', SHARED: 'sandbox' } })
  ok(/^[0-9a-z]{8,}$/.test(sbx.sandboxId), 'an id of [0-9a-z]', sbx.sandboxId)
  const info = await sbx.getInfo()
  eq(info.sandboxId, sbx.sandboxId, 'getInfo: the same id')
  eq(info.metadata, { suite: 'e2b', run: runid, purpose: 'main' }, 'getInfo: the metadata')
  eq(info.state, 'running', 'getInfo: running')
  const ttl = info.endAt.getTime() - info.startedAt.getTime()
  ok(Math.abs(ttl - 240_000) <= 2000, 'endAt - startedAt is timeoutMs', ttl)
  ok(info.startedAt.getTime() >= t0 - 2000 && info.startedAt.getTime() <= Date.now() + 2000, 'startedAt is now', info.startedAt)
  const r = await sbx.commands.run('printf "%s|%s" "$CREATE_ENV" "$SHARED"')
  eq(r.stdout, 'from create|sandbox', 'the envs reach commands')
  ok(await sbx.isRunning(), 'isRunning')
})
if (!sbx) { note('no sandbox: the rest cannot run'); done(); process.exit() }

await test('the same kernel and root as the host', async () => {
  eq((await sbx.commands.run('uname -s')).stdout, `${os.type()}\n`, 'uname -s')
  eq((await sbx.commands.run('uname -r')).stdout, `${os.release()}\n`, 'uname -r')
  eq((await sbx.commands.run('uname -m')).stdout, `${os.machine()}\n`, 'uname -m')
  eq((await sbx.commands.run('cat /etc/os-release')).stdout, readFileSync('/etc/os-release', 'utf8'), '/etc/os-release')
  eq((await sbx.commands.run('pwd')).stdout, '/home/user\n', 'the default directory is /home/user')
  const e = await thrown(() => sbx.commands.run('touch /usr/cordon-e2b-ro'))
  ok(e instanceof CommandExitError && e.exitCode !== 0, 'the root is read-only', errName(e))
})

// a command silent for longer than the 30 s a stalled stream is waited for: its stream, waiting
// all along, still gets the output and the end (it lost them: "Process exited without a result");
// run beside the tests below, awaited at the end
const quiet = sbx.commands.run('sleep 36; echo after the silence', { timeoutMs: 120_000 }).then(r => r, e => e)

await test('commands.run in the foreground', async () => {
  const r = await sbx.commands.run('echo out; echo err >&2')
  eq([r.stdout, r.stderr, r.exitCode, r.error], ['out\n', 'err\n', 0, undefined], 'stdout, stderr, exitCode 0')
  const e = await thrown(() => sbx.commands.run('echo partial; echo bad >&2; exit 3'))
  ok(e instanceof CommandExitError, 'a non-zero exit raises CommandExitError', errName(e))
  eq([e && e.exitCode, e && e.stdout, e && e.stderr], [3, 'partial\n', 'bad\n'], '... with the exit code and the output')
  for (const code of [1, 2, 42, 127, 255]) {
    const e2 = await thrown(() => sbx.commands.run(`exit ${code}`))
    eq(e2 && e2.exitCode, code, `exit ${code}`)
  }
  const e3 = await thrown(() => sbx.commands.run('no-such-command-cordon'))
  eq(e3 && e3.exitCode, 127, 'a missing command: 127 from the shell')
  const e4 = await thrown(() => sbx.commands.run('kill -KILL $$'))
  ok(e4 instanceof CommandExitError, 'a command killed by a signal raises CommandExitError', errName(e4))
  const big = await sbx.commands.run('head -c 3000000 /dev/zero | tr "\\0" y; echo')
  ok(big.stdout.length === 3000001 && /^y+\n$/.test(big.stdout), '3 MB of stdout, none lost', big.stdout.length)
})

await test('cwd and envs', async () => {
  eq((await sbx.commands.run('pwd', { cwd: '/tmp' })).stdout, '/tmp\n', 'cwd /tmp')
  await sbx.files.makeDir('/home/user/work dir')
  eq((await sbx.commands.run('pwd', { cwd: '/home/user/work dir' })).stdout, '/home/user/work dir\n', 'cwd with a space')
  eq((await sbx.commands.run('pwd', { cwd: 'work dir' })).stdout, '/home/user/work dir\n', 'a relative cwd is under /home/user')
  const e = await thrown(() => sbx.commands.run('echo ran', { cwd: '/home/user/no/such/dir' }))
  ok(e !== null && !(e.stdout || '').includes('ran'), 'a missing cwd: the command does not run', errName(e))
  const r = await sbx.commands.run('printf "%s|%s|%s" "$ONE" "$TWO" "$SHARED"', { envs: { ONE: '1', TWO: 'with space and "quotes"', SHARED: 'command' } })
  eq(r.stdout, '1|with space and "quotes"|command', 'per-command envs, over the sandbox\'s')
  eq((await sbx.commands.run('echo "$ONE"')).stdout, '\n', 'per-command envs do not stay')
})

await test('background, wait and kill', async () => {
  const h = await sbx.commands.run('echo started; sleep 0.2; echo finished', { background: true })
  ok(Number.isInteger(h.pid) && h.pid > 0, 'a pid', h.pid)
  const r = await h.wait()
  eq([r.exitCode, r.stdout], [0, 'started\nfinished\n'], 'wait gives the result')
  const mark = `bgkill-${runid}`
  const h2 = await sbx.commands.run(`sleep 600; : ${mark}`, { background: true })
  ok((await sbx.commands.list()).some(p => p.pid === h2.pid), 'listed while it runs')
  ok(hostProcs(mark).length > 0, 'its process runs (seen from the host)', hostProcs(mark))
  ok(await h2.kill(), 'handle.kill() says it killed')
  const e = await thrown(() => h2.wait())
  ok(e instanceof CommandExitError, 'wait on a killed command raises CommandExitError', errName(e))
  ok(await poll(() => hostProcs(mark).length === 0), 'its processes are gone (seen from the host)', hostProcs(mark))
  ok(await poll(async () => !(await sbx.commands.list()).some(p => p.pid === h2.pid)), 'no longer listed')
  ok(!(await sbx.commands.kill(h2.pid)), 'kill of a process that is gone: false')
  const e2 = await thrown(() => h2.wait())
  ok(e2 instanceof CommandExitError, 'a second wait gives the same end', errName(e2))
})

await test('streaming callbacks', async () => {
  // deterministic: the command waits for a file the test writes only after the first output came
  const gate = `/home/user/gate-${runid}`
  const out = [], err = []
  let settled = false
  const p = sbx.commands.run(`echo first; echo first-err >&2; while [ ! -e ${gate} ]; do sleep 0.05; done; echo second; echo second-err >&2`,
    { onStdout: d => out.push(d), onStderr: d => err.push(d) })
  p.then(() => { settled = true }, () => { settled = true })
  ok(await poll(() => out.join('').includes('first\n') && err.join('').includes('first-err\n'), { deadline: 60_000 }),
    'onStdout and onStderr get the first lines while the command runs', { out, err })
  ok(!settled, '... before it ends')
  await sbx.files.write(gate, '')
  const r = await p
  eq([r.stdout, r.stderr], ['first\nsecond\n', 'first-err\nsecond-err\n'], 'the result has all of it')
  eq([out.join(''), err.join('')], [r.stdout, r.stderr], 'the chunks add up to the result')
  // the case: print, sleep 1 s, print
  const seen = []
  const r2 = await sbx.commands.run('echo a; sleep 1; echo b', { onStdout: d => seen.push([Date.now(), d]) })
  const end = Date.now()
  ok(seen.length >= 2 && seen[0][1] === 'a\n', 'print, sleep 1 s, print: two chunks', seen)
  ok(seen.length >= 2 && seen[0][0] <= seen[seen.length - 1][0] - 250 && seen[0][0] <= end - 250, '... the first long before the end', seen.map(x => x[0] - end))
  eq(r2.stdout, 'a\nb\n', '... and the result')
})

await test('per-command timeoutMs', async () => {
  const mark = `cmdtimeout-${runid}`
  const t0 = Date.now()
  const e = await thrown(() => sbx.commands.run(`sleep 600; : ${mark}`, { timeoutMs: 1500 }))
  const took = Date.now() - t0
  ok(e instanceof TimeoutError, 'the SDK raises a TimeoutError', errName(e))
  ok(took >= 1400 && took < 60_000, 'at the deadline', took)
  ok(await poll(() => hostProcs(mark).length === 0, { deadline: 15_000 }), 'the process is gone (seen from the host)', hostProcs(mark))
  ok(await poll(async () => !(await sbx.commands.list()).some(p => p.args.join(' ').includes(mark)), { deadline: 5000 }), '... and not listed')
  const h = await sbx.commands.run(`sleep 600; : ${mark}-bg`, { background: true, timeoutMs: 1500 })
  const e2 = await thrown(() => h.wait())
  ok(e2 instanceof TimeoutError, 'a background command\'s timeoutMs: wait raises a TimeoutError', errName(e2))
  ok(await poll(() => hostProcs(`${mark}-bg`).length === 0, { deadline: 15_000 }), '... and the process is gone', hostProcs(`${mark}-bg`))
  // what is left (the server bug above) is not this test's to leave behind
  for (const p of (await sbx.commands.list()).filter(p => p.args.join(' ').includes(mark))) await sbx.commands.kill(p.pid)
})

await test('sendStdin and closeStdin', async () => {
  const h = await sbx.commands.run('cat', { background: true, stdin: true })
  await sbx.commands.sendStdin(h.pid, 'hello\n')
  ok(await poll(() => h.stdout === 'hello\n'), 'sendStdin reaches the process', h.stdout)
  await h.sendStdin('world\n')
  ok(await poll(() => h.stdout === 'hello\nworld\n'), 'handle.sendStdin too', h.stdout)
  await h.closeStdin()
  const r = await h.wait()
  eq([r.exitCode, r.stdout], [0, 'hello\nworld\n'], 'closeStdin: cat ends')
  const e = await thrown(() => sbx.commands.sendStdin(h.pid, 'late'))
  ok(e instanceof NotFoundError || e instanceof SandboxError, 'sendStdin to a process that is gone raises', errName(e))
})

await test('commands.list and connect', async () => {
  const gate = `/home/user/gate2-${runid}`
  const mark = `listconnect-${runid}`
  const h = await sbx.commands.run(`echo before; while [ ! -e ${gate} ]; do sleep 0.05; done; echo after; exit 5; : ${mark}`,
    { background: true, envs: { LISTED: 'yes' }, cwd: '/tmp' })
  const list = await sbx.commands.list()
  const p = list.find(x => x.pid === h.pid)
  ok(p && p.args.join(' ').includes(mark), 'list shows the running command, its args', list)
  ok(p && p.cwd === '/tmp', '... its cwd', p)
  ok(p && p.envs && p.envs.LISTED === 'yes', '... its envs', p && p.envs)
  const chunks = []
  const c = await sbx.commands.connect(h.pid, { onStdout: d => chunks.push(d) })
  eq(c.pid, h.pid, 'connect gives a handle to the same pid')
  await sbx.files.write(gate, '')
  const e = await thrown(() => c.wait())
  eq([e && e.exitCode, chunks.join('').includes('after\n')], [5, true], 'the connected handle gets what follows and the exit code')
  await thrown(() => h.wait())
  const e2 = await thrown(() => sbx.commands.connect(999999))
  ok(e2 instanceof NotFoundError || e2 instanceof SandboxError, 'connect to a pid that does not exist raises', errName(e2))
})

await test('files', async () => {
  const d = `/home/user/files-${runid}`
  const w = await sbx.files.write(`${d}/sub/a.txt`, 'héllo text\n')
  eq([w.name, w.path, w.type], ['a.txt', `${d}/sub/a.txt`, 'file'], 'write makes the parents and says what it wrote')
  eq(await sbx.files.read(`${d}/sub/a.txt`), 'héllo text\n', 'read text')
  eq((await sbx.commands.run(`cat ${d}/sub/a.txt`)).stdout, 'héllo text\n', 'commands see what files wrote')
  await sbx.commands.run(`printf 'from a command' > ${d}/cmd.txt`)
  eq(await sbx.files.read(`${d}/cmd.txt`), 'from a command', 'files see what commands wrote')
  const all = new Uint8Array(512).map((_, i) => i % 256)
  await sbx.files.write(`${d}/all.bin`, all.buffer)
  const back = await sbx.files.read(`${d}/all.bin`, { format: 'bytes' })
  ok(back.length === 512 && back.every((b, i) => b === all[i]), 'binary: every byte value round trips', back.length)
  const big = randomBytes(5 * 1024 * 1024)
  await sbx.files.write(`${d}/big.bin`, new Blob([big]))
  const bigBack = Buffer.from(await sbx.files.read(`${d}/big.bin`, { format: 'bytes' }))
  eq([bigBack.length, sha256(bigBack)], [big.length, sha256(big)], '5 MB of random bytes round trip')
  eq((await sbx.commands.run(`sha256sum < ${d}/big.bin`)).stdout.split(' ')[0], sha256(big), '... and inside the sandbox the same sha256')
  const blob = await sbx.files.read(`${d}/all.bin`, { format: 'blob' })
  eq(blob.size, 512, 'read as a blob')
  const info = await sbx.files.getInfo(`${d}/big.bin`)
  eq([info.name, info.path, info.type, info.size], ['big.bin', `${d}/big.bin`, 'file', 5 * 1024 * 1024], 'getInfo of a file')
  const dinfo = await sbx.files.getInfo(`${d}/sub`)
  eq([dinfo.name, dinfo.type], ['sub', 'dir'], 'getInfo of a directory')
  const ls = (await sbx.files.list(d)).map(e => `${e.name}:${e.type}`).sort()
  eq(ls, ['all.bin:file', 'big.bin:file', 'cmd.txt:file', 'sub:dir'], 'list')
  ok(await sbx.files.exists(`${d}/sub/a.txt`), 'exists: a file')
  ok(await sbx.files.exists(`${d}/sub`), 'exists: a directory')
  ok(!(await sbx.files.exists(`${d}/nope`)), 'exists: a missing path')
  eq(await sbx.files.makeDir(`${d}/new/deep`), true, 'makeDir: true when made (with parents)')
  eq(await sbx.files.makeDir(`${d}/new/deep`), false, 'makeDir: false when already there')
  const mv = await sbx.files.rename(`${d}/sub/a.txt`, `${d}/new/deep/b.txt`)
  eq(mv.path, `${d}/new/deep/b.txt`, 'rename gives the new path')
  ok(!(await sbx.files.exists(`${d}/sub/a.txt`)) && await sbx.files.read(`${d}/new/deep/b.txt`) === 'héllo text\n', 'rename moves the file')
  await sbx.files.remove(`${d}/cmd.txt`)
  ok(!(await sbx.files.exists(`${d}/cmd.txt`)), 'remove a file')
  await sbx.files.remove(`${d}/new`)
  ok(!(await sbx.files.exists(`${d}/new/deep/b.txt`)) && !(await sbx.files.exists(`${d}/new`)), 'remove a directory and what is in it')
  const e = await thrown(() => sbx.files.read(`${d}/nope`))
  ok(e instanceof NotFoundError, 'read of a missing file raises NotFoundError', errName(e))
  const e2 = await thrown(() => sbx.files.getInfo(`${d}/nope`))
  ok(e2 instanceof NotFoundError, 'getInfo of a missing file raises NotFoundError', errName(e2))
  await sbx.files.write('relative.txt', 'rel')
  eq(await sbx.files.read('/home/user/relative.txt'), 'rel', 'a relative path is under /home/user')
  const many = await sbx.files.write([{ path: `${d}/m1`, data: 'one' }, { path: `${d}/m2`, data: new Uint8Array([0, 1, 2]).buffer }])
  eq(many.map(x => x.path).sort(), [`${d}/m1`, `${d}/m2`], 'write of several files')
  eq((await sbx.commands.run(`cat ${d}/m1; od -An -tu1 ${d}/m2 | tr -s ' '`)).stdout, 'one 0 1 2\n', '... all written')
  await sbx.files.remove(d)
})

await test('runCode', async () => {
  const e = await sbx.runCode('print(2 + 2)')
  eq(e.logs.stdout, ['4\n'], "runCode('print(2 + 2)'): logs.stdout ['4\\n']")
  eq(e.error, undefined, '... no error')
  await sbx.runCode('x = 1')
  const e2 = await sbx.runCode('x + 1')
  eq(e2.text, '2', 'state kept across calls: x = 1 then x + 1 gives text 2')
  const e3 = await sbx.runCode('def f():\n    raise ValueError("boom")\nf()')
  ok(e3.error && e3.error.name === 'ValueError' && e3.error.value === 'boom', 'an exception: execution.error with name and value', e3.error)
  const tb = e3.error ? String(e3.error.traceback).replace(/\x1b\[[0-9;]*m/g, '') : '' // IPython's colours
  ok(/ValueError/.test(tb) && /f\(\)/.test(tb), '... and a traceback', e3.error && e3.error.traceback)
  const e4 = await sbx.runCode('import sys; print("to err", file=sys.stderr)')
  eq(e4.logs.stderr, ['to err\n'], 'stderr in logs.stderr')
  const chunks = []
  await sbx.runCode('for i in range(3): print(i)', { onStdout: m => chunks.push(m.line) })
  eq(chunks.join(''), '0\n1\n2\n', 'onStdout gets the output')
  const e5 = await sbx.runCode('import os; os.environ.get("CREATE_ENV")')
  eq(e5.text, 'from create', 'the sandbox\'s envs reach the kernel (a str shown without its quotes, as E2B does)')
})

await test('code contexts', async () => {
  const c1 = await sbx.createCodeContext()
  const c2 = await sbx.createCodeContext({ cwd: '/tmp' })
  ok(c1.id && c2.id && c1.id !== c2.id, 'createCodeContext: two ids', [c1, c2])
  await sbx.runCode('secret = 42', { context: c1 })
  eq((await sbx.runCode('secret', { context: c1 })).text, '42', 'a variable in its context')
  const e = await sbx.runCode('secret', { context: c2 })
  eq(e.error && e.error.name, 'NameError', 'not visible in another context')
  const e0 = await sbx.runCode('secret')
  eq(e0.error && e0.error.name, 'NameError', 'nor in the default one')
  eq((await sbx.runCode('import os; os.getcwd()', { context: c2 })).text, '/tmp', 'a context\'s cwd')
  const ids = (await sbx.listCodeContexts()).map(c => c.id)
  ok(ids.includes(c1.id) && ids.includes(c2.id), 'listCodeContexts shows both', ids)
  await sbx.restartCodeContext(c1)
  const e2 = await sbx.runCode('secret', { context: c1 })
  eq(e2.error && e2.error.name, 'NameError', 'restartCodeContext: the state is gone')
  eq((await sbx.runCode('1 + 1', { context: c1 })).text, '2', '... and it runs code again')
  await sbx.removeCodeContext(c2)
  const ids2 = (await sbx.listCodeContexts()).map(c => c.id)
  ok(!ids2.includes(c2.id) && ids2.includes(c1.id), 'removeCodeContext: gone from the list', ids2)
  const e3 = await thrown(() => sbx.runCode('1', { context: c2 }))
  ok(e3 !== null, 'runCode in a removed context raises', errName(e3))
  await sbx.removeCodeContext(c1.id)
})

await test('unsupported calls give a clear error', async () => {
  // betaPause works where the sandbox has a cgroup of its own (pause.mjs), else 501 saying why
  let paused = false
  const e3 = await thrown(async () => { paused = await Base.betaPause(sbx.sandboxId) })
  ok(paused ? !e3 : e3 && /501/.test(e3.message) && /cgroup/.test(e3.message), 'betaPause: paused, or 501 saying why', errName(e3))
  if (paused) await Base.connect(sbx.sandboxId)
  ok(await sbx.isRunning(), '... and the sandbox runs (resumed if paused)')
  // E2B's APIs cordon serve lacks: 501 "not supported" (never a 404 read as "not found")
  for (const [what, call] of [
    ['createSnapshot', () => sbx.createSnapshot()],
    ['listSnapshots', () => Base.listSnapshots().nextItems()],
    ['fork', () => sbx.fork()],
    ['updateNetwork', () => sbx.updateNetwork({ allowOut: [] })],
  ]) {
    if (typeof (what === 'listSnapshots' ? Base.listSnapshots : sbx[what]) !== 'function') { skip(`${what}: not in this SDK`); continue }
    const e = await thrown(call)
    ok(e && /501|not supported by cordon serve/.test(e.message), `${what}: throws, saying it is not supported`, errName(e))
  }
  for (const [method, path] of [['GET', '/snapshots'], ['GET', '/volumes'], ['POST', '/secrets'], ['POST', '/v3/templates'], ['DELETE', '/templates/x']]) {
    const r = await fetch(`${env.api}${path}`, { method, headers: { 'X-API-KEY': env.key } })
    const t = await r.text()
    ok(r.status === 501 && t.includes('not supported by cordon serve'), `${method} ${path}: 501 saying so`, [r.status, t])
    const r2 = await fetch(`${env.api}${path}`, { method })
    ok(r2.status === 401, `${method} ${path} without a key: 401`, r2.status)
    await r2.text()
  }
})

await test('Sandbox.list', async () => {
  const other = await make({ metadata: { purpose: 'listed' } })
  const got = await listed()
  const mine = got.filter(s => s.metadata.run === runid).map(s => s.sandboxId)
  ok(mine.includes(sbx.sandboxId) && mine.includes(other.sandboxId), 'shows the running ones', got)
  const o = got.find(s => s.sandboxId === other.sandboxId)
  eq(o && o.metadata, { suite: 'e2b', run: runid, purpose: 'listed' }, '... with their metadata')
  eq(o && o.state, 'running', '... running')
  const only = await listed({ metadata: { run: runid, purpose: 'listed' } })
  eq(only.map(s => s.sandboxId), [other.sandboxId], 'a metadata filter')
  await other.kill()
  ok(!(await listed()).some(s => s.sandboxId === other.sandboxId), 'a killed one is not listed')
})

await test('kill', async () => {
  const a = await make()
  const b = await make()
  eq(await Base.kill(a.sandboxId), true, 'Sandbox.kill(id): true')
  ok(!(await running(a)), 'isRunning false afterwards')
  const e = await thrown(() => a.commands.run('echo hi'))
  ok(e !== null, 'commands.run on a killed sandbox raises', errName(e))
  const e2 = await thrown(() => a.files.read('/etc/hostname'))
  ok(e2 !== null, 'files.read on it raises', errName(e2))
  const e3 = await thrown(() => Base.getInfo(a.sandboxId))
  ok(e3 instanceof NotFoundError, 'getInfo raises NotFoundError', errName(e3))
  eq(await Base.kill(a.sandboxId), false, 'a second kill: false')
  await b.kill()
  ok(!(await running(b)), 'sandbox.kill(): isRunning false')
  const e4 = await thrown(() => b.runCode('1'))
  ok(e4 !== null, 'runCode on it raises', errName(e4))
  const e5 = await thrown(() => Base.connect(b.sandboxId))
  ok(e5 !== null, 'Sandbox.connect to it raises', errName(e5))
  ok(await sbx.isRunning(), 'the others live on')
})

await test('timeouts', async () => {
  const t0 = Date.now()
  const s = await make({ timeoutMs: 2000 })
  if (Date.now() - t0 < 1500) ok(await running(s), 'created with timeoutMs 2000: running')
  else skip('created with timeoutMs 2000: running', `the create took ${Date.now() - t0} ms: it may be gone already`)
  const gone = await poll(async () => !(await running(s)) && !(await listed()).some(x => x.sandboxId === s.sandboxId), { deadline: 20_000, every: 200 })
  const at = Date.now() - t0
  ok(gone, 'gone after its timeout (isRunning, Sandbox.list)', at)
  ok(at >= 1900, '... not before', at)
  const s2 = await make({ timeoutMs: 300_000 })
  const t1 = Date.now()
  await s2.setTimeout(2000)
  const info = await s2.getInfo().catch(() => null)
  ok(!info || Math.abs(info.endAt.getTime() - t1 - 2000) < 3000, 'setTimeout moves endAt', info && info.endAt)
  ok(await poll(async () => !(await running(s2)), { deadline: 20_000, every: 200 }), 'setTimeout(2000): gone soon after', Date.now() - t1)
  const s3 = await make({ timeoutMs: 2000 })
  await s3.setTimeout(300_000)
  const i3 = await s3.getInfo()
  ok(i3.endAt.getTime() - Date.now() > 200_000, 'setTimeout extends it', i3.endAt)
  await s3.kill()
  const c = await Base.connect(sbx.sandboxId)
  eq((await c.commands.run('echo connected')).stdout, 'connected\n', 'Sandbox.connect to a running one')
}, { timeout: 90_000 })

await test('keys and tokens', async () => {
  const wrong = `e2b_${randomBytes(20).toString('hex')}`
  const e = await thrown(() => Base.create({ apiKey: wrong, timeoutMs: 60_000 }))
  ok(e instanceof AuthenticationError, 'Sandbox.create with a wrong API key: AuthenticationError', errName(e))
  const e2 = await thrown(() => Base.list({ apiKey: wrong }).nextItems())
  ok(e2 instanceof AuthenticationError, 'Sandbox.list with a wrong key: AuthenticationError', errName(e2))
  const e3 = await thrown(() => Base.kill(sbx.sandboxId, { apiKey: wrong }))
  ok(e3 instanceof AuthenticationError, 'Sandbox.kill with a wrong key: AuthenticationError', errName(e3))
  ok(await sbx.isRunning(), '... and the sandbox was not killed')
  const token = sbx.envdAccessToken
  ok(typeof token === 'string' && token.length >= 32, 'create gave an access token')
  const hdr = (port, tok) => ({ 'E2b-Sandbox-Id': sbx.sandboxId, 'E2b-Sandbox-Port': String(port), ...(tok ? { 'X-Access-Token': tok } : {}) })
  const rpc = (tok, hdrs = {}) => fetch(`${env.sandbox}/process.Process/List`, {
    method: 'POST', body: '{}', headers: { ...hdr(49983, tok), 'Content-Type': 'application/json', 'Connect-Protocol-Version': '1', ...hdrs } })
  const st = r => r.status
  ok([401, 403].includes(st(await rpc())), 'envd without X-Access-Token: refused')
  ok([401, 403].includes(st(await rpc('0'.repeat(token.length)))), 'envd with a wrong token: refused')
  eq(st(await rpc(token)), 200, 'envd with the token: 200')
  const files = tok => fetch(`${env.sandbox}/files?path=/etc/hostname`, { headers: hdr(49983, tok) })
  ok([401, 403].includes(st(await files())), '/files without a token: refused')
  const ctx = tok => fetch(`${env.sandbox}/contexts`, { headers: hdr(49999, tok) })
  ok([401, 403].includes(st(await ctx())), 'the code interpreter without a token: refused')
  const ex = await fetch(`${env.sandbox}/execute`, { method: 'POST', body: JSON.stringify({ code: 'print(1)' }), headers: { ...hdr(49999), 'Content-Type': 'application/json' } })
  ok([401, 403].includes(ex.status), '/execute without a token: refused', ex.status)
  const other = await make()
  const cross = await fetch(`${env.sandbox}/process.Process/List`, { method: 'POST', body: '{}',
    headers: { 'E2b-Sandbox-Id': other.sandboxId, 'E2b-Sandbox-Port': '49983', 'X-Access-Token': token, 'Content-Type': 'application/json' } })
  ok([401, 403].includes(cross.status), 'one sandbox\'s token is refused by another', cross.status)
  await other.kill()
})

await test('two sandboxes are isolated', async () => {
  const a = await make(), b = await make()
  const f = `/home/user/iso-${runid}`
  await a.files.write(f, 'in a')
  ok(!(await b.files.exists(f)), 'a file written in one is absent in the other')
  await a.commands.run(`echo in-a > /tmp/iso-${runid}`)
  ok((await thrown(() => b.commands.run(`cat /tmp/iso-${runid}`))) instanceof CommandExitError, '... /tmp too')
  const mark = `iso-${runid}`
  const h = await a.commands.run(`sleep 600; : ${mark}`, { background: true })
  const bl = await b.commands.list()
  ok(!bl.some(p => p.args.join(' ').includes(mark)), 'a process of one is not listed in the other', bl)
  ok(!(await b.commands.run('ps -eo args')).stdout.includes(mark), '... nor seen by ps in the other')
  if (!bl.some(p => p.pid === h.pid)) {
    eq(await b.commands.kill(h.pid), false, '... nor killable from the other (kill: false)')
    ok((await thrown(() => b.commands.sendStdin(h.pid, 'x'))) !== null, '... nor reachable by sendStdin')
    ok((await a.commands.list()).some(p => p.pid === h.pid), '... and it runs on')
  } else skip('kill from the other', `pid ${h.pid} exists in both`)
  const kb = await b.commands.run(`pkill -f '${mark}'; echo $?`).catch(e => e)
  ok((await a.commands.list()).some(p => p.pid === h.pid), 'pkill in the other does not reach it', kb && kb.stdout)
  await h.kill()
  // a server on 127.0.0.1:PORT in one is not reachable from the other (nor from the host)
  let port
  for (;;) {
    port = 20000 + Math.floor(Math.random() * 40000)
    const busy = await new Promise(r => { const s = net.connect(port, '127.0.0.1'); s.on('connect', () => { s.destroy(); r(true) }); s.on('error', () => r(false)) })
    if (!busy) break
  }
  const probe = `python3 -c 'import socket,sys; socket.create_connection(("127.0.0.1", ${port}), 3); print("reached")'`
  const srv = await a.commands.run(`python3 -m http.server ${port} --bind 127.0.0.1`, { background: true })
  ok(await poll(async () => (await a.commands.run(probe)).stdout === 'reached\n', { deadline: 60_000, every: 250 }), `a server on 127.0.0.1:${port} in one: reachable inside it`)
  const e = await thrown(() => b.commands.run(probe))
  ok(e instanceof CommandExitError && /ConnectionRefused|refused|timed out/i.test(e.stderr), '... not from the other', errName(e) + (e && e.stderr))
  const host = await new Promise(r => { const s = net.connect(port, '127.0.0.1'); s.on('connect', () => { s.destroy(); r('reached') }); s.on('error', x => r(x.code)) })
  eq(host, 'ECONNREFUSED', '... nor from the host')
  await srv.kill()
  await a.kill(); await b.kill()
})

await test('a command silent for 36 s', async () => {
  const r = await quiet
  eq([r && r.exitCode, r && r.stdout], [0, 'after the silence\n'], 'its output and its end reach the stream that waited', errName(r))
})

await test('clean up', async () => {
  for (const s of sandboxes) await s.kill().catch(() => {})
  ok(await poll(async () => (await listed()).length === 0), 'no sandbox of this run left', await listed())
})
done()
