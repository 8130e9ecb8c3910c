// tests/e2b/ports.mjs - a sandbox's own ports (docs/e2b.md "Ports"), as a harness reaches a dev
// server the agent started: through sandbox.getHost(port) (the Host a browser sends through
// *.localhost) and through the E2b-Sandbox-Id/E2b-Sandbox-Port headers; HTTP with bodies of
// some MB both ways (by length and chunked), answers chunked, a WebSocket echo, a port nothing
// listens on (502 naming it), E2B's traffic token rule (network.allowPublicTraffic false) and
// another sandbox's. The servers inside are python3 (http.server, and a small WebSocket echo
// written here: Debian's python3 has no WebSocket module in its standard library).
import { Sandbox } from 'e2b'
import http from 'node:http'
import net from 'node:net'
import { createHash, randomBytes } from 'node:crypto'
import { ok, eq, todo, test, done, poll, env } from './tap.mjs'

const api = new URL(env.api)
const SERVER = String.raw`
import base64, hashlib, json, socketserver, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

class H(BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'
    def log_message(self, *a): pass
    def body(self):
        if self.headers.get('Transfer-Encoding', '').lower() == 'chunked':
            out = b''
            while True:
                n = int(self.rfile.readline().split(b';')[0], 16)
                if n == 0:
                    self.rfile.readline()
                    return out
                out += self.rfile.read(n)
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get('Content-Length', '0')))
    def send(self, code, data, ctype='text/plain'):
        self.send_response(code)
        self.send_header('Content-Type', ctype)
        self.send_header('Content-Length', str(len(data)))
        self.end_headers()
        self.wfile.write(data)
    def do_GET(self):
        if self.path == '/ws':
            return self.ws()
        if self.path == '/headers':
            return self.send(200, json.dumps({k.lower(): v for k, v in self.headers.items()}).encode(), 'application/json')
        if self.path == '/chunked':
            self.send_response(200)
            self.send_header('Transfer-Encoding', 'chunked')
            self.end_headers()
            for i in range(1000):
                part = ('line %d\n' % i).encode()
                self.wfile.write(b'%x\r\n%s\r\n' % (len(part), part))
            self.wfile.write(b'0\r\n\r\n')
            return
        self.send(200, ('hello from %s %s' % (sys.argv[1], self.path)).encode())
    def do_HEAD(self):
        self.send_response(200)
        self.send_header('Content-Length', '5')
        self.end_headers()
    def do_POST(self):
        self.send(200, self.body(), 'application/octet-stream')
    def ws(self):
        key = self.headers['Sec-WebSocket-Key']
        acc = base64.b64encode(hashlib.sha1((key + '258EAFA5-E914-47DA-95CA-C5AB0DC85B11').encode()).digest())
        self.wfile.write(b'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ' + acc + b'\r\n\r\n')
        self.wfile.flush()
        self.close_connection = True
        while True:
            h = self.rfile.read(2)
            if len(h) < 2:
                return
            op, n = h[0] & 15, h[1] & 127
            if n == 126:
                n = int.from_bytes(self.rfile.read(2), 'big')
            elif n == 127:
                n = int.from_bytes(self.rfile.read(8), 'big')
            mask = self.rfile.read(4) if h[1] & 128 else b'\0\0\0\0'
            data = bytes(b ^ mask[i % 4] for i, b in enumerate(self.rfile.read(n)))
            if op == 8:
                self.wfile.write(b'\x88\x00')
                return
            reply = data[::-1] if op == 1 else data
            hdr = bytes([0x80 | op]) + (bytes([len(reply)]) if len(reply) < 126 else bytes([126]) + len(reply).to_bytes(2, 'big'))
            self.wfile.write(hdr + reply)
            self.wfile.flush()

ThreadingHTTPServer.allow_reuse_address = True
ThreadingHTTPServer(('127.0.0.1', int(sys.argv[1])), H).serve_forever()
`

// one request to the server with these headers: {status, headers, body (Buffer)}
function request(path, { method = 'GET', headers = {}, body, chunks } = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: api.hostname, port: api.port, path, method, headers, agent: false }, res => {
      const parts = []
      res.on('data', d => parts.push(d))
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(parts) }))
      res.on('error', reject)
    })
    req.on('error', reject)
    if (chunks) for (const c of chunks) req.write(c)
    req.end(body)
  })
}

