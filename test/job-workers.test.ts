// Job worker processes (`npm run worker`, worker.ts) on PostgreSQL: two workers and one job run it
// once; a worker killed half-way through a job (SIGKILL) leaves it to another, and the database ends
// as after one clean run; a worker stopped during a job hands it back.
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import t, { type Test } from 'tap'
import { sql, type Kysely } from 'kysely'
import { buildApp } from '../app.js'
import { createDatabase } from '../lib/data/database.js'
import { migrateToLatest } from '../lib/data/migrations.js'
import { createApiKey, createUser } from '../lib/data/auth.js'
import { jobsSchemaOf } from '../lib/data/job-queue.js'
import type { DB } from '../schemas/index.js'
import { admin, ADMIN_KEY, eventually, rowCounts } from './helper.js'
import { client } from './api.js'
import { atHalfWay, halfWayUpload } from './fixtures.js'
import { TEST_V8_FLAGS } from './processes.js'
import { lockKey } from '../lib/data/lock-keys.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const url = process.env.DATABASE_URL
const skip = !url && 'needs DATABASE_URL (a worker process needs PostgreSQL)'
const ASYNC = { ...admin, prefer: 'respond-async' }
// Small expiry (also the submitting API's, test below) and maintenance intervals, so that a lost job is
// taken up again within seconds; not smaller than a 3,000-row transform takes on a loaded 2-core
// machine (over 10 s was seen): an attempt still running at its expiry is taken up again by pg-boss
// while it goes on, and its work would then be done twice (docs/decisions.md, "Jobs past their expiry").
const EXPIRE_SECONDS = 30
const WORKER_ENV = { JOB_POLL_MS: '500', JOB_EXPIRE_SECONDS: String(EXPIRE_SECONDS), JOB_MAINTENANCE_SECONDS: '1', LOG_LEVEL: 'warn' }

/** A database of its own (the workers connect to it by URL), migrated, with `admin`; dropped after `t`. */
async function ownDatabase(t: Test) {
  const name = `rhizome_jobs_${process.pid}_${Math.floor(Math.random() * 1e6)}`
  const server = new pg.Client({ connectionString: url })
  await server.connect()
  await server.query(`create database ${name}`)
  await server.end()
  const databaseUrl = new URL(url!)
  databaseUrl.pathname = `/${name}`
  const database = await createDatabase({ url: databaseUrl.toString(), poolSize: 4 })
  await migrateToLatest(database)
  await createApiKey(database.db, await createUser(database.db, { username: 'admin', is_superuser: true }), ADMIN_KEY)
  t.teardown(async () => {
    await database.close()
    const c = new pg.Client({ connectionString: url })
    await c.connect()
    await c.query(`drop database if exists ${name} with (force)`)
    await c.end()
  })
  return { database, url: databaseUrl.toString() }
}

/** The API (no workers of its own) on `database`, uploads under `dataDir`. */
async function apiServer(t: Test, database: Awaited<ReturnType<typeof ownDatabase>>['database'], dataDir: string) {
  const app = await buildApp({
    database,
    logger: false,
    config: { DATA_DIR: dataDir, JOB_CONCURRENCY: 0, MAX_EVENT_LOOP_DELAY_MS: 0, JOB_EXPIRE_SECONDS: EXPIRE_SECONDS },
  })
  await app.ready()
  t.teardown(() => app.close())
  return client(app)
}

/** A database of its own, an uploads directory the workers share, and the API on them. */
async function deployment(t: Test) {
  const { database, url: databaseUrl } = await ownDatabase(t)
  const dataDir = mkdtempSync(join(tmpdir(), 'rhizome-jobs-'))
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }))
  const api = await apiServer(t, database, dataDir)
  return { database, api, dataDir, workerEnv: { DATABASE_URL: databaseUrl, DATA_DIR: dataDir } }
}

/**
 * The first attempt at halfWayUpload's transform sleeps `seconds` half-way through its submissions
 * (a sequence, not a table: it does not roll back with the attempt, so the retry does not sleep).
 * Returns a wait for that sleep to begin.
 */
