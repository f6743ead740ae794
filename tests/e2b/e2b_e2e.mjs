#!/usr/bin/env node
// End-to-end scenarios for an E2B-compatible server, driven by the official
// E2B JavaScript SDK (npm package `e2b`).
//
// Usage:
//   node e2b_e2e.mjs <sdk-node_modules-dir> [scenario ...|all]
//
//   <sdk-node_modules-dir>  a node_modules folder that holds `e2b` (and its
//                           dependencies), e.g. one made by `npm install e2b@2.51.0`.
//                           The `e2b` package folder itself is accepted too.
//
// Environment:
//   E2B_API_URL, E2B_SANDBOX_URL, E2B_API_KEY   read by the SDK itself (required)
//   E2B_API_KEY_OTHER    second key, for `other_key`
//   SECRET_FILE          host file outside the sandbox holding a secret (boundary);
//                        if unset, a temporary one is created by this script
//   HOST_PORT            host TCP listener on 127.0.0.1 (boundary); if unset, this
//                        script opens one and also checks it was never reached
//   E2E_TEMPLATE         template to create sandboxes from (default: SDK default)
//   E2E_SANDBOX_TIMEOUT_MS  sandbox timeoutMs for each scenario (default 120000)
//   E2E_BIG_FILE_MIB     size for big_file (default 64)
//
// Output: one JSON line per scenario {"scenario":..,"ok":bool,"detail":..};
// exit status 1 if any scenario failed, 2 on usage errors.

import crypto from 'node:crypto'
import dc from 'node:diagnostics_channel'
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'

// ---------------------------------------------------------------- setup ----

const [, , sdkArg, ...scenarioArgs] = process.argv
if (!sdkArg) {
  console.error('usage: node e2b_e2e.mjs <node_modules-dir-with-e2b> [scenario ...|all]')
  process.exit(2)
}

function resolveSdkEntry(dir) {
  const abs = path.resolve(dir)
  const candidates = [
    path.join(abs, 'e2b', 'dist', 'index.mjs'),
    path.join(abs, 'dist', 'index.mjs'),
    path.join(abs, 'node_modules', 'e2b', 'dist', 'index.mjs'),
  ]
  for (const c of candidates) if (fs.existsSync(c)) return c
  throw new Error(`cannot find e2b/dist/index.mjs under ${abs}`)
}

const sdkEntry = resolveSdkEntry(sdkArg)
const sdkPkg = JSON.parse(
  fs.readFileSync(path.join(path.dirname(sdkEntry), '..', 'package.json'), 'utf8')
)
const E2B = await import(pathToFileURL(sdkEntry).href)
const { Sandbox, CommandExitError, NotFoundError, SandboxError } = E2B

const TEMPLATE = process.env.E2E_TEMPLATE || undefined
const SANDBOX_TIMEOUT_MS = Number(process.env.E2E_SANDBOX_TIMEOUT_MS || 120_000)
const BIG_MIB = Number(process.env.E2E_BIG_FILE_MIB || 64)

for (const v of ['E2B_API_URL', 'E2B_SANDBOX_URL', 'E2B_API_KEY']) {
  if (!process.env[v]) console.error(`warning: ${v} is not set`)
}

// --------------------------------------------------- request counting ----
// In Node the SDK sends through the npm `undici` package (not globalThis.fetch),
// so requests are counted on undici's diagnostics channel, which both the npm
// undici and Node's bundled one publish to. globalThis.fetch is wrapped as
// well and reported separately (it is only used if undici cannot be loaded).

const counters = { undici: 0, globalFetch: 0, log: [] }
dc.subscribe('undici:request:create', ({ request }) => {
  counters.undici++
  counters.log.push(`${request.method} ${request.origin ?? ''}${request.path}`)
})
const realFetch = globalThis.fetch
globalThis.fetch = (input, init) => {
  counters.globalFetch++
  return realFetch(input, init)
}
function resetCounters() {
  counters.undici = 0
  counters.globalFetch = 0
  counters.log = []
}

// -------------------------------------------------------------- helpers ----

