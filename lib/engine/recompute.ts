// Campaign recompute (ingestion §6–§7), set-based in SQL: raw values → aggregation up the location tree
// (the frontier rule) → the final values, calculated indicators included (finals.ts) → merged into
// agg_datapoint and datapoint_with_computed with stable ids. Runs in the caller's transaction, under an advisory lock on the campaign.
import { sql, type Kysely, type RawBuilder } from 'kysely'
import type { DB } from '../../schemas/index.js'
import { recomputeDuration } from '../core/metrics.js'
import { isUniqueViolation } from '../core/errors.js'
import { FINITE, FLOAT8, keyed, NUMERIC, SAFE_RANGE, workingTable } from './arithmetic.js'
import { FINALS_TABLES, finalValues } from './finals.js'
import { lockCampaigns } from './campaign-locks.js'

// Working tables of every recompute, dropped at its end (and at commit in any case); finals.ts adds its own.
const TEMP = ['rc_raw', 'rc_agg'] as const

export interface RecomputeStats {
  raw: number
  aggregated: number
  computed: number
}

export async function recomputeCampaign(db: Kysely<DB>, campaignId: number): Promise<RecomputeStats> {
  const endTimer = recomputeDuration.startTimer()
  try {
    return await recompute(db, campaignId)
  } finally {
    endTimer()
  }
}

export async function recompute(db: Kysely<DB>, campaignId: number): Promise<RecomputeStats> {
  // The id is an integer from the database. It is written as a literal so these statements are planned
  // for the temp tables' current contents, never from a cached generic plan.
  const C = sql.lit(Math.trunc(campaignId))
  await openWorkingSets(db, campaignId)
  const { raw, aggregated, arithmetic } = await aggregateUp(db, C)
  const { final, calculated, tables } = await finalValues(db, C, arithmetic, 'campaign')
  await mergeResults(db, C, final, tables)
  await sql`delete from campaign_recompute_pending where campaign_id = ${C}`.execute(db)
  const count = (result: { numAffectedRows?: bigint }) => Number(result.numAffectedRows ?? 0)
  return { raw: count(raw), aggregated: count(aggregated), computed: count(raw) + count(aggregated) + calculated }
}

/** The campaign's lock (lib/engine/campaign-locks.ts), and empty working sets (temp tables dropped at commit). */
export async function openWorkingSets(db: Kysely<DB>, campaignId: number) {
  await lockCampaigns(db, [campaignId])
  // The working sets hold a campaign's every value (500,000 rows for 10,000 locations × 50
  // indicators): with the default 4 MB their hash joins spill to disk in batches. Until the end of
  // the caller's transaction.
  await sql`set local work_mem = '64MB'`.execute(db)
  for (const name of TEMP) await workingTable(db, name)
}

