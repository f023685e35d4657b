// A deployment on one machine, for the scale-out tests and bench: a PostgreSQL primary of its own
// (initdb in a temporary directory, a free loopback port), streaming replicas made by
// deploy/make-replica.sh, server processes started as operators start them (`node cli/start.mjs`),
// and nginx running deploy/nginx/rhizome.conf. Everything is stopped and removed afterwards; the
// machine's own PostgreSQL cluster is never touched.
import { execFile, execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { chmodSync, chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const ROOT = fileURLToPath(new URL('..', import.meta.url))

interface Teardown {
  teardown(fn: () => unknown): void
}

/**
 * A port free now, for a server this test starts. Under `npm test` each worker takes its ports from a
 * range of its own below the ephemeral ones (TEST_WORKER, test/run.mjs), in turn: a port handed to a
 * server that is still starting is never handed to another worker's server meanwhile, nor taken by an
 * outgoing connection. Elsewhere (a benchmark, `npx tap`), any port the system gives.
 */
export async function freePort(): Promise<number> {
  const worker = process.env.TEST_WORKER
  if (worker === undefined) return listenable(0)
  const first = PORTS_FROM + Number(worker) * PORTS_PER_WORKER
  for (let tries = 0; tries < PORTS_PER_WORKER; tries++) {
    const port = first + (nextPort++ % PORTS_PER_WORKER)
    if (await listenable(port).catch(() => 0)) return port
  }
  throw new Error(`no free port in ${first}–${first + PORTS_PER_WORKER - 1}`)
}

const PORTS_FROM = 20_000
const PORTS_PER_WORKER = 500
let nextPort = 0

/** Binds `port` (0: any) on loopback and lets it go; the port bound. */
async function listenable(port: number): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, '127.0.0.1', resolve)
  })
  const bound = (server.address() as { port: number }).port
  await new Promise((resolve) => server.close(resolve))
  return bound
}

const BIN = (() => {
  try {
    return execFileSync('pg_config', ['--bindir'], { encoding: 'utf8' }).trim()
  } catch {
    return ''
  }
})()

/** Whether a PostgreSQL server of the test's own can be started here (its binaries), or what is missing. */
export function missingPostgres(): string | undefined {
  if (!BIN || !existsSync(join(BIN, 'initdb'))) return 'needs the PostgreSQL server binaries (pg_config --bindir)'
  return undefined
}

/** What the topology needs that this machine may lack, or undefined when it has everything. */
export function missingTools(): string | undefined {
  const postgres = missingPostgres()
  if (postgres) return postgres
  if (spawnSync('nginx', ['-v']).error) return 'needs nginx (Debian package nginx-light or nginx; .ci/run installs it)'
  return undefined
}

// PostgreSQL refuses to run as root: as root, its tools run as the `postgres` user.
const asRoot = process.getuid?.() === 0
const postgresCommand = (command: string, args: string[]): [string, string[]] =>
  asRoot ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args]

export function runAsPostgres(command: string, args: string[]) {
  const [file, argv] = postgresCommand(command, args)
  const result = spawnSync(file, argv, { encoding: 'utf8' })
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')}: ${result.stderr || result.stdout}`)
  return result.stdout
}

/** A directory PostgreSQL may own. */
export function postgresDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }))
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }))
    chownSync(dir, uid, gid)
  }
  return dir
}

export interface Cluster {
  url: string
  port: number
  dir: string
  /** Asynchronous (pg_ctl runs beside this process's event loop: a load generator here keeps going). */
  start(): Promise<void>
  stop(): Promise<void>
  /** Its server's processes now: the postmaster and its children (backends, WAL sender or receiver…). */
  pids(): number[]
}

/** `pid` and its child processes. */
export function withChildren(pid: number): number[] {
  return [
    pid,
    ...spawnSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' })
      .stdout.split('\n')
      .filter(Boolean)
      .map(Number),
  ]
}

/** Resolves once none of `pids` runs any more, or after `timeoutMs`. */
async function gone(pids: number[], timeoutMs: number): Promise<void> {
  const running = (pid: number) => {
    try {
      process.kill(pid, 0)
      return true
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === 'EPERM'
    }
  }
  const deadline = Date.now() + timeoutMs
  while (pids.some(running) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100))
}

/** `command` as the PostgreSQL user, without blocking this process. */
function runAsPostgresAsync(command: string, args: string[]): Promise<void> {
  const [file, argv] = postgresCommand(command, args)
  return new Promise((resolve, reject) => {
    execFile(file, argv, (error, stdout, stderr) => (error ? reject(new Error(`${command} ${args.join(' ')}: ${stderr || stdout}`)) : resolve()))
  })
}

function cluster(t: Teardown, dir: string, port: number): Cluster {
  const data = join(dir, 'data')
  let running = false
  const start = async () => {
    await runAsPostgresAsync(join(BIN, 'pg_ctl'), ['-D', data, '-l', join(dir, 'log'), '-w', '-t', '60', 'start'])
    running = true
  }
  const stop = async () => {
    if (!running) return
    await runAsPostgresAsync(join(BIN, 'pg_ctl'), ['-D', data, '-m', 'fast', '-w', 'stop'])
    running = false
  }
  t.teardown(async () => {
    // Its files go once its processes are gone: a server still stopping (a benchmark's stop may signal
    // it too, and a busy machine stops it slowly) writes into a directory being removed.
    const serving = pids()
    try {
      await stop()
    } finally {
      await gone(serving, 30_000)
      rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 })
    }
  })
  const pids = () => {
    try {
      return withChildren(Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]))
    } catch {
      return []
    }
  }
  return { url: `postgres://postgres@127.0.0.1:${port}/postgres`, port, dir, start, stop, pids }
}

