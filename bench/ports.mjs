// bench/ports.mjs N - the cost of a sandbox's port through `cordon serve` (docs/e2b.md "Ports"):
// one small GET to a server inside the sandbox, made N times inside (python3, a new connection
// each: what the proxy does inside too) and N times through the server (node, one keep-alive
// connection to the server, as a browser has). Prints "label microseconds" per sample, then the
// medians and their difference. E2B_API_URL, E2B_SANDBOX_URL, E2B_API_KEY: set by bench/ports.
import { Sandbox } from 'e2b'
import http from 'node:http'
import { performance } from 'node:perf_hooks'

const n = Number(process.argv[2] || 300)
const api = new URL(process.env.E2B_API_URL)
const SERVER = `
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
class H(BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'
    def log_message(self, *a): pass
    def do_GET(self):
        self.send_response(200); self.send_header('Content-Length', '2'); self.end_headers(); self.wfile.write(b'ok')
ThreadingHTTPServer(('127.0.0.1', 8080), H).serve_forever()
`
const INSIDE = `
import http.client, time, sys
out = []
for i in range(${n} + 20):
    t0 = time.perf_counter()
    c = http.client.HTTPConnection('127.0.0.1', 8080); c.request('GET', '/'); r = c.getresponse(); r.read(); c.close()
    if i >= 20: out.append((time.perf_counter() - t0) * 1e6)
print(' '.join('%.1f' % x for x in out))
`
const median = v => { const s = [...v].sort((a, b) => a - b); return s[Math.floor(s.length / 2)] }
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
const get = s => new Promise((resolve, reject) => {
  http.get({ host: api.hostname, port: api.port, path: '/', agent, headers: { Host: s.getHost(8080) } }, res => {
    res.resume(); res.on('end', () => resolve(res.statusCode))
  }).on('error', reject)
})

const s = await Sandbox.create()
try {
  await s.files.write('/tmp/srv.py', SERVER)
  await s.files.write('/tmp/inside.py', INSIDE)
  await s.commands.run('python3 /tmp/srv.py', { background: true })
  for (let i = 0; i < 100 && (await get(s).catch(() => 0)) !== 200; i++) await new Promise(r => setTimeout(r, 100))
  const inside = (await s.commands.run('python3 /tmp/inside.py')).stdout.trim().split(' ').map(Number)
  const proxied = []
  for (let i = 0; i < n + 20; i++) {
    const t0 = performance.now()
    if (await get(s) !== 200) throw new Error('not 200')
    if (i >= 20) proxied.push((performance.now() - t0) * 1000)
  }
  for (const v of inside) console.log(`inside ${v}`)
  for (const v of proxied) console.log(`proxied ${v.toFixed(1)}`)
  console.log(`median_inside ${median(inside).toFixed(1)}`)
  console.log(`median_proxied ${median(proxied).toFixed(1)}`)
  console.log(`added ${(median(proxied) - median(inside)).toFixed(1)}`)
} finally {
  agent.destroy()
  await s.kill()
}
