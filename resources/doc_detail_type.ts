import { DocDetailType } from '../schemas/doc_detail_type.js'
import { defineResource } from '../lib/api/resource.js'

export default defineResource({
  name: 'doc_detail_type',
  schema: DocDetailType,
  required_fields_for_post: ['name'],
})