class AssertionFailed extends Error {}
function assert(cond, msg) {
  if (!cond) throw new AssertionFailed(msg)
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const sha256 = (buf) => crypto.createHash('sha256').update(buf).digest('hex')
const errInfo = (e) =>
  e == null
    ? null
    : {
        class: e.constructor?.name ?? typeof e,
        name: e.name,
        message: String(e.message ?? e).slice(0, 300),
        ...(e.exitCode !== undefined && { exitCode: e.exitCode }),
        ...(e.statusCode !== undefined && { statusCode: e.statusCode }),
      }

async function expectReject(promise, what) {
  try {
    const v = await promise
    throw new AssertionFailed(
      `${what}: expected an error, got success: ${JSON.stringify(v)?.slice(0, 200)}`
    )
  } catch (e) {
    if (e instanceof AssertionFailed) throw e
    return e
  }
}

async function waitFor(pred, ms, what) {
  const end = Date.now() + ms
  while (Date.now() < end) {
    if (await pred()) return
    await sleep(100)
  }
  throw new AssertionFailed(`timed out after ${ms} ms waiting for ${what}`)
}

function createOpts(extra = {}) {
  return {
    ...(TEMPLATE && { template: TEMPLATE }),
    timeoutMs: SANDBOX_TIMEOUT_MS,
    ...extra,
  }
}

// create a sandbox, run fn(sbx, detail), always kill the sandbox afterwards
async function withSandbox(detail, fn, extra = {}) {
  const sbx = await Sandbox.create(createOpts(extra))
  detail.sandboxId = sbx.sandboxId
  try {
    return await fn(sbx)
  } finally {
    try {
      detail.killed = await sbx.kill()
    } catch (e) {
      detail.killError = errInfo(e)
    }
  }
}

// -------------------------------------------------------------- scenarios ----

const scenarios = {}

scenarios.five_requests = async (detail) => {
  resetCounters()
  const t0 = Date.now()
  const sbx = await Sandbox.create(createOpts())
  detail.sandboxId = sbx.sandboxId
  let killed = false
  try {
    const r = await sbx.commands.run('echo hi')
    detail.run = { exitCode: r.exitCode, stdout: r.stdout, stderr: r.stderr }
    assert(r.stdout === 'hi\n', `stdout ${JSON.stringify(r.stdout)} != "hi\\n"`)
    assert(r.exitCode === 0, `exitCode ${r.exitCode} != 0`)
    const content = `five-requests ${crypto.randomUUID()}\n`
    const info = await sbx.files.write('e2e-five.txt', content)
    detail.writeInfo = info
    const back = await sbx.files.read('e2e-five.txt')
    assert(back === content, `read back ${JSON.stringify(back)} != written`)
    killed = await sbx.kill()
    detail.killed = killed
    assert(killed === true, 'kill() did not return true')
  } finally {
    if (!killed) await sbx.kill().catch(() => {})
  }
  detail.elapsedMs = Date.now() - t0
  detail.requests = counters.undici
  detail.globalFetchCalls = counters.globalFetch
  detail.requestLog = counters.log
  assert(counters.undici === 5, `expected 5 HTTP requests, saw ${counters.undici}`)
}

scenarios.stream_stdout = async (detail) => {
  await withSandbox(detail, async (sbx) => {
    const t0 = Date.now()
    const chunks = []
    const r = await sbx.commands.run(
      'for i in 1 2 3 4; do echo line$i; sleep 1; done',
      { onStdout: (d) => chunks.push({ t: Date.now() - t0, d }) }
    )
    const tEnd = Date.now() - t0
    detail.chunks = chunks
    detail.totalMs = tEnd
    assert(r.exitCode === 0, `exitCode ${r.exitCode}`)
    assert(r.stdout === 'line1\nline2\nline3\nline4\n', `stdout ${JSON.stringify(r.stdout)}`)
    assert(chunks.map((c) => c.d).join('') === r.stdout, 'chunks do not add up to stdout')
    assert(chunks.length >= 3, `only ${chunks.length} chunk(s): output was not streamed`)
    assert(tEnd - chunks[0].t >= 2000, `first chunk at ${chunks[0].t} ms, end at ${tEnd} ms: not streamed`)
    assert(chunks[0].d.startsWith('line1'), 'first chunk is not line1')
  })
}

scenarios.background_kill = async (detail) => {
  await withSandbox(detail, async (sbx) => {
    const h = await sbx.commands.run('sleep 60', { background: true, timeoutMs: 0 })
    detail.pid = h.pid
    assert(Number.isInteger(h.pid) && h.pid > 0, `bad pid ${h.pid}`)
    const list = await sbx.commands.list()
    detail.listed = list.map((p) => ({ pid: p.pid, cmd: p.cmd, args: p.args }))
    const mine = list.find((p) => p.pid === h.pid)
    assert(mine, `pid ${h.pid} not in commands.list()`)
    assert(mine.args.join(' ').includes('sleep 60'), `listed args ${JSON.stringify(mine.args)}`)
    const t0 = Date.now()
    const killed = await sbx.commands.kill(h.pid)
    assert(killed === true, `commands.kill returned ${killed}`)
    let waitErr
    const res = await Promise.race([
      h.wait().then((v) => ({ v }), (e) => ({ e })),
      sleep(15_000).then(() => ({ timeout: true })),
    ])
    assert(!res.timeout, 'wait() did not finish within 15 s after kill')
    if (res.e) waitErr = res.e
    detail.waitMs = Date.now() - t0
    detail.waitError = errInfo(waitErr)
    detail.exitCode = h.exitCode
    assert(!res.v, `wait() resolved successfully after SIGKILL: ${JSON.stringify(res.v)}`)
    assert(
      waitErr instanceof CommandExitError ? waitErr.exitCode !== 0 : /signal|kill/i.test(String(waitErr?.message)),
      'wait() error is neither CommandExitError(exitCode != 0) nor a signal error'
    )
    const after = await sbx.commands.list()
    assert(!after.some((p) => p.pid === h.pid), 'killed pid still listed')
    detail.killAgain = await sbx.commands.kill(h.pid)
    assert(detail.killAgain === false, 'killing a dead pid should return false (not_found)')
  })
}

scenarios.stdin = async (detail) => {
  await withSandbox(detail, async (sbx) => {
    const h = await sbx.commands.run('cat', { background: true, stdin: true, timeoutMs: 60_000 })
    detail.pid = h.pid
    await sbx.commands.sendStdin(h.pid, 'hello\n')
    await waitFor(() => h.stdout.includes('hello'), 10_000, 'hello echoed by cat')
    await h.sendStdin('world\n')
    await waitFor(() => h.stdout.includes('world'), 10_000, 'world echoed by cat')
    let closed = false
    try {
      await h.closeStdin()
      closed = true
    } catch (e) {
      detail.closeStdinError = errInfo(e)
    }
    detail.closedStdin = closed
    if (closed) {
      const r = await Promise.race([h.wait(), sleep(10_000).then(() => null)])
      assert(r, 'cat did not exit within 10 s after closeStdin')
      assert(r.exitCode === 0, `cat exit code ${r.exitCode}`)
      detail.stdout = r.stdout
    } else {
      await sbx.commands.kill(h.pid)
      await h.wait().catch(() => {})
      detail.stdout = h.stdout
    }
    assert(detail.stdout === 'hello\nworld\n', `stdout ${JSON.stringify(detail.stdout)}`)
    if (!closed) throw new AssertionFailed('closeStdin unsupported/failed (killed instead)')
  })
}

scenarios.pty = async (detail) => {
  await withSandbox(detail, async (sbx) => {
    let out = ''
    const dec = new TextDecoder()
    const h = await sbx.pty.create({
      cols: 80,
      rows: 24,
      timeoutMs: 60_000,
      onData: (d) => {
        out += dec.decode(d, { stream: true })
      },
    })
    detail.pid = h.pid
    try {
      await ptySteps(sbx, h, () => out, detail)
    } finally {
      detail.output = out.slice(-600)
    }
  })
}

async function ptySteps(sbx, h, getOut, detail) {
  const enc = new TextEncoder()
  // strip ANSI control sequences (prompt, bracketed-paste toggles) and CRs
  const clean = () => getOut().replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '').replace(/\x1b\][^\x07]*\x07/g, '').replace(/\r/g, '')
  const seen = (re) => re.test(clean())
  await sbx.pty.sendInput(h.pid, enc.encode('echo pty-ok\n'))
  // the echoed input is "echo pty-ok"; the command output is a line "pty-ok"
  await waitFor(() => seen(/(^|\n)pty-ok\n/), 10_000, 'pty-ok output line')
  await sbx.pty.resize(h.pid, { cols: 100, rows: 30 })
  await sbx.pty.sendInput(h.pid, enc.encode('stty size\n'))
  await waitFor(() => seen(/(^|\n)30 100\n/), 10_000, '"30 100" from stty size after resize')
  detail.ptyKilled = await sbx.pty.kill(h.pid)
  assert(detail.ptyKilled === true, 'pty.kill did not return true')
  const r = await Promise.race([
    h.wait().then((v) => ({ v }), (e) => ({ e })),
    sleep(10_000).then(() => ({ timeout: true })),
  ])
  assert(!r.timeout, 'pty handle did not end within 10 s after kill')
  detail.waitError = errInfo(r.e)
}

