import { col, table } from './columns.js'

/** pg-boss's job states, the queue's own words. */
export const JOB_STATES = ['created', 'retry', 'active', 'completed', 'cancelled', 'failed'] as const

/**
 * The view behind the `job` resource: a job row with its queue state (lib/data/job-queue.ts makes it).
 * `result` is what the synchronous call answers, `error` its {code, message}.
 */
export const JobState = table('job_state', {
  id: col.id(),
  kind: col.string({ readonly: true }),
  params: col.json({ readonly: true }),
  state: col.string({ enum: JOB_STATES, readonly: true }),
  progress: col.json({ nullable: true, readonly: true }),
  created_at: col.createdAt(),
  started_at: col.datetime({ nullable: true, readonly: true }),
  finished_at: col.datetime({ nullable: true, readonly: true }),
  result: col.json({ nullable: true, readonly: true }),
  error: col.json({ nullable: true, readonly: true }),
  created_by: col.integer({ nullable: true, readonly: true }),
  /** `document:<id>` or `campaign:<id>`: what the job is one of at a time. */
  subject: col.string({ readonly: true }),
  /** A waiting job's place in its queue (1: taken next); null once it has started. */
  queue_position: col.integer({ nullable: true, readonly: true }),
})
