// The non-model resources of the ingestion pipeline (resource-api §39–§42). Each runs its action in one
// transaction and returns the document (or campaign) it worked on.
import { defineResource, type Context } from '../lib/resource.js'
import { readDetail } from '../lib/crud.js'
import { aggRefresh, ingest, queueProcess } from '../lib/ingest/actions.js'
import document from './document.js'

const documentParam = { document_id: { type: 'integer' as const, help: 'the document to process' } }

/** The document in its detail representation (ingest_stats included). */
const documentDetail = (ctx: Context) =>
  readDetail({ ...ctx, resource: document, urlName: 'document' }, Number(ctx.query.last('document_id')))

/** transform_upload and refresh_master: the same pipeline, with or without the transform step. */
function ingestResource(name: string, description: string, withTransform: boolean) {
  return defineResource({
    name,
    kind: 'non_model',
    description,
    GET_params_required: ['document_id'],
    params: documentParam,
    result_fields: { id: 'integer', doc_title: 'string', ingest_stats: 'json' },
    action: async (ctx) => {
      await ingest(ctx, withTransform)
      return [await documentDetail(ctx)]
    },
  })
}

export const transformUpload = ingestResource(
  'transform_upload',
  "Transform the document's file into submissions, refresh master, recompute touched campaigns.",
  true,
)

export const refreshMaster = ingestResource(
  'refresh_master',
  "Apply the current mappings to the document's submissions, recompute touched campaigns.",
  false,
)

export const queueProcessResource = defineResource({
  name: 'queue_process',
  kind: 'non_model',
  description: "Mark every submission of the document TO_PROCESS.",
  GET_params_required: ['document_id'],
  params: documentParam,
  result_fields: { id: 'integer', doc_title: 'string' },
  action: async (ctx) => {
    await queueProcess(ctx)
    return [await documentDetail(ctx)]
  },
})

export const aggRefreshResource = defineResource({
  name: 'agg_refresh',
  kind: 'non_model',
  // It rewrites the whole campaign's computed values, every location's.
  writers: 'unrestricted',
  description: 'Recompute one campaign: aggregation up the location tree, then calculated indicators.',
  GET_params_required: ['campaign_id'],
  params: { campaign_id: { type: 'integer', help: 'the campaign to recompute' } },
  result_fields: { id: 'integer', name: 'string', agg_stats: 'json' },
  action: async (ctx) => [await aggRefresh(ctx)],
})
