// `npm test [files…]`: the tap suite's fast tier, or the files named (on PGlite, or on PostgreSQL when
// DATABASE_URL is set); `--tier e2e|pg|all` another tier (test/tiers.mjs). Worker processes
// (test/runner/worker.mjs) take the test files from one queue, the slowest of the last run first; each file's output is printed whole when it ends, and the run closes with a plain
// `N passed, N failed` line, then a list of what failed (each failed assertion, where it is and what
// it found), which a long log's tail still shows. The exit code is 1 when anything failed. Each file's time is kept in
// .data/test-times-<engine>.json for `npm run test:slowest` and the next run's order.
import { fork } from 'node:child_process'
import { appendFileSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { buildIfStale } from '../cli/build.mjs'
import { E2E, inTier } from './tiers.mjs'

// TypeScript through tsx, and PGlite's WebAssembly compiled as it is first called. Not `--liftoff-only`
// (which a single file run by tap keeps, package.json): a worker's database lives for the whole run on
// a thread of its own, and optimising its hot functions pays (a tenth less CPU over the fast tier).
// TEST_CPU_PROF=<dir>: every worker, and every server and CLI run the tests start
// (test/processes.ts), writes a V8 CPU profile there.
const CPU_PROFILE = process.env.TEST_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.TEST_CPU_PROF}`] : []
const NODE_ARGS = [...CPU_PROFILE, '--import=tsx', '--wasm-lazy-compilation', '--enable-source-maps']

// `--postgres` (npm run test:pg): on the PostgreSQL server of DATABASE_URL, by default the local one.
// Each test process works in a schema of its own (test/helper.ts) and drops it at its end.
const onPostgres = process.argv.includes('--postgres')
if (onPostgres) process.env.DATABASE_URL ||= 'postgres://postgres@127.0.0.1:5432/postgres'
const engine = process.env.DATABASE_URL ? 'postgres' : 'pglite'
// TEST_TIMES_DIR: where the times are kept (a test of this runner keeps its own).
const TIMES_DIR = process.env.TEST_TIMES_DIR ?? '.data'
const TIMES = `${TIMES_DIR}/test-times-${engine}.json`
const last = existsSync(TIMES) ? JSON.parse(readFileSync(TIMES, 'utf8')) : { files_ms: {} }
// A fresh clone orders its first run by the times of a run kept in the repository (CI's), so that the
// slowest files still start first.
const TYPICAL = `test/typical-times-${engine}.json`
const lastTimes = { ...(existsSync(TYPICAL) ? JSON.parse(readFileSync(TYPICAL, 'utf8')).files_ms : {}), ...last.files_ms }

// `--tier fast|e2e|pg|all` (test/tiers.mjs): the files of a tier when none is named; fast by default.
const args = process.argv.slice(2).filter((arg) => arg !== '--postgres')
const tierAt = args.indexOf('--tier')
const tier = tierAt >= 0 ? args.splice(tierAt, 2)[1] : 'fast'
if (!['fast', 'e2e', 'pg', 'all'].includes(tier)) throw new Error(`--tier ${tier}: fast, e2e, pg or all`)
const named = args
// Worker processes (TEST_JOBS to choose): two in the fast tier on PGlite, where each worker's database
// keeps a thread of its own busy (2 cores: 153 s with two, 187 s with three); three elsewhere, where
// workers wait on Chromium, servers and PostgreSQL's own processes.
const WORKERS = Number(process.env.TEST_JOBS ?? (tier === 'fast' && engine === 'pglite' ? 2 : 3))
const everyFile = readdirSync('test', { recursive: true }).map((f) => `test/${f}`)
const files = (named.length ? named : inTier(tier, everyFile))
  .filter((f) => f.endsWith('.test.ts'))
  .sort((a, b) => (lastTimes[b] ?? Number.POSITIVE_INFINITY) - (lastTimes[a] ?? Number.POSITIVE_INFINITY) || a.localeCompare(b))
const queue = [...files]
const times = {}
const totals = { pass: 0, fail: 0, skip: 0, todo: 0 }
const crashed = []
/** Each failed assertion's line and the first lines of its diagnosis, by file: repeated after the totals, where a log's tail shows them. */
const failures = []
const started = Date.now()

/** How many lines of a failed assertion's YAML diagnosis are searched for what is repeated at the end: what was found and wanted, and where. */
const DIAGNOSIS_LINES = 40
/** How many of those lines are kept for one failure (a long text's diff would fill the log's tail). */
const DIAGNOSIS_KEPT = 8
const DIAGNOSIS_KEYS = /^\s+(?:found|wanted|pattern|message|error|code|fileName|lineNumber|[+-](?![+-]))/

/** A file's own closing line in its worker's TAP: `ok 3 - test/bad-input.test.ts # time=6443.795ms`. */
const FILE_END = /^(?:not )?ok \d+ - (\S+\.test\.ts)(?: # time=([\d.]+)ms)?/

let workersStarted = 0

function startWorker() {
  // TEST_WORKER: the worker's own range of ports for the servers its tests start (test/topology.ts).
  const env = { ...process.env, TEST_WORKER: String(workersStarted++) }
  const worker = fork('test/runner/worker.mjs', [], { execArgv: NODE_ARGS, env, stdio: ['ignore', 'pipe', 'inherit', 'ipc'] })
  let running = null
  let output = ''
  let pending = ''
  let failedHere = []
  let diagnosisLeft = 0
  let keptLeft = 0
  worker.on('message', (message) => {
    if (!message?.next) return
    running = queue.shift() ?? null
    worker.send({ testFile: running })
  })
  worker.stdout.on('data', (chunk) => {
    const lines = (pending + chunk.toString()).split('\n')
    pending = lines.pop()
    for (const line of lines) {
      output += `${line}\n`
      if (/^\s*not ok /.test(line)) {
        failedHere.push(line)
        // A subtest's own line carries its time; the assertion that failed in it, its diagnosis.
        diagnosisLeft = line.includes('# time=') ? 0 : DIAGNOSIS_LINES
        keptLeft = DIAGNOSIS_KEPT
      } else if (diagnosisLeft > 0 && !/^\s*(?:ok |# Subtest|1\.\.)/.test(line)) {
        if (keptLeft > 0 && DIAGNOSIS_KEYS.test(line)) {
          failedHere.push(line)
          keptLeft--
        }
        diagnosisLeft--
      } else diagnosisLeft = 0
      const summary = /^# \{ total: \d+(.*)\}$/.exec(line)
      if (summary) for (const key of Object.keys(totals)) totals[key] += Number(new RegExp(`${key}: (\\d+)`).exec(summary[1])?.[1] ?? 0)
      const end = FILE_END.exec(line)
      if (end) {
        times[end[1]] = Number(end[2] ?? 0)
        if (failedHere.length) failures.push(`${end[1]}:`, ...failedHere.filter((l) => !l.trimStart().startsWith(`not ok`) || !l.includes(end[1])))
        failedHere = []
        process.stdout.write(output)
        output = ''
      }
    }
  })
  return new Promise((resolve) => {
    worker.on('close', (code, signal) => {
      process.stdout.write(output + pending)
      if (code !== 0 && running && !(running in times)) {
        // The process died inside a file (a crash, not a failed assertion): that file failed, the queue goes on.
        console.log(`not ok - ${running} # the test process ended (${signal ?? `exit code ${code}`}) before the file did`)
        crashed.push(running)
        resolve(queue.length ? startWorker() : undefined)
      } else resolve()
    })
  })
}

// The servers, workers and CLI runs the e2e files start run from dist/: compiled once here, not by
// several of them at once. The fast tier starts none.
if (files.some((file) => E2E.has(file))) buildIfStale()
await Promise.all(Array.from({ length: Math.min(WORKERS, files.length) }, startWorker))
const wall = (Date.now() - started) / 1000
// A run of some files updates their times; a tier's wall time is its last whole run's.
if (Object.keys(times).length) {
  mkdirSync(TIMES_DIR, { recursive: true })
  const recorded = { tier_wall_s: { ...last.tier_wall_s, ...(!named.length && { [tier]: Math.round(wall) }) }, files_ms: { ...last.files_ms, ...times } }
  writeFileSync(TIMES, `${JSON.stringify(recorded, null, 1)}\n`)
}
const unfinished = files.filter((f) => !(f in times) && !crashed.includes(f))
if (unfinished.length) console.log(`not finished: ${unfinished.join(', ')}`)
const failed = totals.fail + crashed.length + unfinished.length
const skipped = totals.skip + totals.todo
console.log(
  `\n${engine}, ${named.length ? 'the files named' : `tier ${tier}`}: ${totals.pass} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''} in ${wall.toFixed(0)} s`,
)
if (failures.length || crashed.length || unfinished.length) {
  const report = [
    `what failed (${engine}, ${named.length ? 'the files named' : `tier ${tier}`}):`,
    ...failures,
    ...crashed.map((f) => `${f}: its process ended before it did`),
    ...unfinished.map((f) => `${f}: not finished`),
  ].join('\n')
  console.log(report)
  // TEST_FAILURES_FILE: where CI gathers every tier's report, to print them together at its end.
  if (process.env.TEST_FAILURES_FILE) appendFileSync(process.env.TEST_FAILURES_FILE, `${report}\n`)
}
// A failed assertion fails the run even where no totals were printed (a run under tap, which prints none).
process.exit(failed > 0 || failures.length > 0 ? 1 : 0)
