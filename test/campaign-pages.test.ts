// A campaign's recompute reads its own rows of the derived tables (agg_datapoint,
// datapoint_with_computed), not every campaign's. Their keys began with the location and agg_datapoint
// had no index that finds a campaign: every agg_refresh read the whole table, which at 30 M raw values
// no longer fits in memory (bench:scale, bench/README.md "Scale"). PostgreSQL only: the plans are its
// planner's, on its statistics.
import { sql } from 'kysely'
import t from 'tap'
import { recomputeCampaign } from '../lib/engine/recompute.js'
import { client } from './api.js'
import { build, engine } from './helper.js'
import { world } from './world.js'

const skip = engine !== 'postgres' && "PostgreSQL only: the plans are its planner's"

/** Other campaigns' derived rows beside the world's: 150 campaigns of 1,000 locations. */
const OTHER_ROWS = 150_000

t.test("a campaign's recompute reads its own derived rows, not every campaign's", { skip }, async (t) => {
  const { app, db } = await build(t)
  const w = await world(client(app))
  // The derived tables hold ids without foreign keys (sql/005): other campaigns' rows need no campaign.
  for (const table of ['agg_datapoint', 'datapoint_with_computed']) {
    const isRaw = table === 'agg_datapoint' ? sql`, is_raw` : sql``
    const raw = table === 'agg_datapoint' ? sql`, true` : sql``
    await sql`insert into ${sql.table(table)} (indicator_id, location_id, campaign_id, value${isRaw})
      select ${w.n}, l, 1000 + c, 1${raw} from generate_series(1, 150) c cross join generate_series(1, ${OTHER_ROWS / 150}) l`.execute(db)
  }
  await sql`analyze agg_datapoint, datapoint_with_computed`.execute(db)
  const read = await db.transaction().execute(async (trx) => {
    // Rows read by this transaction, scanned or fetched through an index; one process, so that the
    // counts are this backend's own.
    await sql`set local max_parallel_workers_per_gather = 0`.execute(trx)
    await recomputeCampaign(trx, w.C)
    const { rows } = await sql<{ table: string; read: number }>`
      select relname as table, (coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0))::int as read
      from pg_stat_xact_user_tables where relid in ('agg_datapoint'::regclass, 'datapoint_with_computed'::regclass)`.execute(trx)
    return Object.fromEntries(rows.map((r) => [r.table, r.read]))
  })
  for (const table of ['agg_datapoint', 'datapoint_with_computed'])
    t.ok(read[table] < 1_000, `${table}: ${read[table]} rows read beside ${OTHER_ROWS} of other campaigns`)
  const { rows } = await sql<{ value: number }>`select value from datapoint_with_computed
    where campaign_id = ${w.C} and location_id = ${w.R} and indicator_id = ${w.n}`.execute(db)
  t.same(rows, [{ value: 15 }], "the root's total still its provinces' (A: a1's 10 uploaded; B: its own 5)")
})
