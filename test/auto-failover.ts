// A pg_auto_failover formation on this machine for test/failover.test.ts, as docs/operations.md sets
// one up on three machines: a monitor, a primary and a synchronous standby, each run by
// deploy/auto-failover.sh on an address of its own (127.0.0.2, .3 and .4 standing in for three hosts)
// and a free port, in temporary directories, with scram-sha-256 and TLS (a CA and a certificate made
// here, the addresses in its subjectAltName). A node is lost as a machine is (every process of it
// killed at once) and started again to rejoin; everything is stopped and removed afterwards.
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { chmodSync, chownSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { freePort, postgresDir, ROOT, runAsPostgres } from './topology.js'
import { takesWrites } from '../lib/data/writable-host.js'

interface Teardown {
  teardown(fn: () => unknown): void
}

const SCRIPT = join(ROOT, 'deploy', 'auto-failover.sh')
/** The three hosts: the monitor's address, then the nodes'. */
const MONITOR_HOST = '127.0.0.2'
const NODE_HOSTS = ['127.0.0.3', '127.0.0.4']
/** The servers' role and its password (deploy/auto-failover.sh `role`). */
export const APP_ROLE = 'rhizome'
const PASSWORDS = { monitor: 'monitor-secret-1', replication: 'replication-secret-1', app: 'app-secret-1' }

/** Why the formation cannot run here, or undefined. */
export function missingAutoFailover(): string | undefined {
  if (spawnSync('pg_autoctl', ['--version']).error)
    return 'needs pg_auto_failover (Debian packages postgresql-15-auto-failover and pg-auto-failover-cli; .ci/run installs them)'
  if (spawnSync('openssl', ['version']).error) return 'needs openssl (its certificates)'
  return undefined
}

/** A CA and a server certificate for every address, readable by postgres; the key private to it. */
function makeCertificates(dir: string) {
  const file = (name: string) => join(dir, name)
  const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'ignore' })
  openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', file('ca.key'), '-out', file('ca.crt'), '-days', '2', '-subj', '/CN=rhizome test CA')
  openssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', file('server.key'), '-out', file('server.csr'), '-subj', '/CN=rhizome test node')
  writeFileSync(file('san.ext'), `subjectAltName=${[MONITOR_HOST, ...NODE_HOSTS].map((ip) => `IP:${ip}`).join(',')}\n`)
  openssl(
    'x509',
    '-req',
    '-in',
    file('server.csr'),
    '-CA',
    file('ca.crt'),
    '-CAkey',
    file('ca.key'),
    '-CAcreateserial',
    '-out',
    file('server.crt'),
    '-days',
    '2',
    '-extfile',
    file('san.ext'),
  )
  if (process.getuid?.() === 0) {
    const [uid, gid] = ['-u', '-g'].map((flag) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' })))
    for (const name of ['ca.crt', 'server.crt', 'server.key']) chownSync(file(name), uid, gid)
  }
  chmodSync(file('server.key'), 0o600)
  return { ca: file('ca.crt'), cert: file('server.crt'), key: file('server.key') }
}

export interface FormationNode {
  host: string
  port: number
  /** As the servers' role, over TLS. */
  url: string
  /** The machine lost: pg_autoctl, PostgreSQL and everything they started, killed at once. */
  kill(): void
  /** Started again (it rejoins the formation as a standby). */
  start(): void
  /**
   * Its PostgreSQL hung: every process of it stopped (SIGSTOP: the sockets stay open and nothing
   * answers), pg_autoctl left running, as a frozen database process is. Returns how to resume it.
   */
  hang(): () => void
}

/** One role of the script, run as a child process with the settings `env`. */
function role(args: string[], env: Record<string, string>): { kill(): void; start(): void; output(): string } {
  let child: ChildProcess | undefined
  let output = ''
  return {
    start() {
      child = spawn(SCRIPT, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } })
      child.stdout!.on('data', (chunk) => (output = (output + chunk).slice(-20_000)))
      child.stderr!.on('data', (chunk) => (output = (output + chunk).slice(-20_000)))
    },
    kill() {
      // pg_autoctl starts PostgreSQL in a session of its own: the whole tree is found first, then killed at once.
      if (child?.pid) spawnSync('kill', ['-KILL', ...descendants(child.pid).map(String)])
      child = undefined
    },
    output: () => output,
  }
}

/** `pid` and every process under it. */
function descendants(pid: number): number[] {
  const children = spawnSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' })
    .stdout.split('\n')
    .filter(Boolean)
    .map(Number)
  return [pid, ...children.flatMap(descendants)]
}

