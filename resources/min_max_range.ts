import { MinMaxRange } from '../schemas/min_max_range.js'
import { defineResource } from '../lib/api/resource.js'
import { validationError } from '../lib/core/errors.js'
import { assertLocationPermitted } from '../lib/datapoints/location-selection.js'

// A location's expected range of an indicator's values (sql/033): values outside it are outliers
// (campaign_outlier). Set here by hand (`generated` false), or generated from history by
// min_max_generate, which never replaces a range set by hand.
export default defineResource({
  name: 'min_max_range',
  schema: MinMaxRange,
  required_fields_for_post: ['location_id', 'indicator_id'],
  location_column: 'location_id',
  hooks: {
    async beforeWrite(ctx, values, existing) {
      // A restricted editor sets ranges inside her subtree only (403 LOCATION_FORBIDDEN).
      if (values.location_id !== undefined) await assertLocationPermitted(ctx, values.location_id as number)
      const row = { ...existing, ...values }
      if (typeof row.mn_val === 'number' && typeof row.mx_val === 'number' && row.mn_val > row.mx_val) {
        throw validationError('mn_val', `must not be above mx_val (${row.mx_val})`)
      }
      // A range written here is set by hand, unless the write says otherwise.
      if (values.generated === undefined) values.generated = false
    },
  },
})