/** §6: the raw values and their aggregates up the tree; the arithmetic their values allow. */
async function aggregateUp(db: Kysely<DB>, C: RawBuilder<unknown>) {
  // §6: raw values of the campaign (finite only) …
  const raw = await sql`insert into rc_raw select location_id, indicator_id, value from datapoint
    where campaign_id = ${C} and ${FINITE(sql.ref('value'))}`.execute(db)
  await keyed(db, 'rc_raw')
  const { rows: unsafe } = await sql<{ found: boolean }>`select exists (select 1 from rc_raw where not (${SAFE_RANGE})) as found`.execute(db)
  const { type: N, float8 } = unsafe[0].found ? NUMERIC : FLOAT8
  // … plus, for int (SUM) and bool (MEAN) indicators, each ancestor without its own raw value gets
  // its frontier: the raw values below it with no raw value in between. Built bottom-up, one level of
  // the tree at a time: a location without a raw value holds the total and the count of its children's
  // (each child's raw value, or else its own frontier's), so each value is added once, into its parent
  // (searching each value's nearest ancestor with a value instead joins it with every ancestor: 1.4–2.3×
  // the time, bench/README.md "Ingestion"). A sum is the total, a mean the total over the count.
  // rc_agg holds these aggregates only; the stored values are rc_raw and rc_agg together.
  await sql`drop table if exists rc_up`.execute(db)
  await sql`create temp table rc_up on commit drop as
    select r.location_id, r.indicator_id, r.value::${N} as total, 1::int8 as n, d.depth, false as aggregated
    from rc_raw r
    join indicator i on i.id = r.indicator_id and i.data_format in ('int', 'bool')
    join (select location_id, max(lvl) as depth from location_tree group by location_id) d on d.location_id = r.location_id`.execute(db)
  const { rows: deepest } = await sql<{ depth: number | null }>`select max(depth) as depth from rc_up`.execute(db)
  for (let depth = deepest[0].depth ?? 0; depth >= 1; depth--) {
    const L = sql.lit(depth)
    await sql`insert into rc_up
      select t.parent_location_id, u.indicator_id, sum(u.total), sum(u.n)::int8, ${L} - 1, true
      from rc_up u join location_tree t on t.location_id = u.location_id and t.lvl = 1
      where u.depth = ${L} and not exists (select 1 from rc_raw r where r.location_id = t.parent_location_id and r.indicator_id = u.indicator_id)
      group by t.parent_location_id, u.indicator_id`.execute(db)
  }
  const aggregated = await sql`insert into rc_agg select * from (
    select u.location_id, u.indicator_id, ${float8(sql`case when i.data_format = 'int' then u.total else u.total / u.n end`)}
    from rc_up u join indicator i on i.id = u.indicator_id
    where u.aggregated) a (location_id, indicator_id, value)
    where ${FINITE(sql.ref('value'))}`.execute(db)
  await sql`drop table rc_up`.execute(db)
  await keyed(db, 'rc_agg')
  return { raw, aggregated, arithmetic: unsafe[0].found ? NUMERIC : FLOAT8 }
}

/** §7.2: the results into the campaign's tables, ids kept. */
async function mergeResults(db: Kysely<DB>, C: RawBuilder<unknown>, final: RawBuilder<unknown>, finalTables: string[]) {
  const stored = sql`(select location_id, indicator_id, value, true as is_raw from rc_raw
    union all select location_id, indicator_id, value, false as is_raw from rc_agg)`
  if (await holdsNoDerivedRow(db, C)) {
    await insertCampaign(db, C, 'agg_datapoint', stored, ['value', 'is_raw'])
    await insertCampaign(db, C, 'datapoint_with_computed', final, ['value'])
  } else {
    await mergeCampaign(db, C, 'agg_datapoint', stored, ['value', 'is_raw'])
    await mergeCampaign(db, C, 'datapoint_with_computed', final, ['value'])
  }
  await sql.raw(`drop table if exists ${[...TEMP, ...FINALS_TABLES, ...finalTables].join(', ')}`).execute(db)
}

/**
 * Whether campaign C has no derived row yet (its first recompute): one probe of
 * `datapoint_with_computed`'s key, which leads with the campaign; `agg_datapoint` holds a campaign's
 * rows only where `datapoint_with_computed` does, both being written by every recompute.
 */
async function holdsNoDerivedRow(db: Kysely<DB>, C: RawBuilder<unknown>): Promise<boolean> {
  const { rows } = await sql<{ held: boolean }>`select exists (select 1 from datapoint_with_computed where campaign_id = ${C}) as held`.execute(db)
  return !rows[0].held
}

/**
 * `s` (a subquery keyed by location and indicator) as `target`'s rows of campaign C, which holds none:
 * inserted without the merge's comparison (its difference table costs ~0.06 s a table for a campaign of
 * 200,000 values). Should a row of C written outside the engine sit under a key of `s`, the insert
 * fails on it and the merge runs instead, from a savepoint (a row under another key stays until the
 * next recompute, which merges).
 */