/** A primary of its own: initdb, trust on loopback (replication too), a free port; started. */
export async function startPrimary(t: Teardown): Promise<Cluster> {
  const dir = postgresDir('rhizome-primary-')
  const port = await freePort()
  runAsPostgres(join(BIN, 'initdb'), ['-D', join(dir, 'data'), '-U', 'postgres', '--auth=trust', '--no-sync'])
  // Fast and disposable: no fsync; the socket in its own directory.
  writeFileSync(
    join(dir, 'data', 'postgresql.auto.conf'),
    [
      `port = ${port}`,
      "listen_addresses = '127.0.0.1'",
      `unix_socket_directories = '${dir}'`,
      'fsync = off',
      'wal_level = replica',
      'max_wal_senders = 5',
      '',
    ].join('\n'),
  )
  const primary = cluster(t, dir, port)
  await primary.start()
  return primary
}

/** A streaming replica of `primary`, made by deploy/make-replica.sh; started. */
export async function startReplica(t: Teardown, primary: Cluster): Promise<Cluster> {
  const dir = postgresDir('rhizome-replica-')
  const port = await freePort()
  const script = spawnSync(join(ROOT, 'deploy', 'make-replica.sh'), [primary.url, join(dir, 'data'), String(port)], { encoding: 'utf8' })
  if (script.status !== 0) throw new Error(`make-replica.sh: ${script.stderr}`)
  const replica = cluster(t, dir, port)
  await replica.start()
  return replica
}

export interface Server {
  url: string
  port: number
  child: ChildProcess
  output(): string
  /** The pids of its server processes when it runs several (WEB_CONCURRENCY), else its own. */
  processes(): number[]
  stop(): Promise<void>
}

/** `node cli/start.mjs` with `env`, on a free port; resolved once /health answers 200. */
export async function startServer(t: Teardown, env: Record<string, string>): Promise<Server> {
  const port = await freePort()
  let output = ''
  const child = spawn(process.execPath, ['cli/start.mjs'], {
    cwd: ROOT,
    env: { ...process.env, HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  child.stdout!.on('data', (chunk) => (output += chunk))
  child.stderr!.on('data', (chunk) => (output += chunk))
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
    await exited
  }
  t.teardown(stop)
  const url = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 120_000
  for (;;) {
    try {
      if ((await fetch(`${url}/health`)).status === 200) break
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`no server on ${port}: ${output}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  const processes = () => {
    const [, ...children] = withChildren(child.pid!)
    return children.length ? children : [child.pid!]
  }
  return { url, port, child, output: () => output, processes, stop }
}

/** Waits until the server answers /health/ready with all its processes (a cluster's `count`). */
export async function allProcessesUp(server: Server, count: number, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (server.processes().length < count) {
    if (Date.now() > deadline) throw new Error(`${server.processes().length} of ${count} processes: ${server.output()}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

export interface Proxy {
  url: string
  stop(): void
  /** nginx's master and worker processes. */
  pids(): number[]
}

/** nginx running deploy/nginx/rhizome.conf with `upstreams` (ports), on a free port. */
export async function startNginx(t: Teardown, upstreams: number[]): Promise<Proxy> {
  const dir = mkdtempSync(join(tmpdir(), 'rhizome-nginx-'))
  // nginx's worker processes (an unprivileged user when started as root) write request bodies here.
  chmodSync(dir, 0o777)
  const port = await freePort()
  // The site's placeholders are envsubst's `${NAME}`, literally.
  const site = readFileSync(join(ROOT, 'deploy', 'nginx', 'rhizome.conf'), 'utf8')
    // biome-ignore lint/suspicious/noTemplateCurlyInString: envsubst's placeholder, not a template
    .replaceAll('${RHIZOME_LISTEN}', `127.0.0.1:${port}`)
    // biome-ignore lint/suspicious/noTemplateCurlyInString: envsubst's placeholder, not a template
    .replaceAll('${RHIZOME_UPSTREAMS}', upstreams.map((p) => `server 127.0.0.1:${p};`).join(' '))
  writeFileSync(join(dir, 'rhizome.conf'), site)
  writeFileSync(
    join(dir, 'nginx.conf'),
    `worker_processes 2;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  include ${dir}/rhizome.conf;
}
`,
  )
  const child = spawn('nginx', ['-p', dir, '-c', join(dir, 'nginx.conf'), '-g', 'daemon off;'], { stdio: ['ignore', 'ignore', 'pipe'] })
  let errors = ''
  child.stderr!.on('data', (chunk) => (errors += chunk))
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const stop = () => {
    if (child.exitCode === null) child.kill('SIGQUIT')
  }
  t.teardown(async () => {
    stop()
    await exited
    rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 })
  })
  const url = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 10_000
  for (;;) {
    try {
      await fetch(`${url}/health/live`)
      break
    } catch {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`nginx did not start: ${errors}`)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }
  return { url, stop, pids: () => withChildren(child.pid!) }
}
