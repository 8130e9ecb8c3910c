// tests/e2b/jupyter.mjs - runCode as models write cells, with @e2b/code-interpreter unchanged
// against `cordon serve`: a real Jupyter kernel (`!pip install` of a wheel built offline in the
// sandbox, %time, display(), a matplotlib figure as PNG, a pandas frame as HTML, errors in
// E2B's shape), the bash language, a language the sandbox lacks, state per context, and a
// runCode in flight when its sandbox is killed (the SDK throws, as with E2B). TAP on stdout.
import { Sandbox } from '@e2b/code-interpreter'
import { SandboxError, TimeoutError } from 'e2b'
import { test, ok, eq, note, done, thrown, runid } from './tap.mjs'

const errName = e => e && `${e.constructor && e.constructor.name}: ${e.message}`
const make = () => Sandbox.create({ timeoutMs: 300_000, metadata: { suite: 'e2b-jupyter', run: runid } })
const sbx = await make()

await test('!pip install of a local wheel, then import', async () => {
  // built in the sandbox, offline: setuptools and wheel from the root, no index
  await sbx.files.write('pkg/setup.py', "from setuptools import setup\nsetup(name='cordon_demo', version='0.1', py_modules=['cordon_demo'])\n")
  await sbx.files.write('pkg/cordon_demo.py', "def answer():\n    return 42\n")
  const b = await sbx.commands.run('cd pkg && python3 -m pip wheel -q --no-deps --no-build-isolation --no-index -w ../wheels . && ls ../wheels', { timeoutMs: 120_000 })
  ok(/cordon_demo-0\.1-py3-none-any\.whl/.test(b.stdout), 'a wheel was built in the sandbox', b)
  const e = await sbx.runCode('!pip install --no-index wheels/cordon_demo-0.1-py3-none-any.whl', { timeoutMs: 120_000 })
  ok(!e.error && /Successfully installed cordon[-_]demo/.test(e.logs.stdout.join('')), '!pip install (PEP 668, read-only root: into the user site)', e.toJSON())
  const e2 = await sbx.runCode('import cordon_demo\ncordon_demo.answer()')
  eq([e2.error, e2.text], [undefined, '42'], 'the package imports in the same kernel')
})

await test('IPython: %time, display(), last expression, execution count', async () => {
  const e = await sbx.runCode('%time x = sum(range(10))\nx')
  ok(/Wall time/.test(e.logs.stdout.join('')), '%time prints its timing', e.logs)
  eq(e.text, '45', '... and the last expression is the main result')
  const d = await sbx.runCode('display("one")\ndisplay({"a": 1})\n7')
  eq(d.results.map(r => [r.isMainResult, r.text]), [[false, 'one'], [false, "{'a': 1}"], [true, '7']], 'display() results come first, not main')
  const n1 = (await sbx.runCode('1')).executionCount
  const n2 = (await sbx.runCode('2')).executionCount
  ok(Number.isInteger(n1) && n2 === n1 + 1, 'executionCount counts executions', [n1, n2])
  const s = await sbx.runCode('5;')
  eq(s.results.length, 0, 'a trailing ; hides the value')
  const h = await sbx.runCode('from IPython.display import HTML, Markdown\ndisplay(Markdown("**b**"))\nHTML("<b>x</b>")')
  eq([h.results[0].markdown, h.results[1].html], ['**b**', '<b>x</b>'], 'markdown and html formats')
})

