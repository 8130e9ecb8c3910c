// Optional end-to-end check of src/server/kernel.py with the real SDK (offline):
//   E2B_SDK=/path/to/node_modules/@e2b/code-interpreter node tests/unit/kernel_sdk.cjs src/server/kernel.py
// Drives the real @e2b/code-interpreter runCode() against a tiny HTTP server that passes
// POST /execute to the kernel and streams its event lines back (end_of_execution withheld).
const http = require('http');
const { spawn } = require('child_process');
const readline = require('readline');
const SDK = process.env.E2B_SDK || '/tmp/e2bsdk/node_modules/@e2b/code-interpreter';
const { Sandbox } = require(SDK);
const kernel = spawn('python3', ['-u', '-I', process.argv[2]], { stdio: ['pipe', 'pipe', 'inherit'] });
const lines = readline.createInterface({ input: kernel.stdout });
let current = null;
lines.on('line', (l) => {
  if (!current) return;
  if (JSON.parse(l).type === 'end_of_execution') { current.end(); current = null; return; }
  current.write(l + '\n');
});
const server = http.createServer((req, res) => {
  let body = '';
  req.on('data', (d) => body += d);
  req.on('end', () => {
    const r = JSON.parse(body);
    res.writeHead(200, { 'Content-Type': 'application/x-ndjson' });
    current = res;
    kernel.stdin.write(JSON.stringify({ id: 1, code: r.code, env_vars: r.env_vars || {} }) + '\n');
  });
});
server.listen(0, '127.0.0.1', async () => {
  const sbx = new Sandbox({ sandboxId: 'local', sandboxUrl: `http://127.0.0.1:${server.address().port}`, apiKey: 'x' });
  const out = [];
  const a = await sbx.runCode('x = 1; x += 1; x');
  out.push(['text', a.text, a.executionCount]);
  const b = await sbx.runCode('import os\nprint("hi", os.environ["K"])\nimport sys; print("err", file=sys.stderr)', { envs: { K: 'v' }, onStdout: (m) => out.push(['onStdout', m.line]) });
  out.push(['logs', b.logs]);
  const c = await sbx.runCode('1/0');
  out.push(['error', c.error.name, c.error.value, c.error.traceback.split('\n').length]);
  const d = await sbx.runCode('class H:\n  def _repr_html_(self): return "<i>h</i>"\nH()');
  out.push(['html', d.results[0].html, d.results[0].formats(), d.results[0].isMainResult]);
  console.log(JSON.stringify(out));
  kernel.stdin.end(); server.close();
});
