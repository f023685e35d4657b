// The final values of a campaign's `datapoint_with_computed` (ingestion §7): the stored values (raw,
// and §6's aggregates), the calculations (steps 1–3) for the keys without one, and, for int
// indicators, a parent's total as the sum of its children's final values (step 5), whatever gave each
// child its value. Step 5 changes a result only where a calculated int indicator has a value at a
// child, so only then is the tree walked one depth at a time; otherwise one pass over every location.
import { sql, type Kysely, type RawBuilder } from 'kysely'
import type { DB } from '../../schemas/index.js'
import { type Arithmetic, FINITE, keyed, workingTable } from './arithmetic.js'

/** The stored values: raw, and aggregated where a location has no raw value (disjoint). */
const STORED = sql`(select location_id, indicator_id, value from rc_raw union all select location_id, indicator_id, value from rc_agg)`

/** The working tables this module always fills (dropped at commit in any case); `Finals.tables` names the others. */
export const FINALS_TABLES = ['rc_summed', 'rc_loc', 'rc_sum', 'rc_calc'] as const

export interface Finals {
  /** A subquery of (location_id, indicator_id, value): the final values, one per key. */
  final: RawBuilder<unknown>
  /** How many of them were calculated (steps 1–3). */
  calculated: number
  /** The working tables `final` reads besides FINALS_TABLES, to drop once it is merged. */
  tables: string[]
}

/**
 * The final values from the stored values in `rc_raw` and `rc_agg`: of the whole campaign, or (`keys`)
 * of the locations in `rc_loc` (location_id, depth), the caller's, whose other locations hold current
 * final values in `datapoint_with_computed` that a parent's total then reads for those children.
 */
export async function finalValues(db: Kysely<DB>, C: RawBuilder<unknown>, arithmetic: Arithmetic, scope: 'campaign' | 'keys'): Promise<Finals> {
  const { rows: kinds } = await sql<{ calculation: string }>`select distinct calculation from calculated_indicator_component`.execute(db)
  const calculations = new Set(kinds.map((k) => k.calculation))
  await sql`drop table if exists rc_summed`.execute(db)
  await sql`create temp table rc_summed on commit drop as
    select distinct c.indicator_id from calculated_indicator_component c join indicator i on i.id = c.indicator_id where i.data_format = 'int'`.execute(db)
  const { rows: summed } = await sql<{ any: boolean }>`select exists (select 1 from rc_summed) as any`.execute(db)
  if (!summed[0].any) {
    const calculated = await calculate(db, arithmetic, calculations, STORED)
    return {
      final: sql`(select location_id, indicator_id, value from ${STORED} s union all select location_id, indicator_id, value from rc_calc)`,
      calculated,
      tables: [],
    }
  }
  if (scope === 'campaign') await everyLocationWithValues(db)
  // Depth by depth, deepest first (every depth below the deepest has a location: rc_loc holds the
  // ancestors of its locations). Each depth's values stay in tables of its own, read by the depth above
  // and by the merge, never copied into one table.
  const { rows: depths } = await sql<{ depth: number }>`select distinct depth from rc_loc order by depth desc`.execute(db)
  const parts: RawBuilder<unknown>[] = []
  const tables: string[] = []
  let below: AtDepth | undefined
  let calculated = 0
  for (const [k, { depth }] of depths.entries()) {
    const at: AtDepth = { base: `rc_base_${k}`, sum: `rc_sum_${k}`, calc: `rc_calc_${k}` }
    tables.push(at.base, at.sum, at.calc)
    await workingTable(db, at.base)
    await storedAtDepth(db, C, sql.lit(Math.trunc(depth)), arithmetic, { at, below, outside: scope === 'keys' })
    await keyed(db, at.base)
    calculated += await calculate(db, arithmetic, calculations, sql.table(at.base), at)
    parts.push(valuesAt(at))
    below = at
  }
  // A campaign without a raw value has no depth to walk, and no final value.
  const final = parts.length ? sql`(${sql.join(parts, sql` union all `)})` : sql`(select location_id, indicator_id, value from rc_raw where false)`
  return { final, calculated, tables }
}

