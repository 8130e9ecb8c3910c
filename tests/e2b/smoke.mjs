// tests/e2b/smoke.mjs - the E2B SDKs against `cordon serve`, as TAP. The server's URL and key
// come from E2B_API_URL, E2B_SANDBOX_URL and E2B_API_KEY (tests/e2b/run sets them).
import { Sandbox as Base, CommandExitError } from 'e2b'
import { Sandbox } from '@e2b/code-interpreter'
import { arm, hostileContext, hostileEnvs } from './hostile.mjs'

let n = 0, failed = 0
function ok(cond, name, extra) {
  n++
  if (!cond) failed++
  console.log(`${cond ? 'ok' : 'not ok'} ${n} - ${name}`)
  if (!cond && extra !== undefined) console.log(`  # ${JSON.stringify(extra)}`)
}
async function check(name, fn) {
  try { await fn() } catch (e) { ok(false, `${name}: threw ${e && e.name}: ${e && e.message}`) }
}

const sbx = await Sandbox.create({ timeoutMs: 120_000, envs: { FROM_CREATE: 'yes', ...hostileEnvs }, metadata: { suite: 'smoke' } })
ok(/^[0-9a-z]+$/.test(sbx.sandboxId), 'create gives an id of [0-9a-z]')

await check('commands.run echo', async () => {
  const r = await sbx.commands.run('echo hi')
  ok(r.exitCode === 0 && r.stdout === 'hi\n', 'commands.run(echo hi)', r)
})
await check('stderr and exit code', async () => {
  try {
    await sbx.commands.run('echo oops >&2; exit 3')
    ok(false, 'a failing command throws')
  } catch (e) {
    ok(e instanceof CommandExitError && e.exitCode === 3 && e.stderr === 'oops\n', 'exit 3 and stderr', { code: e.exitCode, stderr: e.stderr })
  }
})
await check('envs', async () => {
  const r = await sbx.commands.run('echo $FROM_CREATE $FROM_RUN', { envs: { FROM_RUN: 'too' } })
  ok(r.stdout === 'yes too\n', 'sandbox envs and per-command envs', r.stdout)
})
await check('cwd', async () => {
  const r = await sbx.commands.run('pwd')
  ok(r.stdout === '/home/user\n', 'the default directory is /home/user', r.stdout)
  await sbx.files.makeDir('/home/user/sub')
  const r2 = await sbx.commands.run('pwd', { cwd: '/home/user/sub' })
  ok(r2.stdout === '/home/user/sub\n', 'cwd', r2.stdout)
})
await check('streaming and volume', async () => {
  // each line only once the one before it came (not a pause, which a loaded machine stretches)
  const seen = []
  const h = await sbx.commands.run('for i in 1 2 3; do echo line$i; read go; done', { background: true, stdin: true, onStdout: d => seen.push(d) })
  for (const i of [1, 2, 3]) {
    for (let t = 0; t < 300 && !seen.join('').includes(`line${i}`); t++) await new Promise(r => setTimeout(r, 100))
    await sbx.commands.sendStdin(h.pid, 'go\n')
  }
  await h.wait()
  ok(seen.length === 3 && seen.join('') === 'line1\nline2\nline3\n', 'onStdout streams', seen)
  const big = await sbx.commands.run('head -c 20000000 /dev/zero | tr "\\0" x')
  ok(big.stdout.length === 20000000, '20 MB of output, none lost', big.stdout.length)
})
await check('command timeout', async () => {
  try {
    await sbx.commands.run('sleep 30', { timeoutMs: 1000 })
    ok(false, 'timeoutMs ends a long command')
  } catch (e) {
    ok(e.name === 'TimeoutError', 'timeoutMs ends a long command with a TimeoutError', { name: e.name, message: e.message })
  }
  const list = await sbx.commands.list()
  ok(!list.some(p => p.config && p.config.args && p.config.args.join(' ').includes('sleep 30')), '... and the command is gone', list)
})
await check('pty', async () => {
  let out = ''
  const dec = new TextDecoder()
  const h = await sbx.pty.create({ cols: 80, rows: 24, onData: d => { out += dec.decode(d) } })
  await sbx.pty.sendInput(h.pid, new TextEncoder().encode('echo pty-$((6 * 7)); test -t 0 && test -t 1 && echo is-a-tty\n'))
  for (let i = 0; i < 50 && !out.includes('pty-42'); i++) await new Promise(r => setTimeout(r, 100))
  ok(out.includes('pty-42'), 'a pty runs a shell', out)
  ok(/\nis-a-tty/.test(out), '... on a terminal', out)
  await sbx.pty.resize(h.pid, { cols: 100, rows: 30 })
  await sbx.pty.sendInput(h.pid, new TextEncoder().encode('stty size; exit\n'))
  const r = await h.wait()
  ok(out.includes('30 100'), 'resize', out)
  ok(r.exitCode === 0, 'exit ends it', r)
})
await check('background, list, stdin, kill', async () => {
  const h = await sbx.commands.run('cat', { background: true, stdin: true })
  const list = await sbx.commands.list()
  ok(list.some(p => p.pid === h.pid), 'list shows the background process', list)
  await sbx.commands.sendStdin(h.pid, 'typed\n')
  for (let i = 0; i < 300 && h.stdout !== 'typed\n'; i++) await new Promise(r => setTimeout(r, 100))
  ok(h.stdout === 'typed\n', 'sendStdin reaches it', h.stdout)
  ok(await sbx.commands.kill(h.pid), 'kill')
  try { await h.wait() } catch (e) { }
  const after = await sbx.commands.list()
  ok(!after.some(p => p.pid === h.pid), 'gone after kill')
})
// A process is off the list before its end is told (the end event, the stream's end): a harness
// that waits, then lists, never sees a ghost. The server once told the end first (1 run in 666
// saw the killed pid listed on a loaded machine).
await check('wait, then list: never a ghost', async () => {
  const ghosts = []
  for (let i = 0; i < 100; i++) {
    const h = await sbx.commands.run('sleep 60', { background: true })
    await sbx.commands.kill(h.pid)
    try { await h.wait() } catch (e) { }
    if ((await sbx.commands.list()).some(p => p.pid === h.pid)) ghosts.push(`killed ${h.pid}`)
    const r = await sbx.commands.run('echo $$')
    const pid = Number(r.stdout.trim())
    if ((await sbx.commands.list()).some(p => p.pid === pid)) ghosts.push(`exited ${pid}`)
  }
  ok(ghosts.length === 0, 'kill, wait, list and run, list: 100 times each, no ended process listed', ghosts)
})
await check('connect to a process', async () => {
  const h = await sbx.commands.run('for i in 1 2 3; do echo $i; sleep 0.3; done', { background: true })
  const c = await sbx.commands.connect(h.pid)
  const r = await c.wait()
  ok(r.exitCode === 0, 'connect and wait', r)
})
await check('files', async () => {
  await sbx.files.write('/home/user/dir/a.txt', 'hello file')
  ok(await sbx.files.read('/home/user/dir/a.txt') === 'hello file', 'files.write then read')
  const ls = await sbx.files.list('/home/user/dir')
  ok(ls.length === 1 && ls[0].name === 'a.txt' && ls[0].type === 'file', 'files.list', ls)
  ok(await sbx.files.exists('/home/user/dir/a.txt'), 'exists')
  ok(!(await sbx.files.exists('/home/user/nope')), 'not exists')
  ok(await sbx.files.makeDir('/home/user/d2') === true, 'makeDir new')
  ok(await sbx.files.makeDir('/home/user/d2') === false, 'makeDir existing')
  await sbx.files.rename('/home/user/dir/a.txt', '/home/user/d2/b.txt')
  ok(await sbx.files.read('/home/user/d2/b.txt') === 'hello file', 'rename')
  await sbx.files.remove('/home/user/d2')
  ok(!(await sbx.files.exists('/home/user/d2')), 'remove')
  const info = await sbx.files.write([{ path: '/home/user/m1', data: 'one' }, { path: '/home/user/m2', data: 'two' }])
  ok(info.length === 2, 'writeFiles', info)
  const bytes = new Uint8Array(300000).map((_, i) => i % 256)
  await sbx.files.write('/home/user/bin', bytes.buffer)
  const back = await sbx.files.read('/home/user/bin', { format: 'bytes' })
  ok(back.length === bytes.length && back.every((b, i) => b === bytes[i]), 'binary round trip')
  await sbx.files.write('/home/user/octet/o.txt', 'as octets', { useOctetStream: true })
  ok(await sbx.files.read('/home/user/octet/o.txt') === 'as octets', 'an octet-stream upload')
  const stream = new ReadableStream({ start(c) { c.enqueue(new TextEncoder().encode('streamed ')); c.enqueue(new TextEncoder().encode('in')); c.close() } })
  await sbx.files.write('/home/user/streamed.txt', stream)
  ok(await sbx.files.read('/home/user/streamed.txt') === 'streamed in', 'a streamed upload')
  await sbx.files.write('/home/user/empty.txt', '')
  ok(await sbx.files.read('/home/user/empty.txt') === '', 'an empty file')
  const st = await sbx.files.getInfo('/home/user/streamed.txt')
  ok(st.type === 'file' && st.size === 11 && st.path === '/home/user/streamed.txt' && st.modifiedTime instanceof Date, 'getInfo', st)
  const deep = await sbx.files.list('/home/user', { depth: 2 })
  ok(deep.some(e => e.path === '/home/user/octet/o.txt'), 'list with depth 2', deep.map(e => e.path))
})
await check('closeStdin', async () => {
  const h = await sbx.commands.run('wc -c', { background: true, stdin: true })
  await sbx.commands.sendStdin(h.pid, 'abc')
  await sbx.commands.closeStdin(h.pid)
  const r = await h.wait()
  ok(r.stdout.trim() === '3', 'closeStdin ends the input', r.stdout)
})
await check('signed URLs', async () => {
  const up = await sbx.uploadUrl('/home/user/signed.txt')
  ok(/signature=v1_/.test(up), 'uploadUrl is signed', up)
  const form = new FormData()
  form.append('file', new Blob(['via url']), 'signed.txt')
  const res = await fetch(up, { method: 'POST', body: form })
  ok(res.status === 200, 'an upload through the signed URL', res.status)
  const down = await sbx.downloadUrl('/home/user/signed.txt')
  const got = await fetch(down)
  ok(got.status === 200 && await got.text() === 'via url', 'a download through the signed URL')
  // a character other than the one there (replacing it with a fixed 'A' left one signature in
  // 64 unchanged: a test that passed the right URL and expected a refusal)
  const bad = await fetch(down.replace(/signature=v1_(.)/, (_, c) => 'signature=v1_' + (c === 'A' ? 'B' : 'A')))
  ok(bad.status === 401 || bad.status === 404, 'a wrong signature is refused', bad.status)
  const exp = await sbx.downloadUrl('/home/user/signed.txt', { useSignatureExpiration: -10 })
  ok((await fetch(exp)).status !== 200, 'an expired signature is refused')
})
await check('runCode', async () => {
  const e = await sbx.runCode('print(2 + 2)')
  ok(JSON.stringify(e.logs.stdout) === JSON.stringify(['4\n']), "runCode('print(2 + 2)')", e.logs)
  await sbx.runCode('x = 41')
  const e2 = await sbx.runCode('x + 1')
  ok(e2.text === '42', 'state kept, last expression as text', e2.text)
  const e3 = await sbx.runCode('1/0')
  ok(e3.error && e3.error.name === 'ZeroDivisionError', 'errors', e3.error)
  const ctx = await sbx.createCodeContext()
  await sbx.runCode('y = 5', { context: ctx })
  const e4 = await sbx.runCode('y', { context: ctx })
  ok(e4.text === '5', 'a context of its own', e4.text)
  const ctxs = await sbx.listCodeContexts()
  ok(ctxs.some(c => c.id === ctx.id), 'listCodeContexts', ctxs)
  await sbx.restartCodeContext(ctx)
  const e5 = await sbx.runCode('y', { context: ctx })
  ok(e5.error && e5.error.name === 'NameError', 'restart forgets', e5.error)
  const busy = sbx.runCode('while True: pass', { context: ctx }).then(e => e, e => e)
  await new Promise(r => setTimeout(r, 500))
  const t0 = Date.now()
  await sbx.restartCodeContext(ctx)
  ok(Date.now() - t0 < 10000, 'restart stops a busy kernel', Date.now() - t0)
  const stuck = await busy
  ok(stuck.error !== undefined || stuck instanceof Error, 'the busy execution ends with an error', stuck && (stuck.error || stuck.message))
  const e6 = await sbx.runCode('6 * 7', { context: ctx })
  ok(e6.text === '42', 'the restarted context runs', e6.text)
  const e7 = await sbx.runCode('import time\ntime.sleep(30)', { timeoutMs: 1000 }).then(e => e, e => e)
  ok(e7 instanceof Error && e7.name === 'TimeoutError', 'runCode timeoutMs', e7 && e7.name)
  const e8 = await sbx.runCode('print("after")')
  ok(JSON.stringify(e8.logs.stdout) === '["after\\n"]', 'the default context runs after a timed out execution', e8.logs)
  // a bridge of the tenant's own writes junk into the server's pipe
  await arm(sbx)
  const evil = await hostileContext(sbx)
  const junk = await sbx.runCode([
    'import os',
    'for line in [b"not json\\n", b"{\\"type\\":\\"stdout\\",\\"text\\":\\"x\\"} trailing\\n", b"[1,2]\\n", b"{\\"type\\":7}\\n", b"y" * 100000 + b"\\n"]:',
    '    os.write(ev_fd, line)',
    'print("after junk")'].join('\n'), { context: evil }).then(e => e, e => e)
  await sbx.removeCodeContext(evil)
  ok(!(junk instanceof Error) && junk.logs.stdout.join('').includes('after junk'), 'junk written to the kernel\'s pipes is not passed on', junk instanceof Error ? junk.message : junk.logs)
  await sbx.removeCodeContext(ctx)
  ok(!(await sbx.listCodeContexts()).some(c => c.id === ctx.id), 'removeCodeContext')
})
await check('info, list, timeout', async () => {
  const info = await sbx.getInfo()
  ok(info.sandboxId === sbx.sandboxId && info.metadata.suite === 'smoke', 'getInfo', info)
  await sbx.setTimeout(60_000)
  const page = await Base.list({ query: { metadata: { suite: 'smoke' } } }).nextItems()
  ok(page.some(s => s.sandboxId === sbx.sandboxId), 'list with metadata', page)
  ok(await sbx.isRunning(), 'isRunning')
  const again = await Sandbox.connect(sbx.sandboxId)
  ok((await again.commands.run('echo again')).stdout === 'again\n', 'connect')
})
await check('concurrency', async () => {
  const runs = await Promise.all(Array.from({ length: 20 }, (_, i) => sbx.commands.run(`echo ${i}; sleep 0.${i % 5}`)))
  ok(runs.every((r, i) => r.stdout === `${i}\n`), '20 commands at once in one sandbox')
  const others = await Promise.all([1, 2, 3].map(() => Sandbox.create({ timeoutMs: 60_000 })))
  const outs = await Promise.all(others.map(o => o.commands.run('echo $E2B_SANDBOX_ID')))
  ok(outs.every((r, i) => r.stdout === `${others[i].sandboxId}\n`), 'three more sandboxes at once, each its own', outs.map(r => r.stdout))
  const codes = await Promise.all(others.map((o, i) => o.runCode(`${i} * 10`)))
  ok(codes.every((e, i) => e.text === String(i * 10)), 'runCode in each', codes.map(e => e.text))
  await Promise.all(others.map(o => o.kill()))
})
await check('kill', async () => {
  await sbx.kill()
  ok(!(await sbx.isRunning()), 'not running after kill')
})
console.log(`1..${n}`)
process.exit(failed ? 1 : 0)
