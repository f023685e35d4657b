// The real server, started as an operator starts it (`node cli/start.mjs`, what `npm start` runs), and
// the CLI beside it: a first start on a busy machine, writes right after it, a data directory that a
// second process may not open, and operator commands while the server runs, on both engines.
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import t, { type Test } from 'tap'
import { createDatabase } from '../lib/data/database.js'
import { DataDirInUseError } from '../lib/data/data-dir-lock.js'
import { freePort } from './topology.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const ADMIN_KEY = 'd'.repeat(40)

/** A database of its own on the PostgreSQL server (DATABASE_URL runs), dropped at the end. */
async function postgresDatabase(t: Test): Promise<string | undefined> {
  const url = process.env.DATABASE_URL
  if (!url) return undefined
  const name = `rhizome_start_${process.pid}_${Math.floor(Math.random() * 1e6)}`
  const admin = new pg.Client({ connectionString: url })
  await admin.connect()
  await admin.query(`create database ${name}`)
  await admin.end()
  t.teardown(async () => {
    const c = new pg.Client({ connectionString: url })
    await c.connect()
    await c.query(`drop database if exists ${name} with (force)`)
    await c.end()
  })
  const database = new URL(url)
  database.pathname = `/${name}`
  return database.toString()
}

interface Server {
  url: string
  /** The superuser's Authorization header (ADMIN_API_KEY, or the key file of the first start). */
  admin: () => Record<string, string>
  child: ChildProcess
  output: () => string
  stop: () => Promise<void>
}

async function startServer(t: Test, env: Record<string, string>): Promise<Server> {
  const port = await freePort()
  let output = ''
  const child = spawn(process.execPath, ['cli/start.mjs'], {
    cwd: ROOT,
    env: { ...process.env, HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'warn', ADMIN_API_KEY: ADMIN_KEY, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  child.stdout!.on('data', (chunk) => (output += chunk))
  child.stderr!.on('data', (chunk) => (output += chunk))
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const stop = async () => {
    if (child.exitCode === null) child.kill('SIGTERM')
    await exited
  }
  t.teardown(stop)
  const adminKey = () => (env.ADMIN_API_KEY === '' ? readFileSync(join(env.DATA_DIR, 'admin-api-key'), 'utf8').trim() : `admin:${ADMIN_KEY}`)
  return { url: `http://127.0.0.1:${port}`, admin: () => ({ authorization: `ApiKey ${adminKey()}` }), child, output: () => output, stop }
}

/** Polls until the server answers `path` with 200 (or the process ends); returns the seconds it took. */
async function until200(server: Server, path: string, timeoutMs = 180_000): Promise<number> {
  const started = Date.now()
  while (Date.now() - started < timeoutMs && server.child.exitCode === null) {
    try {
      if ((await fetch(server.url + path)).status === 200) return (Date.now() - started) / 1000
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error(`no 200 from ${path}: ${server.output()}`)
}

/** Processes that keep every core busy for `ms` (bounded: they stop by themselves). */
function busyMachine(t: Test, cores: number, ms: number) {
  const children = Array.from({ length: cores }, () =>
    spawn(process.execPath, ['-e', `const end = Date.now() + ${ms}; while (Date.now() < end) {}`], { stdio: 'ignore' }),
  )
  t.teardown(() => children.forEach((c) => c.kill()))
}

function cli(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', 'cli/index.ts', ...args], { cwd: ROOT, env: { ...process.env, ...env } }, (error, stdout, stderr) =>
      resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    )
  })
}

const api = (server: Server, path: string, init: RequestInit = {}) =>
  fetch(`${server.url}/api/v1${path}`, { ...init, headers: { ...server.admin(), 'content-type': 'application/json', ...(init.headers ?? {}) } })

t.test('a first start on a machine whose cores are busy comes up, and a burst of writes right after it gets no 503', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'rhizome-start-'))
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }))
  const databaseUrl = await postgresDatabase(t)
  busyMachine(t, 2, 40_000)
  const server = await startServer(t, { DATA_DIR: dataDir, ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) })
  const seconds = await until200(server, '/health/ready')
  t.pass(`ready after ${seconds.toFixed(1)} s with both cores busy`)
  const statuses: number[] = []
  for (let batch = 0; batch < 5; batch++) {
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => api(server, '/campaign_type/', { method: 'POST', body: JSON.stringify({ name: `burst ${batch}-${i}` }) })),
    )
    statuses.push(...answers.map((a) => a.status))
  }
  t.same([...new Set(statuses)], [201], `100 writes right after the start: ${statuses.filter((s) => s === 503).length} answered 503`)
  const listed = (await (await api(server, '/campaign_type/?name__startswith=burst&limit=1')).json()) as { meta: { total_count: number } }
  t.equal(listed.meta.total_count, 100, 'every write is there')
  t.equal((await fetch(`${server.url}/health/live`)).status, 200)
})