// a WebSocket client, small: the handshake, one masked text frame out, one frame back
function wsEcho(path, headers, text) {
  return new Promise((resolve, reject) => {
    const key = randomBytes(16).toString('base64')
    const req = http.request({ host: api.hostname, port: api.port, path, agent: false, headers: {
      ...headers, Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Key': key,
      'Sec-WebSocket-Version': '13' } })
    req.on('error', reject)
    req.on('response', res => {
      let b = ''
      res.on('data', d => { b += d })
      res.on('end', () => { if (res.statusCode >= 500) console.log(`# no upgrade: ${res.statusCode}: ${b}`) })
      reject(new Error(`no upgrade: ${res.statusCode}`))
    })
    req.on('upgrade', (res, sock, head) => {
      const want = createHash('sha1').update(key + '258EAFA5-E914-47DA-95CA-C5AB0DC85B11').digest('base64')
      if (res.headers['sec-websocket-accept'] !== want) return reject(new Error('bad accept'))
      const payload = Buffer.from(text), mask = randomBytes(4)
      const frame = Buffer.concat([Buffer.from([0x81, 0x80 | payload.length]), mask,
        Buffer.from(payload.map((b, i) => b ^ mask[i % 4]))])
      let got = head
      sock.on('data', d => {
        got = Buffer.concat([got, d])
        if (got.length >= 2 && got.length >= 2 + (got[1] & 127)) {
          sock.destroy()
          resolve(got.subarray(2, 2 + (got[1] & 127)).toString())
        }
      })
      sock.on('error', reject)
      sock.write(frame)
    })
    req.end()
  })
}

// a WebSocket left open: resolves with its socket once upgraded
function wsOpen(path, headers) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: api.hostname, port: api.port, path, agent: false, headers: {
      ...headers, Connection: 'Upgrade', Upgrade: 'websocket',
      'Sec-WebSocket-Key': randomBytes(16).toString('base64'), 'Sec-WebSocket-Version': '13' } })
    req.on('error', reject)
    req.on('response', res => reject(new Error(`no upgrade: ${res.statusCode}`)))
    req.on('upgrade', (res, sock) => resolve(sock))
    req.end()
  })
}

const sbx = await Sandbox.create({ timeoutMs: 600_000, metadata: { suite: 'ports' } })
const other = await Sandbox.create({ timeoutMs: 600_000, network: { allowPublicTraffic: false } })
const byHost = (s, port) => ({ Host: s.getHost(port) })
const byHeader = (s, port) => ({ 'E2b-Sandbox-Id': s.sandboxId, 'E2b-Sandbox-Port': String(port) })

async function serve(s, port, extra = {}) {
  await s.files.write('/tmp/srv.py', SERVER)
  await s.commands.run(`python3 /tmp/srv.py ${port}`, { background: true })
  return poll(async () => (await request('/', { headers: { ...byHeader(s, port), ...extra } })).status === 200, { deadline: 30_000 })
}

await test('a server inside, through getHost()', async () => {
  ok(await serve(sbx, 8080), 'the server inside answers through the proxy')
  eq(sbx.getHost(8080), `8080-${sbx.sandboxId}.${process.env.E2B_DOMAIN}`, 'getHost(8080): PORT-ID.domain')
  const r = await request('/hello?x=1&y=%2F', { headers: byHost(sbx, 8080) })
  eq([r.status, r.body.toString()], [200, 'hello from 8080 /hello?x=1&y=%2F'], 'GET by Host: the path and query as sent')
  const l = await request('/x', { headers: { Host: `8080-${sbx.sandboxId}.localhost:${api.port}` } })
  eq(l.status, 200, 'Host 8080-ID.localhost:PORT, as a browser sends it')
})

await test('through E2b-Sandbox-Port', async () => {
  const r = await request('/p', { headers: byHeader(sbx, 8080) })
  eq([r.status, r.body.toString()], [200, 'hello from 8080 /p'], 'GET by E2b-Sandbox-Id/Port')
  const h = await request('/p', { method: 'HEAD', headers: byHeader(sbx, 8080) })
  eq([h.status, h.body.length], [200, 0], 'HEAD: no body')
})

