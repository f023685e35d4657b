// Data values out in DHIS2's data value set (`GET /api/dataValueSets`): the values people entered or
// uploaded (the raw datapoints, never the totals the engine computes from them, which an import into
// DHIS2 would count twice), for data elements, organisation units (with `children`, their subtrees) and
// periods, within the reader's part of the country. Identifiers as the import reads them back: asked
// for by code, UID or name, written out by the scheme asked (CODE by default: the data element as
// asked, the organisation unit's code), a campaign as the month it starts in (its day where two
// campaigns start in one month), a dated value as its day. Read in pages of whole places, as the
// answer is written: a country's values are never held at once.
import { sql, type Kysely } from 'kysely'
import type { DB } from '../../schemas/index.js'
import { badRequest } from '../core/errors.js'
import type { AuthUser } from '../data/auth.js'
import { permittedLocations } from '../engine/access.js'
import type { IdScheme, IdSchemes } from './import.js'
import { UID_PATTERN, uidsOfRows } from './metadata-export.js'
import { type PeriodDays, periodDays } from './periods.js'

/** What an export asks for, as DHIS2's parameters name it. */
export interface ExportAsked {
  dataElements: string[]
  orgUnits: string[]
  children: boolean
  periods: string[]
  startDate?: string
  endDate?: string
  /** How the values name their organisation units and data elements. */
  schemes: IdSchemes
}

/** A value out, in a data value set's terms. */
export interface DataValueOut {
  dataElement: string
  period: string
  orgUnit: string
  value: string
}

/**
 * The row each asked identifier names, in this order: a code mapped to it (a DHIS2 UID mapped once
 * included), the UID a metadata export gives it, its own code (a location's code, an indicator's short
 * name). Codes anyone may give a new location come last: a unit named after another's UID does not
 * take its place.
 */
async function rowsNamed(db: Kysely<DB>, table: 'location' | 'indicator', asked: string[]): Promise<Map<string, number>> {
  const own = table === 'location' ? 'location_code' : 'short_name'
  const mapped = await db
    .selectFrom('source_object_map')
    .select(['source_object_code as code', 'master_object_id as id'])
    .where('content_type', '=', table)
    .where('source_object_code', 'in', asked)
    .where('master_object_id', '>', 0)
    .execute()
  const found = new Map(mapped.map((r) => [r.code, r.id]))
  // A UID derived from a row's code: computed only when a UID-shaped identifier is not mapped.
  const uidLike = new Set(asked.filter((code) => !found.has(code) && UID_PATTERN.test(code)))
  if (uidLike.size) {
    const all = await db
      .selectFrom(table)
      .select([`${own} as code`, 'id'])
      .execute()
    for (const [id, uid] of await uidsOfRows(db, table, all)) if (uidLike.has(uid) && !found.has(uid)) found.set(uid, id)
  }
  const rest = asked.filter((code) => !found.has(code))
  if (rest.length)
    for (const r of await db
      .selectFrom(table)
      .select([`${own} as code`, 'id'])
      .where(own, 'in', rest)
      .execute())
      found.set(r.code, r.id)
  return found
}

/** How each row of `ids` is named out under `scheme`. */
async function namesOut(db: Kysely<DB>, table: 'location' | 'indicator', ids: number[], scheme: IdScheme, asked: Map<string, number>) {
  if (!ids.length) return new Map<number, string>()
  const own = table === 'location' ? 'location_code' : 'short_name'
  const rows = await db
    .selectFrom(table)
    .select(['id', 'name', `${own} as code`])
    .where('id', 'in', ids)
    .execute()
  if (scheme === 'UID') return uidsOfRows(db, table, rows)
  if (scheme === 'NAME') return new Map(rows.map((r) => [r.id, r.name]))
  // CODE: a location's own code; a data element as it was asked for (the code the import will map back).
  if (table === 'location') return new Map(rows.map((r) => [r.id, r.code]))
  return new Map([...rows.map((r) => [r.id, r.code] as const), ...[...asked].map(([code, id]) => [id, code] as const)])
}

