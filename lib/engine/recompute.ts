// Campaign recompute (ingestion §6–§7), set-based in SQL: raw values → aggregation up the location tree
// (the frontier rule) → calculated indicators → merged into agg_datapoint and datapoint_with_computed
// with stable ids. Runs in the caller's transaction, under an advisory lock on the campaign.
import { sql, type Kysely, type RawBuilder } from 'kysely'
import type { DB } from '../../schemas/index.js'

const FINITE = (column: RawBuilder<unknown>) =>
  sql`${column} is not null and ${column} <> 'NaN'::float8 and ${column} <> 'Infinity'::float8 and ${column} <> '-Infinity'::float8`

// Temporary working tables, dropped at the end of each recompute (and at commit in any case).
const TEMP = ['rc_raw', 'rc_agg', 'rc_sum', 'rc_calc'] as const

export interface RecomputeStats {
  raw: number
  aggregated: number
  computed: number
}

export async function recomputeCampaign(db: Kysely<DB>, campaignId: number): Promise<RecomputeStats> {
  // The id is an integer from the database. It is written as a literal so these statements are planned
  // for the temp tables' current contents, never from a cached generic plan.
  const C = sql.lit(Math.trunc(campaignId))
  await sql`select pg_advisory_xact_lock(2, ${C})`.execute(db)
  await sql.raw(`drop table if exists ${TEMP.join(', ')}`).execute(db)
  for (const name of TEMP) {
    const extra = name === 'rc_agg' ? ', is_raw boolean not null' : ''
    await sql.raw(`create temp table ${name} (location_id integer not null, indicator_id integer not null, value double precision not null${extra}) on commit drop`).execute(db)
  }
  // Keyed by (location, indicator), so every lookup below can be an index probe whatever the planner
  // estimates. The key is added once a table is filled: one sorted index build instead of an index
  // insertion per row (bench/README.md, "Ingestion").
  const keyed = async (name: (typeof TEMP)[number]) => {
    await sql.raw(`alter table ${name} add primary key (location_id, indicator_id)`).execute(db)
    await sql.raw(`analyze ${name}`).execute(db)
  }

  // §6: raw values of the campaign (finite only) …
  await sql`insert into rc_raw select location_id, indicator_id, value from datapoint
    where campaign_id = ${C} and ${FINITE(sql.ref('value'))}`.execute(db)
  await keyed('rc_raw')
  // … plus, for int (SUM) and bool (MEAN) indicators, each ancestor without its own raw value gets
  // its frontier: the raw values below it with no raw value in between. A raw value at d therefore
  // reaches exactly its ancestors closer than d's nearest ancestor with a raw value (distance k).
  await sql`insert into rc_agg
    select location_id, indicator_id, value, true from rc_raw
    union all
    select t.parent_location_id, r.indicator_id,
      case when i.data_format = 'int' then sum(r.value) else avg(r.value) end, false
    from rc_raw r
    join indicator i on i.id = r.indicator_id and i.data_format in ('int', 'bool')
    left join (
      select below.location_id, below.indicator_id, min(up.lvl) as k
      from rc_raw below
      join location_tree up on up.location_id = below.location_id and up.lvl >= 1
      join rc_raw above on above.location_id = up.parent_location_id and above.indicator_id = below.indicator_id
      group by below.location_id, below.indicator_id) nearest
      on nearest.location_id = r.location_id and nearest.indicator_id = r.indicator_id
    join location_tree t on t.location_id = r.location_id and t.lvl >= 1 and (nearest.k is null or t.lvl < nearest.k)
    group by t.parent_location_id, r.indicator_id, i.data_format`.execute(db)
  await keyed('rc_agg')

  // §7 step 1: sums of parts, recursive: a part contributes its stored value, or else its own parts.
  await sql`insert into rc_sum
    with recursive expand(root, part, location_id) as (
      select c.indicator_id, c.indicator_component_id, l.location_id
      from calculated_indicator_component c cross join (select distinct location_id from rc_agg) l
      where c.calculation = 'PART_TO_BE_SUMMED'
      union all
      select e.root, c.indicator_component_id, e.location_id
      from expand e join calculated_indicator_component c on c.indicator_id = e.part and c.calculation = 'PART_TO_BE_SUMMED'
      where not exists (select 1 from rc_agg a where a.indicator_id = e.part and a.location_id = e.location_id))
    select e.location_id, e.root, sum(a.value)
    from expand e join rc_agg a on a.indicator_id = e.part and a.location_id = e.location_id
    group by e.location_id, e.root`.execute(db)
  await keyed('rc_sum')
  // Steps 2–4, for the keys without a stored (finite) value, in order of precedence: part of
  // difference > ratio > sum of parts. val(c, L) is the stored value, else the computed sum; it is only
  // read for the components of differences and ratios, so only their rows are gathered.
  await sql`insert into rc_calc
    with val as materialized (
      select a.location_id, a.indicator_id, a.value from rc_agg a
      where a.indicator_id in (select indicator_component_id from calculated_indicator_component
        where calculation in ('WHOLE_OF_DIFFERENCE', 'PART_OF_DIFFERENCE', 'NUMERATOR', 'DENOMINATOR'))
      union all
      select s.location_id, s.indicator_id, s.value from rc_sum s
      where s.indicator_id in (select indicator_component_id from calculated_indicator_component
          where calculation in ('WHOLE_OF_DIFFERENCE', 'PART_OF_DIFFERENCE', 'NUMERATOR', 'DENOMINATOR'))
        and not exists (select 1 from rc_agg a where a.indicator_id = s.indicator_id and a.location_id = s.location_id))
    select distinct on (location_id, indicator_id) location_id, indicator_id, value from (
      select location_id, indicator_id, (x - y) / x as value, 2 as rank from (
        select c.indicator_id, v.location_id,
          max(v.value) filter (where c.calculation = 'WHOLE_OF_DIFFERENCE') as x,
          max(v.value) filter (where c.calculation = 'PART_OF_DIFFERENCE') as y
        from calculated_indicator_component c join val v on v.indicator_id = c.indicator_component_id
        where c.calculation in ('WHOLE_OF_DIFFERENCE', 'PART_OF_DIFFERENCE')
        group by c.indicator_id, v.location_id) d
      where x is not null and y is not null and x <> 0
      union all
      select location_id, indicator_id, num / den, 3 from (
        select c.indicator_id, v.location_id,
          sum(v.value) filter (where c.calculation = 'NUMERATOR') as num,
          sum(v.value) filter (where c.calculation = 'DENOMINATOR') as den
        from calculated_indicator_component c join val v on v.indicator_id = c.indicator_component_id
        where c.calculation in ('NUMERATOR', 'DENOMINATOR')
        group by c.indicator_id, v.location_id) q
      where num is not null and den is not null and den <> 0
      union all
      select location_id, indicator_id, value, 4 from rc_sum
    ) candidates
    where ${FINITE(sql.ref('value'))}
      and not exists (select 1 from rc_agg a where a.location_id = candidates.location_id
        and a.indicator_id = candidates.indicator_id and ${FINITE(sql.ref('a.value'))})
    order by location_id, indicator_id, rank`.execute(db)
  await sql`analyze rc_calc`.execute(db)

  // §7.2: merge with stable ids. The final values are the stored ones (step 1 of precedence) and the
  // calculated ones for the other keys: read straight from the two tables, never copied into a third.
  await mergeCampaign(db, C, 'agg_datapoint', sql`rc_agg`, ['value', 'is_raw'])
  const final = sql`(select location_id, indicator_id, value from rc_agg where ${FINITE(sql.ref('value'))}
    union all select location_id, indicator_id, value from rc_calc)`
  await mergeCampaign(db, C, 'datapoint_with_computed', final, ['value'])

  const { rows } = await sql<RecomputeStats>`select
      (select count(*) from rc_agg where is_raw)::int as raw,
      (select count(*) from rc_agg where not is_raw)::int as aggregated,
      (select count(*) from rc_agg where ${FINITE(sql.ref('value'))})::int + (select count(*) from rc_calc)::int as computed`.execute(db)
  await sql.raw(`drop table ${TEMP.join(', ')}`).execute(db)
  return rows[0]
}

