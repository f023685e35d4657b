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

export const transformUpload = defineResource({
  name: 'transform_upload',
  kind: 'non_model',
  description: "Transform the document's file into submissions, refresh master, recompute touched campaigns.",
  GET_params_required: ['document_id'],
  params: documentParam,
  result_fields: { id: 'integer', doc_title: 'string', ingest_stats: 'json' },
  action: async (ctx) => {
    await ingest(ctx, true)
    return [await documentDetail(ctx)]
  },
})

export const refreshMaster = defineResource({
  name: 'refresh_master',
  kind: 'non_model',
  description: "Apply the current mappings to the document's submissions, recompute touched campaigns.",
  GET_params_required: ['document_id'],
  params: documentParam,
  result_fields: { id: 'integer', doc_title: 'string', ingest_stats: 'json' },
  action: async (ctx) => {
    await ingest(ctx, false)
    return [await documentDetail(ctx)]
  },
})

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
  description: 'Recompute one campaign: aggregation up the location tree, then calculated indicators.',
  GET_params_required: ['campaign_id'],
  params: { campaign_id: { type: 'integer', help: 'the campaign to recompute' } },
  result_fields: { id: 'integer', name: 'string', agg_stats: 'json' },
  action: async (ctx) => [await aggRefresh(ctx)],
})
