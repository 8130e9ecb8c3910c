#!/usr/bin/env bash
# Node.js with child processes: spawn, exec through a shell, execFile, fork with an IPC channel,
# spawnSync, a detached child, signals between them, worker threads, a loopback HTTP server and
# client, fs.watch. Prints what each did.
set -u
export LC_ALL=C
cat >compat.js <<'JS'
const cp = require("child_process");
const fs = require("fs");
const http = require("http");
const { Worker } = require("worker_threads");
const say = (...a) => console.log(...a);

if (process.argv[2] === "child") {
  process.on("message", (m) => { process.send({ echo: m, pid: process.pid !== process.ppid }); });
  process.on("disconnect", () => process.exit(0));
  return;
}

async function main() {
  const r = cp.spawnSync("sh", ["-c", "echo out; echo err >&2; exit 3"], { encoding: "utf8" });
  say("spawnSync:", r.status, JSON.stringify(r.stdout), JSON.stringify(r.stderr));
  await new Promise((ok) => cp.exec("echo $((6 * 7)) | cat", (e, out) => { say("exec:", e, out.trim()); ok(); }));
  await new Promise((ok) => cp.execFile(process.execPath, ["-e", "console.log(process.argv.length)"],
    (e, out) => { say("execFile node:", e, out.trim()); ok(); }));
  const kid = cp.fork(__filename, ["child"]);
  await new Promise((ok) => kid.once("message", (m) => { say("fork IPC:", JSON.stringify(m)); ok(); }) && kid.send("hi"));
  kid.disconnect();
  await new Promise((ok) => kid.once("exit", (c, s) => { say("fork exit:", c, s); ok(); }));
  const sleeper = cp.spawn("sleep", ["30"]);
  setTimeout(() => sleeper.kill("SIGTERM"), 100);
  await new Promise((ok) => sleeper.once("exit", (c, s) => { say("kill:", c, s); ok(); }));
  const det = cp.spawn("sh", ["-c", "echo detached >detached.txt"], { detached: true, stdio: "ignore" });
  await new Promise((ok) => det.once("exit", (c) => { say("detached:", c, fs.readFileSync("detached.txt", "utf8").trim()); ok(); }));
  const piped = cp.spawn("sort", [], { stdio: ["pipe", "pipe", "inherit"] });
  let sorted = "";
  piped.stdout.on("data", (d) => (sorted += d));
  piped.stdin.end("c\nb\na\n");
  await new Promise((ok) => piped.once("close", (c) => { say("pipe:", c, JSON.stringify(sorted)); ok(); }));
  const big = cp.spawnSync("head", ["-c", "5000000", "/dev/zero"], { maxBuffer: 1 << 24 });
  say("5 MB through a pipe:", big.status, big.stdout.length);
  const w = new Worker("const { parentPort } = require('worker_threads'); parentPort.postMessage(21 * 2);", { eval: true });
  say("worker:", await new Promise((ok) => w.once("message", ok)));
  await w.terminate();
  const server = http.createServer((q, s) => s.end("hello " + q.url));
  await new Promise((ok) => server.listen(0, "127.0.0.1", ok));
  const body = await new Promise((ok) => http.get({ host: "127.0.0.1", port: server.address().port, path: "/x" },
    (s) => { let b = ""; s.on("data", (d) => (b += d)); s.on("end", () => ok(s.statusCode + " " + b)); }));
  say("http on loopback:", body);
  const got = await fetch(`http://localhost:${server.address().port}/y`).then((s) => s.text());
  say("fetch localhost:", got);
  server.close();
  const seen = new Promise((ok) => { const wt = fs.watch(".", (ev, f) => { if (f === "watched.txt") { wt.close(); ok(ev); } }); });
  fs.writeFileSync("watched.txt", "x");
  say("fs.watch:", await seen);
  say("cpus > 0:", require("os").cpus().length > 0, "tmpdir writable:", (() => {
    const d = fs.mkdtempSync(require("os").tmpdir() + "/c-"); fs.rmSync(d, { recursive: true }); return true; })());
}
main().then(() => say("done"), (e) => { say("error:", e.message); process.exit(1); });
JS
node compat.js
echo "node: exit $?"