/**
 * Makes `target`'s rows of campaign C equal to `source` (a table or subquery keyed by location and indicator) while keeping
 * the ids of surviving keys. One full join finds what differs (changed values, vanished keys, new
 * keys); the update, delete and insert then touch only those rows, so a steady-state recompute reads
 * each side once and writes nothing.
 */
async function mergeCampaign(db: Kysely<DB>, C: RawBuilder<unknown>, target: string, source: RawBuilder<unknown>, columns: string[]) {
  const t = sql.table(target)
  const s = source
  const cols = sql.join(columns.map((c) => sql.ref(c)))
  const changed = sql.join(columns.map((c) => sql`d.${sql.ref(c)} <> n.${sql.ref(c)}`), sql` or `)
  await sql`drop table if exists rc_diff`.execute(db)
  // id: the target row (null = a new key); location_id: null = a vanished key.
  await sql`create temp table rc_diff on commit drop as
    select d.id, n.location_id, n.indicator_id, ${sql.join(columns.map((c) => sql`n.${sql.ref(c)}`))}
    from (select * from ${t} where campaign_id = ${C}) d
    full join ${s} n on n.location_id = d.location_id and n.indicator_id = d.indicator_id
    where d.id is null or n.location_id is null or ${changed}`.execute(db)
  const set = sql.join(columns.map((c) => sql`${sql.ref(c)} = x.${sql.ref(c)}`))
  await sql`update ${t} d set ${set} from rc_diff x where d.id = x.id and x.location_id is not null`.execute(db)
  await sql`delete from ${t} d using rc_diff x where d.id = x.id and x.location_id is null`.execute(db)
  await sql`insert into ${t} (location_id, indicator_id, campaign_id, ${cols})
    select x.location_id, x.indicator_id, ${C}, ${sql.join(columns.map((c) => sql`x.${sql.ref(c)}`))} from rc_diff x where x.id is null`.execute(db)
  await sql`drop table rc_diff`.execute(db)
}
