// The non-model resources of the ingestion pipeline (resource-api §39–§42). Each runs its action in one
// transaction and returns the document (or campaign) it worked on. transform_upload, refresh_master and
// agg_refresh also run as background jobs (`Prefer: respond-async`): resources/jobs.ts declares them
// with the checks below, and a job later runs the same action.
import { defineResource, type Context, type Row } from '../lib/api/resource.js'
import { readDetail } from '../lib/api/crud.js'
import { ingest, queueProcess } from '../lib/ingest/actions.js'
import { readFileAhead, type Document } from '../lib/ingest/transform.js'
import { recomputeCampaign } from '../lib/engine/recompute.js'
import { assertOwnDocument, documentLocations } from '../lib/engine/access.js'
import { revertDocument } from '../lib/ingest/revert.js'
import { joinParams, Param } from '../lib/api/query.js'
import { ApiError, notFound } from '../lib/core/errors.js'
import { isInt32 } from '../lib/core/values.js'
import document from './document.js'

const documentParam = { document_id: Param.integer('the document to process', { required: true }) }
const revertParams = joinParams(documentParam, { force: Param.boolean('1: also revert values changed since by another source (0 by default)') })
const campaignParam = { campaign_id: Param.integer('the campaign to recompute', { required: true }) }

/** The row `id` of `table` (a required parameter's value): 404 when there is none. */
async function requireRow(ctx: Context, id: number, table: 'source_doc' | 'campaign', label: string): Promise<Row> {
  const row = isInt32(id) ? await ctx.db.selectFrom(table).selectAll().where('id', '=', id).executeTakeFirst() : undefined
  if (!row) throw notFound(label, String(id))
  return row as unknown as Row
}

/**
 * The `document_id` parameter's document, if the requester may process it (lib/engine/access.ts) and
 * it is an upload. The Data Entry document has no file: a step run on it would find none of the typed
 * values in its (empty) submissions and delete them all.
 */
async function requireDocument(ctx: Context<typeof documentParam>): Promise<Document> {
  const doc = (await requireRow(ctx, ctx.params.document_id, 'source_doc', 'document')) as unknown as Document
  assertOwnDocument(ctx.user, doc)
  if (!doc.docfile) throw new ApiError(409, 'NOT_AN_UPLOAD', 'The Data Entry document is not an upload: change typed values through the datapoint resources')
  return doc
}

/** A background step on the `document_id` parameter's document: checked as the synchronous call. */
export const documentJobParams = async (ctx: Context<typeof documentParam>) => ({ document_id: (await requireDocument(ctx)).id })

/** A background revert: the document checked as the synchronous call, `force` kept. */
export const revertJobParams = async (ctx: Context<typeof revertParams>) => ({ force: ctx.params.force ? 1 : 0, ...(await documentJobParams(ctx)) })

/** A background recompute of the `campaign_id` parameter's campaign. */
export const campaignJobParams = async (ctx: Context<typeof campaignParam>) => ({
  campaign_id: (await requireRow(ctx, ctx.params.campaign_id, 'campaign', 'campaign')).id as number,
})

/** The document in its detail representation (ingest_stats included). */
const documentDetail = (ctx: Context<typeof documentParam>) => readDetail({ ...ctx, resource: document, urlName: 'document' }, ctx.params.document_id)

/** transform_upload and refresh_master: the same pipeline, with or without the transform step. */
function ingestResource(name: string, description: string, withTransform: boolean) {
  return defineResource({
    name,
    kind: 'non_model',
    description,
    params: documentParam,
    result_fields: { id: 'integer', doc_title: 'string', ingest_stats: 'json' },
    result_of: document,
    // The file is read before the transaction opens (lib/ingest/transform.ts, readFileAhead).
    prepare: async (ctx) => (withTransform ? readFileAhead(await requireDocument(ctx), ctx.config.DATA_DIR) : () => {}),
    action: async (ctx) => {
      await ingest(ctx.db, await requireDocument(ctx), ctx.user, ctx.config.DATA_DIR, withTransform, ctx.progress)
      return [await documentDetail(ctx)]
    },
  })
}

export const transformUpload = ingestResource(
  'transform_upload',
  "Transform the document's file into submissions, refresh master, recompute touched campaigns.",
  true,
)

export const refreshMaster = ingestResource('refresh_master', "Apply the current mappings to the document's submissions, recompute touched campaigns.", false)

export const queueProcessResource = defineResource({
  name: 'queue_process',
  kind: 'non_model',
  description: 'Mark every submission of the document TO_PROCESS.',
  params: documentParam,
  result_fields: { id: 'integer', doc_title: 'string' },
  result_of: document,
  action: async (ctx) => {
    await queueProcess(ctx.db, await requireDocument(ctx))
    return [await documentDetail(ctx)]
  },
})

export const revertDocumentResource = defineResource({
  name: 'revert_document',
  kind: 'non_model',
  description:
    'Put back every value the document wrote as it was before it (from the datapoint history); values changed since by another source are kept and reported as conflicts unless force=1; touched campaigns recomputed.',
  params: revertParams,
  result_fields: {
    document_id: 'integer',
    forced: 'boolean',
    restored: 'json',
    deleted: 'json',
    unchanged: 'integer',
    conflicts: 'json',
    location_forbidden: 'json',
    without_history: 'integer',
    campaigns_recomputed: 'json',
  },
  action: async (ctx) => {
    const force = ctx.params.force ?? false
    const doc = await requireDocument(ctx)
    const db = ctx.db
    return [await revertDocument(db, doc.id, force, await documentLocations(db, doc, ctx.user), ctx.progress)]
  },
})

export const aggRefreshResource = defineResource({
  name: 'agg_refresh',
  kind: 'non_model',
  // It rewrites the whole campaign's computed values, every location's.
  writers: 'unrestricted',
  description: 'Recompute one campaign: aggregation up the location tree, then calculated indicators.',
  params: campaignParam,
  result_fields: { id: 'integer', name: 'string', agg_stats: 'json' },
  action: async (ctx) => {
    const campaign = await requireRow(ctx, ctx.params.campaign_id, 'campaign', 'campaign')
    ctx.progress?.('campaigns recomputed', 0, 1)
    const agg_stats = await recomputeCampaign(ctx.db, campaign.id as number)
    ctx.progress?.('campaigns recomputed', 1, 1)
    return [{ ...campaign, agg_stats }]
  },
})
