// `importStrategy=DELETE`: the values a data value set names are deleted where they are stored, as a
// data entry's delete is (resources/campaign_datapoint.ts): the raw datapoint goes, its history keeps
// who deleted what value and through what (sql/012), and the campaign's totals and calculated values
// above it are recomputed in the same transaction. A value with nothing stored at its place is ignored,
// as DHIS2 ignores it; the values screened out (lib/dhis2/import-screen.ts) are the conflicts.
import { sql, type Kysely } from 'kysely'
import type { DB } from '../../schemas/index.js'
import { CHANGED_KEYS, createChangedKeys, recomputeChanged } from '../engine/recompute-changed.js'

/** Deletes the raw datapoints `doomed` (their ids); the number deleted. Their campaigns are locked already. */
export async function deleteValues(db: Kysely<DB>, doomed: number[]): Promise<number> {
  if (!doomed.length) return 0
  await createChangedKeys(db)
  const { rows } = await sql<{ deleted: number; campaigns: number[] | null }>`
    with d as (delete from datapoint where id = any(${doomed}::int4[]) returning campaign_id, location_id, indicator_id),
    noted as (insert into ${CHANGED_KEYS} select campaign_id, location_id, indicator_id from d where campaign_id is not null)
    select count(*)::int as deleted, array_agg(distinct campaign_id) filter (where campaign_id is not null) as campaigns from d`.execute(db)
  // Ascending, as their locks were taken (lib/engine/campaign-locks.ts).
  for (const campaign of (rows[0].campaigns ?? []).sort((a, b) => a - b)) await recomputeChanged(db, campaign)
  return rows[0].deleted
}
