// The asynchronous form of a pipeline step (RFC 7240 `Prefer: respond-async`): checked as the action
// would be, queued, answered 202 with the job (the one already queued or running for the same
// document or campaign, if there is one).
import type { FastifyReply } from 'fastify'
import type { Context, JobDeclaration, Resource } from './resource.js'

/**
 * Queues `declaration`'s job for the request in `ctx`. `job`: the job resource (its detail fields are
 * the answer); `caughtUp`: read-your-writes on replicas.
 */
export async function submitJob(ctx: Context, reply: FastifyReply, declaration: JobDeclaration, job: Resource, caughtUp: () => Promise<void>) {
  const params = await declaration.check(ctx)
  const { id } = await ctx.db.transaction().execute((trx) => ctx.jobs.submit(trx, declaration.kind, params, ctx.user.id))
  ctx.jobs.wake()
  await caughtUp()
  const answer = await ctx.db
    .selectFrom('job_state')
    .select(job.detail_fields as never[])
    .where('id', '=', id)
    .executeTakeFirstOrThrow()
  return reply.code(202).header('location', `/api/v1/job/${id}/`).header('preference-applied', 'respond-async').send(answer)
}