/** The working tables of one depth: its stored values (`base`), its sums of parts and its calculations. */
interface AtDepth {
  base: string
  sum: string
  calc: string
}

/** A depth's final values: the stored ones and the calculated ones (disjoint). */
const valuesAt = ({ base, calc }: AtDepth) =>
  sql`select location_id, indicator_id, value from ${sql.table(base)} union all select location_id, indicator_id, value from ${sql.table(calc)}`

/** `rc_loc`: every location with a raw value of the campaign and its ancestors, with their depths. */
async function everyLocationWithValues(db: Kysely<DB>) {
  await sql`drop table if exists rc_loc`.execute(db)
  await sql`create temp table rc_loc on commit drop as
    select distinct t.parent_location_id as location_id, d.depth - t.lvl as depth
    from (select location_id, max(lvl) as depth from location_tree where location_id in (select location_id from rc_raw) group by location_id) d
    join location_tree t on t.location_id = d.location_id`.execute(db)
  await sql`alter table rc_loc add primary key (location_id)`.execute(db)
  await sql`analyze rc_loc`.execute(db)
}

/**
 * The stored values at depth D that no calculation there replaces, into `at.base`: raw ones, §6's
 * aggregates of the indicators no one calculates as an int, and, for the calculated int ones, the sum of
 * the children's final values (the depth `below`'s, and `datapoint_with_computed`'s for children
 * outside `rc_loc` when `outside`).
 */
async function storedAtDepth(
  db: Kysely<DB>,
  C: RawBuilder<unknown>,
  D: RawBuilder<unknown>,
  { type: N, float8 }: Arithmetic,
  { at, below, outside }: { at: AtDepth; below: AtDepth | undefined; outside: boolean },
) {
  const computed = below
    ? sql`select f.location_id, f.indicator_id, f.value from (${valuesAt(below)}) f join rc_summed s on s.indicator_id = f.indicator_id`
    : sql`select location_id, indicator_id, value from rc_raw where false`
  const fromOutside = outside
    ? sql`union all select w.location_id, w.indicator_id, w.value from rc_loc p
        join location_tree t on t.parent_location_id = p.location_id and t.lvl = 1
        join datapoint_with_computed w on w.campaign_id = ${C} and w.location_id = t.location_id
        join rc_summed s on s.indicator_id = w.indicator_id
        where p.depth = ${D} and not exists (select 1 from rc_loc q where q.location_id = t.location_id)`
    : sql``
  await sql`insert into ${sql.table(at.base)}
    select r.location_id, r.indicator_id, r.value from rc_raw r join rc_loc l on l.location_id = r.location_id where l.depth = ${D}
    union all
    select a.location_id, a.indicator_id, a.value from rc_agg a join rc_loc l on l.location_id = a.location_id
    where l.depth = ${D} and not exists (select 1 from rc_summed s where s.indicator_id = a.indicator_id)
    union all
    select * from (
      select t.parent_location_id, c.indicator_id, ${float8(sql`sum(c.value::${N})`)}
      from (${computed} ${fromOutside}) c
      join location_tree t on t.location_id = c.location_id and t.lvl = 1
      where not exists (select 1 from rc_raw r where r.location_id = t.parent_location_id and r.indicator_id = c.indicator_id)
      group by t.parent_location_id, c.indicator_id) s (location_id, indicator_id, value)
    where ${FINITE(sql.ref('value'))}`.execute(db)
}

/**
 * §7 steps 1–3 into `rc_calc`: calculated indicators, for the keys of `stored`'s locations without a
 * stored value. Returns how many values were calculated.
 */
