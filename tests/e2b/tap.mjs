// tests/e2b/tap.mjs - a tiny TAP printer for the E2B suites, and the helpers they share.
// test(name, fn): fn runs with a deadline (a hung call is a failure, not a hung suite); inside,
// ok()/eq() print one TAP line each. skip(name, why) prints a SKIP. done() prints the plan and
// sets the exit code. No sleeps as synchronisation: poll() waits for a condition up to a deadline.
import { inspect } from 'node:util'

let n = 0
let failed = 0

function line(cond, name, extra) {
  n++
  if (!cond) failed++
  console.log(`${cond ? 'ok' : 'not ok'} ${n} - ${name.replace(/\n/g, ' ').replace(/#/g, '\\#')}`)
  if (!cond && extra !== undefined) {
    for (const l of inspect(extra, { depth: 4, breakLength: 120, maxStringLength: 400 }).split('\n'))
      console.log(`  # ${l}`)
  }
  return cond
}

let prefix = ''
export function ok(cond, name, extra) { return line(!!cond, prefix + name, extra) }
export function eq(got, want, name) {
  const same = JSON.stringify(got) === JSON.stringify(want)
  return line(same, prefix + name, same ? undefined : { got, want })
}
// a check of a known, reported bug: not ok with a TODO directive (not a failure of the suite)
export function todo(cond, name, why, extra) {
  n++
  console.log(`${cond ? 'ok' : 'not ok'} ${n} - ${prefix}${name} # TODO ${why}`)
  if (!cond && extra !== undefined) console.log(`  # ${inspect(extra, { breakLength: Infinity })}`)
  return cond
}
export function skip(name, why) {
  n++
  console.log(`ok ${n} - ${prefix}${name} # SKIP ${why}`)
}
export function note(msg) { console.log(`# ${msg}`) }

// test(name, fn, {timeout}): fn(t) may call ok/eq; a throw or the deadline is a not ok.
export async function test(name, fn, { timeout = 120_000 } = {}) {
  const saved = prefix
  prefix = `${name}: `
  const before = n
  const t0 = Date.now()
  let timer
  try {
    await Promise.race([
      fn(),
      new Promise((_, rej) => { timer = setTimeout(() => rej(new Error(`no answer within ${timeout} ms`)), timeout) }),
    ])
    if (n === before) line(true, name)
  } catch (e) {
    line(false, `${prefix}threw ${e && e.name}: ${e && e.message}`, e && e.stack)
  } finally {
    clearTimeout(timer)
    prefix = saved
    console.log(`# ${name}: ${Date.now() - t0} ms`)
  }
}

export function done() {
  console.log(`1..${n}`)
  process.exitCode = failed ? 1 : 0
}

const tick = ms => new Promise(r => setTimeout(r, ms))

// poll(fn, {deadline, every}): calls fn until it returns a truthy value (returned) or the deadline
// (ms from now) passes (returns the last falsy value). fn may be async; a throw counts as falsy.
export async function poll(fn, { deadline = 30_000, every = 100 } = {}) {
  const end = Date.now() + deadline
  let v
  for (;;) {
    try { v = await fn() } catch (e) { v = undefined }
    if (v) return v
    if (Date.now() >= end) return v
    await tick(every)
  }
}

// expectThrow(promise-returning fn): the error it throws, or null when it did not throw.
export async function thrown(fn) {
  try { await fn() } catch (e) { return e }
  return null
}

export const env = {
  api: process.env.E2B_API_URL,
  sandbox: process.env.E2B_SANDBOX_URL,
  key: process.env.E2B_API_KEY,
}

// a unique marker for this run (argv of the processes it starts, file names)
export const runid = `${process.pid}${Math.floor(Math.random() * 1e6)}`

// The processes of the host whose command line contains s (/proc/*/cmdline, readable by all).
import { readdirSync, readFileSync } from 'node:fs'
export function hostProcs(s) {
  const out = []
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d) || d === String(process.pid)) continue
    let cmd
    try { cmd = readFileSync(`/proc/${d}/cmdline`).toString().replace(/\0/g, ' ').trim() } catch { continue }
    if (cmd.includes(s)) out.push({ pid: +d, cmd })
  }
  return out
}
