// Every benchmark that creates scratch databases, directories or processes says what it is doing within
// 10 s, and one stopped with SIGINT (Ctrl-C) or SIGTERM leaves none of them behind (bench/scratch.ts):
// each stopped once, early, with small settings, at a moment of its setup (a database being created, a
// server starting, Chromium starting, seeding with a connection of its own open) or of its
// measurement; no load is measured here (timing belongs to bench/). On PGlite the benchmarks of the
// embedded database; with DATABASE_URL those that create scratch databases on that server, and
// bench:scale-out where nginx and the PostgreSQL server binaries are installed. One at a time: the
// benchmarks listen on fixed ports.
import { spawn } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import t from 'tap'
import { ROOT } from './processes.js'
import { missingTools } from './topology.js'

interface Case {
  bench: string
  /** The moment, in words. */
  when: string
  /** Stopped once the bench has printed this… */
  at: RegExp
  /** …and its server answers /health on this port… */
  health?: number
  /** …and this many ms more. */
  after?: number
  signal?: 'SIGINT' | 'SIGTERM'
  /** The signal to the bench's whole process group, as Ctrl-C in a terminal sends it: its servers get it too. */
  group?: boolean
  /** A second signal while the first's stop runs (Ctrl-C pressed twice, or tsx passing the first on under `npm run`). */
  twice?: boolean
  env?: Record<string, string>
  /** Why it cannot run here. */
  skip?: string
}

const pglite: Case[] = [
  { bench: 'metrics', when: 'while its server starts', at: /starting dist\/server\.js/, env: { BENCH_SECONDS: '1', BENCH_PAIRS: '1' } },
  { bench: 'export', when: 'while its server starts', at: /starting dist\/server\.js/, signal: 'SIGTERM' },
  { bench: 'event-loop', when: 'by Ctrl-C, while its server starts', at: /starting .*dist\/server\.js/, group: true, env: { BENCH_UPLOAD_MB: '1' } },
  { bench: 'node-lines', when: 'while its second server starts', at: /starting dist\/server\.js/, env: { BENCH_SECONDS: '1', BENCH_PAIRS: '1' } },
  {
    bench: 'detect',
    when: 'by Ctrl-C, mid-measurement',
    at: /1: hello-world \(bare Fastify\): 2 s of warm-up/,
    after: 1000,
    group: true,
    env: { BENCH_SECONDS: '1', BENCH_PAIRS: '1' },
  },
  { bench: 'api', when: 'while its first server starts', at: /starting --import tsx bench\/hello\.ts/, signal: 'SIGTERM' },
]
const postgres: Case[] = [
  { bench: 'ingest', when: 'while its database is being created', at: /scratch database/, env: { BENCH_ROWS: '1000' } },
  { bench: 'soak', when: 'while its server starts', at: /starting dist\/server\.js/, signal: 'SIGTERM', env: { BENCH_SECONDS: '1' } },
  {
    bench: 'jobs',
    when: 'while it seeds, its own connection to the database open',
    at: /starting dist\/server\.js/,
    health: 4007,
    after: 1000,
    env: { BENCH_ROWS: '1000', BENCH_ROUNDS: '1' },
  },
  { bench: 'reads', when: 'by Ctrl-C twice, while its database is being created', at: /scratch database/, group: true, twice: true },
  { bench: 'web', when: 'while Chromium starts', at: /starting dist\/server\.js/, health: 4011, after: 300, env: { BENCH_RUNS: '1' } },
]
const scaleOut: Case = { bench: 'scale-out', when: 'once its primary and replica are up, while its first server starts', at: /starting the first server/ }

