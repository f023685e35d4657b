// Background jobs: the queue (lib/data/job-queue.ts) and this process's workers. A job runs its
// resource's action exactly as the synchronous call does (one transaction, the requester's rights),
// and keeps the call's answer as its result, or its 4xx code and message as its error.
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { JobQueue, type JobError, type QueuedJob } from '../lib/data/job-queue.js'
import { findUserById } from '../lib/data/auth.js'
import { ApiError } from '../lib/core/errors.js'
import type { Progress } from '../lib/core/progress.js'
import { QueryParams } from '../lib/api/query-params.js'
import { resources } from '../resources/index.js'

declare module 'fastify' {
  interface FastifyInstance {
    jobs: JobQueue
  }
}

function jobError(code: string, message: string, final: boolean): JobError {
  return Object.assign(new Error(message), { code, final })
}

/** Runs `job` as its requester would have run the synchronous call; returns that call's object. */
async function runJob(app: FastifyInstance, job: QueuedJob, progress: Progress): Promise<unknown> {
  const resource = resources.find((r) => r.name === job.kind && r.job_params)
  if (!resource) throw jobError('UNKNOWN_JOB', `No job kind ${job.kind}`, true)
  const user = job.created_by_id === null ? undefined : await findUserById(app.db.db, job.created_by_id)
  if (!user) throw jobError('USER_INACTIVE', 'The user who asked for this job is no longer active', true)
  const query = QueryParams.fromUrl(`/?${new URLSearchParams(Object.entries(job.params).map(([k, v]) => [k, String(v)]))}`)
  try {
    const rows = await app.db.db.transaction().execute((trx) =>
      resource.action!({ db: trx, user, query, config: app.config, resource, urlName: resource.name, jobs: app.jobs, progress }),
    )
    return rows[0]
  } catch (error) {
    if (error instanceof ApiError && error.statusCode < 500) throw jobError(error.code, error.message, true)
    app.log.error({ err: error, job: job.id }, 'job failed')
    throw jobError('JOB_FAILED', 'The job failed on the server; its log has the cause', false)
  }
}

export default fp(
  async function jobs(app: FastifyInstance) {
    const { config } = app
    const queue = new JobQueue(app.db, {
      expireSeconds: config.JOB_EXPIRE_SECONDS,
      retryLimit: config.JOB_RETRY_LIMIT,
      pollingSeconds: config.JOB_POLL_MS / 1000,
      maintenanceSeconds: config.JOB_MAINTENANCE_SECONDS,
    })
    queue.boss.on('error', (error) => app.log.error({ err: error }, 'job queue error'))
    await queue.start()
    if (config.JOB_CONCURRENCY > 0) await queue.work(config.JOB_CONCURRENCY, (job, progress) => runJob(app, job, progress))
    app.decorate('jobs', queue)
    // Registered after the database: closed before it (a running job finishes, or goes back to the queue).
    app.addHook('onClose', () => queue.stop(config.JOB_SHUTDOWN_MS))
  },
  { name: 'jobs', dependencies: ['db'] },
)
