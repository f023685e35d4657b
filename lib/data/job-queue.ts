// Background jobs on pg-boss (docs/decisions.md, "Background jobs"): the queue lives in the project's own
// database, in a schema of its own, and pg-boss talks to it through our Kysely instance: the same pool
// on PostgreSQL, the one session on PGlite (where the server process is the only worker), inside the
// caller's transaction when a job is submitted. Our `job` table holds what the API shows and pg-boss
// does not keep (kind, parameters, requester, progress); the view `job_state` joins the two.
import { randomUUID } from 'node:crypto'
import { CompiledQuery, sql, type Kysely, type Transaction } from 'kysely'
import PgBoss from 'pg-boss'
import type { DB } from '../../schemas/index.js'
import type { Database } from './database.js'
import { DATA_CHANNEL } from './notified-cache.js'
import { inTurn } from './turns.js'
import type { Progress, ProgressReport, StagePlace } from '../core/progress.js'
import { ApiError } from '../core/errors.js'
import { completionsSurvive, type InterruptionLog, lostConnection, untilAnswering } from './job-interruptions.js'
import { lockKey } from './lock-keys.js'

/** A kind's name, as its declaration gives it (resources/jobs.ts). */
export type JobKind = string

/** How the queue treats one kind of job: the queue-side part of its declaration (resources/jobs.ts). */
export interface JobKindSpec {
  kind: JobKind
  /** The pg-boss queue it waits in; each queue's workers take their own (a document's steps, a campaign's recomputes). */
  queue: string
  /** What the job is one of at a time (`document:12`), from its parameters. */
  subject: (params: Record<string, number>) => string
  /**
   * When asking again answers the job already there for the subject: while it `waits`, or while it
   * `waits or runs` (a document's step). A recompute asked for while one runs is one more run.
   */
  dedupe: 'waits' | 'waits or runs'
}

export interface JobSettings {
  /** A job running longer than this is taken for dead (its worker was killed) and retried. */
  expireSeconds: number
  /** How often a failed attempt is retried (a lost worker, a lost connection); client mistakes are not. */
  retryLimit: number
  /** How often an idle worker asks for work. */
  pollingSeconds: number
  /** How often expired jobs are looked for (and old ones archived). */
  maintenanceSeconds: number
  /** Jobs one user may have queued or running at once (429 above). */
  maxQueuedPerUser: number
}

/** Housekeeping on a schedule (pg-boss cron): whichever process's timekeeper fires it, one worker runs it. */
export interface ScheduledTask {
  /** Its queue's name. */
  name: string
  /** Five-field cron, UTC. */
  cron: string
  run: () => Promise<unknown>
}

/** How long a user over the job limit is told to wait: about one job's run. */
const JOB_LIMIT_RETRY_SECONDS = 30

const tooManyJobs = (limit: number) =>
  new ApiError(
    429,
    'TOO_MANY_JOBS',
    `You have ${limit} jobs queued or running, the most one user may have (JOB_MAX_QUEUED_PER_USER); retry when some have finished`,
    { limit },
    {
      'retry-after': String(JOB_LIMIT_RETRY_SECONDS),
    },
  )

/** Runs a job in `trx`, reporting to `progress`: what it returns is the job's result, what it throws its error. */
type JobRunner = (job: QueuedJob, trx: Transaction<DB>, progress: Progress) => Promise<unknown>
/** A job's work that needs no transaction, started before it opens; returns the function that forgets what it found. */
type JobPreparer = (job: QueuedJob) => Promise<() => void>

/** A job to run, as a worker receives it. */
export interface QueuedJob {
  id: number
  kind: JobKind
  params: Record<string, number>
  created_by_id: number | null
}

/** The error a failed job shows: a client mistake's code and message, as the synchronous call gives them. */
export interface JobError extends Error {
  code: string
  /** Repeating the job would fail the same way: it is not retried. */
  final: boolean
}

/** What pg-boss runs its statements on: any Kysely instance or transaction, whatever its tables. */
type Executor = Pick<Kysely<unknown>, 'executeQuery'>

