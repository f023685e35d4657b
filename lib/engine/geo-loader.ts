// `load-geo <file>` (resource-api §25): a pipe-delimited `location_code|geo_json` file whose second field
// is CSV-quoted JSON. Upserts one polygon per location; unknown codes are reported and skipped.
import { parse } from 'csv-parse/sync'
import { sql, type Kysely } from 'kysely'
import type { DB } from '../../schemas/index.js'
import { validationError } from '../core/errors.js'

type Row = Record<string, unknown>

const GEOMETRIES = new Set(['Polygon', 'MultiPolygon'])

/** A Feature with a (Multi)Polygon geometry, or such a bare geometry wrapped as a Feature. */
export function normaliseFeature(value: unknown): Row {
  const object = value as Row | null
  if (object && typeof object === 'object' && !Array.isArray(object)) {
    if (object.type === 'Feature') {
      const geometry = object.geometry as Row | null
      if (geometry && GEOMETRIES.has(geometry.type as string) && Array.isArray(geometry.coordinates)) {
        return { ...object, properties: object.properties ?? {} }
      }
    } else if (GEOMETRIES.has(object.type as string) && Array.isArray(object.coordinates)) {
      return { type: 'Feature', geometry: object, properties: {} }
    }
  }
  throw validationError('geo_json', 'must be a GeoJSON Feature with a Polygon or MultiPolygon geometry')
}

export interface GeoLoadResult {
  loaded: number
  unknown: string[]
}

export async function loadGeo(db: Kysely<DB>, text: string | Buffer): Promise<GeoLoadResult> {
  const records = parse(text, { columns: true, delimiter: '|', skip_empty_lines: true, trim: true }) as Array<{
    location_code: string
    geo_json: string
  }>
  const result: GeoLoadResult = { loaded: 0, unknown: [] }
  await db.transaction().execute(async (trx) => {
    for (const record of records) {
      const location = await trx.selectFrom('location').select('id').where('location_code', '=', record.location_code).executeTakeFirst()
      if (!location) {
        result.unknown.push(record.location_code)
        continue
      }
      const feature = JSON.stringify(normaliseFeature(JSON.parse(record.geo_json)))
      await trx
        .insertInto('location_polygon')
        .values({ location_id: location.id, geo_json: feature })
        .onConflict((oc) => oc.column('location_id').doUpdateSet({ geo_json: sql`excluded.geo_json` }))
        .execute()
      result.loaded++
    }
  })
  return result
}
