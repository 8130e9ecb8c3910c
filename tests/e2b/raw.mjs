// tests/e2b/raw.mjs - malformed and hostile input to `cordon serve` through raw HTTP (fetch and
// node:http): bad JSON, unknown ids, bodies over the limit, clients that go away mid-stream. The
// server must answer each with the right status and a JSON error, and live on. TAP on stdout.
import http from 'node:http'
import { Sandbox } from 'e2b'
import { test, ok, eq, done, poll, thrown, env, runid, hostProcs } from './tap.mjs'

const api = (path, init = {}) => fetch(`${env.api}${path}`, { ...init, headers: { 'X-API-Key': env.key, 'Content-Type': 'application/json', ...(init.headers || {}) } })
async function jsonError(res, status, name) {
  const text = await res.text()
  let body = null
  try { body = JSON.parse(text) } catch { }
  ok(res.status === status, `${name}: ${status}`, { status: res.status, text })
  ok(/json/.test(res.headers.get('content-type') || '') && body && typeof body === 'object' && typeof body.message === 'string',
    `${name}: a JSON error with a message`, text)
}
const alive = async name => {
  const r = await api('/sandboxes')
  ok(r.status === 200 && Array.isArray(await r.json()), `${name}: the server lives on (GET /sandboxes 200)`)
}

// a request whose body the server may refuse before reading it: resolve with the response, ignore
// the write errors (EPIPE, ECONNRESET) that refusing early may cause
function rawPost(path, headers, body) {
  return new Promise((resolve, reject) => {
    const u = new URL(env.api)
    const req = http.request({ host: u.hostname, port: u.port, path, method: 'POST', headers })
    let answered = false
    req.on('response', res => {
      answered = true
      let text = ''
      res.on('data', d => { text += d })
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, text }))
      res.on('error', () => resolve({ status: res.statusCode, headers: res.headers, text }))
    })
    req.on('error', e => { if (!answered) reject(e) })
    req.setTimeout(30_000, () => { if (!answered) { answered = true; req.destroy(); resolve({ status: 'no answer within 30 s' }) } })
    if (Array.isArray(body)) { for (const b of body) req.write(b) } else req.write(body)
    req.end()
  })
}

await test('malformed JSON', async () => {
  await jsonError(await api('/sandboxes', { method: 'POST', body: '{"templateID": "base",' }), 400, 'create with truncated JSON')
  await jsonError(await api('/sandboxes', { method: 'POST', body: 'not json at all' }), 400, 'create with text')
  await jsonError(await api('/sandboxes', { method: 'POST', body: '[1, 2]' }), 400, 'create with an array')
  await jsonError(await api('/sandboxes', { method: 'POST', body: '{"timeout": "long"}' }), 400, 'a timeout that is a string')
  await jsonError(await api('/sandboxes', { method: 'POST', body: '{"metadata": {"a": {"b": 1}}}' }), 400, 'metadata not of strings')
  await jsonError(await api('/sandboxes', { method: 'POST', body: '{"envVars": ["A=1"]}' }), 400, 'envVars an array')
  await jsonError(await api('/sandboxes', { method: 'POST', body: '{"a": "\\ud800 \u0000 broken' }), 400, 'an unterminated string')
  await alive('after the malformed bodies')
})

await test('unknown ids', async () => {
  const id = 'zzzzzzzzzzzzzzzzzzzz'
  await jsonError(await api(`/sandboxes/${id}`), 404, 'GET an unknown sandbox')
  await jsonError(await api(`/sandboxes/${id}`, { method: 'DELETE' }), 404, 'DELETE an unknown sandbox')
  await jsonError(await api(`/sandboxes/${id}/timeout`, { method: 'POST', body: '{"timeout": 10}' }), 404, 'setTimeout of an unknown sandbox')
  await jsonError(await api(`/sandboxes/${id}/connect`, { method: 'POST', body: '{"timeout": 10}' }), 404, 'connect to an unknown sandbox')
  const weird = await api(`/sandboxes/${encodeURIComponent('../../etc/passwd')}`)
  eq(weird.status, 404, 'an id with ../: 404')
  const long = await api(`/sandboxes/${'a'.repeat(5000)}`)
  ok([404, 414, 431].includes(long.status), 'a 5000-character id: 404 or 414', long.status)
  const dp = await fetch(`${env.sandbox}/process.Process/List`, { method: 'POST', body: '{}',
    headers: { 'E2b-Sandbox-Id': id, 'E2b-Sandbox-Port': '49983', 'X-Access-Token': 'x', 'Content-Type': 'application/json' } })
  ok([404, 502].includes(dp.status), 'the data plane of an unknown sandbox: 404 or 502', dp.status)
  await alive('after the unknown ids')
})

