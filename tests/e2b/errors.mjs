// tests/e2b/errors.mjs - errors that say why (docs/e2b.md "Files: errors"): a refused
// files.write (a read-only place, a directory, a parent that is a file, a full tmpfs) names the
// cause inside with envd's status, so the SDK's class, at 1 B, 1 MiB and 10 MiB, 20 times each
// (a refusal raced the body: it was "Broken pipe" at times); the other file calls' refusals;
// gzip uploads (`gzip: true`) and downloads, a gzip bomb (413 at --max-upload, decompressed)
// and a corrupt body (400). The server runs with --max-upload 128M (tests/e2b/run). TAP on stdout.
import { randomBytes } from 'node:crypto'
import { gzipSync } from 'node:zlib'
import { Sandbox, InvalidArgumentError, NotEnoughSpaceError, FileNotFoundError, SandboxError } from 'e2b'
import { test, ok, eq, done, note, thrown, env, runid } from './tap.mjs'

const MiB = 1 << 20
const sizes = [[1, '1 B'], [MiB, '1 MiB'], [10 * MiB, '10 MiB']]
const ROUNDS = 20

const sbx = await Sandbox.create({ timeoutMs: 900_000, metadata: { run: runid, suite: 'errors' } })
const h = { 'E2b-Sandbox-Id': sbx.sandboxId, 'E2b-Sandbox-Port': '49983', 'X-Access-Token': sbx.envdAccessToken }

// the error's class and message: each of ROUNDS writes (multipart and octet-stream in turn)
async function refused(path, size, cls, cause, rounds = ROUNDS) {
  const data = new Uint8Array(size).fill(120)
  const bad = []
  for (let i = 0; i < rounds; i++) {
    const e = await thrown(() => sbx.files.write(path, data, { useOctetStream: i % 2 === 1 }))
    if (!(e instanceof cls) || !cause.test(e.message))
      bad.push(`${i}: ${e ? `${e.name}: ${e.message}` : 'no error'}`)
  }
  return bad
}

const cases = [
  ['a read-only place (/usr)', () => '/usr/cordon-x', SandboxError, /403: .*Read-only file system/],
  ['a read-only place (/etc)', () => '/etc/cordon-x', SandboxError, /403: .*Read-only file system/],
  ['a directory as the file', () => '/home/user/adir', InvalidArgumentError, /Is a directory/],
  ['a path whose parent is a file', () => '/home/user/afile/x', InvalidArgumentError, /Not a directory/],
  ['a full tmpfs (/tmp)', () => '/tmp/more', NotEnoughSpaceError, /No space left on device/],
]

await test('refused writes say why', async () => {
  await sbx.files.makeDir('/home/user/adir')
  await sbx.files.write('/home/user/afile', 'a file')
  // /tmp is a tmpfs of --tmp-size (256M): filled to the last page, even 1 byte has no room
  const fill = await sbx.commands.run('cat /dev/zero > /tmp/fill 2>/dev/null; df -k /tmp | tail -1', { timeoutMs: 120_000 }).catch(e => e)
  ok(/ 100% /.test(fill.stdout || ''), '/tmp is full', fill)
  for (const [what, path, cls, cause] of cases) {
    for (const [size, name] of sizes) {
      const bad = await refused(path(), size, cls, cause)
      ok(bad.length === 0, `${what}, ${name}: ${ROUNDS} of ${ROUNDS} are ${cls.name} with ${cause}`, bad.slice(0, 4))
    }
  }
  // past SRV_DRAIN_MAX (64 MiB), within --max-upload: still read to its end, and answered
  const big = await refused('/usr/cordon-x', 80 * MiB, SandboxError, /403: .*Read-only file system/, 2)
  ok(big.length === 0, 'a read-only place, 80 MiB: the answer, not a reset (2 of 2)', big)
  const probe = await sbx.files.write('/home/user/after', 'still works')
  eq(probe.path, '/home/user/after', 'a write after them all succeeds')
}, { timeout: 600_000 })