await test('bodies of some MB both ways', async () => {
  const big = randomBytes(5 << 20)
  const r = await request('/echo', { method: 'POST', headers: { ...byHost(sbx, 8080), 'Content-Type': 'application/octet-stream' }, body: big })
  ok(r.status === 200 && r.body.equals(big), 'POST 5 MiB by length: the same 5 MiB back', { status: r.status, len: r.body.length })
  const parts = Array.from({ length: 40 }, () => randomBytes(64 << 10))
  const c = await request('/echo', { method: 'POST', headers: byHost(sbx, 8080), chunks: parts })
  ok(c.status === 200 && c.body.equals(Buffer.concat(parts)), 'POST 2.5 MiB chunked: the same back', { status: c.status, len: c.body.length })
  const k = await request('/chunked', { headers: byHost(sbx, 8080) })
  const want = Array.from({ length: 1000 }, (_, i) => `line ${i}\n`).join('')
  ok(k.status === 200 && k.body.toString() === want, 'an answer chunked inside comes whole', { status: k.status, len: k.body.length })
})

await test('headers', async () => {
  const r = await request('/headers', { headers: { ...byHeader(sbx, 8080), 'X-Custom': 'kept', 'X-Access-Token': sbx.envdAccessToken,
    'E2B-Traffic-Access-Token': 'x', 'X-API-Key': env.key } })
  const h = JSON.parse(r.body.toString())
  eq(h['x-custom'], 'kept', "the request's own headers reach the server inside")
  eq([h['x-access-token'], h['e2b-traffic-access-token'], h['x-api-key'], h['e2b-sandbox-id']],
    [undefined, undefined, undefined, undefined], "the server's credentials and routing headers do not")
  eq(h.connection, 'close', 'upstream: one connection a request')
})

await test('WebSocket', async () => {
  eq(await wsEcho('/ws', byHost(sbx, 8080), 'hello ws'), 'sw olleh', 'an echo through getHost()')
  eq(await wsEcho('/ws', byHeader(sbx, 8080), 'abc'), 'cba', 'an echo through E2b-Sandbox-Port')
  const k = await request('/after', { headers: byHost(sbx, 8080) })
  // a known bug: once in some CI runs (1 of about 4 here; 0 of 6 runs of this part alone) this
  // request got a 502 right after the two echoes; the answer's body, printed when it fails, will
  // say which of the proxy's 502s it is
  todo(k.status === 200, 'the port answers HTTP after them', 'a 502 now and then, not found yet',
    { status: k.status, body: k.body.toString() })
})

await test('python3 -m http.server', async () => {
  await sbx.files.write('/tmp/www/index.txt', 'served by http.server\n')
  await sbx.commands.run('cd /tmp/www && python3 -m http.server 8081 --bind 127.0.0.1', { background: true })
  const r = await poll(async () => { const x = await request('/index.txt', { headers: byHost(sbx, 8081) }); return x.status === 200 && x })
  eq(r && r.body.toString(), 'served by http.server\n', 'a file of http.server (HTTP/1.0 inside)')
})

await test('a port nothing listens on', async () => {
  const r = await request('/', { headers: byHost(sbx, 8099) })
  ok(r.status === 502 && /port 8099/.test(r.body.toString()), '502 naming the port', { status: r.status, body: r.body.toString() })
  const h = await request('/', { headers: byHeader(sbx, 8099) })
  eq(h.status, 502, '502 through the header too')
  const bad = await request('/', { headers: byHeader(sbx, 70000) })
  eq(bad.status, 400, 'port 70000: 400')
})

await test('network.allowPublicTraffic false: the traffic token', async () => {
  ok(other.trafficAccessToken, 'the create gives a trafficAccessToken')
  const tok = { 'e2b-traffic-access-token': other.trafficAccessToken }
  ok(await serve(other, 8080, tok), 'a server in the private sandbox')
  const ready = await poll(async () => (await request('/', { headers: { ...byHost(other, 8080), ...tok } })).status === 200)
  ok(ready, 'with its token: 200')
  const none = await request('/', { headers: byHost(other, 8080) })
  ok(none.status === 403 && /missing/.test(none.body.toString()), 'without: 403, as E2B', { status: none.status, body: none.body.toString() })
  const wrong = await request('/', { headers: { ...byHost(other, 8080), 'e2b-traffic-access-token': sbx.trafficAccessToken } })
  eq(wrong.status, 403, "another sandbox's token: 403")
  const ws = await wsEcho('/ws', { ...byHost(other, 8080) }, 'x').catch(e => e.message)
  eq(ws, 'no upgrade: 403', 'a WebSocket without the token: 403')
  eq(await wsEcho('/ws', { ...byHost(other, 8080), ...tok }, 'ok'), 'ko', 'a WebSocket with it')
})