/** The days asked for: each period's, and the days between startDate and endDate. */
function rangesOf(asked: ExportAsked): PeriodDays[] {
  const ranges = asked.periods.map((period) => {
    const days = periodDays(period)
    if ('problem' in days) throw badRequest('INVALID_PERIOD', `period ${days.problem}`)
    return days
  })
  for (const [name, day] of [
    ['startDate', asked.startDate],
    ['endDate', asked.endDate],
  ] as const) {
    if (day !== undefined && (!/^\d{4}-\d{2}-\d{2}$/.test(day) || 'problem' in periodDays(day.replaceAll('-', '')))) {
      throw badRequest('INVALID_PARAMETER', `${name} ${day}: a day as YYYY-MM-DD`)
    }
  }
  if (asked.startDate || asked.endDate) ranges.push({ first: asked.startDate ?? '0000-01-01', last: asked.endDate ?? '9999-12-31' })
  return ranges
}

/** The campaigns that start in `ranges`, each with its period's name. */
async function campaignsOf(db: Kysely<DB>, ranges: PeriodDays[]) {
  const all = await db.selectFrom('campaign').select(['id', 'name', 'start_date']).execute()
  const day = (c: { start_date: unknown }) => String(c.start_date).slice(0, 10)
  const startsInMonth = new Map<string, number>()
  for (const c of all) startsInMonth.set(day(c).slice(0, 7), (startsInMonth.get(day(c).slice(0, 7)) ?? 0) + 1)
  // The month a campaign starts in, read back by the import as that campaign; its day where the month holds two.
  const periodOf = (c: { start_date: unknown }) => (startsInMonth.get(day(c).slice(0, 7)) === 1 ? day(c).slice(0, 7) : day(c)).replaceAll('-', '')
  return new Map(all.filter((c) => ranges.some((r) => day(c) >= r.first && day(c) <= r.last)).map((c) => [c.id, { period: periodOf(c), name: c.name }]))
}

/** The values out, page by page, and the campaign each of their periods stands for (ADX's data set of a group). */
export interface DataValuesOut {
  /** Every value, in pages of whole places: a place's values (every period of it) are in one page, in order. */
  pages: AsyncGenerator<DataValueOut[]>
  campaignOfPeriod: Map<string, string>
}

/**
 * Places whose values are read together: one page of an export (500 places × 20 indicators × 12
 * campaigns: 120,000 values). Tests read the demo in many pages by lowering it.
 */
export const exportPages = { places: 500 }

/** Of `ids`, the units a restricted reader sees: her subtree, and the units above it (where it sits). */
async function unitsSeenBy(db: Kysely<DB>, reader: AuthUser, ids: number[]): Promise<Set<number>> {
  if (!ids.length) return new Set()
  const above = sql`(select parent_location_id from location_tree where location_id = ${reader.top_lvl_location_id})`
  const rows = await db
    .selectFrom('location')
    .select('id')
    .where('id', 'in', ids)
    .where((eb) => eb.or([eb(sql.ref('id'), 'in', permittedLocations(reader)), eb(sql.ref('id'), 'in', above)]))
    .execute()
  return new Set(rows.map((row) => row.id))
}