scenarios.files = async (detail) => {
  await withSandbox(detail, async (sbx) => {
    const tag = crypto.randomBytes(4).toString('hex')
    const steps = (detail.steps = [])
    const step = (s) => steps.push(s)

    // relative path → resolved against the user's home
    const relName = `e2e-rel-${tag}.txt`
    const relContent = `relative ${tag}\n`
    const wi = await sbx.files.write(relName, relContent)
    step({ write: wi })
    assert(wi && wi.name === relName, `write info name ${JSON.stringify(wi)}`)
    assert(wi.path.startsWith('/') && wi.path.endsWith('/' + relName), `write info path ${wi.path}`)
    const home = path.posix.dirname(wi.path)
    detail.home = home
    assert(home === '/home/user', `relative path resolved under ${home}, expected /home/user`)
    assert((await sbx.files.read(relName)) === relContent, 'read(relative) mismatch')
    assert((await sbx.files.read(`${home}/${relName}`)) === relContent, 'read(absolute) of relative write mismatch')

    // absolute /home/user path, nested dirs are created by write
    const dir = `/home/user/e2e-dir-${tag}`
    const abs = `${dir}/sub/abs.txt`
    const absContent = `absolute ${tag}\n`
    const wa = await sbx.files.write(abs, absContent)
    step({ writeAbs: wa })
    assert(wa.path === abs, `write abs path ${wa.path}`)
    assert((await sbx.files.read(abs)) === absContent, 'read(abs) mismatch')

    // binary round trip (bytes format)
    const bin = new Uint8Array(256).map((_, i) => i)
    await sbx.files.write(`${dir}/bin.dat`, bin.buffer)
    const binBack = await sbx.files.read(`${dir}/bin.dat`, { format: 'bytes' })
    assert(Buffer.from(binBack).equals(Buffer.from(bin)), 'binary round trip mismatch')

    // multi-file write
    const multi = await sbx.files.write([
      { path: `${dir}/m1.txt`, data: 'one' },
      { path: `${dir}/m2.txt`, data: 'two' },
    ])
    step({ writeMulti: multi })
    assert(Array.isArray(multi) && multi.length === 2, 'multi write did not return 2 entries')
    assert((await sbx.files.read(`${dir}/m2.txt`)) === 'two', 'multi write m2 mismatch')

    // makeDir / exists
    const made = await sbx.files.makeDir(`${dir}/made`)
    assert(made === true, `makeDir returned ${made}`)
    const madeAgain = await sbx.files.makeDir(`${dir}/made`)
    assert(madeAgain === false, `second makeDir returned ${madeAgain} (want false)`)
    assert((await sbx.files.exists(`${dir}/made`)) === true, 'exists(made dir) false')
    assert((await sbx.files.exists(`${dir}/nope-${tag}`)) === false, 'exists(missing) true')
    assert((await sbx.files.exists(relName)) === true, 'exists(relative) false')

    // list
    const entries = await sbx.files.list(dir)
    step({ list: entries.map((e) => [e.name, e.type, e.path]) })
    const byName = Object.fromEntries(entries.map((e) => [e.name, e]))
    for (const n of ['sub', 'made', 'bin.dat', 'm1.txt', 'm2.txt'])
      assert(byName[n], `list(${dir}) is missing ${n}`)
    assert(byName.sub.type === 'dir' && byName.made.type === 'dir', 'dir entries not typed dir')
    assert(byName['m1.txt'].type === 'file', 'file entry not typed file')
    assert(byName['m1.txt'].path === `${dir}/m1.txt`, `entry path ${byName['m1.txt'].path}`)
    assert(!entries.some((e) => e.name === 'abs.txt'), 'depth 1 list returned nested entries')
    const deep = await sbx.files.list(dir, { depth: 2 })
    assert(deep.some((e) => e.path === abs), 'depth 2 list is missing sub/abs.txt')

    // getInfo
    const gi = await sbx.files.getInfo(`${dir}/bin.dat`)
    step({ getInfo: gi })
    assert(gi.name === 'bin.dat' && gi.type === 'file', 'getInfo name/type')
    assert(gi.size === 256, `getInfo size ${gi.size}`)
    assert(gi.path === `${dir}/bin.dat`, `getInfo path ${gi.path}`)
    assert(gi.modifiedTime instanceof Date && !isNaN(gi.modifiedTime), 'getInfo modifiedTime')
    assert(typeof gi.permissions === 'string' && gi.permissions.length > 0, 'getInfo permissions')
    const gd = await sbx.files.getInfo(dir)
    assert(gd.type === 'dir', `getInfo(dir) type ${gd.type}`)

    // rename
    const rn = await sbx.files.rename(`${dir}/m1.txt`, `${dir}/m1-renamed.txt`)
    step({ rename: rn })
    assert(rn.path === `${dir}/m1-renamed.txt` && rn.name === 'm1-renamed.txt', 'rename entry')
    assert((await sbx.files.exists(`${dir}/m1.txt`)) === false, 'old name still exists')
    assert((await sbx.files.read(`${dir}/m1-renamed.txt`)) === 'one', 'renamed content')

    // remove (file and directory tree)
    await sbx.files.remove(relName)
    assert((await sbx.files.exists(relName)) === false, 'removed file still exists')
    const e1 = await expectReject(sbx.files.read(relName), 'read(removed)')
    assert(e1 instanceof NotFoundError, `read(removed) error class ${e1?.constructor?.name}`)
    await sbx.files.remove(dir)
    assert((await sbx.files.exists(dir)) === false, 'removed dir still exists')
    const e2 = await expectReject(sbx.files.getInfo(dir), 'getInfo(removed)')
    assert(e2 instanceof NotFoundError, `getInfo(removed) error class ${e2?.constructor?.name}`)

    // command sees files written via the API
    await sbx.files.write('e2e-cmd.txt', 'via-api')
    const r = await sbx.commands.run('cat ~/e2e-cmd.txt && pwd')
    assert(r.stdout === `via-api${home}\n`, `command view: ${JSON.stringify(r.stdout)}`)
  })
}