/** pg-boss's `db` option over a Kysely instance or transaction (a script without parameters goes as one simple query). */
function executor(db: Executor) {
  return {
    executeSql: (text: string, values: unknown[] = []) => db.executeQuery(CompiledQuery.raw(text, values)),
  }
}

/** The schema pg-boss keeps its tables in: `pgboss`, or next to a test's private schema. */
export const jobsSchemaOf = (database: Database) => (database.searchPath ? `${database.searchPath}_jobs` : 'pgboss')

/** Creates pg-boss's schema and our view over it, when missing; a newer pg-boss migrates its own at start. */
export async function installJobQueue(database: Database): Promise<void> {
  const schema = jobsSchemaOf(database)
  const { rows } = await sql<{ queue: boolean; view: boolean }>`select to_regclass(${`${schema}.version`}) is not null as queue,
    to_regclass('job_state') is not null as view`.execute(database.db)
  if (!rows[0].queue) {
    try {
      await database.execScript(database.db, PgBoss.getConstructionPlans(schema))
    } catch (error) {
      // Another process installed it at the same moment (pg-boss's own way of telling).
      if (!/already exists/.test((error as Error).message)) throw error
    }
  }
  const current = await sql`select 1 from information_schema.columns
    where table_schema = current_schema() and table_name = 'job_state' and column_name = 'queue_position'`.execute(database.db)
  if (current.rows.length) return
  const queue = (table: string) =>
    sql.raw(`select name, id, state::text as state, started_on, completed_on, output, priority, created_on from ${schema}.${table}`)
  // A waiting job's place: the jobs its queue's workers take before it (pg-boss fetches by priority,
  // then age), plus one.
  const position = sql.raw(`(select count(*)::int + 1 from ${schema}.job o where o.name = q.name and o.state < 'active'
    and (o.priority > q.priority or (o.priority = q.priority and (o.created_on, o.id) < (q.created_on, q.id))))`)
  await database.db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(${lockKey('job view')})`.execute(trx)
    await sql`create or replace view job_state as
      select j.id, j.kind, j.params, q.state, j.progress, j.created_at, q.started_on as started_at,
        case when q.state in ('completed', 'failed', 'cancelled') then q.completed_on end as finished_at,
        case when q.state = 'completed' then q.output end as result,
        case when q.state in ('failed', 'retry') and q.output is not null then jsonb_build_object(
          'code', coalesce(q.output->>'code', case when q.output->'value'->>'message' like '%timeout%' then 'JOB_EXPIRED' else 'JOB_FAILED' end),
          'message', coalesce(q.output->>'message', q.output->'value'->>'message', q.output->>'value', 'The job failed')) end as error,
        j.created_by_id as created_by,
        j.subject,
        case when q.state in ('created', 'retry') then ${position} end as queue_position
      from job j join (${queue('job')} union all ${queue('archive')}) q on q.name = j.queue_name and q.id = j.queue_job_id`.execute(trx)
  })
}

/** A job this process is running: settled when its attempt has ended; its PostgreSQL backend. */
interface RunningJob {
  done: Promise<void>
  backend?: number
}

/** The shortest time between two progress writes of a job. */
const PROGRESS_INTERVAL_MS = 500
/** How long a finished job waits for the servers to confirm they heard its changes. */
const CONFIRM_CHANGES_MS = 5_000

/** Jobs that finished longer ago than this leave pg-boss's tables, and the job resource. */
const KEEP_DAYS = 30

/** The session lock under which server processes create the queues, one at a time (inTurn). */
const QUEUE_CREATION_LOCK = 'job queues'

/** A job interrupted this often by lost connections is left to pg-boss's retries (the database keeps going away). */
const MAX_INTERRUPTIONS = 10

export class JobQueue {
  readonly boss: PgBoss
  private readonly schema: string
  private readonly workers: string[] = []
  private readonly running = new Set<RunningJob>()
  /** Shutting down: a job that fails now is being handed back. */
  stopping = false

  private readonly kinds: Map<string, JobKindSpec>
  /** The queues the declared kinds wait in. */
  private readonly queues: string[]

  constructor(
    private readonly database: Database,
    private readonly settings: JobSettings,
    kinds: JobKindSpec[],
    private readonly scheduled: ScheduledTask[] = [],
    private readonly log?: InterruptionLog,
  ) {
    this.kinds = new Map(kinds.map((spec) => [spec.kind, spec]))
    this.queues = [...new Set(kinds.map((spec) => spec.queue))]
    this.schema = jobsSchemaOf(database)
    this.boss = new PgBoss({
      db: completionsSurvive(executor(database.db), this.schema, database.db, () => this.stopping, log),
      schema: this.schema,
      maintenanceIntervalSeconds: settings.maintenanceSeconds,
      archiveCompletedAfterSeconds: 3600,
      deleteAfterDays: KEEP_DAYS,
      // The timekeeper polls only where there is something on a schedule.
      schedule: scheduled.length > 0,
    })
  }

  async start(): Promise<void> {
    await this.registerKinds()
    await this.boss.start()
    // pg-boss's createQueue, run by two processes at once, deadlocks (each inserts its queue row and
    // creates the queue's partition): the server processes starting together take turns.
    await inTurn(this.database, QUEUE_CREATION_LOCK, () => this.createQueues())
  }

  private async createQueues(): Promise<void> {
    for (const name of this.queues) {
      // 'standard': one job per document (or campaign) at a time is decided when a job is submitted
      // (submit, below), and its steps take the subject's lock. pg-boss's 'stately' policy would make a
      // second worker's fetch fail on its unique index while a subject's next run waits behind a running one.
      await this.boss.createQueue(name, {
        name,
        policy: 'standard',
        retryLimit: this.settings.retryLimit,
        retryDelay: 0,
        expireInSeconds: this.settings.expireSeconds,
      })
    }
    for (const task of this.scheduled) {
      // 'singleton': one run at a time, however many processes fire the schedule.
      await this.boss.createQueue(task.name, { name: task.name, policy: 'singleton', retryLimit: 0 })
      await this.boss.schedule(task.name, task.cron, {}, { tz: 'UTC' })
    }
  }

  /**
   * The declared kinds, in job_kind (sql/015): a job's row must name one. Kinds are only ever added, so
   * that processes of two versions running side by side (a rolling deploy) both keep their own.
   */
  private async registerKinds(): Promise<void> {
    const declared = [...this.kinds.keys()]
    if (!declared.length) return
    const known = await this.database.db.selectFrom('job_kind').select('name').where('name', 'in', declared).execute()
    const missing = declared.filter((name) => !known.some((row) => row.name === name))
    // Only when one is missing: every insert statement notifies (sql/004), and each would empty the caches.
    if (missing.length) await sql`insert into job_kind (name) select unnest(${missing}::text[]) on conflict do nothing`.execute(this.database.db)
  }

  /**
   * A job for `kind` on `params`, requested by `userId`, in `trx`. One per subject at a time, as the
   * kind's `dedupe` says: the job already there is the answer. Returns the job's id, and whether it is
   * an existing one.
   */
  async submit(trx: Transaction<DB>, kind: JobKind, params: Record<string, number>, userId: number): Promise<{ id: number; existing: boolean }> {
    const spec = this.kinds.get(kind)
    if (!spec) throw new Error(`no job kind ${kind} is declared`)
    const { queue } = spec
    const subject = spec.subject(params)
    // Submissions for one subject one after another, whichever process takes them.
    await sql`select pg_advisory_xact_lock(${lockKey('job subject', sql`hashtext(${subject})`)})`.execute(trx)
    const waiting = spec.dedupe === 'waits or runs' ? ['created', 'retry', 'active'] : ['created', 'retry']
    const existing = await trx
      .selectFrom('job_state')
      .select('id')
      .where('subject', '=', subject)
      .where('state', 'in', waiting)
      .orderBy('id')
      .executeTakeFirst()
    if (existing) return { id: existing.id, existing: true }
    // One user's jobs are counted one submission at a time; the count bounds the backlog, and orders it:
    // a job has priority -n, n being its user's jobs already queued or running here, so another user's first job goes before it (pg-boss
    // takes the highest priority first, the oldest among equals): users take turns.
    await sql`select pg_advisory_xact_lock(${lockKey('jobs of user', userId)})`.execute(trx)
    const pending = await trx
      .selectFrom('job_state')
      .select([
        sql<number>`count(*)::int`.as('all'),
        sql<number>`(count(*) filter (where kind in (${sql.join([...this.kinds.values()].filter((k) => k.queue === queue).map((k) => k.kind))})))::int`.as(
          'here',
        ),
      ])
      .where('created_by', '=', userId)
      .where('state', 'in', ['created', 'retry', 'active'])
      .executeTakeFirstOrThrow()
    if (pending.all >= this.settings.maxQueuedPerUser) throw tooManyJobs(this.settings.maxQueuedPerUser)
    const queueJobId = randomUUID()
    const { id } = await trx
      .insertInto('job')
      .values({ kind, params: JSON.stringify(params), subject, queue_name: queue, queue_job_id: queueJobId, created_by_id: userId })
      .returning('id')
      .executeTakeFirstOrThrow()
    // Expiry and retries are the job's own, from the settings of the process that submits it.
    await this.boss.send(
      queue,
      { job_id: id },
      {
        id: queueJobId,
        db: executor(trx),
        expireInSeconds: this.settings.expireSeconds,
        retryLimit: this.settings.retryLimit,
        priority: -pending.here,
      },
    )
    return { id, existing: false }
  }

  /** Cancels a job that has not started, in `db` (the caller's transaction); false when it has. */
  async cancel(db: Kysely<DB>, id: number): Promise<boolean> {
    const { rows } = await sql<{ id: string }>`update ${sql.table(`${this.schema}.job`)} q set state = 'cancelled', completed_on = now()
      from job j where j.id = ${id} and q.name = j.queue_name and q.id = j.queue_job_id and q.state < 'active'
      returning q.id`.execute(db)
    return rows.length === 1
  }

  /**
   * `concurrency` workers on each queue, each running one job at a time: `run` gets the job, the
   * transaction it runs in (committed when it returns) and where to report progress. What it returns
   * is the job's result; what it throws, its error.
   */
  async work(concurrency: number, run: JobRunner, prepare?: JobPreparer): Promise<void> {
    for (const queue of this.queues) {
      for (let i = 0; i < concurrency; i++) {
        const worker = await this.boss.work<{ job_id: number }>(queue, { batchSize: 1, pollingIntervalSeconds: this.settings.pollingSeconds }, ([queued]) =>
          this.untilRun(queue, queued, run, prepare),
        )
        this.workers.push(worker)
      }
    }
  }

  /**
   * Runs a job; when its connection is lost (the database went away, or hung), waits for the database
   * to answer and runs it again here: it rolled back whole, so the next run is a clean one.
   */
  private async untilRun(queue: string, queued: PgBoss.Job<{ job_id: number }>, run: JobRunner, prepare?: JobPreparer): Promise<unknown> {
    for (let interruptions = 0; ; interruptions++) {
      try {
        return await this.attempt(queue, queued, run, prepare)
      } catch (error) {
        if (!lostConnection(error) || this.stopping || interruptions >= MAX_INTERRUPTIONS) throw error
        this.log?.warn({ job: queued.data.job_id, err: error }, 'job interrupted: the database connection was lost; it runs again once the database answers')
        if (!(await untilAnswering(this.database.db, () => this.stopping))) throw error
      }
    }
  }

  /** One run of a job, in one transaction. */
  private async attempt(queue: string, queued: PgBoss.Job<{ job_id: number }>, run: JobRunner, prepare?: JobPreparer): Promise<unknown> {
    const job = await this.database.db
      .selectFrom('job')
      .select(['id', 'kind', 'params', 'created_by_id'])
      .where('id', '=', queued.data.job_id)
      .executeTakeFirst()
    if (!job) return null // its row is gone (a test reset): nothing to do
    // What needs no transaction is started before it opens; a failure there is the run's to meet.
    const forget = prepare ? await prepare(job as QueuedJob).catch(() => () => {}) : () => {}
    const progress = this.progressWriter(job.id)
    const running: RunningJob = { done: Promise.resolve() }
    const attempt = this.database.db.transaction().execute(async (trx) => {
      if (this.database.engine === 'postgres') running.backend = (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx)).rows[0].pid
      return run(job as QueuedJob, trx, progress.report)
    })
    running.done = attempt.then(
      () => undefined,
      () => undefined,
    )
    this.running.add(running)
    try {
      const result = await attempt
      // Done means seen: every server's caches have dropped what the job changed before anyone
      // can read that it completed (a bound of 5 s should a server not answer). Its work is
      // committed: a failure to confirm must not make it fail, and run again.
      await this.database.confirmHeard(DATA_CHANNEL, CONFIRM_CHANGES_MS).catch(() => [])
      return result
    } catch (error) {
      // A client mistake is final: retrying it would only fail again.
      if ((error as JobError).final) {
        await sql`update ${sql.table(`${this.schema}.job`)} set retry_limit = retry_count where name = ${queue} and id = ${queued.id}`.execute(this.database.db)
      }
      throw error
    } finally {
      forget()
      this.running.delete(running)
      await progress.flush()
    }
  }

  /** A worker for each scheduled task (the housekeeping a schedule fires), alongside the job workers. */
  async workScheduled(): Promise<void> {
    for (const task of this.scheduled) {
      this.workers.push(await this.boss.work(task.name, { pollingIntervalSeconds: this.settings.pollingSeconds }, () => task.run()))
    }
  }

  /** Wakes this process's idle workers (a job was just submitted here). */
  wake(): void {
    for (const worker of this.workers) this.boss.notifyWorker(worker)
  }

  /**
   * Stops taking jobs; a running one gets `timeoutMs` to finish. Then it is handed back: its statement
   * is cancelled, its transaction rolls back, and the failed attempt goes back to the queue for another
   * worker. PGlite's one session cannot be interrupted from beside it: there the job finishes.
   */
  async stop(timeoutMs: number): Promise<void> {
    this.stopping = true
    for (const queue of [...this.queues, ...this.scheduled.map((task) => task.name)]) await this.boss.offWork(queue)
    const settled = Promise.all([...this.running].map((r) => r.done))
    let timer: NodeJS.Timeout | undefined
    const timedOut = await Promise.race([settled.then(() => false), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), timeoutMs)))])
    clearTimeout(timer)
    if (timedOut && this.database.engine === 'postgres') {
      for (const { backend } of this.running) {
        if (backend !== undefined) await sql`select pg_cancel_backend(${backend})`.execute(this.database.db)
      }
    }
    await settled
    await this.boss.stop({ graceful: true, timeout: 1000, close: false, wait: true })
  }

  /**
   * Progress goes to the job row at most every PROGRESS_INTERVAL_MS, through the pool (the job's own transaction is
   * not visible until it commits). PGlite has one session, held by the job's transaction: there the
   * last report is written once the job ends.
   */
  private progressWriter(id: number) {
    let latest: ProgressReport | undefined
    let written: ProgressReport | undefined
    let writing: Promise<unknown> = Promise.resolve()
    let lastWrite = 0
    let pending: NodeJS.Timeout | undefined
    const write = () => {
      clearTimeout(pending)
      pending = undefined
      const value = latest
      if (!value || value === written) return writing
      written = value
      lastWrite = Date.now()
      writing = writing
        .then(() =>
          this.database.db
            .updateTable('job')
            .set({ progress: JSON.stringify(value) })
            .where('id', '=', id)
            .execute(),
        )
        .catch(() => {}) // progress is best effort; the job's outcome is not
      return writing
    }
    const live = this.database.engine === 'postgres'
    return {
      report: (stage: string, done: number, total: number, place?: StagePlace) => {
        latest = { stage, done, total, ...place }
        if (!live || pending) return
        const wait = PROGRESS_INTERVAL_MS - (Date.now() - lastWrite)
        // The latest report is written when the interval is up, even if the step is then deep in one long statement.
        if (wait <= 0) void write()
        else pending = setTimeout(write, wait)
      },
      flush: () => write(),
    }
  }
}
