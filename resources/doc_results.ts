// What a document currently holds (ingestion §12): date_doc_result (its date datapoints) and
// campaign_doc_result (the computed rows its mappings lead to).
import { sql } from 'kysely'
import { Datapoint } from '../schemas/datapoint.js'
import { DatapointWithComputed } from '../schemas/datapoint_with_computed.js'
import { defineResource, type Context, type ListQuery, type ResourceDeclaration } from '../lib/api/resource.js'
import { Param } from '../lib/api/query.js'

const documentParam = { document_id: Param.integer('the document', { required: true }) }

/** The document asked for (a required parameter). */
const documentId = (ctx: Context<typeof documentParam>) => ctx.params.document_id

/** A read-only view of what document X holds: `where` narrows `t` to it (restricted users: P only). */
function documentResult(
  name: string,
  schema: ResourceDeclaration['schema'],
  query_fields: string[],
  where: (ctx: Context, query: ListQuery, document: number) => ListQuery,
) {
  return defineResource({
    name,
    schema,
    query_fields,
    params: documentParam,
    location_column: 'location_id',
    methods: { list: ['GET'], detail: ['GET'] },
    hooks: { list: async (ctx, query) => ({ query: where(ctx, query, documentId(ctx)) }) },
  })
}

/** The master ids of the document's mapped codes of one content type. */
const mapped = (document: number, contentType: string) => sql`(select m.master_object_id from doc_object_map d
  join source_object_map m on m.id = d.source_object_map_id
  where d.document_id = ${document} and m.content_type = ${contentType} and m.master_object_id <> -1)`

export const dateDocResult = documentResult(
  'date_doc_result',
  Datapoint,
  ['id', 'indicator__id', 'indicator__short_name', 'location_id', 'location__name', 'data_date', 'value'],
  (_ctx, query, document) =>
    // Its rows and the keys it holds by claim (lib/ingest/claims.ts).
    query.where('t.data_date', 'is not', null).where('t.id', 'in', sql`(select datapoint_id from document_datapoints(${document}))`),
)

// Mapped indicators and every calculated indicator depending on them; mapped campaigns; mapped
// locations and their ancestors (resource-api §35).
export const campaignDocResult = documentResult(
  'campaign_doc_result',
  DatapointWithComputed,
  ['id', 'indicator__id', 'indicator__short_name', 'location_id', 'location__name', 'campaign_id', 'campaign__name', 'value'],
  (_ctx, query, document) => {
    const indicators = sql`(with recursive dependent(id) as (
        select master_object_id from ${mapped(document, 'indicator')} as m(master_object_id)
        union select c.indicator_id from calculated_indicator_component c join dependent on c.indicator_component_id = dependent.id)
      select id from dependent)`
    return query
      .where('t.indicator_id', 'in', indicators)
      .where('t.campaign_id', 'in', mapped(document, 'campaign'))
      .where('t.location_id', 'in', sql`(select parent_location_id from location_tree where location_id in ${mapped(document, 'location')})`)
  },
)