scenarios.big_file = async (detail) => {
  await withSandbox(detail, async (sbx) => {
    const size = BIG_MIB * 1024 * 1024
    const data = crypto.randomBytes(size)
    const want = sha256(data)
    detail.bytes = size
    detail.sha256 = want
    const p = '/home/user/e2e-big.bin'
    let t = Date.now()
    const wi = await sbx.files.write(p, new Blob([data]), { requestTimeoutMs: 600_000 })
    detail.writeMs = Date.now() - t
    detail.writeMiBps = +(BIG_MIB / (detail.writeMs / 1000)).toFixed(1)
    assert(wi.path === p, `write path ${wi.path}`)
    const info = await sbx.files.getInfo(p)
    assert(info.size === size, `getInfo size ${info.size} != ${size}`)
    t = Date.now()
    const back = await sbx.files.read(p, { format: 'bytes', requestTimeoutMs: 600_000 })
    detail.readMs = Date.now() - t
    detail.readMiBps = +(BIG_MIB / (detail.readMs / 1000)).toFixed(1)
    assert(back.length === size, `read ${back.length} bytes, want ${size}`)
    const got = sha256(back)
    assert(got === want, `sha256 mismatch: read ${got}`)
    const r = await sbx.commands.run(`sha256sum ${p}`, { timeoutMs: 120_000 })
    detail.inSandboxSha256 = r.stdout.split(' ')[0]
    assert(detail.inSandboxSha256 === want, 'sha256sum inside the sandbox differs')
    await sbx.files.remove(p)
  })
}