await test('ids', async () => {
  const r = await request('/', { headers: { Host: `8080-nosuchsandbox000000000.localhost` } })
  eq(r.status, 502, 'an unknown sandbox: 502, as E2B')
  const k = await request('/', { headers: byHost(sbx, 8080) })
  eq(k.status, 200, 'a public sandbox: anyone who knows its id (E2B\'s rule)')
})

// raw bytes to the server (Connection: close: it closes after its answer; no half-close of
// ours, which it reads as a client gone): the whole answer as a string
function raw(text) {
  return new Promise((resolve, reject) => {
    const sock = net.connect(+api.port, api.hostname, () => sock.write(text))
    const parts = []
    sock.on('data', d => parts.push(d))
    sock.on('end', () => resolve(Buffer.concat(parts).toString()))
    sock.on('error', reject)
  })
}

await test('a port is no proxy, no smuggling, no slots for all', async () => {
  const host = sbx.getHost(8080)
  const abs = await raw(`GET http://deb.debian.org/ HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`)
  ok(/^HTTP\/1\.1 400/.test(abs) && /not a proxy/.test(abs), 'an absolute URL: 400, not forwarded', abs.split('\r\n')[0])
  const conn = await raw(`CONNECT deb.debian.org:443 HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`)
  ok(/^HTTP\/1\.1 400/.test(conn), 'CONNECT: 400', conn.split('\r\n')[0])
  const proxy = await request('/', { headers: byHost(sbx, 3128) })
  ok(proxy.status >= 400 && /egress proxy/.test(proxy.body.toString()), "port 3128 (cordon's egress proxy inside): refused, saying why", [proxy.status, proxy.body.toString()])
  const both = await raw(`POST /echo HTTP/1.1\r\nHost: ${host}\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n5\r\nhello\r\n0\r\n\r\n`)
  ok(/\r\n\r\nhello$/.test(both), 'Content-Length beside chunked: the body goes up chunked, whole (not 4 bytes and a smuggled rest)', both.slice(-40))
  const cr = await raw(`GET /headers HTTP/1.1\r\nHost: ${host}\r\nX-B: a\rInjected: 1\r\nConnection: close\r\n\r\n`)
  ok(/^HTTP\/1\.1 400/.test(cr) && !/injected/i.test(cr.split('\r\n\r\n')[1] || ''), 'a bare CR in a header: 400, nothing forwarded', cr.split('\r\n')[0])
  // anonymous traffic to every public sandbox is one tenant: a quarter of the slots in all
  const third = await Sandbox.create({ timeoutMs: 600_000, metadata: { suite: 'ports' } })
  ok(await serve(third, 8080), 'a second public sandbox serving a port')
  const opens = []
  for (let i = 0; i < 40; i++) opens.push(wsOpen('/ws', byHost(sbx, 8080)).catch(e => e), wsOpen('/ws', byHost(third, 8080)).catch(e => e))
  const got = await Promise.all(opens)
  const held = got.filter(x => !(x instanceof Error)), refused = got.filter(x => x instanceof Error && /429/.test(x.message))
  ok(held.length <= 64 && refused.length >= 16, 'anonymous WebSockets to two sandboxes: at most 64 held (a quarter of 256), the rest 429', { held: held.length, refused: refused.length, other: got.filter(x => x instanceof Error && !/429/.test(x.message)).map(e => e.message).slice(0, 3) })
  const authed = await request('/sandboxes', { headers: { 'X-API-Key': env.key } })
  eq(authed.status, 200, '... while they are held, the control plane answers')
  const tok = await wsEcho('/ws', { ...byHost(third, 8080), 'e2b-traffic-access-token': third.trafficAccessToken }, 'tok')
  eq(tok, 'kot', '... and traffic showing its token is its sandbox\'s own tenant: it gets through')
  for (const s of held) s.destroy()
  await third.kill()
})

await test('killed', async () => {
  await other.kill()
  const r = await request('/', { headers: { ...byHost(other, 8080), 'e2b-traffic-access-token': other.trafficAccessToken } })
  eq(r.status, 502, 'a killed sandbox: 502')
})

await test('a WebSocket open when its sandbox is killed ends', async () => {
  const sock = await wsOpen('/ws', byHost(sbx, 8080))
  const closed = new Promise(resolve => { sock.on('close', () => resolve(true)); sock.on('error', () => {}) })
  sock.resume()
  await sbx.kill()
  ok(await Promise.race([closed, new Promise(r => setTimeout(() => r(false), 30_000))]),
    'the connection is closed (no server thread left holding it)')
})

done()
