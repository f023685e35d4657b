import { DocDetail } from '../schemas/doc_detail.js'
import { defineResource } from '../lib/resource.js'

export default defineResource({
  name: 'doc_detail',
  schema: DocDetail,
  query_fields: ['id', 'document_id', 'doc_detail_type_id', 'doc_detail_type__name', 'doc_detail_value'],
  required_fields_for_post: ['doc_detail_type_id', 'document_id', 'doc_detail_value'],
})