scenarios.path_escape = async (detail) => {
  await withSandbox(detail, async (sbx) => {
    const hostPasswd = fs.existsSync('/etc/passwd') ? fs.readFileSync('/etc/passwd', 'utf8') : null
    const attempts = (detail.attempts = {})
    for (const p of ['/etc/shadow', '../../../../etc/shadow', '../../../../etc/passwd', '/home/user/../../etc/shadow']) {
      try {
        const v = await sbx.files.read(p)
        attempts[p] = { ok: true, bytes: v.length, equalsHostPasswd: v === hostPasswd }
      } catch (e) {
        attempts[p] = { ok: false, error: errInfo(e) }
      }
    }
    for (const [p, a] of Object.entries(attempts)) {
      assert(!a.ok, `files.read(${p}) succeeded (${a.bytes} bytes)`)
      assert(a.error.class !== 'TypeError' && a.error.class !== 'SyntaxError', `files.read(${p}) failed with a protocol error: ${a.error.message}`)
    }
    const r = await sbx.commands.run('cat /etc/shadow').then(
      (v) => ({ v }),
      (e) => ({ e })
    )
    detail.catShadow = r.v ? { exitCode: r.v.exitCode, stdout: r.v.stdout.slice(0, 100) } : errInfo(r.e)
    assert(!r.v, 'commands.run("cat /etc/shadow") succeeded')
    assert(r.e instanceof CommandExitError && r.e.exitCode !== 0, 'cat /etc/shadow did not fail with a non-zero exit')
  })
}

async function listAll(opts, maxPages = 50) {
  const out = []
  const pg = Sandbox.list(opts)
  for (let i = 0; pg.hasNext && i < maxPages; i++) out.push(...(await pg.nextItems()))
  return out
}

