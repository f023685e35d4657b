// A pg_auto_failover formation on this machine for test/failover.test.ts: a monitor, a primary and a
// synchronous standby, each run by deploy/auto-failover.sh on a free loopback port, in temporary
// directories. A node is lost as a machine is (every process of it killed at once) and
// started again to rejoin; everything is stopped and removed afterwards.
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import pg from 'pg'
import { freePort, postgresDir, ROOT } from './topology.js'
import { takesWrites } from '../lib/data/writable-host.js'

interface Teardown {
  teardown(fn: () => unknown): void
}

const SCRIPT = join(ROOT, 'deploy', 'auto-failover.sh')

/** Why the formation cannot run here, or undefined. */
export function missingAutoFailover(): string | undefined {
  if (spawnSync('pg_autoctl', ['--version']).error)
    return 'needs pg_auto_failover (Debian packages postgresql-15-auto-failover and pg-auto-failover-cli; .ci/run installs them)'
  return undefined
}

export interface FormationNode {
  port: number
  url: string
  /** The machine lost: pg_autoctl, PostgreSQL and everything they started, killed at once. */
  kill(): void
  /** Started again (it rejoins the formation as a standby). */
  start(): void
}

/** One role of the script, run as a child process. */
function role(args: string[]): { kill(): void; start(): void; output(): string } {
  let child: ChildProcess | undefined
  let output = ''
  return {
    start() {
      child = spawn(SCRIPT, args, { stdio: ['ignore', 'pipe', 'pipe'] })
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

/** Polls until `primary` has `standby` as its synchronous standby, checkpointing so its base backup need not wait for a spread checkpoint. */
export async function untilSynchronous(primary: FormationNode, timeoutMs = 120_000) {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    const client = new pg.Client({ connectionString: primary.url, connectionTimeoutMillis: 1000 })
    client.on('error', () => {})
    try {
      await client.connect()
      await client.query('checkpoint')
      const { rows } = await client.query(`select count(*)::int as n from pg_stat_replication where sync_state in ('sync', 'quorum') and state = 'streaming'`)
      if (rows[0].n > 0) return
    } catch {
      // not up yet
    } finally {
      await client.end().catch(() => {})
    }
    await new Promise((resolve) => setTimeout(resolve, 500))
  }
  throw new Error(`no synchronous standby of ${primary.url} within ${timeoutMs / 1000} s`)
}

/** The monitor and two nodes, the first the primary with the second its synchronous standby; the role `rhizome` made. */
export async function startFormation(t: Teardown) {
  const [monitorPort, ...ports] = await Promise.all([freePort(), freePort(), freePort()])
  const dir = postgresDir('rhizome-failover-')
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const monitor = role(['monitor', join(dir, 'monitor'), String(monitorPort)])
  const monitorUrl = `postgres://autoctl_node@127.0.0.1:${monitorPort}/pg_auto_failover`
  const nodes: FormationNode[] = ports.map((port) => {
    const process = role(['node', join(dir, `node-${port}`), String(port), monitorUrl])
    return { port, url: `postgres://postgres@127.0.0.1:${port}/rhizome`, kill: process.kill, start: process.start }
  })
  t.teardown(() => {
    for (const node of nodes) node.kill()
    monitor.kill()
  })
  monitor.start()
  await until(() => takesWrites(`postgres://postgres@127.0.0.1:${monitorPort}/pg_auto_failover`), 'the monitor')
  nodes[0].start()
  await until(() => takesWrites(nodes[0].url), 'the first node as primary')
  nodes[1].start()
  await untilSynchronous(nodes[0])
  // The servers' role, as docs/operations.md has it made: once, on the primary.
  execFileSync(SCRIPT, ['role', String(ports[0])], { encoding: 'utf8' })
  const uri = execFileSync(SCRIPT, ['uri', join(dir, 'monitor')], { encoding: 'utf8' }).trim()
  return { uri, nodes }
}

async function until(probe: () => Promise<boolean>, what: string, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`${what}: not ready within ${timeoutMs / 1000} s`)
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
}