async function insertCampaign(db: Kysely<DB>, C: RawBuilder<unknown>, target: string, s: RawBuilder<unknown>, columns: string[]) {
  const cols = sql.join(columns.map((c) => sql.ref(c)))
  await sql`savepoint first_recompute`.execute(db)
  try {
    await sql`insert into ${sql.table(target)} (location_id, indicator_id, campaign_id, ${cols})
      select n.location_id, n.indicator_id, ${C}, ${sql.join(columns.map((c) => sql`n.${sql.ref(c)}`))} from ${s} n`.execute(db)
    await sql`release savepoint first_recompute`.execute(db)
  } catch (error) {
    if (!isUniqueViolation(error)) throw error
    await sql`rollback to savepoint first_recompute`.execute(db)
    await mergeCampaign(db, C, target, s, columns)
  }
}

/**
 * Makes `target`'s rows of campaign C within `scope` (a condition on its rows; all of them by default)
 * equal to `s` (a subquery keyed by location and indicator, inside the scope) while keeping the ids of
 * surviving keys. One full join finds what differs (changed values, vanished keys, new
 * keys); the update, delete and insert then touch only those rows, so a steady-state recompute reads
 * each side once and writes nothing.
 */
export async function mergeCampaign(
  db: Kysely<DB>,
  C: RawBuilder<unknown>,
  target: string,
  s: RawBuilder<unknown>,
  columns: string[],
  scope: RawBuilder<unknown> = sql`true`,
) {
  const t = sql.table(target)
  const cols = sql.join(columns.map((c) => sql.ref(c)))
  const changed = sql.join(
    columns.map((c) => sql`d.${sql.ref(c)} <> n.${sql.ref(c)}`),
    sql` or `,
  )
  await sql`drop table if exists rc_diff`.execute(db)
  // id: the target row (null = a new key); location_id: null = a vanished key.
  await sql`create temp table rc_diff on commit drop as
    select d.id, n.location_id, n.indicator_id, ${sql.join(columns.map((c) => sql`n.${sql.ref(c)}`))}
    from (select * from ${t} where campaign_id = ${C} and ${scope}) d
    full join ${s} n on n.location_id = d.location_id and n.indicator_id = d.indicator_id
    where d.id is null or n.location_id is null or ${changed}`.execute(db)
  // Each write only where it has rows: a campaign's first recompute only inserts, and the update's
  // join alone cost ~0.1 s over 200,000 new keys.
  const { rows } = await sql<{ updated: boolean; deleted: boolean; inserted: boolean }>`select
    bool_or(id is not null and location_id is not null) as updated, bool_or(location_id is null) as deleted, bool_or(id is null) as inserted
    from rc_diff`.execute(db)
  const { updated, deleted, inserted } = rows[0]
  const set = sql.join(columns.map((c) => sql`${sql.ref(c)} = x.${sql.ref(c)}`))
  if (updated) await sql`update ${t} d set ${set} from rc_diff x where d.id = x.id and x.location_id is not null`.execute(db)
  if (deleted) await sql`delete from ${t} d using rc_diff x where d.id = x.id and x.location_id is null`.execute(db)
  if (inserted)
    await sql`insert into ${t} (location_id, indicator_id, campaign_id, ${cols})
    select x.location_id, x.indicator_id, ${C}, ${sql.join(columns.map((c) => sql`x.${sql.ref(c)}`))} from rc_diff x where x.id is null`.execute(db)
  await sql`drop table rc_diff`.execute(db)
}

/**
 * resource-api §11.5: campaigns that lost raw datapoints (a delete, directly or by a cascade) are
 * recomputed in the same transaction, so no aggregate or calculated value outlives its inputs.
 */
export async function recomputeAfterDelete(db: Kysely<DB>, table: string, rows: Array<Record<string, unknown>>): Promise<void> {
  if (table !== 'datapoint') return
  const campaigns = new Set(rows.map((r) => r.campaign_id).filter((c): c is number => typeof c === 'number'))
  // In ascending order, as their locks are taken (lib/engine/campaign-locks.ts).
  for (const campaign of [...campaigns].sort((a, b) => a - b)) await recomputeCampaign(db, campaign)
}
