import { col, table } from './columns.js'

/** A request for a pipeline step in its asynchronous form (lib/data/job-queue.ts). */
export const Job = table('job', {
  id: col.id(),
  /** One of the kinds declared in resources/jobs.ts (registered in job_kind as the queue starts). */
  kind: col.string({ references: 'job_kind', onDelete: 'restrict' }),
  params: col.json(),
  subject: col.string(),
  queue_name: col.string(),
  queue_job_id: col.string({ unique: true }),
  progress: col.json({ nullable: true }),
  created_by_id: col.fk('auth_user', { nullable: true, onDelete: 'set null' }),
  created_at: col.createdAt(),
})
