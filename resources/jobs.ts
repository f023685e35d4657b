// Every kind of background job, one declaration each (lib/api/resource.ts, JobDeclaration): the queue
// it waits in, what it is one of at a time, when asking again answers the job already there, the check
// its request gets, and its run. The job queue's queues, the kinds the job table accepts (job_kind, sql/015)
// and the job resource's `kind` enum are derived from this list; a scheduled or internal job is one more entry.
import type { Context, JobDeclaration, Resource } from '../lib/api/resource.js'
import {
  aggRefreshResource,
  campaignJobParams,
  documentJobParams,
  refreshMaster,
  revertDocumentResource,
  revertJobParams,
  transformUpload,
} from './pipeline.js'

/** A step's action as a job, its parameters read as the step's request reads them: its first object is the job's result. */
const runAction = (resource: Resource) => async (ctx: Context) =>
  (await resource.action!({ ...ctx, resource, urlName: resource.name, params: resource.readQuery(ctx.query) }))[0]

/** A step's preparation as a job's (its resource's `prepare`), its parameters read as the step's request reads them. */
const prepareAction = (resource: Resource) =>
  resource.prepare && ((ctx: Context) => resource.prepare!({ ...ctx, resource, urlName: resource.name, params: resource.readQuery(ctx.query) }))

/** A step on one document: one at a time, and asking again while it waits or runs answers it. */
const documentStep = (resource: Resource, check = documentJobParams): JobDeclaration => ({
  kind: resource.name,
  queue: 'document',
  subject: (params) => `document:${params.document_id}`,
  dedupe: 'waits or runs',
  check,
  run: runAction(resource),
  prepare: prepareAction(resource),
})

export const backgroundJobs: JobDeclaration[] = [
  documentStep(transformUpload),
  documentStep(refreshMaster),
  documentStep(revertDocumentResource, revertJobParams),
  {
    kind: 'agg_refresh',
    queue: 'campaign',
    subject: (params) => `campaign:${params.campaign_id}`,
    // A recompute asked for while one runs is one more run: the running one may have read before the change.
    dedupe: 'waits',
    check: campaignJobParams,
    run: runAction(aggRefreshResource),
  },
]

/** The job a resource runs in the background, if it has one. */
export const jobOf = (resourceName: string) => backgroundJobs.find((job) => job.kind === resourceName)