scenarios.list_and_timeout = async (detail) => {
  await withSandbox(detail, async (sbx) => {
    const all = await listAll()
    const mine = all.find((s) => s.sandboxId === sbx.sandboxId)
    detail.listedCount = all.length
    assert(mine, 'Sandbox.list() does not contain our sandbox')
    assert(mine.state === 'running', `listed state ${mine.state}`)
    assert(mine.startedAt instanceof Date && !isNaN(mine.startedAt), 'listed startedAt')
    const metaSbxList = await listAll({ query: { metadata: { e2e: detail.meta } } })
    assert(metaSbxList.some((s) => s.sandboxId === sbx.sandboxId), 'metadata-filtered list misses our sandbox')

    const i1 = await sbx.getInfo()
    detail.endAt1 = i1.endAt
    assert(i1.sandboxId === sbx.sandboxId, 'getInfo sandboxId')
    assert(i1.state === 'running', `getInfo state ${i1.state}`)
    assert(i1.metadata?.e2e === detail.meta, `getInfo metadata ${JSON.stringify(i1.metadata)}`)
    const skew1 = (i1.endAt - Date.now()) / 1000
    assert(Math.abs(skew1 - SANDBOX_TIMEOUT_MS / 1000) < 60, `initial endAt is ${skew1.toFixed(0)} s away`)

    const newTimeout = SANDBOX_TIMEOUT_MS + 180_000
    const tSet = Date.now()
    await sbx.setTimeout(newTimeout)
    const i2 = await sbx.getInfo()
    detail.endAt2 = i2.endAt
    const expected = tSet + newTimeout
    detail.endAt2ErrorS = (i2.endAt - expected) / 1000
    assert(Math.abs(i2.endAt - expected) < 15_000, `endAt after setTimeout off by ${detail.endAt2ErrorS} s`)
    assert(i2.endAt > i1.endAt, 'endAt did not move later')

    const tShort = Date.now()
    await sbx.setTimeout(60_000)
    const i3 = await sbx.getInfo()
    detail.endAt3 = i3.endAt
    detail.endAt3ErrorS = (i3.endAt - (tShort + 60_000)) / 1000
    assert(Math.abs(detail.endAt3ErrorS) < 15, `endAt after shortening off by ${detail.endAt3ErrorS} s`)
    assert((await sbx.isRunning()) === true, 'isRunning() false')
  }, { metadata: { e2e: (detail.meta = `lt-${crypto.randomBytes(4).toString('hex')}`) } })
}

scenarios.other_key = async (detail) => {
  const other = process.env.E2B_API_KEY_OTHER
  assert(other, 'E2B_API_KEY_OTHER is not set')
  assert(other !== process.env.E2B_API_KEY, 'E2B_API_KEY_OTHER equals E2B_API_KEY')
  await withSandbox(detail, async (sbx) => {
    const id = sbx.sandboxId
    const o = { apiKey: other }
    const res = (detail.other = {})
    const before = await sbx.getInfo()

    const killed = await Sandbox.kill(id, o).then((v) => ({ v }), (e) => ({ e }))
    res.kill = killed.e ? errInfo(killed.e) : killed.v
    assert(killed.e || killed.v === false, 'other key could kill the sandbox (kill returned true)')

    const conn = await Sandbox.connect(id, o).then((v) => ({ v }), (e) => ({ e }))
    res.connect = conn.e ? errInfo(conn.e) : 'connected'
    assert(conn.e, 'other key could connect to the sandbox')

    const info = await Sandbox.getInfo(id, o).then((v) => ({ v }), (e) => ({ e }))
    res.getInfo = info.e ? errInfo(info.e) : 'got info'
    assert(info.e, 'other key could getInfo the sandbox')

    const st = await Sandbox.setTimeout(id, 30_000, o).then((v) => ({ v: 'ok' }), (e) => ({ e }))
    res.setTimeout = st.e ? errInfo(st.e) : 'ok'
    assert(st.e, 'other key could setTimeout the sandbox')

    const listed = await listAll(o)
    res.listCount = listed.length
    assert(!listed.some((s) => s.sandboxId === id), 'other key lists the sandbox')

    // envd must refuse requests that do not carry this sandbox's access token
    const sandboxUrl = process.env.E2B_SANDBOX_URL
    if (sandboxUrl) {
      for (const [label, token] of [['no token', null], ['wrong token', 'not-the-token'], ['api key as token', other]]) {
        const headers = { 'Content-Type': 'application/json', 'Connect-Protocol-Version': '1', 'E2b-Sandbox-Id': id, 'E2b-Sandbox-Port': '49983' }
        if (token) headers['X-Access-Token'] = token
        const r = await realFetch(new URL('/process.Process/List', sandboxUrl), { method: 'POST', headers, body: '{}' })
        const body = await r.text()
        res[`envd ${label}`] = r.status
        assert(r.status !== 200, `envd accepted a request with ${label}: ${body.slice(0, 100)}`)
      }
    }

    // the owner still has a working sandbox
    const r = await sbx.commands.run('echo still-alive')
    assert(r.stdout === 'still-alive\n', 'sandbox not usable by its owner afterwards')
    const mine = await sbx.getInfo()
    assert(mine.state === 'running', 'owner getInfo state')
    assert(Math.abs(mine.endAt - before.endAt) < 2_000, `other key changed endAt: ${before.endAt.toISOString()} -> ${mine.endAt.toISOString()}`)
  })
}

