// `importStrategy=DELETE`: the values a data value set names are deleted where they are stored, as a
// data entry's delete is (resources/campaign_datapoint.ts): the raw datapoint goes, its history keeps
// who deleted what value and through what (sql/012), and the campaign's totals and calculated values
// above it are recomputed in the same transaction. A value with nothing stored at its place is ignored,
// as DHIS2 ignores it; a code not mapped, or a place outside the importer's part, is a conflict.
import { sql, type Kysely } from 'kysely'
import type { DB } from '../../schemas/index.js'
import type { AuthUser } from '../data/auth.js'
import { permittedLocations } from '../engine/access.js'
import { CHANGED_KEYS, createChangedKeys, recomputeChanged } from '../engine/recompute-changed.js'
import type { DataValue } from './data-values.js'
import { type Conflict, type Place, refusals, storedRows } from './import-places.js'

/** Deletes the stored values `values` name, as `user`; the number deleted. Every place's campaign is locked already. */
export async function deleteValues(
  db: Kysely<DB>,
  user: AuthUser,
  values: DataValue[],
  placeOf: Map<number, Place>,
  conflict: Conflict,
  sent: Map<number, DataValue>,
): Promise<number> {
  const found = await storedRows(db, values, placeOf)
  const permitted = user.restricted ? await permittedAmong(db, user, found) : undefined
  const doomed = new Set<number>()
  for (const row of found) {
    const { dataElement, orgUnit } = sent.get(row.index)!
    if (row.indicator_id === null) conflict(dataElement, refusals.element(dataElement), row.index)
    else if (row.location_id === null) conflict(orgUnit, refusals.unit(orgUnit), row.index)
    else if (permitted && !permitted.has(row.location_id)) conflict(orgUnit, refusals.outside(orgUnit), row.index)
    else if (row.datapoint_id !== null) doomed.add(row.datapoint_id)
  }
  if (!doomed.size) return 0
  await createChangedKeys(db)
  const { rows } = await sql<{ deleted: number; campaigns: number[] | null }>`
    with d as (delete from datapoint where id = any(${[...doomed]}::int4[]) returning campaign_id, location_id, indicator_id),
    noted as (insert into ${CHANGED_KEYS} select campaign_id, location_id, indicator_id from d where campaign_id is not null)
    select count(*)::int as deleted, array_agg(distinct campaign_id) filter (where campaign_id is not null) as campaigns from d`.execute(db)
  // Ascending, as their locks were taken (lib/engine/campaign-locks.ts).
  for (const campaign of (rows[0].campaigns ?? []).sort((a, b) => a - b)) await recomputeChanged(db, campaign)
  return rows[0].deleted
}

/** Of the locations `rows` found, those inside `user`'s part of the country. */
async function permittedAmong(db: Kysely<DB>, user: AuthUser, rows: Array<{ location_id: number | null }>): Promise<Set<number>> {
  const ids = [...new Set(rows.map((r) => r.location_id).filter((id): id is number => id !== null))]
  if (!ids.length) return new Set()
  const inside = await db.selectFrom('location').select('id').where('id', 'in', ids).where(sql.ref('id'), 'in', permittedLocations(user)).execute()
  return new Set(inside.map((r) => r.id))
}
