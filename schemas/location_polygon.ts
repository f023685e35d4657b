import { col, table } from './columns.js'

export const LocationPolygon = table('location_polygon', {
  id: col.id(),
  location_id: col.fk('location', { unique: true }),
  geo_json: col.json(),
  created_at: col.createdAt(),
})
