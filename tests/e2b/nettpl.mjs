// tests/e2b/nettpl.mjs - templates (--template) and the network per sandbox (allowInternetAccess,
// network.allowOut/denyOut within --allow-net), with the pinned SDK, as a harness uses them.
// tests/e2b/run starts the server with: --template tiny=DIR (busybox and an os-release saying
// ID=tiny), --template ocitiny=oci-archive:oci.tar (the same root through umoci, ID=oci, a setuid
// file), --template evil=oci-archive:evil.tar (a layer whose symlink points outside the root, a
// file written through it), --allow-net 127.0.0.1:P1 --allow-net 127.0.0.2:P2; it gives
// CORDON_TPL_DIR (the fixtures), NET_P1, NET_P2, CORDON_BIN; CORDON_NO_OCI, why there are no
// archives (no umoci or skopeo), when there are none. The two test hosts are HTTP servers
// of this script on the host's loopback, reached through the sandboxes' proxies.
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, writeFileSync, rmSync } from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import { Sandbox, SandboxError, Template, ALL_TRAFFIC } from 'e2b'
import { Sandbox as CI } from '@e2b/code-interpreter'
import { test, ok, eq, skip, done, thrown, env } from './tap.mjs'

const tpl = process.env.CORDON_TPL_DIR
const p1 = +process.env.NET_P1, p2 = +process.env.NET_P2
const opts = { timeoutMs: 120_000 }
const noOci = process.env.CORDON_NO_OCI
const ociNames = noOci ? [] : ['evil', 'ocitiny']

function host(addr, port, body) {
  const s = http.createServer((req, res) => { res.end(body) })
  return new Promise((res, rej) => { s.once('error', rej); s.listen(port, addr, () => res(s)) })
}
const h1 = await host('127.0.0.1', p1, 'one')
const h2 = await host('127.0.0.2', p2, 'two')

// the HTTP status curl (the host's, base template) gets for url through the sandbox's proxy;
// "000" when it reaches nothing
async function status(sbx, url) {
  const r = await sbx.commands.run(`curl -s -o /dev/null -w '%{http_code}' --max-time 20 ${url} || true`)
  return r.stdout
}
const u1 = `http://127.0.0.1:${p1}/`, u2 = `http://127.0.0.2:${p2}/`

await test('GET /templates lists each template and the host\'s two names', async () => {
  const r = await fetch(`${env.api}/templates`, { headers: { 'X-API-KEY': env.key } })
  const list = await r.json()
  eq(r.status, 200, 'answered 200')
  eq(list.map(t => t.templateID).sort(), ['base', 'code-interpreter-v1', ...ociNames, 'tiny'],
    'the names')
  const t = list.find(x => x.templateID === 'tiny')
  ok(t && t.buildStatus === 'ready' && t.names[0] === 'tiny' && t.cordonRoot.endsWith('/root'),
    'a template as E2B\'s API has it, its root', t)
  eq(list.find(x => x.templateID === 'base').cordonRoot, 'host', 'base is the host\'s root')
})

await test('Template.exists', async () => {
  eq(await Template.exists('tiny'), true, 'a template given')
  eq(await Template.exists('base'), true, 'the host\'s root')
  eq(await Template.exists('nope'), false, 'an unknown one')
})

await test('a template from a directory', async () => {
  const sbx = await Sandbox.create('tiny', opts)
  try {
    eq((await sbx.commands.run('cat /etc/os-release')).stdout, 'ID=tiny\n', 'its root')
    eq((await sbx.commands.run('ls /usr 2>&1 >/dev/null | wc -l')).stdout.trim(), '1',
      'nothing of the host\'s /usr')
    await sbx.files.write('/home/user/f', 'written')
    eq((await sbx.commands.run('cat /home/user/f')).stdout, 'written', 'files and the workdir')
    const info = await sbx.getInfo()
    eq(info.templateId, 'tiny', 'getInfo: its templateID')
    const listed = (await Sandbox.list().nextItems()).find(s => s.sandboxId === sbx.sandboxId)
    eq(listed && listed.templateId, 'tiny', 'list: its templateID')
  } finally { await sbx.kill() }
})

