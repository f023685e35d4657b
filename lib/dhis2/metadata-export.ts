// DHIS2's metadata export (`GET /api/metadata`): what the reader may read of the location tree, its levels
// and the indicators a data value set can carry, as DHIS2's organisation units, levels and data elements.
// Each object goes out by a UID: the one mapped to it, else one derived from its own code (derivedUid),
// the same every time, so that the export imported again finds the same rows; the import
// (metadata-import.ts) derives it too, which is why it lives here, below the import.
import { createHash } from 'node:crypto'
import { sql, type Kysely } from 'kysely'
import type { DB } from '../../schemas/index.js'
import { badRequest } from '../core/errors.js'
import type { AuthUser } from '../data/auth.js'
import { permittedLocations } from '../engine/access.js'

type Row = Record<string, unknown>

/** The value type and aggregation an indicator goes out as: the formats an import reads back to themselves. */
export const VALUE_TYPE_OF = { int: ['NUMBER', 'SUM'], pct: ['PERCENTAGE', 'AVERAGE'], bool: ['BOOLEAN', 'AVERAGE'] } as const

/** A DHIS2 UID: a letter, then ten letters or digits. */
export const UID_PATTERN = /^[A-Za-z][A-Za-z0-9]{10}$/
const LETTERS = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'
const ALPHANUMERIC = `0123456789${LETTERS}`

/**
 * The UID of an object no DHIS2 UID is mapped to, from its own code (a location's code, an indicator's
 * short name, a type's name): the same every time, so an export imported again finds the same rows.
 */
export function derivedUid(kind: 'location' | 'indicator' | 'location_type', code: string): string {
  const bytes = createHash('sha256').update(`${kind}\u0000${code}`).digest()
  let uid = LETTERS[bytes[0] % LETTERS.length]
  for (let i = 1; i < 11; i++) uid += ALPHANUMERIC[bytes[i] % ALPHANUMERIC.length]
  return uid
}

/** What an export holds: each type, or not. */
export interface MetadataExportAsked {
  organisationUnitLevels: boolean
  organisationUnits: boolean
  dataElements: boolean
}

/** The types an export holds from its query: those set true, else every one not set false; a 400 for another value. */
export function metadataExportAsked(query: Record<string, string | undefined>): MetadataExportAsked {
  const names = ['organisationUnitLevels', 'organisationUnits', 'dataElements'] as const
  const given = new Map<string, boolean>()
  for (const name of names) {
    const value = query[name]?.toLowerCase()
    if (value === undefined || value === '') continue
    if (value !== 'true' && value !== 'false') throw badRequest('INVALID_PARAMETER', `${name} ${query[name]}: true or false`)
    given.set(name, value === 'true')
  }
  const some = [...given.values()].some(Boolean)
  return Object.fromEntries(names.map((name) => [name, some ? given.get(name) === true : given.get(name) !== false])) as unknown as MetadataExportAsked
}

/** The UID each row goes out as: a DHIS2 UID mapped to it (the first mapped), else the one derived from its own code. */
async function uidsOf(db: Kysely<DB>, contentType: 'location' | 'indicator', ids: number[]): Promise<Map<number, string>> {
  if (!ids.length) return new Map()
  const { rows } = await sql<{ id: number; code: string }>`select distinct on (master_object_id) master_object_id as id, source_object_code as code
    from source_object_map where content_type = ${contentType} and master_object_id = any(${ids}::int4[])
      and source_object_code ~ '^[A-Za-z][A-Za-z0-9]{10}$'
    order by master_object_id, id`.execute(db)
  return new Map(rows.map((r) => [r.id, r.code]))
}

/** Each row's UID as an export gives it: a DHIS2 UID mapped to it, else the one derived from its own code (a location's code, an indicator's short name). */
export async function uidsOfRows(
  db: Kysely<DB>,
  contentType: 'location' | 'indicator',
  rows: Array<{ id: number; code: string }>,
): Promise<Map<number, string>> {
  const mapped = await uidsOf(
    db,
    contentType,
    rows.map((r) => r.id),
  )
  return new Map(rows.map((r) => [r.id, mapped.get(r.id) ?? derivedUid(contentType, r.code)]))
}

/** An ISO time as DHIS2 writes it (no offset). */
const dhis2Time = (value: unknown) => (value instanceof Date ? value.toISOString() : String(value).replace(' ', 'T')).slice(0, 23)