async function sleepHalfWay(t: Test, db: Kysely<DB>, seconds: number) {
  await sql`create sequence halfway_once`.execute(db)
  await atHalfWay(t, db, 'halfway_sleep', `if nextval('halfway_once') = 1 then perform pg_sleep(${seconds}); end if`)
  return () =>
    eventually(
      async () =>
        (await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity where wait_event = 'PgSleep' and datname = current_database()`.execute(db))
          .rows[0].n,
      (n) => n === 1,
      30_000,
    )
}

interface Worker {
  child: ChildProcess
  output: () => string
  exited: Promise<number | null>
}

function startWorker(t: Test, env: Record<string, string>): Worker {
  let output = ''
  const child = spawn(process.execPath, [...TEST_V8_FLAGS, 'cli/worker.mjs'], {
    cwd: ROOT,
    env: { ...process.env, ...WORKER_ENV, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  child.stdout!.on('data', (chunk) => (output += chunk))
  child.stderr!.on('data', (chunk) => (output += chunk))
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
    await exited
  })
  return { child, output: () => output, exited }
}

/** The queue's record of the job: its state and how many attempts it took. */
async function queueRecord(db: Kysely<DB>, schema: string, jobId: number) {
  const { rows } = await sql<{ state: string; retry_count: number }>`select q.state::text as state, q.retry_count from ${sql.table(`${schema}.job`)} q
    join job j on j.queue_job_id = q.id where j.id = ${jobId}`.execute(db)
  return rows[0]
}

const finished = (api: ReturnType<typeof client>, id: number, timeoutMs = 120_000) =>
  eventually(
    () => api.get(`/job/${id}/`),
    (r) => ['completed', 'failed', 'cancelled'].includes(r.body?.state),
    timeoutMs,
  )

/** What the database holds, without the ids a rolled-back attempt used up and the job bookkeeping. */
async function contents(db: Kysely<DB>) {
  const counts = await rowCounts(db)
  delete counts.job
  const datapoints = await db
    .selectFrom('datapoint')
    .select(['unique_index', 'value', 'location_id', 'indicator_id', 'campaign_id'])
    .orderBy('unique_index')
    .execute()
  const computed = await db
    .selectFrom('datapoint_with_computed')
    .select(['location_id', 'indicator_id', 'campaign_id', 'value'])
    .orderBy('location_id')
    .orderBy('indicator_id')
    .orderBy('campaign_id')
    .execute()
  const submissions = await db
    .selectFrom('source_submission')
    .select(['row_number', 'instance_guid', 'process_status', 'location_code'])
    .orderBy('row_number')
    .execute()
  return { counts, datapoints, computed, submissions }
}

t.test('two worker processes and one job: it runs once', { skip }, async (t) => {
  const { database, api, workerEnv } = await deployment(t)
  const doc = await halfWayUpload(api.post)
  startWorker(t, workerEnv)
  startWorker(t, workerEnv)
  const accepted = await api.get(`/transform_upload/?document_id=${doc}`, ASYNC)
  t.equal(accepted.status, 202)
  const job = await finished(api, accepted.body.id)
  t.equal(job.body.state, 'completed', job.body.error?.message ?? 'completed')
  t.match(job.body.result.ingest_stats.submissions, { file_rows: 3000, created: 3000, existing: 0 })
  t.match(await queueRecord(database.db, jobsSchemaOf(database), accepted.body.id), { state: 'completed', retry_count: 0 }, 'one attempt')
})

t.test('a worker killed half-way through a job: another completes it, and the database is as after one clean run', { skip }, async (t) => {
  const { database, api, dataDir, workerEnv } = await deployment(t)
  const doc = await halfWayUpload(api.post)
  // Long enough to be killed in the act, and for its progress to be seen on a loaded machine first: the
  // worker is killed while it sleeps, so the sleep's length costs nothing.
  const asleep = await sleepHalfWay(t, database.db, 20)
  const first = startWorker(t, workerEnv)
  const accepted = await api.get(`/transform_upload/?document_id=${doc}`, ASYNC)
  await asleep()
  // Progress is written at most twice a second: the stage's first report (none done) may be the one
  // written when the sleep begins; the report of the batch that sleeps follows within the interval.
  const midway = await eventually(
    () => api.get(`/job/${accepted.body.id}/`),
    (r) => r.body.progress?.stage === 'submissions written' && r.body.progress.done > 0,
    15_000,
  )
  t.equal(midway.body.state, 'active')
  t.match(
    midway.body.progress,
    { stage: 'submissions written', total: 3000, step: 3, steps: 6 },
    'progress reported from inside the running job, in its place: rows parsed, cells staged, submissions written, …',
  )
  t.ok(midway.body.progress?.done > 0 && midway.body.progress?.done < 3000, `half-way: ${midway.body.progress?.done} of 3000`)
  first.child.kill('SIGKILL')
  await first.exited
  startWorker(t, workerEnv)
  const job = await finished(api, accepted.body.id)
  t.equal(job.body.state, 'completed', job.body.error?.message ?? 'completed')
  // At least once: on a loaded machine the second attempt may itself outlive the expiry and be
  // taken up a third time; the database must still be as after one clean run.
  const record = await queueRecord(database.db, jobsSchemaOf(database), accepted.body.id)
  t.equal(record.state, 'completed')
  t.ok(record.retry_count >= 1, `taken up again after its expiry (${record.retry_count} retries)`)
  const afterRetry = await contents(database.db)

  // The same upload run once, cleanly, on a database of its own.
  const clean = await ownDatabase(t)
  const cleanApi = await apiServer(t, clean.database, dataDir)
  const cleanDoc = await halfWayUpload(cleanApi.post)
  t.equal((await cleanApi.get(`/transform_upload/?document_id=${cleanDoc}`)).status, 200)
  t.same(afterRetry, await contents(clean.database.db), 'every table’s row count and every value')
})

t.test('a worker stopped during a job hands it back; another worker completes it', { skip }, async (t) => {
  const { database, api, workerEnv } = await deployment(t)
  const doc = await halfWayUpload(api.post)
  const asleep = await sleepHalfWay(t, database.db, 30)
  const first = startWorker(t, { ...workerEnv, JOB_SHUTDOWN_MS: '1000' })
  const accepted = await api.get(`/transform_upload/?document_id=${doc}`, ASYNC)
  await asleep()
  const stopping = Date.now()
  first.child.kill('SIGTERM')
  const code = await first.exited
  t.equal(code, 0, `the worker exits cleanly${code === 0 ? '' : `: ${first.output()}`}`)
  t.ok(Date.now() - stopping < 10_000, 'it did not wait for the 30 s statement')
  t.match(await queueRecord(database.db, jobsSchemaOf(database), accepted.body.id), { state: 'retry' }, 'handed back to the queue')
  const submissions = async () =>
    Number((await sql<{ n: number }>`select count(*)::int as n from source_submission where document_id = ${doc}`.execute(database.db)).rows[0].n)
  t.equal(await submissions(), 0, 'its attempt rolled back: nothing of it kept')
  startWorker(t, workerEnv)
  const job = await finished(api, accepted.body.id)
  t.equal(job.body.state, 'completed', job.body.error?.message ?? 'completed')
  // The run that did the work created them; on a loaded machine a run past the expiry may be taken
  // up again, and that last run finds them stored.
  const { created, existing } = job.body.result.ingest_stats.submissions
  t.equal(created + existing, 3000, `every row's submission, created or found (${created} created)`)
  t.equal(await submissions(), 3000, 'each written once')
})

t.test('jobs of different campaigns run at the same time on different workers', { skip }, async (t) => {
  const { database, api, workerEnv } = await deployment(t)
  await halfWayUpload(api.post)
  const first = (await api.get('/campaign/')).body.objects[0]
  const second = (await api.post('/campaign/', { name: 'D', campaign_type_id: first.campaign_type_id, start_date: '2016-02-01', end_date: '2016-02-02' })).body
    .id
  startWorker(t, workerEnv)
  startWorker(t, workerEnv)
  // The first campaign's recompute waits on its lock (lib/engine/recompute.ts), held here.
  const holder = await database.db.connection().execute(async (held) => {
    await sql`select pg_advisory_lock(${lockKey('campaign', first.id)})`.execute(held)
    const blocked = await api.get(`/agg_refresh/?campaign_id=${first.id}`, ASYNC)
    await eventually(
      () => api.get(`/job/${blocked.body.id}/`),
      (r) => r.body.state === 'active',
      30_000,
    )
    const other = await api.get(`/agg_refresh/?campaign_id=${second}`, ASYNC)
    const done = await finished(api, other.body.id)
    t.equal(done.body.state, 'completed', 'the other campaign completed on the other worker')
    t.equal((await api.get(`/job/${blocked.body.id}/`)).body.state, 'active', 'while the first is still running')
    await sql`select pg_advisory_unlock(${lockKey('campaign', first.id)})`.execute(held)
    return blocked.body.id as number
  })
  t.equal((await finished(api, holder)).body.state, 'completed')
})