await test('the other file calls say why', async () => {
  const check = async (name, fn, cls, cause) => {
    const e = await thrown(fn)
    ok(e instanceof cls && cause.test(e.message), name, e ? `${e.name}: ${e.message}` : 'no error')
  }
  await check('read of a missing file: FileNotFoundError', () => sbx.files.read('/home/user/none'), FileNotFoundError, /No such file/)
  await check('read of a directory: InvalidArgumentError', () => sbx.files.read('/home/user/adir'), InvalidArgumentError, /Is a directory/)
  await check('makeDir in a read-only place', () => sbx.files.makeDir('/usr/cordon-d'), SandboxError, /Read-only file system/)
  await check('makeDir below a file: InvalidArgumentError', () => sbx.files.makeDir('/home/user/afile/d'), InvalidArgumentError, /Not a directory/)
  await check('rename of a missing file: FileNotFoundError', () => sbx.files.rename('/home/user/none', '/home/user/n2'), FileNotFoundError, /No such file/)
  await check('remove of a missing file: FileNotFoundError', () => sbx.files.remove('/home/user/none'), FileNotFoundError, /No such file/)
  await check('remove in a read-only place', () => sbx.files.remove('/usr/bin/env'), SandboxError, /Read-only file system/)
  await check('list of a missing directory: FileNotFoundError', () => sbx.files.list('/home/user/none'), FileNotFoundError, /No such file/)
  await check('list of a file: InvalidArgumentError', () => sbx.files.list('/home/user/afile'), InvalidArgumentError, /Not a directory/)
  await check('getInfo of a missing file: FileNotFoundError', () => sbx.files.getInfo('/home/user/none'), FileNotFoundError, /No such file/)
  // /dev/shm's inodes (one a KiB of its size) all taken: a file or directory made there is ENOSPC
  const shm = await sbx.commands.run(`python3 -c "
import os
i = 0
while True:
    try: os.mkdir('/dev/shm/d%d' % i)
    except OSError as e: print(e.strerror); break
    i += 1"`, { timeoutMs: 300_000 })
  ok(/No space left/.test(shm.stdout), "/dev/shm's inodes are all taken", shm.stdout)
  await check('write with no inode left: NotEnoughSpaceError', () => sbx.files.write('/dev/shm/f', 'x'), NotEnoughSpaceError, /507: .*No space left on device|No space left on device/)
  await check('makeDir with no inode left: the cause, no RateLimitError', () => sbx.files.makeDir('/dev/shm/new'),
    SandboxError, /^(?![\s\S]*Rate limit)[\s\S]*No space left on device/)
}, { timeout: 300_000 })

await test('gzip uploads and downloads', async () => {
  for (const [size, name] of [[MiB, '1 MiB'], [20 * MiB, '20 MiB']]) {
    // half random, half text: something to compress, something not
    const data = Buffer.concat([randomBytes(size / 2), Buffer.from('cordon '.repeat(size)).subarray(0, size / 2)])
    const path = `/home/user/gz-${size}`
    const w = await thrown(() => sbx.files.write(path, data, { gzip: true }))
    ok(!w, `write ${name} with gzip: true`, w && `${w.name}: ${w.message}`)
    const plain = await sbx.files.read(path, { format: 'bytes' }).catch(e => e)
    ok(plain instanceof Uint8Array && Buffer.compare(Buffer.from(plain), data) === 0, `${name}: the file inside is the data`, plain && plain.length)
    const gz = await sbx.files.read(path, { format: 'bytes', gzip: true }).catch(e => e)
    ok(gz instanceof Uint8Array && Buffer.compare(Buffer.from(gz), data) === 0, `${name}: read back with gzip: true`, gz && gz.length)
  }
  const r = await fetch(`${env.sandbox}/files?path=/home/user/gz-${MiB}`, { headers: { ...h, 'Accept-Encoding': 'gzip' } })
  eq(r.headers.get('content-encoding'), 'gzip', 'a download asked with Accept-Encoding: gzip is gzip-encoded')
  await r.arrayBuffer()
  for (const [ae, want] of [['identity', null], ['gzip;q=0', null], ['deflate, gzip;q=0.5', 'gzip'], ['GZIP', 'gzip'], ['gzipx', null], ['*', null]]) {
    const r2 = await fetch(`${env.sandbox}/files?path=/home/user/gz-${MiB}`, { headers: { ...h, 'Accept-Encoding': ae } })
    const got = r2.headers.get('content-encoding')
    ok(got === want && (await r2.arrayBuffer()).byteLength === MiB, `asked with ${ae}: ${want || 'not encoded'}, all of it`, got)
  }
}, { timeout: 300_000 })

