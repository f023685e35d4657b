// A data value set's values screened before the pipeline runs, by the pipeline's own rules (the mapping
// of codes, the importer's part of the country, lib/engine/value-fit.ts and lib/ingest/clean.ts): its
// reports list only the first 100 rows or cells of each kind, and DHIS2's summary names every value set
// aside. A value with a code not mapped still goes to the pipeline, which registers the code for an
// administrator to map; a place outside the importer's part, or a value that does not fit its
// indicator, does not.
import { sql, type Kysely } from 'kysely'
import type { DB } from '../../schemas/index.js'
import type { AuthUser } from '../data/auth.js'
import { permittedLocations } from '../engine/access.js'
import { type IndicatorKind, indicatorKinds, valueProblem } from '../engine/value-fit.js'
import { cleanValue } from '../ingest/clean.js'
import type { DataValue } from './data-values.js'
import { type Conflict, type Place, refusals, storedRows } from './import-places.js'

/** The values the pipeline may take, and the raw datapoint stored at each one's place (by the value's index). */
export interface Screened {
  kept: DataValue[]
  stored: Map<number, number>
}

/** Why `value` does not fit an indicator of `kind` at `place`, as the pipeline would say it; undefined when it does, or when only the pipeline can tell (a class's labels). */
function cellProblem(kind: IndicatorKind | undefined, value: string, place: Place): string | undefined {
  if (!kind || kind.data_format === 'class') return undefined
  const cleaned = cleanValue(value)
  if (cleaned === undefined) return undefined
  if (cleaned === 'reject') return 'not a number'
  return valueProblem(kind, cleaned, place.campaign_id === null ? 'date' : 'campaign')
}

/** `values` screened for `user`; each value set aside, and each code not mapped, a conflict named as it was sent (`sent`). */
export async function screen(
  db: Kysely<DB>,
  user: AuthUser,
  values: DataValue[],
  placeOf: Map<number, Place>,
  report: { conflict: Conflict; sent: Map<number, DataValue> },
  /** What decides: whether the values are written (checked), and whether what is stored matters (CREATE, UPDATE, DELETE). */
  needs: { values: boolean; stored: boolean },
): Promise<Screened> {
  const checkValues = needs.values
  const found = await storedRows(db, values, placeOf, needs.stored)
  const permitted = user.restricted ? await permittedAmong(db, user, found) : undefined
  const kinds = checkValues ? await indicatorKinds(db, [...new Set(found.flatMap((r) => (r.indicator_id === null ? [] : [r.indicator_id])))]) : new Map()
  const byIndex = new Map(values.map((v) => [v.index, v]))
  const kept: DataValue[] = []
  const stored = new Map<number, number>()
  for (const row of found) {
    const value = byIndex.get(row.index)!
    const { dataElement, orgUnit } = report.sent.get(row.index) ?? value
    if (row.indicator_id === null || row.location_id === null) {
      if (row.indicator_id === null) report.conflict(dataElement, refusals.element(dataElement), row.index)
      else report.conflict(orgUnit, refusals.unit(orgUnit), row.index)
      kept.push(value)
      continue
    }
    if (permitted && !permitted.has(row.location_id)) {
      report.conflict(orgUnit, refusals.outside(orgUnit), row.index)
      continue
    }
    const problem = checkValues ? cellProblem(kinds.get(row.indicator_id), value.value, placeOf.get(row.index)!) : undefined
    if (problem) {
      report.conflict(dataElement, `value ${value.value} of dataElement ${dataElement}: ${problem}`, row.index)
      continue
    }
    if (row.datapoint_id !== null) stored.set(row.index, row.datapoint_id)
    kept.push(value)
  }
  // In the set's order: the file's rows, and which of two values of one key is the last, follow it.
  kept.sort((a, b) => a.index - b.index)
  return { kept, stored }
}

/** Of the locations `rows` found, those inside `user`'s part of the country. */
async function permittedAmong(db: Kysely<DB>, user: AuthUser, rows: Array<{ location_id: number | null }>): Promise<Set<number>> {
  const ids = [...new Set(rows.flatMap((r) => (r.location_id === null ? [] : [r.location_id])))]
  if (!ids.length) return new Set()
  const inside = await db.selectFrom('location').select('id').where('id', 'in', ids).where(sql.ref('id'), 'in', permittedLocations(user)).execute()
  return new Set(inside.map((r) => r.id))
}
