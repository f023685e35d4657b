import { defineResource } from '../lib/api/resource.js'
import { rebuildTree } from '../lib/data/location-tree.js'
import { refreshBoundJson, refreshTagJson } from '../lib/data/caches.js'

export default defineResource({
  name: 'cache_meta',
  kind: 'non_model',
  writers: 'metadata_editors',
  description: 'Rebuilds location_tree and every indicator tag_json and bound_json, in one transaction.',
  result_fields: { location_tree_rows: 'integer', indicators_updated: 'integer' },
  action: async (ctx) => {
    const location_tree_rows = await rebuildTree(ctx.db)
    const indicators_updated = await refreshTagJson(ctx.db)
    await refreshBoundJson(ctx.db)
    return [{ location_tree_rows, indicators_updated }]
  },
})
