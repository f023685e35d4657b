import { IndicatorBound } from '../schemas/indicator_bound.js'
import { defineResource } from '../lib/api/resource.js'
import { refreshBoundJson } from '../lib/data/caches.js'
import { validationError } from '../lib/core/errors.js'

// An indicator's named value ranges (docs/decisions.md, "Bounds and a value's status"); edited by
// metadata editors, cached in indicator.bound_json, which follows every change.
export default defineResource({
  name: 'indicator_bound',
  schema: IndicatorBound,
  required_fields_for_post: ['indicator_id', 'bound_name'],
  list_delete_by: ['indicator_id'],
  hooks: {
    async beforeWrite(_ctx, values, existing) {
      const row = { ...existing, ...values }
      if (row.direction !== undefined && row.direction !== 1 && row.direction !== -1) {
        throw validationError('direction', 'must be 1 (the range holds its lower limit) or -1 (its upper limit)')
      }
      if (typeof row.mn_val === 'number' && typeof row.mx_val === 'number' && row.mn_val > row.mx_val) {
        throw validationError('mn_val', `must not be above mx_val (${row.mx_val})`)
      }
    },
    afterWrite: async (ctx, row, previous) => {
      await refreshBoundJson(ctx.db, [...new Set([row.indicator_id, previous?.indicator_id].filter((v) => v != null) as number[])])
    },
    afterDelete: async (ctx, rows) => {
      await refreshBoundJson(ctx.db, [...new Set(rows.map((r) => r.indicator_id as number))])
    },
  },
})
