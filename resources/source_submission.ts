import { SourceSubmission } from '../schemas/source_submission.js'
import { defineResource } from '../lib/resource.js'

export default defineResource({
  name: 'source_submission',
  schema: SourceSubmission,
  GET_params_required: ['document_id'],
  ordering: ['row_number'],
  methods: { list: ['GET'], detail: ['GET'] },
})