if (noOci) skip('templates from OCI archives', noOci)
else await test('a template from an OCI archive (umoci)', async () => {
  const sbx = await Sandbox.create('ocitiny', opts)
  try {
    eq((await sbx.commands.run('cat /etc/os-release')).stdout, 'ID=oci\n', 'its root')
    eq((await sbx.commands.run('stat -c %a /bin/suidfile')).stdout, '755\n',
      'the image\'s setuid bit is gone')
  } finally { await sbx.kill() }
})

if (!noOci) await test('an archive\'s symlink out of the root is not followed', async () => {
  ok(existsSync(`${tpl}/outside`) && !existsSync(`${tpl}/outside/pwned`),
    'nothing written outside through the layer\'s symlink')
  const sbx = await Sandbox.create('evil', opts)
  try {
    eq((await sbx.commands.run('cat /etc/os-release')).stdout, 'ID=oci\n', 'the template runs')
  } finally { await sbx.kill() }
})

await test('the SDKs\' default templates are the host\'s root', async () => {
  const sbx = await Sandbox.create(opts)
  try {
    eq((await sbx.getInfo()).templateId, 'base', 'e2b: base')
    ok((await sbx.commands.run('test -x /usr/bin/curl && echo y')).stdout === 'y\n', 'the host\'s /usr')
  } finally { await sbx.kill() }
  const ci = await CI.create(opts)
  try {
    eq((await ci.getInfo()).templateId, 'code-interpreter-v1', 'code-interpreter: code-interpreter-v1')
  } finally { await ci.kill() }
})

await test('an unknown template: E2B\'s 404', async () => {
  const e = await thrown(() => Sandbox.create('nope', opts))
  ok(e instanceof SandboxError && e.statusCode === 404 && /template 'nope' not found/.test(e.message),
    'SandboxError 404 "template \'nope\' not found"', e && { name: e.name, status: e.statusCode, msg: e.message })
})

await test('no network asked: the server\'s --allow-net', async () => {
  const sbx = await Sandbox.create(opts)
  try {
    eq(await status(sbx, u1), '200', 'the first host')
    eq(await status(sbx, u2), '200', 'the second host')
    const info = await sbx.getInfo()
    eq(info.allowInternetAccess, true, 'getInfo: allowInternetAccess')
  } finally { await sbx.kill() }
})

await test('allowOut one host, denyOut all traffic', async () => {
  const sbx = await Sandbox.create({ ...opts, network: { allowOut: ['127.0.0.1'], denyOut: [ALL_TRAFFIC] } })
  try {
    eq(await status(sbx, u1), '200', 'the allowed host answers')
    eq(await status(sbx, u2), '403', 'the other one is refused by the proxy')
    const info = await sbx.getInfo()
    eq(info.network && [info.network.allowOut, info.network.denyOut], [['127.0.0.1'], ['0.0.0.0/0']],
      'getInfo: network as created')
  } finally { await sbx.kill() }
})

await test('allowInternetAccess: false', async () => {
  const sbx = await Sandbox.create({ ...opts, allowInternetAccess: false })
  try {
    eq(await status(sbx, u1), '000', 'the first host is not reached')
    eq(await status(sbx, u2), '000', 'nor the second')
    eq((await sbx.commands.run('echo "${HTTP_PROXY:-none}"')).stdout, 'none\n', 'no proxy at all')
    eq((await sbx.getInfo()).allowInternetAccess, false, 'getInfo: allowInternetAccess false')
  } finally { await sbx.kill() }
  const sbx2 = await Sandbox.create({ ...opts, allowInternetAccess: false, network: { allowOut: ['127.0.0.2'] } })
  try {
    eq([await status(sbx2, u1), await status(sbx2, u2)], ['403', '200'],
      'allowOut takes precedence over allowInternetAccess false')
  } finally { await sbx2.kill() }
})

await test('denyOut an address: the rest of the ceiling', async () => {
  const sbx = await Sandbox.create({ ...opts, network: { denyOut: ['127.0.0.2/32'] } })
  try {
    eq([await status(sbx, u1), await status(sbx, u2)], ['200', '403'], 'the denied one only is refused')
  } finally { await sbx.kill() }
})

