import { sql } from 'kysely'
import { Location } from '../schemas/location.js'
import { defineResource, type Row } from '../lib/api/resource.js'
import { resetMappings } from '../lib/data/caches.js'
import { joinParams } from '../lib/api/query.js'
import { assertLocationPermitted, FILTER_CAMPAIGN_PARAMS, LOCATION_PARAMS, selectLocations } from '../lib/datapoints/location-selection.js'
import { addToTree, checkNoCycle, moveInTree } from '../lib/data/location-tree.js'
import { recomputeCampaign } from '../lib/engine/recompute.js'

export default defineResource({
  name: 'location',
  schema: Location,
  writers: 'responsible',
  query_fields: ['id', 'name', 'location_code', 'location_type_id', 'parent_location_id', 'latitude', 'longitude', 'lpd_status', 'created_at', 'lvl'],
  synthetic: {
    // The admin_level of the location's type (the original computed location_type_id - 1).
    lvl: { kind: 'integer', expression: sql`(select ty.admin_level from location_type ty where ty.id = t.location_type_id)` },
  },
  required_fields_for_post: ['name', 'location_code', 'location_type_id'],
  params: joinParams(LOCATION_PARAMS, FILTER_CAMPAIGN_PARAMS),
  location_column: 'id',
  hooks: {
    async list(ctx, query) {
      const selection = await selectLocations(ctx)
      if (selection === null) return { query }
      return { query: selection.length ? query.where('t.id', 'in', selection) : query.where(sql<boolean>`false`) }
    },
    async beforeWrite(ctx, values, existing) {
      // No move (the parent not given, or given as it is): a read, edited and sent back whole is not refused for its parent.
      if (existing && (!('parent_location_id' in values) || (values.parent_location_id ?? null) === (existing.parent_location_id ?? null))) return
      const parent = (values.parent_location_id ?? null) as number | null
      await assertLocationPermitted(ctx, parent)
      if (existing) await checkNoCycle(ctx.db, existing.id as number, parent)
    },
    async afterWrite(ctx, row: Row, previous?: Row) {
      const parent = row.parent_location_id as number | null
      if (!previous) await addToTree(ctx.db, row.id as number, parent)
      else if (previous.parent_location_id !== parent) {
        await moveInTree(ctx.db, row.id as number, parent)
        // Its values now add up into other ancestors: every campaign with a raw value in the moved
        // subtree is recomputed, in the move's transaction.
        const { rows: campaigns } = await sql<{ campaign_id: number }>`select distinct d.campaign_id from datapoint d
          join location_tree t on t.location_id = d.location_id and t.parent_location_id = ${row.id as number}
          where d.campaign_id is not null order by 1`.execute(ctx.db)
        for (const { campaign_id } of campaigns) await recomputeCampaign(ctx.db, campaign_id)
      }
    },
    afterDelete: (ctx, rows) =>
      resetMappings(
        ctx.db,
        'location',
        rows.map((r) => r.id as number),
      ),
  },
})
