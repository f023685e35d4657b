// What a document currently holds (ingestion §12): date_doc_result (its date datapoints) and
// campaign_doc_result (the computed rows its mappings lead to).
import { sql } from 'kysely'
import { Datapoint } from '../schemas/datapoint.js'
import { DatapointWithComputed } from '../schemas/datapoint_with_computed.js'
import { defineResource, type Context } from '../lib/resource.js'
import { invalidValue } from '../lib/errors.js'
import { parseInteger } from '../lib/values.js'

const documentParam = { document_id: { type: 'integer' as const, help: 'the document' } }

function documentId(ctx: Context): number {
  const text = ctx.query.last('document_id')!
  const id = parseInteger(text)
  if (id === undefined) throw invalidValue('document_id', text, 'integer')
  return id
}

/** The master ids of the document's mapped codes of one content type. */
const mapped = (document: number, contentType: string) => sql`(select m.master_object_id from doc_object_map d
  join source_object_map m on m.id = d.source_object_map_id
  where d.document_id = ${document} and m.content_type = ${contentType} and m.master_object_id <> -1)`

export const dateDocResult = defineResource({
  name: 'date_doc_result',
  schema: Datapoint,
  query_fields: ['id', 'indicator__id', 'indicator__short_name', 'location_id', 'location__name', 'data_date', 'value'],
  GET_params_required: ['document_id'],
  params: documentParam,
  location_column: 'location_id',
  methods: { list: ['GET'], detail: ['GET'] },
  hooks: {
    async list(ctx, query) {
      const document = documentId(ctx)
      return {
        query: query
          .where('t.data_date', 'is not', null)
          .where('t.source_submission_id', 'in', sql`(select id from source_submission where document_id = ${document})`),
      }
    },
  },
})

export const campaignDocResult = defineResource({
  name: 'campaign_doc_result',
  schema: DatapointWithComputed,
  query_fields: ['id', 'indicator__id', 'indicator__short_name', 'location_id', 'location__name', 'campaign_id', 'campaign__name', 'value'],
  GET_params_required: ['document_id'],
  params: documentParam,
  location_column: 'location_id',
  methods: { list: ['GET'], detail: ['GET'] },
  hooks: {
    // Mapped indicators and every calculated indicator depending on them; mapped campaigns; mapped
    // locations and their ancestors (resource-api §35).
    async list(ctx, query) {
      const document = documentId(ctx)
      const indicators = sql`(with recursive dependent(id) as (
          select master_object_id from ${mapped(document, 'indicator')} as m(master_object_id)
          union select c.indicator_id from calculated_indicator_component c join dependent on c.indicator_component_id = dependent.id)
        select id from dependent)`
      return {
        query: query
          .where('t.indicator_id', 'in', indicators)
          .where('t.campaign_id', 'in', mapped(document, 'campaign'))
          .where('t.location_id', 'in', sql`(select parent_location_id from location_tree where location_id in ${mapped(document, 'location')})`),
      }
    },
  },
})