await test('gzip bodies by hand', async () => {
  const post = (path, body) => fetch(`${env.sandbox}/files?path=${path}`, { method: 'POST', body,
    headers: { ...h, 'Content-Type': 'application/octet-stream', 'Content-Encoding': 'gzip' } })
  // 192 MiB of zeros in 190 KiB: past --max-upload (128M) once decompressed; into the tmpfs
  // (the bytes before the refusal are written)
  await sbx.commands.run('rm -f /tmp/fill')
  const bomb = gzipSync(Buffer.alloc(192 * MiB))
  note(`the bomb: ${bomb.length} bytes`)
  const b = await post('/tmp/bomb', bomb)
  const bt = await b.text()
  ok(b.status === 413 && /max-upload/.test(bt), 'a gzip bomb: 413 at --max-upload', { status: b.status, bt })
  const good = gzipSync(Buffer.from('x'.repeat(100_000)))
  const corrupt = Buffer.from(good)
  corrupt.fill(0x55, 20, 60)
  const c = await post('/home/user/corrupt', corrupt)
  const ct = await c.text()
  ok(c.status === 400 && /gzip/.test(ct), 'corrupt gzip: 400', { status: c.status, ct })
  const t = await post('/home/user/truncated', good.subarray(0, good.length - 10))
  const tt = await t.text()
  ok(t.status === 400 && /gzip/.test(tt), 'truncated gzip: 400', { status: t.status, tt })
  const n = await post('/home/user/notgzip', Buffer.from('plain text, not gzip'))
  ok(n.status === 400, 'a body that is not gzip: 400', n.status)
  await n.text()
  const two = await post('/home/user/two', Buffer.concat([gzipSync('one '), gzipSync('two')]))
  await two.text()
  eq(await sbx.files.read('/home/user/two'), 'one two', 'two gzip members: both, in order')
  await sbx.commands.run('rm -f /tmp/bomb')
  // a multipart body gzip-encoded as a whole (envd takes it; the SDK sends gzip as octet-stream)
  const bd = `cordon${runid}`
  const mp = gzipSync(`--${bd}\r\nContent-Disposition: form-data; name="file"; filename="/home/user/mp-gz"\r\n` +
    `Content-Type: application/octet-stream\r\n\r\nmultipart, gzip\r\n--${bd}--\r\n`)
  const m = await fetch(`${env.sandbox}/files`, { method: 'POST', body: mp,
    headers: { ...h, 'Content-Type': `multipart/form-data; boundary=${bd}`, 'Content-Encoding': 'gzip' } })
  const mt = await m.text()
  ok(m.status === 200 && await sbx.files.read('/home/user/mp-gz') === 'multipart, gzip', 'a gzip multipart body: its file written', { status: m.status, mt })
  const br = await fetch(`${env.sandbox}/files?path=/home/user/br`, { method: 'POST', body: 'x',
    headers: { ...h, 'Content-Type': 'application/octet-stream', 'Content-Encoding': 'br' } })
  const brt = await br.text()
  ok(br.status === 415 && /br/.test(brt), 'Content-Encoding br: 415 naming it', { status: br.status, brt })
}, { timeout: 300_000 })

await sbx.kill().catch(() => {})
done()