t.test('the embedded database: a second process is refused at once; operator commands go through the running server', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'rhizome-lock-'))
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }))
  // No ADMIN_API_KEY: the first start writes the admin key file, which the CLI then uses.
  const env = { DATA_DIR: dataDir, DATABASE_URL: '', ADMIN_API_KEY: '' }
  const server = await startServer(t, env)
  await until200(server, '/health/ready')
  const pid = server.child.pid!

  // The data directory's files are not opened by a second process, whatever it is.
  const second = createDatabase({ dataDir: join(dataDir, 'pglite') })
  await t.rejects(second, DataDirInUseError)
  await t.rejects(second, { message: new RegExp(`in use by process ${pid} \\(the server at ${server.url}\\)`) })

  const locations = async () => ((await (await api(server, '/location/?limit=1')).json()) as { meta: { total_count: number } }).meta.total_count
  const before = await locations()
  const created = await cli(['create-user', 'carol', '--location', '1'], env)
  t.equal(created.code, 0, 'create-user succeeds', { stderr: created.stderr })
  t.match(created.stderr, `held by the server at ${server.url}: sending create-user there`)
  const key = /^carol:([0-9a-f]{40})$/m.exec(created.stdout)?.[1]
  t.ok(key, `a key is printed: ${created.stdout}`)
  const asCarol = { authorization: `ApiKey carol:${key}` }
  const read = await api(server, '/location/', { headers: asCarol })
  t.equal(read.status, 200, 'the new key works on the running server at once')
  t.equal(((await read.json()) as { meta: { top_lvl_location_id: number } }).meta.top_lvl_location_id, 1, 'with its responsibility')

  const revoked = await cli(['revoke-key', `carol:${key}`], env)
  t.equal(revoked.code, 0, 'revoke-key succeeds', { stderr: revoked.stderr })
  t.match(revoked.stdout, '1 key(s) revoked')
  t.equal((await api(server, '/location/', { headers: asCarol })).status, 401, 'the revoked key is refused on the next request')

  const csv = join(dataDir, 'round.csv')
  writeFileSync(csv, 'campaign,geocode,Vaccinated\nC1,VD11,5\n')
  const uploaded = await cli(['upload', csv, '--type', 'campaign'], env)
  t.equal(uploaded.code, 0, 'upload succeeds', { stderr: uploaded.stderr })
  t.match(uploaded.stderr, 'sending upload there')
  const stats = JSON.parse(uploaded.stdout) as { document_id: number; submissions: { created: number } }
  t.equal(stats.submissions.created, 1, 'the row became a submission on the server')
  t.equal((await api(server, `/document/${stats.document_id}/`)).status, 200, "the document is the server's")

  const demo = await cli(['demo'], env)
  t.equal(demo.code, 1)
  t.match(demo.stderr, `demo cannot run while the server at ${server.url} holds the embedded database: stop the server first`)
  t.equal(await locations(), before, 'nothing was written behind the server')

  // Once the server is gone the lock goes with it, and the CLI opens the database itself.
  await server.stop()
  const direct = await cli(['create-key', 'carol'], env)
  t.equal(direct.code, 0, 'create-key succeeds on its own', { stderr: direct.stderr })
  t.notMatch(direct.stderr, 'sending')
  const restarted = await startServer(t, env)
  await until200(restarted, '/health/ready')
  const newKey = /^carol:([0-9a-f]{40})$/m.exec(direct.stdout)![1]
  t.equal((await api(restarted, '/location/', { headers: { authorization: `ApiKey carol:${newKey}` } })).status, 200, 'nothing was lost')
  t.equal((await api(restarted, '/location/', { headers: asCarol })).status, 401, 'the revoked key stays revoked after a restart')
})

t.test(
  'PostgreSQL: the CLI writes to the database, and the running server hears a revocation at once',
  { skip: process.env.DATABASE_URL ? false : 'needs DATABASE_URL' },
  async (t) => {
    const databaseUrl = (await postgresDatabase(t))!
    const dataDir = mkdtempSync(join(tmpdir(), 'rhizome-pg-'))
    t.teardown(() => rmSync(dataDir, { recursive: true, force: true }))
    const env = { DATA_DIR: dataDir, DATABASE_URL: databaseUrl }
    const server = await startServer(t, env)
    await until200(server, '/health/ready')
    const created = await cli(['create-user', 'dave'], env)
    t.equal(created.code, 0, 'create-user succeeds', { stderr: created.stderr })
    const key = /^dave:([0-9a-f]{40})$/m.exec(created.stdout)![1]
    const asDave = { authorization: `ApiKey dave:${key}` }
    t.equal((await api(server, '/campaign/', { headers: asDave })).status, 200)
    t.equal((await cli(['revoke-key', `dave:${key}`], env)).code, 0)
    let status = 200
    for (let i = 0; i < 40 && status === 200; i++) {
      status = (await api(server, '/campaign/', { headers: asDave })).status
      if (status === 200) await new Promise((resolve) => setTimeout(resolve, 25))
    }
    t.equal(status, 401, 'refused once the notification has arrived (within a second)')
  },
)
