import { sql } from 'kysely'
import { LocationType } from '../schemas/location_type.js'
import { defineResource } from '../lib/api/resource.js'
import { refreshBoundJson } from '../lib/data/caches.js'

export default defineResource({
  name: 'location_type',
  schema: LocationType,
  required_fields_for_post: ['name', 'admin_level'],
  hooks: {
    // indicator.bound_json names each range's level: a renamed level is renamed there too.
    afterWrite: async (ctx, row, previous) => {
      if (!previous || previous.name === row.name) return
      const rows = await sql<{ id: number }>`select distinct indicator_id as id from indicator_bound where location_type_id = ${row.id}`.execute(ctx.db)
      await refreshBoundJson(
        ctx.db,
        rows.rows.map((r) => r.id),
      )
    },
  },
})
