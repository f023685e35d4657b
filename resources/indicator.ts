import { Indicator } from '../schemas/indicator.js'
import { defineResource } from '../lib/api/resource.js'
import { resetMappings } from '../lib/data/caches.js'
import { validationError } from '../lib/core/errors.js'

export default defineResource({
  name: 'indicator',
  schema: Indicator,
  required_fields_for_post: ['name', 'short_name', 'data_format'],
  ordering: ['name'],
  hooks: {
    async beforeWrite(_ctx, values) {
      const threshold = values.coverage_threshold
      if (typeof threshold === 'number' && !(threshold >= 0 && threshold <= 1)) throw validationError('coverage_threshold', 'must be between 0 and 1')
    },
    afterDelete: (ctx, rows) =>
      resetMappings(
        ctx.db,
        'indicator',
        rows.map((r) => r.id as number),
      ),
  },
})
