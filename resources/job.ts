// Background jobs (lib/data/job-queue.ts): the pipeline's steps asked for with `Prefer: respond-async`.
// Read-only but for DELETE, which cancels a job that has not started.
import { sql } from 'kysely'
import { JobState } from '../schemas/job_state.js'
import { withEnum } from '../schemas/columns.js'
import { backgroundJobs } from './jobs.js'
import { defineResource } from '../lib/api/resource.js'
import { ApiError } from '../lib/core/errors.js'

export default defineResource({
  name: 'job',
  schema: withEnum(
    JobState,
    'kind',
    backgroundJobs.map((job) => job.kind),
  ),
  description: "A pipeline step run in the background: its state, progress, and the synchronous call's answer or error.",
  query_fields: ['id', 'kind', 'params', 'state', 'progress', 'created_at', 'started_at', 'finished_at', 'result', 'error', 'created_by', 'queue_position'],
  detail_fields: ['id', 'kind', 'params', 'state', 'progress', 'created_at', 'started_at', 'finished_at', 'result', 'error', 'created_by', 'queue_position'],
  filtering: ['id', 'kind', 'state', 'created_at', 'created_by'],
  methods: { list: ['GET'], detail: ['GET', 'DELETE'] },
  // A job's state changes in the queue's tables, which notify nobody: its details are never cached.
  volatile: true,
  // A restricted user sees the jobs it asked for, nobody else's.
  row_filter: (ctx) => (ctx.user.restricted ? sql<boolean>`t.created_by = ${ctx.user.id}` : undefined),
  hooks: {
    async remove(ctx, existing) {
      if (!(await ctx.jobs.cancel(ctx.db, existing.id as number))) {
        throw new ApiError(409, 'JOB_STARTED', `Job ${existing.id} is ${existing.state}: only a job that has not started can be cancelled`)
      }
    },
  },
})