await test('a matplotlib figure comes back as PNG', async () => {
  const e = await sbx.runCode('import matplotlib.pyplot as plt\nplt.plot([1, 3, 2])\nplt.title("t")\nplt.show()', { timeoutMs: 120_000 })
  const fig = e.results.find(r => r.png)
  ok(fig, 'a result with png', e.toJSON())
  const png = fig ? Buffer.from(fig.png, 'base64') : Buffer.alloc(0)
  eq([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'result.png is a PNG (its magic)')
  ok(fig && /Figure size/.test(fig.text) && fig.formats().includes('png'), '... with its text, formats() names png', fig && fig.text)
  ok(png.length > 1000 && png.readUInt32BE(16) > 100 && png.readUInt32BE(20) > 100, '... an image of some size', png.length)
})

await test('a pandas DataFrame comes back with html and text', async () => {
  const e = await sbx.runCode('import pandas as pd\npd.DataFrame({"a": [1, 2], "b": ["x", "y"]})')
  const r = e.results[0]
  ok(r && r.isMainResult && /<table/.test(r.html || ''), 'html: a table', e.toJSON())
  ok(r && /a\s+b/.test(r.text) && /1\s+x/.test(r.text), 'text: the frame', r && r.text)
})

await test('errors in E2B\'s shape', async () => {
  const e = await sbx.runCode('print("before")\n1/0')
  eq([e.error && e.error.name, e.error && e.error.value], ['ZeroDivisionError', 'division by zero'], 'name and value')
  const tb = e.error && typeof e.error.traceback === 'string' ? e.error.traceback.replace(/\x1b\[[0-9;]*m/g, '') : ''
  ok(/ZeroDivisionError/.test(tb) && /----> 2 1\/0/.test(tb), 'traceback: one string (IPython\'s, colours and all), with the line', e.error)
  eq(e.logs.stdout, ['before\n'], 'the output before it is kept')
  const s = await sbx.runCode('def f(:\n  pass')
  eq(s.error && s.error.name, 'SyntaxError', 'a SyntaxError')
  const k = await sbx.runCode('raise KeyError("k")')
  eq([k.error && k.error.name, k.error && k.error.value], ['KeyError', "'k'"], 'KeyError')
})

await test('state per context, lost on restart; envs per execution', async () => {
  const c = await sbx.createCodeContext()
  eq(c.language, 'python', 'a context is python by default')
  await sbx.runCode('kept = [1, 2]', { context: c })
  eq((await sbx.runCode('kept + [3]', { context: c })).text, '[1, 2, 3]', 'state kept between calls')
  eq((await sbx.runCode('"kept" in dir()')).text, 'False', '... and only in its context')
  await sbx.restartCodeContext(c)
  const e = await sbx.runCode('kept', { context: c })
  eq(e.error && e.error.name, 'NameError', 'restart: the state is gone')
  const v = await sbx.runCode('import os; os.environ.get("PER_RUN")', { context: c, envs: { PER_RUN: 'yes' } })
  eq(v.text, 'yes', 'envs reach the execution')
  eq((await sbx.runCode('os.environ.get("PER_RUN")', { context: c })).results.length, 0, '... and not the next one')
  await sbx.removeCodeContext(c)
})

await test('the bash language', async () => {
  const e = await sbx.runCode('X=5; echo "x is $X"; echo to-err >&2', { language: 'bash' })
  eq([e.logs.stdout, e.logs.stderr, e.error], [['x is 5\n'], ['to-err\n'], undefined], 'stdout and stderr')
  eq((await sbx.runCode('echo "$X"; cd /tmp', { language: 'bash' })).logs.stdout, ['5\n'], 'the same shell: a variable kept')
  eq((await sbx.runCode('pwd', { language: 'bash' })).logs.stdout, ['/tmp\n'], '... and its directory')
  const f = await sbx.runCode('false', { language: 'bash' })
  eq(f.error && f.error.value, '1', 'a failed command: an error with its status (bash_kernel\'s shape)')
  const c = await sbx.createCodeContext({ language: 'bash', cwd: '/tmp' })
  eq(c.language, 'bash', 'a bash context')
  eq((await sbx.runCode('echo "[$X]"; pwd', { context: c })).logs.stdout.join(''), '[]\n/tmp\n', '... of its own, in its cwd')
  const langs = (await sbx.listCodeContexts()).map(x => x.language)
  ok(langs.includes('bash') && langs.includes('python'), 'listCodeContexts names the languages', langs)
  await sbx.removeCodeContext(c)
})

await test('a language the sandbox lacks', async () => {
  const e = await thrown(() => sbx.runCode('1', { language: 'cobol' }))
  ok(e instanceof SandboxError, 'runCode throws SandboxError, as E2B\'s', errName(e))
  const c = await thrown(() => sbx.createCodeContext({ language: 'cobol' }))
  ok(c instanceof SandboxError, 'createCodeContext throws too', errName(c))
  const res = await fetch(`${sbx.jupyterUrl}/contexts`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'E2b-Sandbox-Id': sbx.sandboxId, 'E2b-Sandbox-Port': '49999', 'X-Access-Token': sbx.envdAccessToken },
    body: JSON.stringify({ language: 'cobol' }),
  })
  const body = await res.text()
  ok(res.status === 400 && /cobol/.test(body) && /python/.test(body) && /bash/.test(body), 'the error names the languages the sandbox has', [res.status, body])
  eq((await sbx.runCode('1 + 1')).text, '2', 'python still runs')
})

await test('interrupts: timeoutMs, then the context runs on', async () => {
  const c = await sbx.createCodeContext()
  await sbx.runCode('n = 1', { context: c })
  const e = await thrown(() => sbx.runCode('import time\ntime.sleep(60)', { context: c, timeoutMs: 1500 }))
  ok(e instanceof TimeoutError, 'a TimeoutError', errName(e))
  eq((await sbx.runCode('n + 1', { context: c })).text, '2', 'the interrupted kernel kept its state')
  await sbx.removeCodeContext(c)
})

await test('runCode in flight when its sandbox is killed throws', async () => {
  const other = await make()
  let started
  const running = new Promise(resolve => { started = resolve })
  const p = other.runCode('import time\nprint("go", flush=True)\ntime.sleep(120)', { onStdout: () => started(), timeoutMs: 200_000 }).then(r => r, e => e)
  await running
  await other.kill()
  const r = await p
  ok(r instanceof Error, 'it throws (not an Execution with an error)', r instanceof Error ? errName(r) : r.toJSON())
  ok(r instanceof TimeoutError && /killed/.test(r.message), '... E2B\'s TimeoutError: the sandbox was killed', errName(r))
})

await sbx.kill().catch(e => note(`kill: ${errName(e)}`))
done()
