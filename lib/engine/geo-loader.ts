// `load-geo <file>` (resource-api §25): one `location_code|geo_json` line per location, the JSON as it is
// or CSV-quoted (the spec's files quote it), under an optional `location_code|geo_json` header. Upserts
// one polygon per location; unknown codes are reported and skipped; a line that is not JSON is named.
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

const notTheFormat = (line: number) => validationError('geo_json', `line ${line} is not location_code|geo_json with JSON after the |`)

/** The lines' records: code and JSON text (the JSON may hold `|`: only the first one separates). */
export function geoRecords(text: string | Buffer): Array<{ line: number; code: string; json: string }> {
  const rows = parse(text, {
    delimiter: '|',
    skip_empty_lines: true,
    trim: true,
    relax_quotes: true,
    relax_column_count: true,
    info: true,
  }) as unknown as Array<{
    record: string[]
    info: { lines: number }
  }>
  return rows
    .map(({ record, info }) => {
      if (record.length < 2) throw notTheFormat(info.lines)
      return { line: info.lines, code: record[0], json: record.slice(1).join('|') }
    })
    .filter((r, i) => !(i === 0 && r.code === 'location_code'))
}

function featureOf(json: string, line: number): string {
  let value: unknown
  try {
    value = JSON.parse(json)
  } catch {
    throw notTheFormat(line)
  }
  return JSON.stringify(normaliseFeature(value))
}

export async function loadGeo(db: Kysely<DB>, text: string | Buffer): Promise<GeoLoadResult> {
  const records = geoRecords(text)
  const result: GeoLoadResult = { loaded: 0, unknown: [] }
  await db.transaction().execute(async (trx) => {
    for (const record of records) {
      const location = await trx.selectFrom('location').select('id').where('location_code', '=', record.code).executeTakeFirst()
      if (!location) {
        result.unknown.push(record.code)
        continue
      }
      const feature = featureOf(record.json, record.line)
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
