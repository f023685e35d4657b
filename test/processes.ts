// The real server and the CLI as separate processes, as an operator runs them (test/start.test.ts,
// test/backup.test.ts): a server started with `node cli/start.mjs`, a CLI command, a database of its own.
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import type { Test } from 'tap'
import { freePort } from './topology.js'
import { tempDir } from './helper.js'

export const ROOT = fileURLToPath(new URL('..', import.meta.url))

/**
 * The V8 flags the suite runs with (package.json, tap's node-arg), passed on to the processes it starts:
 * short-lived processes spend less on compiling PGlite's WebAssembly than they would win from optimising it.
 * A run with TEST_CPU_PROF (test/run.mjs) profiles them too.
 */
export const TEST_V8_FLAGS = process.execArgv.filter((arg) => arg === '--liftoff-only' || arg === '--wasm-lazy-compilation' || arg.startsWith('--cpu-prof'))
export const ADMIN_KEY = 'd'.repeat(40)

/** A database of its own on the PostgreSQL server (DATABASE_URL runs), dropped at the end. */
export async function postgresDatabase(t: Test): Promise<string | undefined> {
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

export interface Server {
  url: string
  /** The superuser's Authorization header (ADMIN_API_KEY, or the key file of the first start). */
  admin: () => Record<string, string>
  child: ChildProcess
  output: () => string
  stop: () => Promise<void>
}

/**
 * `nodeArgs` go to the server's own node (`--max-old-space-size=256`), not to the compiler it may run first;
 * `env.PORT` starts it on that port (a restart on the port a browser knows), else on a free one.
 */
export async function startServer(t: Test, env: Record<string, string>, nodeArgs: string[] = []): Promise<Server> {
  const port = env.PORT ? Number(env.PORT) : await freePort()
  let output = ''
  const child = spawn(process.execPath, [...TEST_V8_FLAGS, ...nodeArgs, 'cli/start.mjs'], {
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
export async function until200(server: Server, path: string, timeoutMs = 180_000): Promise<number> {
  const started = Date.now()
  // The last answer, said when none is a 200: not listening, or what a health check reported.
  let last = 'not listening'
  while (Date.now() - started < timeoutMs && server.child.exitCode === null) {
    try {
      const response = await fetch(server.url + path, { signal: AbortSignal.timeout(10_000) })
      if (response.status === 200) return (Date.now() - started) / 1000
      last = `${response.status} ${await response.text()}`
    } catch (error) {
      // not listening yet, or listening without answering
      if ((error as Error).name === 'TimeoutError') last = 'no answer within 10 s'
    }
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  const state = server.child.exitCode === null ? `still running after ${Math.round((Date.now() - started) / 1000)} s` : `exited ${server.child.exitCode}`
  throw new Error(`no 200 from ${path} (${state}; last answer: ${last}): ${server.output()}`)
}

/** Processes that keep every core busy for `ms` (bounded: they stop by themselves). */
export function busyMachine(t: Test, cores: number, ms: number) {
  const children = Array.from({ length: cores }, () =>
    spawn(process.execPath, ['-e', `const end = Date.now() + ${ms}; while (Date.now() < end) {}`], { stdio: 'ignore' }),
  )
  t.teardown(() => children.forEach((c) => c.kill()))
}

export function cli(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [...TEST_V8_FLAGS, 'cli/run.mjs', ...args], { cwd: ROOT, env: { ...process.env, ...env } }, (error, stdout, stderr) =>
      resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    )
  })
}

export const api = (server: Pick<Server, 'url' | 'admin'>, path: string, init: RequestInit = {}) =>
  fetch(`${server.url}/api/v1${path}`, { ...init, headers: { ...server.admin(), 'content-type': 'application/json', ...(init.headers ?? {}) } })

/**
 * A server process with the demo data on either engine (`DATA_DIR` a temporary folder; on PostgreSQL a
 * database of its own, the demo loaded by the CLI), ready: what the operator scenarios start from.
 */
export async function demoServer(t: Test, nodeArgs: string[] = [], extraEnv: Record<string, string> = {}) {
  const dataDir = tempDir(t)
  const databaseUrl = await postgresDatabase(t)
  const env = { DATA_DIR: dataDir, DEMO_DATA: '1', ...extraEnv, ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) }
  const server = await startServer(t, env, nodeArgs)
  await until200(server, '/health/ready')
  // The embedded database gets the demo at its first start, PostgreSQL from the CLI.
  if (databaseUrl) t.equal((await cli(['demo'], env)).code, 0, 'demo data loaded')
  return { server, env, dataDir }
}
