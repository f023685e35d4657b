// The asynchronous form of a pipeline step (RFC 7240 `Prefer: respond-async`): checked as the action
// would be, queued, answered 202 with the job (the one already queued or running for the same
// document or campaign, if there is one).
import type { FastifyReply } from 'fastify'
import type { Context, JobDeclaration, Resource } from './resource.js'
import type { Transactions } from './transactions.js'

/** A resource's background form: its job's declaration (resources/jobs.ts), and the job resource that shows it. */
export interface Background {
  declaration: JobDeclaration
  jobResource: Resource
}

/** Queues the job of `background` for the request in `ctx`; answers 202 with it once the replicas in use have it. */
export async function submitJob(ctx: Context, reply: FastifyReply, { declaration, jobResource: job }: Background, transactions: Transactions) {
  const params = await declaration.check(ctx)
  const { id } = await ctx.db.transaction().execute((trx) => ctx.jobs.submit(trx, declaration.kind, params, ctx.user.id))
  ctx.jobs.wake()
  await transactions.caughtUp()
  const answer = await ctx.db
    .selectFrom('job_state')
    .select(job.detail_fields as never[])
    .where('id', '=', id)
    .executeTakeFirstOrThrow()
  return reply.code(202).header('location', `/api/v1/job/${id}/`).header('preference-applied', 'respond-async').send(answer)
}