/** The benchmark as `npm run bench:…` runs it (node with tsx's loader), in a process group of its own, its output gathered. */
function bench(file: string, env: Record<string, string>) {
  let output = ''
  // TEST_WORKER unset: test/topology.ts (bench:scale-out) then takes any free port, not this worker's range.
  const child = spawn(process.execPath, ['--import', 'tsx', file], {
    cwd: ROOT,
    env: { ...process.env, TEST_WORKER: undefined, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  })
  child.stdout.on('data', (chunk) => (output += chunk))
  child.stderr.on('data', (chunk) => (output += chunk))
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  return { child, output: () => output, exited }
}

async function until(what: () => boolean | Promise<boolean>, ms: number) {
  const deadline = Date.now() + ms
  while (!(await what()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
  return what()
}

const healthy = (port: number) =>
  fetch(`http://127.0.0.1:${port}/health`).then(
    (res) => res.status === 200,
    () => false,
  )

/** Every process now running, with its parent and command line. */
function processTable() {
  const table: Array<{ pid: number; ppid: number; command: string }> = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      const [state, ppid] = stat.slice(stat.lastIndexOf(') ') + 2).split(' ')
      if (state === 'Z') continue
      table.push({ pid: Number(entry), ppid: Number(ppid), command: readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ') })
    } catch {
      // gone meanwhile
    }
  }
  return table
}

/** The processes under `pid`, its children's children included. */
function descendants(pid: number) {
  const table = processTable()
  const found: typeof table = []
  for (let parents = new Set([pid]); parents.size; ) {
    const children = table.filter((p) => parents.has(p.ppid))
    found.push(...children)
    parents = new Set(children.map((p) => p.pid))
  }
  return found
}

/** The benchmarks' own temporary directories (bench/scratch.ts, bench/detect.ts) changed since `since`. */
function benchDirsChangedSince(since: number) {
  return readdirSync(tmpdir())
    .filter((name) => name.startsWith('rhizome-bench-'))
    .map((name) => join(tmpdir(), name))
    .filter((path) => {
      try {
        return statSync(path).ctimeMs >= since
      } catch {
        return false
      }
    })
}

function stopCase(c: Case, adminUrl?: string) {
  const signal = c.signal ?? 'SIGINT'
  t.test(`bench:${c.bench}, stopped with ${signal} ${c.when}: said something within 10 s, left nothing behind`, { skip: c.skip }, async (t) => {
    const began = Date.now()
    const run = bench(`bench/${c.bench}.ts`, { ...(adminUrl ? { BENCH_DATABASE_URL: adminUrl } : {}), ...c.env })
    const kill = (sig: NodeJS.Signals, group = c.group) => {
      try {
        process.kill(group ? -run.child.pid! : run.child.pid!, sig)
      } catch {
        // exited
      }
    }
    t.teardown(() => kill('SIGKILL', true))
    t.ok(await until(() => /\[bench \d+ s\] /.test(run.output()), 10_000), `said something within 10 s: ${run.output()}`)
    let reached = await until(() => c.at.test(run.output()), 90_000)
    if (reached && c.health) reached = await until(() => healthy(c.health!), 90_000)
    t.ok(reached, `reached the moment: ${run.output()}`)
    await new Promise((resolve) => setTimeout(resolve, c.after ?? 0))
    const children = descendants(run.child.pid!)
    kill(signal)
    if (c.twice && (await until(() => /: stopping /.test(run.output()), 10_000))) kill(signal)
    t.equal(await run.exited, signal === 'SIGINT' ? 130 : 143, `exit code, output: ${run.output()}`)
    t.match(run.output(), /cleaned up/)

    // Its processes: every one running at the signal, and any running from a directory it printed.
    const printed = [...new Set(run.output().match(new RegExp(`${tmpdir()}/rhizome-[\\w.-]+`, 'g')))]
    const stillRunning = () =>
      processTable().filter(
        (p) => children.some((child) => child.pid === p.pid && child.command === p.command) || printed.some((dir) => p.command.includes(dir)),
      )
    await until(() => stillRunning().length === 0, 5_000)
    t.same(
      stillRunning().map((p) => p.command),
      [],
      'no process left running',
    )
    // Its directories: those it printed, and any of the benchmarks' own made or changed meanwhile.
    const dirs = [...new Set([...printed, ...benchDirsChangedSince(began)])]
    t.same(
      dirs.filter((dir) => existsSync(dir)),
      [],
      `no directory left (of ${dirs.length})`,
    )
    // Its databases: every scratch database is named after the bench's pid.
    if (adminUrl) {
      const admin = new pg.Client({ connectionString: adminUrl })
      await admin.connect()
      t.teardown(() => admin.end())
      const names = [...run.output().matchAll(/scratch database (\w+)/g)].map((m) => m[1])
      const { rows } = await admin.query(`select datname from pg_database where datname = any($1) or datname ~ ('^rhizome_.*_' || $2 || '$')`, [
        names,
        run.child.pid,
      ])
      t.same(
        rows.map((r) => r.datname),
        [],
        `no database left (printed: ${names.join(', ') || 'none'})`,
      )
    }
  })
}

const adminUrl = process.env.DATABASE_URL
for (const c of pglite) stopCase({ ...c, skip: adminUrl && 'the PGlite run has it' })
for (const c of postgres) stopCase({ ...c, skip: !adminUrl ? 'needs DATABASE_URL' : undefined }, adminUrl)
stopCase({ ...scaleOut, skip: !adminUrl ? 'needs DATABASE_URL' : missingTools() })
