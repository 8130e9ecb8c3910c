// tests/e2b/tenant.mjs - one tenant's round trip in a process of its own, so on connections of
// its own (a fresh process shares no keep-alive connection with the test that starts it):
// Sandbox.create(), commands.run('echo still here'), kill(). Prints the command's stdout; exits
// 0 when it is "still here\n", else 1 (the error on stderr). Used by conns.mjs.
import { Sandbox } from 'e2b'

let sbx = null
try {
  sbx = await Sandbox.create({ timeoutMs: 120_000, metadata: { suite: 'conns-tenant' } })
  const r = await sbx.commands.run('echo still here')
  process.stdout.write(r.stdout)
  process.exitCode = r.stdout === 'still here\n' ? 0 : 1
} catch (e) {
  console.error(String(e))
  process.exitCode = 1
} finally {
  if (sbx) await sbx.kill().catch(() => {})
}
