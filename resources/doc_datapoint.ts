import { DocDatapoint } from '../schemas/doc_datapoint.js'
import { defineResource } from '../lib/api/resource.js'

export default defineResource({
  name: 'doc_datapoint',
  schema: DocDatapoint,
  GET_params_required: ['document_id'],
  location_column: 'location_id',
  methods: { list: ['GET'], detail: ['GET'] },
})
