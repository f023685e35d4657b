// Bad settings, as an operator makes them: the real server process refuses each one by name with exit
// 2, at once, before it creates a database or prints a key; a start-up step that fails exits 1 naming
// it (never 7, the code Node gives when TF.js's wasm module rethrows from its own exception handler).
import { execFileSync, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { ROOT, TEST_V8_FLAGS } from './processes.js'
import { freePort } from './topology.js'

/** `npm start` less its compile step (timed here is the start, not a compile of changed sources). */
function start(env: Record<string, string>): Promise<{ code: number | null; output: string; ms: number }> {
  const started = Date.now()
  return new Promise((resolve) => {
    let output = ''
    const child = spawn(process.execPath, [...TEST_V8_FLAGS, 'dist/server.js'], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: '', LOG_LEVEL: 'warn', DEMO_DATA: '0', ADMIN_API_KEY: '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    child.stdout.on('data', (chunk) => (output += chunk))
    child.stderr.on('data', (chunk) => (output += chunk))
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000)
    child.once('exit', (code) => {
      clearTimeout(timer)
      resolve({ code, output, ms: Date.now() - started })
    })
  })
}

t.before(() => {
  execFileSync(process.execPath, ['-e', 'import("./cli/build.mjs").then((m) => m.buildIfStale())'], { cwd: ROOT, stdio: 'inherit' })
})

const BAD: [string, string][] = [
  ['PORT', '99999'],
  ['HOST', 'not_a_host!'],
  ['HOST', 'no-such-host.invalid'],
  ['DATA_DIR', '/etc/passwd/data'],
  ['DATA_DIR', '/proc/1/nonexistent'],
  // Writable by their permission bits for root, yet they take no new directory (a hang, and an EPERM with a stack, before).
  ['DATA_DIR', '/proc/x'],
  ['DATA_DIR', '/sys/x'],
  ['TRUST_PROXY', 'garbage!!'],
  ['CORS_ORIGIN', 'example.org'],
  ['CORS_ORIGIN', 'https://example.org/path'],
  ['RATE_LIMIT_ALLOWLIST', '127.0.0.1,localhost'],
  ['DISTRICT_TYPE_NAME', '  '],
  ['DEMO_DATA', 'yes'],
  ['LOG_LEVEL', 'loud'],
  ['JSON_MAX_DEPTH', '5000'],
]

for (const [name, value] of BAD) {
  t.test(`${name}=${JSON.stringify(value)} stops the start with exit 2, naming it, before anything is made`, async (t) => {
    const parent = mkdtempSync(join(tmpdir(), 'rhizome-settings-'))
    t.teardown(() => rmSync(parent, { recursive: true, force: true }))
    const dataDir = join(parent, 'data')
    const { code, output, ms } = await start({ DATA_DIR: dataDir, [name]: value })
    t.equal(code, 2, output)
    // Before anything is made, and without hanging: a start that stops here takes one or two seconds on
    // an idle machine, three times that under a loaded one's other tests.
    t.ok(ms < 20_000, `exited after ${ms} ms`)
    t.match(output, `Invalid environment variable ${name}=${JSON.stringify(value)}: ${name} takes `, 'the variable, its value and what it takes')
    t.notMatch(output, /admin API key|password|at .+\.js:\d+/, 'no key, no password, no stack')
    t.same(readdirSync(parent), [], 'no data directory, no database, no key file')
  })
}

t.test('the values each variable takes are said, for a number and a choice too', async (t) => {
  const { loadConfig } = await import('../lib/core/config.js')
  t.throws(() => loadConfig({ PORT: 'abc' }), { message: 'Invalid environment variable PORT="abc": PORT takes a whole number from 0 to 65535' })
  t.throws(() => loadConfig({ LOG_LEVEL: 'loud' }), { message: /LOG_LEVEL takes one of fatal, error, warn, info, debug, trace, silent$/ })
  t.throws(() => loadConfig({ AUTH_FAILURE_MAX: '0' }), { message: /AUTH_FAILURE_MAX takes a whole number from 1$/ })
  t.equal(loadConfig({ DISTRICT_TYPE_NAME: '' }).DISTRICT_TYPE_NAME, 'District', 'an empty variable is an unset one: the default')
  t.same(
    loadConfig({ CORS_ORIGIN: 'https://a.example, http://b.example:8080', TRUST_PROXY: '10.0.0.0/8,loopback' }).CORS_ORIGIN,
    'https://a.example, http://b.example:8080',
  )
})

t.test('a step that fails (the port is taken) exits 1 naming it, not 7', async (t) => {
  const port = await freePort()
  const holder = createServer().listen(port, '127.0.0.1')
  t.teardown(() => holder.close())
  const parent = mkdtempSync(join(tmpdir(), 'rhizome-settings-'))
  t.teardown(() => rmSync(parent, { recursive: true, force: true }))
  const { code, output } = await start({ DATA_DIR: join(parent, 'data'), HOST: '127.0.0.1', PORT: String(port) })
  t.equal(code, 1, output)
  t.match(output, `listening on 127.0.0.1:${port} failed (HOST, PORT): listen EADDRINUSE`)
  t.notMatch(output, 'tfjs-backend-wasm')
  t.notOk(existsSync(join(parent, 'data')), 'said before the data directory, the admin key or the demo data were made')
})

t.test(
  'a database that refuses the start is said with the step it stopped, without a stack',
  { skip: !process.env.DATABASE_URL && 'needs PostgreSQL (DATABASE_URL)' },
  async (t) => {
    const parent = mkdtempSync(join(tmpdir(), 'rhizome-settings-'))
    t.teardown(() => rmSync(parent, { recursive: true, force: true }))
    const missing = new URL(process.env.DATABASE_URL!)
    missing.pathname = `/rhizome_missing_${process.pid}`
    const { code, output } = await start({ DATA_DIR: join(parent, 'data'), DATABASE_URL: missing.toString(), PORT: String(await freePort()) })
    t.equal(code, 1, output)
    t.match(output, new RegExp(`\\w[^\\n]* failed: database "rhizome_missing_${process.pid}" does not exist \\(3D000\\)`), 'the step, the reason, its code')
    t.notMatch(output, /at .+\.js:\d+/, 'no stack')
  },
)
