// A campaign's recompute reads its own rows of the derived tables (agg_datapoint,
// datapoint_with_computed), not every campaign's. Their keys began with the location and agg_datapoint
// had no index that finds a campaign: every agg_refresh read the whole table, which at 30 M raw values
// no longer fits in memory (bench:scale, bench/README.md "Scale"). PostgreSQL only: the plans are its
// planner's, on its statistics.
import { type Kysely, sql } from 'kysely'
import t from 'tap'
import { recomputeEntry } from '../lib/engine/data-entry.js'
import { recomputeCampaign } from '../lib/engine/recompute.js'
import type { DB } from '../schemas/index.js'
import { client } from './api.js'
import { build, engine } from './helper.js'
import { world } from './world.js'

const skip = engine !== 'postgres' && "PostgreSQL only: the plans are its planner's"

const DERIVED = ['agg_datapoint', 'datapoint_with_computed'] as const
/** Other campaigns' derived rows beside the world's: 150 campaigns of 1,000 locations. */
const OTHER_ROWS = 150_000

interface Reads {
  /** Heap rows read, scanned or fetched through an index. */
  rows: number
  /** Buffers the table and its indexes were asked for. */
  blocks: number
  /** The table's own pages, nearly all of them other campaigns' rows. */
  pages: number
}

/**
 * What `work` read of each derived table, in one transaction of one backend (no parallel workers). The
 * backend's counts are emptied first: they gather across its transactions until it reports them.
 */
async function readsOf(db: Kysely<DB>, work: (trx: Kysely<DB>) => Promise<unknown>): Promise<Record<string, Reads>> {
  return db.connection().execute(async (connection) => {
    await sql`select pg_stat_force_next_flush()`.execute(connection)
    return connection.transaction().execute(async (trx) => {
      await sql`set local max_parallel_workers_per_gather = 0`.execute(trx)
      await work(trx)
      const { rows } = await sql<{ table: string } & Reads>`
        select s.relname as table, (coalesce(s.seq_tup_read, 0) + coalesce(s.idx_tup_fetch, 0))::int as rows,
          (pg_stat_get_xact_blocks_fetched(s.relid)
            + (select coalesce(sum(pg_stat_get_xact_blocks_fetched(i.indexrelid)), 0) from pg_index i where i.indrelid = s.relid))::int as blocks,
          (select relpages from pg_class c where c.oid = s.relid) as pages
        from pg_stat_xact_user_tables s where s.relid in ('agg_datapoint'::regclass, 'datapoint_with_computed'::regclass)`.execute(trx)
      return Object.fromEntries(rows.map(({ table, ...reads }) => [table, reads]))
    })
  })
}

t.test("a campaign's recompute and a correction's read its own derived rows, not every campaign's", { skip }, async (t) => {
  const { app, db } = await build(t)
  const w = await world(client(app))
  // The derived tables hold ids without foreign keys (sql/005): other campaigns' rows need no campaign.
  for (const table of DERIVED) {
    const isRaw = table === 'agg_datapoint' ? sql`, is_raw` : sql``
    const raw = table === 'agg_datapoint' ? sql`, true` : sql``
    await sql`insert into ${sql.table(table)} (indicator_id, location_id, campaign_id, value${isRaw})
      select ${w.n}, l, 1000 + c, 1${raw} from generate_series(1, 150) c cross join generate_series(1, ${OTHER_ROWS / 150}) l`.execute(db)
  }
  await sql`analyze agg_datapoint, datapoint_with_computed`.execute(db)
  for (const table of DERIVED) {
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from ${sql.table(table)} where campaign_id = ${w.C}`.execute(db)
    t.ok(rows[0].n > 0, `${table} holds the campaign's rows: its recompute merges into them`)
  }
  const seen = (what: string, reads: Record<string, Reads>) => {
    for (const table of DERIVED) {
      const { rows, blocks, pages } = reads[table]
      t.ok(rows > 0 && rows < 1_000, `${what}, ${table}: ${rows} rows read beside ${OTHER_ROWS} of other campaigns`)
      t.ok(blocks < pages / 10, `${what}, ${table}: ${blocks} buffers asked for, against the table's ${pages} pages`)
    }
  }
  seen('a whole recompute', await readsOf(db, (trx) => recomputeCampaign(trx, w.C)))
  seen('a data entry', await readsOf(db, (trx) => recomputeEntry(trx, { campaign_id: w.C, location_id: w.a1, indicator_id: w.n })))
  const { rows } = await sql<{ value: number }>`select value from datapoint_with_computed
    where campaign_id = ${w.C} and location_id = ${w.R} and indicator_id = ${w.n}`.execute(db)
  t.same(rows, [{ value: 15 }], "the root's total still its provinces' (A: a1's 10 uploaded; B: its own 5)")
})
