import { Indicator } from '../schemas/indicator.js'
import { defineResource } from '../lib/api/resource.js'
import { resetMappings } from '../lib/data/caches.js'

export default defineResource({
  name: 'indicator',
  schema: Indicator,
  required_fields_for_post: ['name', 'short_name', 'data_format'],
  ordering: ['name'],
  hooks: {
    afterDelete: (ctx, rows) =>
      resetMappings(
        ctx.db,
        'indicator',
        rows.map((r) => r.id as number),
      ),
  },
})
