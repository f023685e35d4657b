import { DocDetail } from '../schemas/doc_detail.js'
import { defineResource } from '../lib/api/resource.js'
import { assertOwnDocument } from '../lib/engine/access.js'

export default defineResource({
  name: 'doc_detail',
  schema: DocDetail,
  writers: 'users',
  query_fields: ['id', 'document_id', 'doc_detail_type_id', 'doc_detail_type__name', 'doc_detail_value'],
  required_fields_for_post: ['doc_detail_type_id', 'document_id', 'doc_detail_value'],
  hooks: {
    // A document's details are changed by whoever may change the document (its uploader, when restricted).
    async beforeWrite(ctx, values, existing) {
      if (!ctx.user.restricted) return
      const documents = new Set([values.document_id, existing?.document_id].filter((id) => typeof id === 'number'))
      for (const id of documents) {
        const document = await ctx.db.selectFrom('source_doc').select(['id', 'created_by_id']).where('id', '=', id).executeTakeFirst()
        if (document) assertOwnDocument(ctx.user, document)
      }
    },
  },
})