await test('a create asking for more than the ceiling: 400', async () => {
  for (const [what, o, word] of [
    ['a host the server does not allow', { network: { allowOut: ['127.0.0.3'], denyOut: [ALL_TRAFFIC] } }, '127.0.0.3: more than the server allows'],
    ['a name', { network: { allowOut: ['example.com'] } }, 'example.com: more than the server allows'],
    ['a range', { network: { allowOut: ['127.0.0.0/8'] } }, 'not a range'],
    ['a name in denyOut', { network: { denyOut: ['example.com'] } }, 'no IP address or CIDR block'],
  ]) {
    const e = await thrown(() => Sandbox.create({ ...opts, ...o }))
    ok(e instanceof SandboxError && e.statusCode === 400 && e.message.includes(word),
      `${what}: 400 naming it`, e && { status: e.statusCode, msg: e.message })
  }
  const r = await fetch(`${env.api}/sandboxes`, {
    method: 'POST', headers: { 'X-API-KEY': env.key, 'Content-Type': 'application/json' },
    body: JSON.stringify({ templateID: 'base', network: { rules: { 'a.com': [{ transform: {} }] } } }),
  })
  ok(r.status === 400 && (await r.text()).includes('network.rules is not supported'), 'network.rules: 400, not ignored')
  for (const [what, body] of [['mcp', { mcp: { 'github/x': {} } }], ['volumeMounts', { volumeMounts: [{ name: 'v', path: '/mnt' }] }]]) {
    const r2 = await fetch(`${env.api}/sandboxes`, {
      method: 'POST', headers: { 'X-API-KEY': env.key, 'Content-Type': 'application/json' },
      body: JSON.stringify({ templateID: 'base', ...body }),
    })
    const t = await r2.text()
    let msg = ''
    try { msg = JSON.parse(t).message } catch {}
    ok(r2.status === 400 && msg === `"${what}" is not supported by cordon serve`, `${what}: 400, not ignored`, [r2.status, t])
  }
  const e = await thrown(() => Sandbox.create({ ...opts, mcp: { 'github/x': {} } }))
  ok(e instanceof SandboxError && e.statusCode === 400 && /mcp/.test(e.message), 'the SDK\'s mcp option: it throws, 400 naming it', e && e.message)
})

await test('bad --template values: one line, exit 125', async () => {
  const dir = mkdtempSync(`${os.tmpdir()}/cordon-nettpl-`)
  writeFileSync(`${dir}/junk.tar`, 'not an archive')
  writeFileSync(`${dir}/file`, '')
  const serve = (...a) => spawnSync(process.env.CORDON_BIN,
    ['serve', '--listen', '127.0.0.1:1', '--state-dir', `${dir}/state`, ...a],
    { env: { ...process.env, CORDON_SERVE_API_KEY: env.key }, encoding: 'utf8', timeout: 60_000 })
  for (const [arg, want] of [
    ['noequals', 'cordon: serve: --template: "noequals": give NAME=DIR or NAME=oci-archive:PATH'],
    ['a b=/', 'cordon: serve: --template: "a b": a name is 1-128 letters'],
    ['x=/nonexistent-cordon', 'cordon: serve: --template: '],
    [`x=${dir}/file`, 'cordon: serve: --template: '],
    ['x=oci-archive:/nonexistent-cordon.tar', 'cordon: serve: --template: x: /nonexistent-cordon.tar: No such file or directory'],
    ...(noOci ? [] : [[`x=oci-archive:${dir}/junk.tar`, 'cordon: serve: --template: x: skopeo failed: ']]),
  ]) {
    const r = serve('--template', arg)
    ok(r.status === 125 && r.stderr.startsWith(want) && r.stderr.trim().split('\n').length === 1,
      `--template ${arg.replace(dir, 'DIR')}: exit 125, "${want.replace(dir, 'DIR')}..."`, { status: r.status, stderr: r.stderr })
  }
  const bare = `${dir}/bare`
  spawnSync('mkdir', ['-p', `${bare}/etc`])
  const nopw = serve('--template', `bare=${bare}`)
  ok(nopw.status === 125 && nopw.stderr.startsWith(`cordon: serve: --template: bare: ${bare}/etc/passwd is missing`),
    'a root without /etc/passwd', { status: nopw.status, stderr: nopw.stderr })
  const twice = serve('--template', `x=${tpl}/root`, '--template', `x=${tpl}/root`)
  ok(twice.status === 125 && twice.stderr.startsWith('cordon: serve: --template: x: given twice'),
    'a name given twice', { status: twice.status, stderr: twice.stderr })
  ok(!existsSync(`${dir}/state/templates/x`), 'a failed unpack leaves nothing')
  rmSync(dir, { recursive: true, force: true })
})

h1.close()
h2.close()
done()
