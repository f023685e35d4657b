// A recompute of what a sync changed (ingestion §6–§7): the aggregates above the changed raw keys and
// the final values at their locations, nothing else of the campaign. Every other derived row keeps its
// value, because a stored value depends only on the raw values of its own subtree, and a final value
// only on the values at its own location and its children's final values; the result is the full
// recompute's (test/recompute-changed.test.ts).
import { sql, type Kysely, type RawBuilder } from 'kysely'
import type { DB } from '../../schemas/index.js'
import { recomputeDuration } from '../core/metrics.js'
import { FINITE, FLOAT8, keyed, SAFE_RANGE } from './arithmetic.js'
import { FINALS_TABLES, finalValues } from './finals.js'
import { mergeCampaign, openWorkingSets, recompute, type RecomputeStats } from './recompute.js'

/**
 * The raw keys a sync changed (inserted, deleted, or given another value): a temporary table of
 * (campaign_id, location_id, indicator_id) the caller fills in its transaction (`createChangedKeys`).
 */
export const CHANGED_KEYS = sql.table('changed_raw_keys')

export async function createChangedKeys(db: Kysely<DB>): Promise<void> {
  await sql`drop table if exists ${CHANGED_KEYS}`.execute(db)
  await sql`create temp table ${CHANGED_KEYS} (campaign_id integer not null, location_id integer not null, indicator_id integer not null) on commit drop`.execute(
    db,
  )
}

/**
 * Past this share of a campaign's raw keys changed, the campaign is recomputed whole: one pass over
 * every value is then cheaper than the per-key work (a first upload changes every key).
 */
const WHOLE_CAMPAIGN_ABOVE = 0.2

/**
 * The campaign's derived rows made equal to a full recompute's, given that they were before the
 * changes in `CHANGED_KEYS`. A campaign with values outside float8's safe range (its arithmetic is done
 * in numeric), with most of its keys changed, or waiting for a full recompute (sql/023), is recomputed whole. `changedKeys`: how many changed
 * raw keys were recomputed key by key (0 when the campaign was recomputed whole).
 */
export async function recomputeChanged(db: Kysely<DB>, campaignId: number): Promise<RecomputeStats & { changedKeys: number }> {
  const endTimer = recomputeDuration.startTimer()
  try {
    const C = sql.lit(Math.trunc(campaignId))
    await openWorkingSets(db, campaignId)
    const { rows } = await sql<{ changed: number; stored: number; unsafe: boolean; pending: boolean }>`select
      (select count(*)::int from ${CHANGED_KEYS} where campaign_id = ${C}) as changed,
      -- The campaign's raw rows, counted only as far as the choice needs (changed > share × stored),
      -- on their own index (sql/032): a correction's cost does not grow with the campaign or the table.
      (select count(*)::int from (select 1 from agg_datapoint where campaign_id = ${C} and is_raw
        limit (select ceil(count(*) / ${sql.lit(WHOLE_CAMPAIGN_ABOVE)})::int + 1 from ${CHANGED_KEYS} where campaign_id = ${C})) counted) as stored,
      exists (select 1 from datapoint where campaign_id = ${C} and ${FINITE(sql.ref('value'))} and not (${SAFE_RANGE})) as unsafe,
      exists (select 1 from campaign_recompute_pending where campaign_id = ${C}) as pending`.execute(db)
    const { changed, stored, unsafe, pending } = rows[0]
    if (unsafe || pending || changed > WHOLE_CAMPAIGN_ABOVE * stored) return { ...(await recompute(db, campaignId)), changedKeys: 0 }
    return { ...(await recomputeKeys(db, C)), changedKeys: changed }
  } finally {
    endTimer()
  }
}

/** The keys under `CHANGED_KEYS` recomputed; the counts are of the rows recomputed, not of the campaign's. */
async function recomputeKeys(db: Kysely<DB>, C: RawBuilder<unknown>): Promise<RecomputeStats> {
  const levels = await affectedKeys(db, C)
  for (const depth of levels) await storedValuesAt(db, C, depth)
  // The stored values: raw and aggregated rows of `agg_datapoint` (§6), at the affected keys only.
  const inScope = sql`(location_id, indicator_id) in (select location_id, indicator_id from rc_keys)`
  const stored = sql`(select location_id, indicator_id, value, is_raw from rc_new where value is not null)`
  await mergeCampaign(db, C, 'agg_datapoint', stored, ['value', 'is_raw'], inScope)
  const { rows } = await sql<{ raw: number; aggregated: number; calculations: boolean }>`select
    count(*) filter (where is_raw)::int as raw, count(*) filter (where not is_raw)::int as aggregated,
    exists (select 1 from calculated_indicator_component) as calculations
    from ${stored} s`.execute(db)
  const { raw, aggregated, calculations } = rows[0]
  let calculated = 0
  if (calculations) calculated = await calculateAtLocations(db, C)
  // Without calculated indicators the final values are the stored ones.
  else await mergeCampaign(db, C, 'datapoint_with_computed', stored, ['value'], inScope)
  await sql.raw(`drop table if exists ${['rc_raw', 'rc_agg', 'rc_keys', 'rc_new', ...FINALS_TABLES].join(', ')}`).execute(db)
  return { raw, aggregated, computed: raw + aggregated + calculated }
}

/**
 * The final values at the affected locations (§7), from every stored value there (now current) and
 * the current final values of their other children; returns how many values it calculated.
 */
