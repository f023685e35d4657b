import { sql } from 'kysely'
import { LocationPolygon } from '../schemas/location_polygon.js'
import { defineResource, type Context, type ListPage, type ListResult, type Row } from '../lib/api/resource.js'
import { normaliseFeature } from '../lib/engine/geo-loader.js'
import { permittedLocations } from '../lib/engine/access.js'
import { inList } from '../lib/api/crud.js'
import { joinParams } from '../lib/api/query.js'
import { assertLocationPermitted, FILTER_CAMPAIGN_PARAMS, LOCATION_PARAMS, selectLocations } from '../lib/datapoints/location-selection.js'

const PARAMS = joinParams(LOCATION_PARAMS, FILTER_CAMPAIGN_PARAMS)

/** The GeoJSON features of the selected locations' polygons. Polygons are not filtered by the generic grammar (filtering: []). */
async function features(ctx: Context<typeof PARAMS>, page: ListPage): Promise<ListResult> {
  const selection = await selectLocations(ctx)
  const permitted = ctx.user.restricted ? sql`and p.location_id in ${permittedLocations(ctx.user)}` : sql``
  const selected = selection === null ? sql`` : sql`and ${inList('p.location_id', selection)}`
  const { rows } = await sql<Row>`select p.location_id, p.geo_json -> 'geometry' as geometry,
      coalesce(l.parent_location_id, l.id) as parent_location_id, count(*) over () as total
    from location_polygon p join location l on l.id = p.location_id
    where true ${selected} ${permitted}
    order by p.location_id limit ${page.limit} offset ${page.offset}`.execute(ctx.db)
  const objects = rows.map((r) => ({
    location_id: r.location_id,
    type: 'Feature',
    geometry: r.geometry,
    properties: { location_id: r.location_id },
    parent_location_id: r.parent_location_id,
  }))
  return { rows: objects, total: rows.length ? Number(rows[0].total) : 0 }
}

export default defineResource({
  name: 'geo',
  schema: LocationPolygon,
  writers: 'responsible',
  query_fields: ['location_id', 'type', 'geometry', 'properties', 'parent_location_id'],
  filtering: [],
  required_fields_for_post: ['location_id', 'geo_json'],
  params: PARAMS,
  location_column: 'location_id',
  result_fields: { type: 'string', geometry: 'json', properties: 'json', parent_location_id: 'integer' },
  // List objects are GeoJSON features of the selected locations, ordered by location (resource-api §25):
  // the one read mode, always.
  modes: [{ when: () => true, read: features }],
  hooks: {
    async beforeWrite(ctx, values) {
      if (values.location_id !== undefined) await assertLocationPermitted(ctx, values.location_id as number)
      if (values.geo_json !== undefined) return { ...values, geo_json: normaliseFeature(values.geo_json) }
    },
  },
})
