import { col, table } from './columns.js'

/** The kinds of background job the processes running the queue declare (resources/jobs.ts), registered as they start. */
export const JobKind = table('job_kind', {
  name: col.string({ primaryKey: true, unique: true }),
})