scenarios.boundary = async (detail) => {
  let secretFile = process.env.SECRET_FILE
  let createdSecret = null
  if (!secretFile) {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), 'e2e-secret-'))
    secretFile = path.join(d, 'secret.txt')
    fs.writeFileSync(secretFile, `e2e-secret-${crypto.randomBytes(16).toString('hex')}\n`)
    createdSecret = d
  }
  const secret = fs.readFileSync(secretFile, 'utf8').trim()
  assert(secret.length >= 8, 'secret in SECRET_FILE is too short to search for')
  detail.secretFile = secretFile

  let hostPort = process.env.HOST_PORT
  let server = null
  let hits = 0
  if (!hostPort) {
    server = net.createServer((s) => {
      hits++
      s.destroy()
    })
    await new Promise((r) => server.listen(0, '127.0.0.1', r))
    hostPort = String(server.address().port)
  }
  detail.hostPort = hostPort
  try {
    await withSandbox(detail, async (sbx) => {
      const outputs = []
      const run = async (cmd) => {
        const r = await sbx.commands.run(cmd, { timeoutMs: 30_000 }).then((v) => ({ v }), (e) => ({ e }))
        const res = r.v
          ? { exitCode: r.v.exitCode, stdout: r.v.stdout, stderr: r.v.stderr }
          : { error: errInfo(r.e), exitCode: r.e?.exitCode, stdout: r.e?.stdout ?? '', stderr: r.e?.stderr ?? '' }
        outputs.push(res.stdout, res.stderr, res.error?.message ?? '')
        return res
      }
      const q = (s) => `'${s.replace(/'/g, `'\\''`)}'`
      detail.catSecret = await run(`cat ${q(secretFile)}`)
      const tcpCmd = q(`echo boundary > /dev/tcp/127.0.0.1/${hostPort}`)
      detail.tcp = await run(`if command -v timeout >/dev/null; then timeout 10 bash -c ${tcpCmd}; else bash -c ${tcpCmd}; fi`)
      // other ways of reaching host files; only the absence of the secret matters
      detail.extra = await run(
        `for p in ${q(secretFile)} /proc/1/root${q(secretFile)} /proc/self/root${q(secretFile)} /host${q(secretFile)}; do cat "$p" 2>&1; done; grep -rs ${q(secret)} /proc/1/root/tmp /tmp 2>/dev/null | head -1; exit 0`
      )
      const fileRead = await sbx.files.read(secretFile).then((v) => ({ v }), (e) => ({ e }))
      detail.filesRead = fileRead.e ? errInfo(fileRead.e) : { bytes: fileRead.v.length }
      outputs.push(fileRead.v ?? '')

      const cs = detail.catSecret
      assert(cs.error && cs.exitCode !== 0, `cat SECRET_FILE did not fail (exitCode ${cs.exitCode})`)
      const tcp = detail.tcp
      assert(tcp.error, 'connecting to the host listener on 127.0.0.1 succeeded')
      assert(!outputs.some((o) => o.includes(secret)), 'the secret appeared in sandbox output')
      assert(!fileRead.v?.includes(secret), 'files.read returned the secret')
      if (server) {
        await sleep(200)
        detail.listenerHits = hits
        assert(hits === 0, `the host listener received ${hits} connection(s)`)
      }
    })
  } finally {
    server?.close()
    if (createdSecret) fs.rmSync(createdSecret, { recursive: true, force: true })
  }
}

scenarios.watch = async (detail) => {
  await withSandbox(detail, async (sbx) => {
    await sbx.files.makeDir('/home/user/watched/sub')
    const events = []
    const handle = await sbx.files.watchDir('/home/user/watched', (e) => events.push({ name: e.name, type: e.type }), {
      recursive: true,
    })
    try {
      await sbx.files.write('/home/user/watched/a.txt', 'one')
      await sbx.commands.run('echo two > /home/user/watched/sub/b.txt && mkdir /home/user/watched/new && echo three > /home/user/watched/new/c.txt && rm /home/user/watched/a.txt')
      const seen = (name, type) => events.some((e) => e.name === name && e.type === type)
      await waitFor(
        () => seen('a.txt', 'create') && seen('sub/b.txt', 'create') && seen('new', 'create') && seen('new/c.txt', 'create') && seen('a.txt', 'remove'),
        10_000,
        'the watch to report every change'
      )
      // A change outside the watched directory is not reported.
      await sbx.files.write('/home/user/outside.txt', 'x')
      await sleep(500)
      assert(!events.some((e) => e.name.includes('outside')), 'a change outside the watched directory was reported')
    } finally {
      detail.events = events.slice(0, 40)
      await handle.stop()
    }
    // Watching a directory that is not there fails, as envd's does.
    detail.missing = errInfo(await expectReject(sbx.files.watchDir('/home/user/nope', () => {}), 'watchDir of a missing directory'))
  })
}

scenarios.snapshot = async (detail) => {
  await withSandbox(detail, async (sbx) => {
    await sbx.files.write('/home/user/snap/kept.txt', 'in the snapshot')
    const snap = await sbx.createSnapshot()
    detail.snapshotId = snap.snapshotId
    try {
      const listed = []
      for (const p = Sandbox.listSnapshots({ sandboxId: sbx.sandboxId }); p.hasNext; ) listed.push(...(await p.nextItems()))
      detail.listed = listed.map((s) => s.snapshotId)
      assert(detail.listed.includes(snap.snapshotId), 'listSnapshots does not show the new snapshot')
      const again = await Sandbox.create(snap.snapshotId, { timeoutMs: SANDBOX_TIMEOUT_MS })
      try {
        const back = await again.files.read('/home/user/snap/kept.txt')
        assert(back === 'in the snapshot', `the new sandbox reads ${JSON.stringify(back)}`)
        const r = await again.commands.run('cat /home/user/snap/kept.txt')
        assert(r.stdout === 'in the snapshot', `inside it reads ${JSON.stringify(r.stdout)}`)
      } finally {
        await again.kill()
      }
      // Another key cannot start from it.
      const other = await expectReject(
        Sandbox.create(snap.snapshotId, { apiKey: process.env.E2B_API_KEY_OTHER, timeoutMs: SANDBOX_TIMEOUT_MS }),
        'another key creating from the snapshot'
      )
      detail.otherKey = errInfo(other)
    } finally {
      detail.deleted = await Sandbox.deleteSnapshot(snap.snapshotId)
    }
    assert(detail.deleted === true, 'deleteSnapshot did not return true')
    assert((await Sandbox.deleteSnapshot(snap.snapshotId)) === false, 'a second deleteSnapshot did not return false')
  })
}

// ----------------------------------------------------------------- runner ----

const ORDER = [
  'five_requests',
  'stream_stdout',
  'background_kill',
  'stdin',
  'pty',
  'files',
  'big_file',
  'path_escape',
  'list_and_timeout',
  'other_key',
  'boundary',
  'watch',
  'snapshot',
]
const LIMIT_MS = { big_file: 900_000 }

let selected = scenarioArgs.length === 0 || scenarioArgs.includes('all') ? ORDER : scenarioArgs
const unknown = selected.filter((s) => !scenarios[s])
if (unknown.length) {
  console.error(`unknown scenario(s): ${unknown.join(', ')}; known: ${ORDER.join(', ')}`)
  process.exit(2)
}

let failed = 0
for (const name of selected) {
  const detail = { sdk: sdkPkg.version }
  const t0 = Date.now()
  let ok = false
  let timer
  try {
    await Promise.race([
      scenarios[name](detail),
      new Promise((_, rej) => {
        timer = setTimeout(() => rej(new AssertionFailed(`scenario timed out after ${LIMIT_MS[name] ?? 180_000} ms`)), LIMIT_MS[name] ?? 180_000)
      }),
    ])
    ok = true
  } catch (e) {
    detail.error = errInfo(e)
    if (!(e instanceof AssertionFailed) && e?.stack) detail.stack = e.stack.split('\n').slice(0, 6).join('\n')
  } finally {
    clearTimeout(timer)
  }
  detail.durationMs = Date.now() - t0
  if (!ok) failed++
  console.log(
    JSON.stringify({ scenario: name, ok, detail }, (k, v) => (typeof v === 'bigint' ? v.toString() : v))
  )
}
process.exit(failed ? 1 : 0)