/** The locations `reader` may read as organisation units, parents first; a parent outside her part is not named. */
async function exportUnits(db: Kysely<DB>, reader: AuthUser) {
  const rows = await db
    .selectFrom('location as l')
    .innerJoin('location_type as t', 't.id', 'l.location_type_id')
    .leftJoin('location_polygon as p', 'p.location_id', 'l.id')
    .select(['l.id', 'l.name', 'l.location_code', 'l.parent_location_id', 'l.latitude', 'l.longitude', 'l.created_at', 't.admin_level', 'p.geo_json'])
    .$if(reader.restricted, (q) => q.where(sql.ref('l.id'), 'in', permittedLocations(reader)))
    .orderBy('t.admin_level')
    .orderBy('l.location_code')
    .execute()
  const uidOf = await uidsOfRows(
    db,
    'location',
    rows.map((r) => ({ id: r.id, code: r.location_code })),
  )
  return rows.map((r) => {
    const geometry = (r.geo_json as Row | null)?.geometry
    return {
      id: uidOf.get(r.id)!,
      code: r.location_code,
      name: r.name,
      shortName: r.name.slice(0, 50),
      openingDate: dhis2Time(r.created_at),
      ...(r.admin_level >= 0 ? { level: r.admin_level + 1 } : {}),
      ...(r.parent_location_id !== null && uidOf.has(r.parent_location_id) ? { parent: { id: uidOf.get(r.parent_location_id)! } } : {}),
      ...(geometry ? { geometry } : r.latitude !== null && r.longitude !== null ? { geometry: { type: 'Point', coordinates: [r.longitude, r.latitude] } } : {}),
    }
  })
}

/** The value type and aggregation each exported format is written with: a count by date is a number. */
const EXPORTED_TYPE_OF = { ...VALUE_TYPE_OF, date_int: VALUE_TYPE_OF.int }

/**
 * The indicators a data value set can carry as data elements: entered as numbers, percentages or
 * booleans, for campaigns or by date. Calculated indicators are left out (DHIS2's indicators, not data
 * elements: a value sent for one would stand beside what the engine calculates), and so are classes.
 * Whether an indicator takes values by date is not said: DHIS2 has no such notion (docs/dhis2.md).
 */
async function exportElements(db: Kysely<DB>) {
  const rows = await db
    .selectFrom('indicator as i')
    .select(['i.id', 'i.name', 'i.short_name', 'i.description', 'i.data_format'])
    .where('i.data_format', 'in', Object.keys(EXPORTED_TYPE_OF))
    .where((eb) => eb.not(eb.exists(eb.selectFrom('calculated_indicator_component as c').select('c.id').whereRef('c.indicator_id', '=', 'i.id'))))
    .orderBy('i.short_name')
    .execute()
  const ids = rows.map((r) => r.id)
  const uids = await uidsOfRows(
    db,
    'indicator',
    rows.map((r) => ({ id: r.id, code: r.short_name })),
  )
  const { rows: codes } = ids.length
    ? await sql<{ id: number; code: string }>`select master_object_id as id, source_object_code as code from source_object_map
        where content_type = 'indicator' and master_object_id = any(${ids}::int4[]) order by id`.execute(db)
    : { rows: [] }
  return rows.map((r) => {
    const id = uids.get(r.id)!
    // Its code: the first code mapped to it that is not its UID, else its short name (as a template names it).
    const code = codes.find((c) => c.id === r.id && c.code !== id)?.code ?? r.short_name
    const [valueType, aggregationType] = EXPORTED_TYPE_OF[r.data_format as keyof typeof EXPORTED_TYPE_OF]
    return {
      id,
      code,
      name: r.name,
      shortName: r.short_name,
      valueType,
      aggregationType,
      domainType: 'AGGREGATE',
      ...(r.description ? { description: r.description } : {}),
    }
  })
}

/** The location types as DHIS2's levels (admin level + 1), from the top. */
async function exportLevels(db: Kysely<DB>) {
  const rows = await db.selectFrom('location_type').select(['name', 'admin_level']).where('admin_level', '>=', 0).orderBy('admin_level').execute()
  return rows.map((r) => ({ id: derivedUid('location_type', r.name), name: r.name, level: r.admin_level + 1 }))
}

/** DHIS2's metadata export of what `reader` may read: the types asked for, each object by its UID. */
export async function exportMetadata(db: Kysely<DB>, reader: AuthUser, asked: MetadataExportAsked) {
  const date = new Date().toISOString().slice(0, 23)
  return {
    system: { id: 'rhizome-api', date },
    date,
    ...(asked.organisationUnitLevels ? { organisationUnitLevels: await exportLevels(db) } : {}),
    ...(asked.organisationUnits ? { organisationUnits: await exportUnits(db, reader) } : {}),
    ...(asked.dataElements ? { dataElements: await exportElements(db) } : {}),
  }
}
