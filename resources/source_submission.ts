import { sql } from 'kysely'
import { SourceSubmission } from '../schemas/source_submission.js'
import { defineResource, type Context } from '../lib/api/resource.js'
import { parseInteger } from '../lib/core/values.js'
import { baseQuery } from '../lib/api/crud.js'
import { permittedLocations } from '../lib/engine/access.js'
import { ApiError, invalidValue } from '../lib/core/errors.js'

/**
 * A restricted user reaches the rows whose location code is mapped inside their subtree, and the rows
 * of their own documents whose code is not mapped yet (they may need to see what to map).
 */
function reachableRows(ctx: Context) {
  const { user } = ctx
  if (!user.restricted) return undefined
  return sql<boolean>`(t.location_code in (select m.source_object_code from source_object_map m
      where m.content_type = 'location' and m.master_object_id in ${permittedLocations(user)})
    or (t.document_id in (select d.id from source_doc d where d.created_by_id = ${user.id})
      and not exists (select 1 from source_object_map m
        where m.content_type = 'location' and m.source_object_code = t.location_code and m.master_object_id <> -1)))`
}

export default defineResource({
  name: 'source_submission',
  schema: SourceSubmission,
  GET_params_required: ['document_id'],
  required_unless_id: true,
  ordering: ['row_number'],
  methods: { list: ['GET'], detail: ['GET'] },
  row_filter: reachableRows,
  hooks: {
    // `?format=csv` gives the raw file back (ingestion §10.3): the document's header, one line per
    // kept row (that the requester may reach) in row order, cells from submission_json.
    async csv(ctx) {
      // document_id is a filter here (the list's), read by this export alone.
      const text = ctx.query.last('document_id')
      const documentId = text === undefined ? undefined : parseInteger(text)
      if (text !== undefined && documentId === undefined) throw invalidValue('document_id', text, 'integer')
      if (documentId === undefined)
        throw new ApiError(400, 'MISSING_REQUIRED_PARAMETER', 'Missing required parameter document_id (the file of one document)', { missing: ['document_id'] })
      const doc = await ctx.db.selectFrom('source_doc').select('file_header').where('id', '=', documentId).executeTakeFirst()
      const header = (doc?.file_header as string[] | null) ?? []
      const submissions = await baseQuery(ctx).select('t.submission_json').where('t.document_id', '=', documentId).orderBy('t.row_number').execute()
      return { header, rows: submissions.map((s) => header.map((h) => (s.submission_json as Record<string, unknown>)[h] ?? null)) }
    },
  },
})
