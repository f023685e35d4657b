// Background jobs: the queue (lib/data/job-queue.ts) and this process's workers. A job runs its
// resource's action exactly as the synchronous call does (one transaction, the requester's rights),
// and keeps the call's answer as its result, or its 4xx code and message as its error.
import { setTimeout as delay } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import type { Transaction } from 'kysely'
import type { DB } from '../schemas/index.js'
import fp from 'fastify-plugin'
import { JobQueue, type JobError, type QueuedJob } from '../lib/data/job-queue.js'
import { findUserById } from '../lib/data/auth.js'
import { ApiError, fromDatabaseError } from '../lib/core/errors.js'
import type { Progress } from '../lib/core/progress.js'
import { QueryParams } from '../lib/api/query-params.js'
import { backgroundJobs } from '../resources/jobs.js'
import jobResource from '../resources/job.js'
import { attribute } from '../lib/data/attribution.js'
import { purgeEndedSessions, sessionLimits } from '../lib/data/sessions.js'
import { purgeExpiredIdempotencyKeys } from '../lib/api/idempotency.js'

declare module 'fastify' {
  interface FastifyInstance {
    jobs: JobQueue
  }
}

/** The queue of the schedule that deletes ended sessions (every 10 minutes; sign-in purges too). */
export const PURGE_SESSIONS = 'purge-sessions'
/** The queue of the schedule that deletes expired Idempotency-Keys (hourly; lib/api/idempotency.ts). */
export const PURGE_IDEMPOTENCY_KEYS = 'purge-idempotency-keys'

function jobError(code: string, message: string, final: boolean): JobError {
  return Object.assign(new Error(message), { code, final })
}

/** Starts `job`'s work that needs no transaction (its declaration's `prepare`), as its requester. */
async function prepareJob(app: FastifyInstance, job: QueuedJob): Promise<() => void> {
  const declaration = backgroundJobs.find((j) => j.kind === job.kind)
  const user = declaration?.prepare && job.created_by_id !== null ? await findUserById(app.db.db, job.created_by_id) : undefined
  if (!declaration?.prepare || !user) return () => {}
  const query = QueryParams.fromUrl(`/?${new URLSearchParams(Object.entries(job.params).map(([k, v]) => [k, String(v)]))}`)
  return declaration.prepare({ db: app.db.db, user, query, params: {}, config: app.config, resource: jobResource, urlName: job.kind, jobs: app.jobs })
}

/** Runs `job` in `trx` as its requester would have run the synchronous call; returns that call's object. */
export async function runJob(app: FastifyInstance, job: QueuedJob, trx: Transaction<DB>, progress: Progress): Promise<unknown> {
  const declaration = backgroundJobs.find((j) => j.kind === job.kind)
  if (!declaration) throw jobError('UNKNOWN_JOB', `No job kind ${job.kind}`, true)
  const user = job.created_by_id === null ? undefined : await findUserById(trx, job.created_by_id)
  if (!user) throw jobError('USER_INACTIVE', 'The user who asked for this job is no longer active', true)
  await attribute(trx, { via: 'job', userId: user.id, jobId: job.id })
  const query = QueryParams.fromUrl(`/?${new URLSearchParams(Object.entries(job.params).map(([k, v]) => [k, String(v)]))}`)
  try {
    return await declaration.run({ db: trx, user, query, params: {}, config: app.config, resource: jobResource, urlName: job.kind, jobs: app.jobs, progress })
  } catch (error) {
    // A client mistake, as the synchronous call would have answered it (database errors mapped alike).
    const answer = error instanceof ApiError ? error : fromDatabaseError(error, { revealValues: !user.restricted })
    if (answer && answer.statusCode < 500) throw jobError(answer.code, answer.message, true)
    // A lost connection is the queue's to handle (it runs the job again once the database answers): it keeps the cause.
    if (app.jobs.stopping) app.log.warn({ job: job.id }, 'job handed back to the queue: this process is stopping')
    else if (answer?.code !== 'DATABASE_UNAVAILABLE') app.log.error({ err: error, job: job.id }, 'job failed')
    throw Object.assign(jobError('JOB_FAILED', 'The job failed on the server; its log has the cause', false), { cause: error })
  }
}

export default fp(
  async function jobs(app: FastifyInstance) {
    const { config } = app
    const settings = {
      expireSeconds: config.JOB_EXPIRE_SECONDS,
      retryLimit: config.JOB_RETRY_LIMIT,
      pollingSeconds: config.JOB_POLL_MS / 1000,
      maintenanceSeconds: config.JOB_MAINTENANCE_SECONDS,
      maxQueuedPerUser: config.JOB_MAX_QUEUED_PER_USER,
    }
    const housekeeping = [
      { name: PURGE_SESSIONS, cron: '*/10 * * * *', run: () => purgeEndedSessions(app.db.db, sessionLimits(config)) },
      { name: PURGE_IDEMPOTENCY_KEYS, cron: '17 * * * *', run: () => purgeExpiredIdempotencyKeys(app.db.db) },
    ]
    const queue = new JobQueue(app.db, settings, backgroundJobs, housekeeping, app.log)
    queue.boss.on('error', (error) => app.log.error({ err: error }, 'job queue error'))
    const begin = async () => {
      await queue.start()
      if (config.JOB_CONCURRENCY > 0) {
        await queue.work(
          config.JOB_CONCURRENCY,
          (job, trx, progress) => runJob(app, job, trx, progress),
          (job) => prepareJob(app, job),
        )
        await queue.workScheduled()
      }
    }
    // A database that cannot be reached at start-up does not keep the server from serving (/health
    // says 503 meanwhile): the queue starts in the background once it can.
    let running = false
    const closing = new AbortController()
    const retryInBackground = async () => {
      for (let wait = 1000; ; wait = Math.min(wait * 2, 30_000)) {
        try {
          await delay(wait, undefined, { signal: closing.signal })
          await begin()
          running = true
          app.log.info('job queue started')
          return
        } catch {
          if (closing.signal.aborted) return
        }
      }
    }
    let retrying: Promise<void> = Promise.resolve()
    // Its first start on a database creates pg-boss's schema: seconds on PGlite, said as it starts.
    app.log.info('starting the job queue…')
    const started = performance.now()
    try {
      await begin()
      running = true
      app.log.info({ ms: Math.round(performance.now() - started) }, 'starting the job queue: done')
    } catch (error) {
      app.log.warn({ err: error }, 'the job queue could not start; retrying in the background')
      retrying = retryInBackground()
    }
    app.decorate('jobs', queue)
    // Registered after the database: closed before it (a running job finishes, or goes back to the queue).
    app.addHook('onClose', async () => {
      closing.abort()
      await retrying
      if (running) await queue.stop(config.JOB_SHUTDOWN_MS)
    })
  },
  { name: 'jobs', dependencies: ['db'] },
)
