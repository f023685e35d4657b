import { IndicatorToTag } from '../schemas/indicator_to_tag.js'
import { defineResource } from '../lib/api/resource.js'
import { refreshTagJson } from '../lib/data/caches.js'

export default defineResource({
  name: 'indicator_to_tag',
  schema: IndicatorToTag,
  query_fields: ['id', 'indicator_id', 'indicator_tag_id', 'indicator__short_name', 'indicator_tag__tag_name'],
  required_fields_for_post: ['indicator_id', 'indicator_tag_id'],
  list_delete_by: ['indicator_id'],
  hooks: {
    // indicator.tag_json follows every change, old and new indicator alike (resource-api §18).
    afterWrite: async (ctx, row, previous) => {
      await refreshTagJson(ctx.db, [...new Set([row.indicator_id, previous?.indicator_id].filter((v) => v != null) as number[])])
    },
    afterDelete: async (ctx, rows) => {
      await refreshTagJson(ctx.db, [...new Set(rows.map((r) => r.indicator_id as number))])
    },
  },
})
