import { col, table } from './columns.js'

export const JOB_KINDS = ['transform_upload', 'refresh_master', 'agg_refresh', 'revert_document'] as const

/** A request for a pipeline step in its asynchronous form (lib/data/job-queue.ts). */
export const Job = table('job', {
  id: col.id(),
  kind: col.string({ enum: JOB_KINDS }),
  params: col.json(),
  subject: col.string(),
  queue_name: col.string(),
  queue_job_id: col.string({ unique: true }),
  progress: col.json({ nullable: true }),
  created_by_id: col.fk('auth_user', { nullable: true, onDelete: 'set null' }),
  created_at: col.createdAt(),
})
