// Where each value of a data value set goes: a value of an indicator that takes values by date goes to
// its period's first day; any other to the campaign that starts in its period. And which of them have a
// value stored there already (what CREATE, UPDATE and DELETE decide on). Codes are found as the
// pipeline maps them: through the mapping of codes (source_object_map), where a DHIS2 UID is mapped
// once like any other code.
import { sql, type Kysely } from 'kysely'
import type { DB } from '../../schemas/index.js'
import type { DataValue } from './data-values.js'
import { periodDays } from './periods.js'

/** Where a value is written: a campaign, or (for a dated indicator) a day. */
export interface Place {
  campaign_id: number | null
  data_date: string | null
}

/** A value set aside: what it names, why, and its index in the set. */
export type Conflict = (object: string, value: string, index: number) => void

/** Why a value's codes or place keep it from being written, as the summary names it (`sent`: as the value was sent). */
export const refusals = {
  element: (name: string) => `dataElement ${name} is not mapped to an indicator: map the code, then import again`,
  unit: (name: string) => `orgUnit ${name} is not mapped to a location: map the code, then import again`,
  outside: (name: string) => `orgUnit ${name} is outside the locations you are responsible for`,
}

/** The data elements of `values` whose mapped indicator takes values by date (its `resource_name`). */
async function datedElements(db: Kysely<DB>, values: DataValue[]): Promise<Set<string>> {
  const elements = [...new Set(values.map((v) => v.dataElement))]
  if (!elements.length) return new Set()
  const rows = await db
    .selectFrom('source_object_map as m')
    .innerJoin('indicator as i', 'i.id', 'm.master_object_id')
    .select('m.source_object_code as code')
    .where('m.content_type', '=', 'indicator')
    .where('m.source_object_code', 'in', elements)
    .where('i.resource_name', '=', 'date')
    .execute()
  return new Set(rows.map((r) => r.code))
}

/**
 * Each value's place, by its index: a dated indicator's value on its period's first day (a week's on
 * its Monday, a month's on its first), any other at the one campaign that starts in its period. A
 * period that is not one, or in which no campaign or several start, is a conflict.
 */
export async function placesOf(db: Kysely<DB>, values: DataValue[], conflict: Conflict): Promise<Map<number, Place>> {
  const dated = await datedElements(db, values)
  const campaigns = await db.selectFrom('campaign').select(['id', 'name', 'start_date']).orderBy('start_date').execute()
  const startDay = (c: { start_date: unknown }) => String(c.start_date).slice(0, 10)
  const byPeriod = new Map<string, { first: string; campaign: number | string } | { problem: string }>()
  const placed = new Map<number, Place>()
  for (const value of values) {
    let found = byPeriod.get(value.period)
    if (!found) {
      const days = periodDays(value.period)
      if ('problem' in days) found = days
      else {
        const starting = campaigns.filter((c) => startDay(c) >= days.first && startDay(c) <= days.last)
        found = {
          first: days.first,
          campaign:
            starting.length === 1
              ? starting[0].id
              : starting.length
                ? `${starting.length} campaigns start in period ${value.period} (${starting.map((c) => c.name).join(', ')}): send a period that holds one`
                : `no campaign starts in period ${value.period}`,
        }
      }
      byPeriod.set(value.period, found)
    }
    if ('problem' in found) conflict(value.period, found.problem, value.index)
    else if (dated.has(value.dataElement)) placed.set(value.index, { campaign_id: null, data_date: found.first })
    else if (typeof found.campaign === 'number') placed.set(value.index, { campaign_id: found.campaign, data_date: null })
    else conflict(value.period, found.campaign, value.index)
  }
  return placed
}

/** What a value finds stored: its codes' rows (null when a code is not mapped) and the raw datapoint at its place. */
export interface StoredRow {
  index: number
  indicator_id: number | null
  location_id: number | null
  datapoint_id: number | null
}

/** The rows `codes` are mapped to, by code; a code not mapped (or mapped to nothing yet, -1) is absent. */
async function mappedCodes(db: Kysely<DB>, contentType: 'indicator' | 'location', codes: string[]): Promise<Map<string, number>> {
  if (!codes.length) return new Map()
  const rows = await db
    .selectFrom('source_object_map')
    .select(['source_object_code as code', 'master_object_id as id'])
    .where('content_type', '=', contentType)
    .where(sql<boolean>`source_object_code = any(${codes}::text[])`)
    .where('master_object_id', '>', 0)
    .execute()
  return new Map(rows.map((r) => [r.code, r.id]))
}

/**
 * For each value, its data element's and organisation unit's rows as the pipeline would map them (each
 * distinct code looked up once), and the raw datapoint with a value at its place, found by the
 * datapoint's key (location, indicator, campaign or day: lib/engine/data-entry.ts).
 */
export async function storedRows(
  db: Kysely<DB>,
  values: DataValue[],
  placeOf: Map<number, Place>,
  /** false: the codes' rows only (each datapoint_id null), where what is stored decides nothing. */
  withDatapoints = true,
): Promise<StoredRow[]> {
  const placed = values.filter((v) => placeOf.has(v.index))
  const elements = await mappedCodes(db, 'indicator', [...new Set(placed.map((v) => v.dataElement))])
  const units = await mappedCodes(db, 'location', [...new Set(placed.map((v) => v.orgUnit))])
  const rows: StoredRow[] = placed.map((v) => ({
    index: v.index,
    indicator_id: elements.get(v.dataElement) ?? null,
    location_id: units.get(v.orgUnit) ?? null,
    datapoint_id: null,
  }))
  if (!withDatapoints) return rows
  const keyOf = (row: StoredRow) => {
    const place = placeOf.get(row.index)!
    return `${row.location_id}_${row.indicator_id}_${place.campaign_id ?? place.data_date}`
  }
  const keyed = rows.filter((r) => r.indicator_id !== null && r.location_id !== null)
  if (!keyed.length) return rows
  const { rows: stored } = await sql<{ id: number; key: string }>`select d.id, d.unique_index as key
    from unnest(${[...new Set(keyed.map(keyOf))]}::text[]) as k(key) join datapoint d on d.unique_index = k.key collate "C"
    where d.value is not null`.execute(db)
  const idOf = new Map(stored.map((r) => [r.key, r.id]))
  for (const row of keyed) row.datapoint_id = idOf.get(keyOf(row)) ?? null
  return rows
}