/** The raw values `reader` may see of what `asked` names. */
export async function exportDataValues(db: Kysely<DB>, reader: AuthUser, asked: ExportAsked): Promise<DataValuesOut> {
  if (!asked.dataElements.length) throw badRequest('MISSING_PARAMETER', 'dataElement: at least one (a code mapped to an indicator, or its short name)')
  if (!asked.orgUnits.length) throw badRequest('MISSING_PARAMETER', 'orgUnit: at least one location code')
  if (!asked.periods.length && !asked.startDate && !asked.endDate) throw badRequest('MISSING_PARAMETER', 'period, or startDate and endDate')
  const indicators = await rowsNamed(db, 'indicator', asked.dataElements)
  const unknownElements = asked.dataElements.filter((code) => !indicators.has(code))
  if (unknownElements.length) {
    throw badRequest(
      'UNKNOWN_DATA_ELEMENT',
      `dataElement ${unknownElements.join(', ')}: neither a code mapped to an indicator, an indicator's short name, nor its UID`,
    )
  }
  const unitOf = await rowsNamed(db, 'location', asked.orgUnits)
  const seen = reader.restricted ? await unitsSeenBy(db, reader, [...unitOf.values()]) : undefined
  // A unit a restricted reader cannot see is answered as one that does not exist: the answer tells her nothing of it.
  const missing = asked.orgUnits.filter((code) => !unitOf.has(code) || (seen && !seen.has(unitOf.get(code)!)))
  if (missing.length) throw badRequest('UNKNOWN_ORG_UNIT', `orgUnit ${missing.join(', ')}: no location has this code or UID`)
  const ranges = rangesOf(asked)
  const campaigns = await campaignsOf(db, ranges)
  const campaignOfPeriod = new Map([...campaigns.values()].map((c) => [c.period, c.name]))
  const askedElements = new Map(asked.dataElements.map((code) => [code, indicators.get(code)!]))
  const unitIds = [...new Set(asked.orgUnits.map((code) => unitOf.get(code)!))]
  // The places asked for, in the order their values go out.
  const places = await db
    .selectFrom('location as l')
    .select('l.id')
    .where(sql.ref('l.id'), 'in', asked.children ? sql`(select location_id from location_tree where parent_location_id in (${sql.join(unitIds)}))` : unitIds)
    .$if(reader.restricted, (q) => q.where(sql.ref('l.id'), 'in', permittedLocations(reader)))
    .orderBy('l.location_code')
    .orderBy('l.id')
    .execute()
  const elementOut = await namesOut(db, 'indicator', [...new Set(askedElements.values())], asked.schemes.dataElement, askedElements)
  // A value at a campaign asked for, or a dated value on a day asked for.
  const inPeriods = sql<boolean>`(d.campaign_id in (${campaigns.size ? sql.join([...campaigns.keys()]) : sql`null`})
    or (d.campaign_id is null and (${sql.join(
      ranges.map((r) => sql`d.data_date between ${r.first}::date and ${r.last}::date`),
      sql` or `,
    )})))`
  /** The values at `ids` (places in the export's order). */
  const valuesAt = async (ids: number[]): Promise<DataValueOut[]> => {
    const rows = await db
      .selectFrom('datapoint as d')
      .innerJoin('location as l', 'l.id', 'd.location_id')
      .select(['d.indicator_id', 'd.campaign_id', 'd.data_date', 'd.value', 'd.location_id'])
      .where('d.location_id', 'in', ids)
      .where('d.indicator_id', 'in', [...askedElements.values()])
      .where(inPeriods)
      .where('d.value', 'is not', null)
      .orderBy('l.location_code')
      .orderBy('d.location_id')
      .orderBy('d.campaign_id')
      .orderBy('d.data_date')
      .orderBy('d.indicator_id')
      .execute()
    const unitOut = await namesOut(db, 'location', [...new Set(rows.map((r) => r.location_id))], asked.schemes.orgUnit, unitOf)
    return rows.map((r) => ({
      dataElement: elementOut.get(r.indicator_id)!,
      // A dated value's period is its day (DHIS2's daily period).
      period: r.campaign_id === null ? String(r.data_date).slice(0, 10).replaceAll('-', '') : campaigns.get(r.campaign_id)!.period,
      orgUnit: unitOut.get(r.location_id)!,
      value: String(r.value),
    }))
  }
  async function* pages() {
    for (let i = 0; i < places.length; i += exportPages.places) {
      const values = await valuesAt(places.slice(i, i + exportPages.places).map((p) => p.id))
      if (values.length) yield values
    }
  }
  return { pages: pages(), campaignOfPeriod }
}
