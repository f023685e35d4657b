import { SourceSubmission } from '../schemas/source_submission.js'
import { defineResource } from '../lib/resource.js'
import { integerParam } from '../lib/params.js'

export default defineResource({
  name: 'source_submission',
  schema: SourceSubmission,
  GET_params_required: ['document_id'],
  ordering: ['row_number'],
  methods: { list: ['GET'], detail: ['GET'] },
  hooks: {
    // `?format=csv` gives the raw file back (ingestion §10.3): the document's header, one line per
    // kept row in row order, cells from submission_json.
    async csv(ctx) {
      const documentId = integerParam(ctx, 'document_id')!
      const doc = await ctx.db.selectFrom('source_doc').select('file_header').where('id', '=', documentId).executeTakeFirst()
      const header = (doc?.file_header as string[] | null) ?? []
      const submissions = await ctx.db
        .selectFrom('source_submission')
        .select('submission_json')
        .where('document_id', '=', documentId)
        .orderBy('row_number')
        .execute()
      return { header, rows: submissions.map((s) => header.map((h) => (s.submission_json as Record<string, unknown>)[h] ?? null)) }
    },
  },
})
