// Campaigns whose derived values wait for a full recompute under the current rules (sql/023): each is
// recomputed whole in a transaction of its own, by whichever process takes it first.
import { sql, type Kysely } from 'kysely'
import type { DB } from '../../schemas/index.js'
import { recomputeCampaign } from './recompute.js'

/** Recomputes every pending campaign; returns how many this process recomputed. */
export async function recomputePending(db: Kysely<DB>): Promise<number> {
  let recomputed = 0
  for (;;) {
    const taken = await db.transaction().execute(async (trx) => {
      const { rows } = await sql<{ campaign_id: number }>`delete from campaign_recompute_pending
        where campaign_id = (select campaign_id from campaign_recompute_pending order by campaign_id limit 1 for update skip locked)
        returning campaign_id`.execute(trx)
      if (rows.length) await recomputeCampaign(trx, rows[0].campaign_id)
      return rows.length > 0
    })
    if (!taken) return recomputed
    recomputed++
  }
}