async function calculateAtLocations(db: Kysely<DB>, C: RawBuilder<unknown>): Promise<number> {
  const atLocations = sql`location_id in (select location_id from rc_loc)`
  await sql`drop table if exists rc_loc`.execute(db)
  await sql`create temp table rc_loc on commit drop as select location_id, min(depth) as depth from rc_keys group by location_id`.execute(db)
  await sql`alter table rc_loc add primary key (location_id)`.execute(db)
  await sql`analyze rc_loc`.execute(db)
  await sql`insert into rc_raw select location_id, indicator_id, value from agg_datapoint
    where campaign_id = ${C} and is_raw and ${atLocations}`.execute(db)
  await sql`insert into rc_agg select location_id, indicator_id, value from agg_datapoint
    where campaign_id = ${C} and not is_raw and ${atLocations}`.execute(db)
  await keyed(db, 'rc_raw')
  await keyed(db, 'rc_agg')
  const { final, calculated, tables } = await finalValues(db, C, FLOAT8, 'keys')
  await mergeCampaign(db, C, 'datapoint_with_computed', final, ['value'], atLocations)
  if (tables.length) await sql.raw(`drop table ${tables.join(', ')}`).execute(db)
  return calculated
}

/**
 * `rc_keys`: every (location, indicator) whose stored value a changed raw key can move (the key itself
 * and the same indicator at each ancestor), with the location's depth in the tree; `rc_new` to hold
 * their new values. Returns the depths, deepest first: a key's value is computed from its children's.
 */
async function affectedKeys(db: Kysely<DB>, C: RawBuilder<unknown>): Promise<number[]> {
  await sql`drop table if exists rc_keys, rc_new`.execute(db)
  await sql`create temp table rc_keys on commit drop as
    select distinct t.parent_location_id as location_id, x.indicator_id, d.depth - t.lvl as depth
    from ${CHANGED_KEYS} x
    join location_tree t on t.location_id = x.location_id
    cross join lateral (select max(lvl) as depth from location_tree where location_id = x.location_id) d
    where x.campaign_id = ${C}`.execute(db)
  await sql`alter table rc_keys add primary key (location_id, indicator_id)`.execute(db)
  await sql`analyze rc_keys`.execute(db)
  // value null: the key has no stored value any more.
  await sql`create temp table rc_new (location_id integer not null, indicator_id integer not null, value double precision,
    is_raw boolean not null, primary key (location_id, indicator_id)) on commit drop`.execute(db)
  // §6: a raw value stands.
  await sql`insert into rc_new select k.location_id, k.indicator_id, r.value, true
    from rc_keys k join datapoint r on r.campaign_id = ${C} and r.location_id = k.location_id and r.indicator_id = k.indicator_id
    where ${FINITE(sql.ref('r.value'))}`.execute(db)
  const { rows } = await sql<{ depth: number }>`select distinct depth from rc_keys order by depth desc`.execute(db)
  return rows.map((r) => r.depth)
}

/**
 * §6 for the affected keys at `depth` without a raw value. An int indicator's frontier sum is the sum of
 * its children's stored values (each child contributes its raw value, or else the sum of its own
 * frontier), read from `rc_new` for the children just computed and from `agg_datapoint` for the others.
 * A bool indicator's frontier mean cannot be built from the children's means: its frontier is read
 * below the location. Any other format has no aggregate. A key without a value gets a null.
 */
async function storedValuesAt(db: Kysely<DB>, C: RawBuilder<unknown>, depth: number) {
  const K = sql.lit(Math.trunc(depth))
  await sql`insert into rc_new
    with pending as (select k.location_id, k.indicator_id, i.data_format from rc_keys k join indicator i on i.id = k.indicator_id
      where k.depth = ${K} and not exists (select 1 from rc_new n where n.location_id = k.location_id and n.indicator_id = k.indicator_id)),
    sums as (select p.location_id, p.indicator_id, sum(case when n.location_id is not null then n.value else s.value end) as value
      from pending p
      join location_tree c on c.parent_location_id = p.location_id and c.lvl = 1
      left join rc_new n on n.location_id = c.location_id and n.indicator_id = p.indicator_id
      left join agg_datapoint s on s.campaign_id = ${C} and s.location_id = c.location_id and s.indicator_id = p.indicator_id
      where p.data_format = 'int'
      group by p.location_id, p.indicator_id),
    means as (select p.location_id, p.indicator_id, avg(r.value) as value
      from pending p
      join location_tree t on t.parent_location_id = p.location_id and t.lvl >= 1
      join datapoint r on r.campaign_id = ${C} and r.location_id = t.location_id and r.indicator_id = p.indicator_id
      where p.data_format = 'bool' and ${FINITE(sql.ref('r.value'))}
        and not exists (select 1 from location_tree up
          join datapoint m on m.campaign_id = ${C} and m.location_id = up.parent_location_id and m.indicator_id = p.indicator_id
          where up.location_id = r.location_id and up.lvl between 1 and t.lvl - 1 and ${FINITE(sql.ref('m.value'))})
      group by p.location_id, p.indicator_id)
    select p.location_id, p.indicator_id, coalesce(s.value, m.value), false
    from pending p
    left join sums s on s.location_id = p.location_id and s.indicator_id = p.indicator_id
    left join means m on m.location_id = p.location_id and m.indicator_id = p.indicator_id`.execute(db)
}
