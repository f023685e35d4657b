import { sql } from 'kysely'
import { Campaign } from '../schemas/campaign.js'
import { defineResource } from '../lib/api/resource.js'
import { Param } from '../lib/api/query.js'
import { badRequest, validationError } from '../lib/core/errors.js'
import { resetMappings } from '../lib/data/caches.js'
import { assertLocationPermitted } from '../lib/datapoints/location-selection.js'

const PARAMS = {
  has_data_for: Param.integer('a location: only the campaigns with a value there or anywhere below it (a restricted user: within her part)'),
  has_data_of: Param.integers('indicators, with has_data_for: only values of these count (a dashboard asks for its charts’ indicators)'),
}

export default defineResource({
  name: 'campaign',
  schema: Campaign,
  required_fields_for_post: ['name', 'campaign_type_id', 'start_date', 'end_date'],
  ordering: ['-start_date'],
  params: PARAMS,
  hooks: {
    async list(ctx, query) {
      const location = ctx.params.has_data_for
      const indicators = ctx.params.has_data_of
      if (location === undefined) {
        if (indicators !== undefined) throw badRequest('MISSING_PARAMETER', 'has_data_of is read with has_data_for: name the location too')
        return { query }
      }
      await assertLocationPermitted(ctx, location)
      // Any value, raw or computed, at the location or a descendant (location_tree holds each location with itself).
      const ofIndicators = indicators === undefined ? sql`` : sql` and d.indicator_id = any(${indicators}::int[])`
      return {
        query: query.where(sql<boolean>`exists (select 1 from datapoint_with_computed d join location_tree lt on lt.location_id = d.location_id
          where d.campaign_id = t.id and lt.parent_location_id = ${location}${ofIndicators})`),
      }
    },
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
