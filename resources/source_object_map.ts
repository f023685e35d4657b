import { sql } from 'kysely'
import { SourceObjectMap } from '../schemas/source_object_map.js'
import { defineResource, type Context, type Row } from '../lib/api/resource.js'
import { badRequest } from '../lib/core/errors.js'
import { Param } from '../lib/api/query.js'
import { permittedLocations } from '../lib/engine/access.js'
import { assertLocationPermitted } from '../lib/datapoints/location-selection.js'

const NAME_COLUMN = { indicator: 'short_name', location: 'name', campaign: 'name' } as const
type ContentType = keyof typeof NAME_COLUMN

/** master_object_id is -1 or an id of the content type's table; master_object_name follows it. */
async function masterName(ctx: Context, contentType: ContentType, id: number): Promise<string | null> {
  if (id === -1) return null
  const { rows } = await sql<{ name: string }>`select ${sql.ref(NAME_COLUMN[contentType])} as name from ${sql.table(contentType)} where id = ${id}`.execute(
    ctx.db,
  )
  if (!rows.length) throw badRequest('FOREIGN_KEY_VIOLATION', `master_object_id: no ${contentType} with id ${id}`)
  return rows[0].name
}

const PARAMS = {
  document_id: Param.integer('only the codes found in this document'),
  is_mapped: Param.string('0: unmapped codes only; 1: mapped only; anything else: all'),
}

export default defineResource({
  name: 'source_object_map',
  schema: SourceObjectMap,
  // Mappings are shared metadata. A restricted user does not see where a code points outside their
  // subtree: the mapping, with its master object's name, is not there for them.
  row_filter: (ctx) =>
    ctx.user.restricted
      ? sql<boolean>`(t.content_type <> 'location' or t.master_object_id = -1 or t.master_object_id in ${permittedLocations(ctx.user)})`
      : undefined,
  GET_params_required: ['document_id'],
  required_unless_id: true,
  required_fields_for_post: ['content_type', 'source_object_code'],
  params: PARAMS,
  hooks: {
    async list(ctx, query) {
      const { document_id: documentId, is_mapped: mapped } = ctx.params
      if (documentId !== undefined) {
        query = query.where('t.id', 'in', sql`(select source_object_map_id from doc_object_map where document_id = ${documentId})`)
      }
      if (mapped === '0') query = query.where('t.master_object_id', '=', -1)
      if (mapped === '1') query = query.where('t.master_object_id', '<>', -1)
      return { query }
    },
    async beforeWrite(ctx, values: Row, existing?: Row) {
      const contentType = (values.content_type ?? existing?.content_type) as ContentType
      const master = (values.master_object_id ?? existing?.master_object_id ?? -1) as number
      // A restricted metadata editor maps location codes inside their subtree only (§6 on top).
      if (contentType === 'location' && master !== -1) await assertLocationPermitted(ctx, master)
      const name = await masterName(ctx, contentType, master)
      const changed = values.master_object_id !== undefined && values.master_object_id !== existing?.master_object_id
      return {
        ...values,
        master_object_name: name,
        ...(changed && values.mapped_by_id === undefined ? { mapped_by_id: ctx.user.id } : {}),
      }
    },
  },
})
