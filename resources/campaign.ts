import { Campaign } from '../schemas/campaign.js'
import { defineResource } from '../lib/api/resource.js'
import { validationError } from '../lib/core/errors.js'
import { resetMappings } from '../lib/data/caches.js'

export default defineResource({
  name: 'campaign',
  schema: Campaign,
  required_fields_for_post: ['name', 'campaign_type_id', 'start_date', 'end_date'],
  ordering: ['-start_date'],
  hooks: {
    async beforeWrite(_ctx, values, existing) {
      const start = (values.start_date ?? existing?.start_date) as string
      const end = (values.end_date ?? existing?.end_date) as string
      if (start && end && end < start) throw validationError('end_date', 'must not be before start_date')
    },
    afterDelete: (ctx, rows) =>
      resetMappings(
        ctx.db,
        'campaign',
        rows.map((r) => r.id as number),
      ),
  },
})