/** `sql`'s one value, asked of the node on `port` over its local socket as postgres (whatever the node's network rules). */
function askLocally(port: number, sql: string): string {
  return runAsPostgres('psql', ['-X', '-A', '-t', '-q', '-p', String(port), '-d', 'rhizome', '-c', sql]).trim()
}

/** Polls until `primary` has a synchronous standby, checkpointing so its base backup need not wait for a spread checkpoint. */
export async function untilSynchronous(primary: FormationNode, timeoutMs = 120_000) {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    try {
      askLocally(primary.port, 'checkpoint')
      const streaming = askLocally(primary.port, `select count(*) from pg_stat_replication where sync_state in ('sync', 'quorum') and state = 'streaming'`)
      if (Number(streaming) > 0) return
    } catch {
      // not up yet
    }
    await new Promise((resolve) => setTimeout(resolve, 500))
  }
  throw new Error(`no synchronous standby of ${primary.host}:${primary.port} within ${timeoutMs / 1000} s`)
}

/**
 * The monitor and two nodes, the first the primary with the second its synchronous standby, as
 * docs/operations.md runs them on three machines (scram, TLS, the servers' network allowed); the role
 * `rhizome` made. `uri`: the monitor's DATABASE_URL for the servers (no user); `appUri` with the role.
 */
export async function startFormation(t: Teardown) {
  const [monitorPort, ...ports] = await Promise.all([freePort(), freePort(), freePort()])
  const dir = postgresDir('rhizome-failover-')
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const tls = makeCertificates(dir)
  const verified = `sslmode=verify-full&sslrootcert=${encodeURIComponent(tls.ca)}`
  // Every connection here comes from 127.0.0.1, whatever address it goes to: the "network" is loopback's.
  const env = {
    PGAF_AUTH: 'scram-sha-256',
    PGAF_NETWORK: '127.0.0.0/8',
    PGAF_APP_NETWORK: '127.0.0.1/32',
    PGAF_MONITOR_PASSWORD: PASSWORDS.monitor,
    PGAF_REPLICATION_PASSWORD: PASSWORDS.replication,
    PGAF_APP_PASSWORD: PASSWORDS.app,
    PGAF_SSL_CA: tls.ca,
    PGAF_SSL_CERT: tls.cert,
    PGAF_SSL_KEY: tls.key,
  }
  const monitor = role(['monitor', join(dir, 'monitor'), String(monitorPort), MONITOR_HOST], env)
  const monitorUrl = `postgres://autoctl_node:${PASSWORDS.monitor}@${MONITOR_HOST}:${monitorPort}/pg_auto_failover?${verified}`
  const nodes: FormationNode[] = ports.map((port, i) => {
    const host = NODE_HOSTS[i]
    const process = role(['node', join(dir, `node-${port}`), String(port), monitorUrl, host], env)
    const url = `postgres://${APP_ROLE}:${PASSWORDS.app}@${host}:${port}/rhizome?${verified}`
    const hang = () => {
      const postmaster = Number(readFileSync(join(dir, `node-${port}`, 'pgdata', 'postmaster.pid'), 'utf8').split('\n')[0])
      const pids = descendants(postmaster).map(String)
      spawnSync('kill', ['-STOP', ...pids])
      return () => void spawnSync('kill', ['-CONT', ...pids])
    }
    return { host, port, url, kill: process.kill, start: process.start, hang }
  })
  t.teardown(() => {
    for (const node of nodes) node.kill()
    monitor.kill()
  })
  monitor.start()
  await until(() => takesWrites(monitorUrl), 'the monitor, as autoctl_node with its password over TLS')
  nodes[0].start()
  // The servers' role, as docs/operations.md has it made: once, on the primary, as soon as it takes writes.
  await until(async () => spawnSync(SCRIPT, ['role', String(ports[0])], { env: { ...process.env, ...env } }).status === 0, 'the first node as primary')
  await until(() => takesWrites(nodes[0].url), 'the first node, as the role over TLS')
  nodes[1].start()
  await untilSynchronous(nodes[0])
  const uri = execFileSync(SCRIPT, ['uri', join(dir, 'monitor')], { encoding: 'utf8', env: { ...process.env, ...env } }).trim()
  return { uri, appUri: uri.replace('postgres://', `postgres://${APP_ROLE}:${PASSWORDS.app}@`), nodes }
}

async function until(probe: () => Promise<boolean>, what: string, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`${what}: not ready within ${timeoutMs / 1000} s`)
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
}