export async function calculate(
  db: Kysely<DB>,
  { type: N, float8 }: Arithmetic,
  calculations: Set<string>,
  stored: RawBuilder<unknown>,
  names: { sum: string; calc: string } = { sum: 'rc_sum', calc: 'rc_calc' },
): Promise<number> {
  const [rcSum, rcCalc] = [sql.table(names.sum), sql.table(names.calc)]
  await workingTable(db, names.sum)
  await workingTable(db, names.calc)
  // Calculations only where some exist: their statements would still scan the stored values.
  // Step 1: sums of parts, recursive: a part contributes its stored value, or else its own parts.
  if (calculations.has('PART_TO_BE_SUMMED'))
    await sql`insert into ${rcSum}
    with recursive expand(root, part, location_id) as (
      select c.indicator_id, c.indicator_component_id, l.location_id
      from calculated_indicator_component c cross join (select distinct location_id from ${stored} x) l
      where c.calculation = 'PART_TO_BE_SUMMED'
      union all
      select e.root, c.indicator_component_id, e.location_id
      from expand e join calculated_indicator_component c on c.indicator_id = e.part and c.calculation = 'PART_TO_BE_SUMMED'
      where not exists (select 1 from ${stored} a where a.indicator_id = e.part and a.location_id = e.location_id))
    select * from (
      select e.location_id, e.root, ${float8(sql`sum(a.value::${N})`)} as value
      from expand e join ${stored} a on a.indicator_id = e.part and a.location_id = e.location_id
      group by e.location_id, e.root) s
    where ${FINITE(sql.ref('value'))}`.execute(db)
  await keyed(db, names.sum)
  if (!calculations.size) return 0
  // Steps 2–4, for the keys without a stored value, in order of precedence: part of
  // difference > ratio > sum of parts. val(c, L) is the stored value, else the computed sum; it is only
  // read for the components of differences and ratios, so only their rows are gathered.
  const calculated = await sql`insert into ${rcCalc}
    with operands as (select indicator_component_id as id from calculated_indicator_component
        where calculation in ('WHOLE_OF_DIFFERENCE', 'PART_OF_DIFFERENCE', 'NUMERATOR', 'DENOMINATOR')),
    val as materialized (
      select a.location_id, a.indicator_id, a.value from ${stored} a
      where a.indicator_id in (select id from operands)
      union all
      select s.location_id, s.indicator_id, s.value from ${rcSum} s
      where s.indicator_id in (select id from operands)
        and not exists (select 1 from ${stored} a where a.indicator_id = s.indicator_id and a.location_id = s.location_id))
    select distinct on (location_id, indicator_id) location_id, indicator_id, value from (
      select location_id, indicator_id, ${float8(sql`(x - y) / x`)} as value, 2 as rank from (
        select c.indicator_id, v.location_id,
          max(v.value::${N}) filter (where c.calculation = 'WHOLE_OF_DIFFERENCE') as x,
          max(v.value::${N}) filter (where c.calculation = 'PART_OF_DIFFERENCE') as y
        from calculated_indicator_component c join val v on v.indicator_id = c.indicator_component_id
        where c.calculation in ('WHOLE_OF_DIFFERENCE', 'PART_OF_DIFFERENCE')
        group by c.indicator_id, v.location_id) d
      where x is not null and y is not null and x <> 0
      union all
      select location_id, indicator_id, ${float8(sql`num / den`)}, 3 from (
        select c.indicator_id, v.location_id,
          sum(v.value::${N}) filter (where c.calculation = 'NUMERATOR') as num,
          sum(v.value::${N}) filter (where c.calculation = 'DENOMINATOR') as den
        from calculated_indicator_component c join val v on v.indicator_id = c.indicator_component_id
        where c.calculation in ('NUMERATOR', 'DENOMINATOR')
        group by c.indicator_id, v.location_id) q
      where num is not null and den is not null and den <> 0
      union all
      select location_id, indicator_id, value, 4 from ${rcSum}
    ) candidates
    where ${FINITE(sql.ref('value'))}
      and not exists (select 1 from ${stored} a where a.location_id = candidates.location_id and a.indicator_id = candidates.indicator_id)
    order by location_id, indicator_id, rank`.execute(db)
  await sql`analyze ${rcCalc}`.execute(db)
  return Number(calculated.numAffectedRows ?? 0)
}