await test('bodies over the limit', async () => {
  const big = '{"metadata": {"k": "' + 'x'.repeat(2 * 1024 * 1024) + '"}}'
  // as a client should send a large body: Expect: 100-continue, the body only once the server says so
  const r = await new Promise((resolve, reject) => {
    const u = new URL(env.api)
    const req = http.request({ host: u.hostname, port: u.port, path: '/sandboxes', method: 'POST',
      headers: { 'X-API-Key': env.key, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(big), Expect: '100-continue' } })
    req.on('continue', () => req.end(big))
    req.on('response', res => { let text = ''; res.on('data', d => { text += d }); res.on('end', () => { resolve({ status: res.statusCode, text }) }) })
    req.on('error', reject)
    req.setTimeout(30_000, () => { req.destroy(); resolve({ status: 'no answer within 30 s' }) })
  })
  eq(r.status, 413, 'a 2 MB JSON body (Expect: 100-continue): 413 before the body is sent')
  // a client that sends the headers, then the body: the server reads and drops the body, and
  // answers 413 only at its end, closing then (before, it answered at the headers and closed on a
  // client still sending, whose reset could discard the answer)
  const early = await new Promise(resolve => {
    const u = new URL(env.api)
    const req = http.request({ host: u.hostname, port: u.port, path: '/sandboxes', method: 'POST', agent: false,
      headers: { 'X-API-Key': env.key, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(big) } })
    let before = true, settled = false
    const finish = v => { if (!settled) { settled = true; resolve(v) } }
    req.on('response', res => {
      const got = { before, status: res.statusCode, connection: res.headers.connection }
      res.resume()
      res.on('end', () => finish(got))
    })
    req.on('error', e => finish({ before, status: e.code }))
    req.setTimeout(30_000, () => { req.destroy(); finish({ status: 'no answer within 30 s' }) })
    req.flushHeaders()
    setTimeout(() => { before = false; req.end(big) }, 300)
  })
  eq(early, { before: false, status: 413, connection: 'close' },
    'a 2 MB JSON body sent after its headers: 413 after the body, and the connection closed')
  // the same sent at once, 100 times (about 1 in 100 got EPIPE or ECONNRESET before)
  const seen = {}
  for (let i = 0; i < 100; i++) {
    const r1 = await rawPost('/sandboxes', { 'X-API-Key': env.key, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(big) }, big).catch(e => ({ status: e.code }))
    seen[r1.status] = (seen[r1.status] || 0) + 1
  }
  eq(seen, { 413: 100 }, 'a 2 MB JSON body sent at once, 100 times: 413 every time')
  const chunks = Array.from({ length: 64 }, () => 'y'.repeat(64 * 1024))
  const r2 = await rawPost('/sandboxes', { 'X-API-Key': env.key, 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' }, ['{"metadata": {"k": "', ...chunks, '"}}'])
  eq(r2.status, 413, 'a 4 MB chunked body: 413')
  const r3 = await rawPost('/sandboxes', { 'X-API-Key': env.key, 'Content-Type': 'application/json', 'Content-Length': String(2 ** 40) }, '{}')
  eq(r3.status, 413, 'a declared length of 1 TiB: 413 before the body')
  await alive('after the large bodies')
})

await test('a client that goes away mid-stream', async () => {
  const sbx = await Sandbox.create({ timeoutMs: 120_000, metadata: { run: runid, suite: 'raw' } })
  try {
    const mark = `abort-${runid}`
    const msg = Buffer.from(JSON.stringify({ process: { cmd: '/bin/bash', args: ['-l', '-c', `while :; do echo tick; sleep 0.05; done; : ${mark}`] } }))
    const env5 = Buffer.concat([Buffer.from([0, 0, 0, 0, 0]), msg]); env5.writeUInt32BE(msg.length, 1)
    for (let i = 0; i < 5; i++) {
      const ac = new AbortController()
      const res = await fetch(`${env.sandbox}/process.Process/Start`, { method: 'POST', body: env5, signal: ac.signal,
        headers: { 'E2b-Sandbox-Id': sbx.sandboxId, 'E2b-Sandbox-Port': '49983', 'X-Access-Token': sbx.envdAccessToken,
          'Content-Type': 'application/connect+json', 'Connect-Protocol-Version': '1' } })
      if (i === 0) eq(res.status, 200, 'a Start stream: 200')
      const reader = res.body.getReader()
      let got = ''
      while (!got.includes('tick') && !got.includes('dGljaw')) {   // base64 of "tick"
        const { value, done: end } = await reader.read()
        if (end) break
        got += Buffer.from(value).toString()
      }
      if (i === 0) ok(got.includes('dGljaw'), 'the stream brings the output (base64)', got.slice(0, 200))
      ac.abort()
      await reader.cancel().catch(() => {})
    }
    await alive('after 5 streams cut by the client')
    eq((await sbx.commands.run('echo still')).stdout, 'still\n', 'the sandbox answers the next command')
    // the commands whose streams were cut run on (background semantics); they can be killed
    const mine = (await sbx.commands.list()).filter(p => p.args.join(' ').includes(mark))
    eq(mine.length, 5, 'the 5 commands run on', mine.length)
    for (const p of mine) await sbx.commands.kill(p.pid)
    ok(await poll(() => hostProcs(mark).length === 0), 'and are killed', hostProcs(mark))
    // an execution cut by the client: the next one runs
    const ac = new AbortController()
    const res = await fetch(`${env.sandbox}/execute`, { method: 'POST', signal: ac.signal,
      body: JSON.stringify({ code: 'import time\nfor i in range(1000):\n    print(i, flush=True)\n    time.sleep(0.05)' }),
      headers: { 'E2b-Sandbox-Id': sbx.sandboxId, 'E2b-Sandbox-Port': '49999', 'X-Access-Token': sbx.envdAccessToken,
        'E2B-Traffic-Access-Token': sbx.envdAccessToken, 'Content-Type': 'application/json' } })
    const reader = res.body.getReader()
    let got = ''
    while (!got.includes('"stdout"')) { const { value, done: end } = await reader.read(); if (end) break; got += Buffer.from(value).toString() }
    ok(got.includes('"stdout"'), '/execute streams', got.slice(0, 200))
    ac.abort()
    await reader.cancel().catch(() => {})
    await alive('after an /execute cut by the client')
  } finally {
    await sbx.kill().catch(() => {})
  }
})

await test('bad requests on the data plane', async () => {
  const sbx = await Sandbox.create({ timeoutMs: 120_000, metadata: { run: runid, suite: 'raw' } })
  try {
    const h = { 'E2b-Sandbox-Id': sbx.sandboxId, 'E2b-Sandbox-Port': '49983', 'X-Access-Token': sbx.envdAccessToken }
    const r = await fetch(`${env.sandbox}/filesystem.Filesystem/Stat`, { method: 'POST', body: '{"path": ', headers: { ...h, 'Content-Type': 'application/json' } })
    const body = await r.json().catch(() => null)
    ok(r.status === 400 && body && body.code === 'invalid_argument', 'a unary RPC with bad JSON: 400 invalid_argument', { status: r.status, body })
    const r2 = await fetch(`${env.sandbox}/filesystem.Filesystem/NoSuchCall`, { method: 'POST', body: '{}', headers: { ...h, 'Content-Type': 'application/json' } })
    ok([404, 501].includes(r2.status), 'an unknown RPC: 404 or 501', r2.status)
    const r3 = await fetch(`${env.sandbox}/files?path=/home/user/x`, { method: 'POST', body: 'raw', headers: { ...h, 'Content-Type': 'text/plain' } })
    ok(r3.status >= 400 && r3.status < 500, 'an upload of an unknown content type: 4xx', r3.status)
    const r4 = await fetch(`${env.sandbox}/execute`, { method: 'POST', body: '{"code": 5}',
      headers: { ...h, 'E2b-Sandbox-Port': '49999', 'Content-Type': 'application/json' } })
    eq(r4.status, 400, '/execute with code a number: 400')
    await alive('after the bad data-plane requests')
  } finally {
    await sbx.kill().catch(() => {})
  }
})
// --max-upload counts bytes: empty parts cost nearly none, yet each was a file made inside and an
// entry of the answer (8,000 of them: 8,000 files, 36 MB of server memory). Parts and their names
// are counted too.
await test('multipart uploads: parts and names are bounded', async () => {
  const sbx = await Sandbox.create({ timeoutMs: 120_000, metadata: { run: runid, suite: 'raw' } })
  try {
    const h = { 'E2b-Sandbox-Id': sbx.sandboxId, 'E2b-Sandbox-Port': '49983', 'X-Access-Token': sbx.envdAccessToken }
    const multipart = names => {
      const b = `cordon${runid}`
      const parts = names.map(n => `--${b}\r\nContent-Disposition: form-data; name="file"; filename="${n}"\r\nContent-Type: application/octet-stream\r\n\r\n\r\n`)
      return { headers: { ...h, 'Content-Type': `multipart/form-data; boundary=${b}` }, body: parts.join('') + `--${b}--\r\n` }
    }
    const count = async dir => Number((await sbx.commands.run(`find ${dir} -type f 2>/dev/null | wc -l`)).stdout.trim())
    const empty = multipart(Array.from({ length: 8000 }, (_, i) => `/home/user/mp/f${i}`))
    const r = await rawPost('/files', empty.headers, empty.body)
    ok(r.status === 413 && /parts/.test(r.text), '8,000 empty parts: 413, saying why', { status: r.status, text: r.text })
    const made = await count('/home/user/mp')
    ok(made <= 1000, 'not 8,000 files: at most 1,000 made before the refusal', made)
    // names: 70 valid paths of 3,800 bytes each pass 256 KiB of names
    const deep = '/home/user/deep/' + Array.from({ length: 18 }, () => 'e'.repeat(210)).join('/')
    const long = multipart(Array.from({ length: 70 }, (_, i) => `${deep}/n${i}`))
    const r2 = await rawPost('/files', long.headers, long.body)
    ok(r2.status === 413 && /names/.test(r2.text), '70 parts with names of 3,800 bytes: 413, saying why', { status: r2.status, text: r2.text, len: deep.length })
    const few = multipart(['/home/user/ok/a', '/home/user/ok/b'])
    const r3 = await rawPost('/files', few.headers, few.body)
    ok(r3.status === 200 && (await count('/home/user/ok')) === 2, 'two parts: 200, two files', r3)
    await alive('after the multipart uploads')
  } finally {
    await sbx.kill().catch(() => {})
  }
}, { timeout: 240_000 })
done()
