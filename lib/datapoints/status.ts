// A value's status against its indicator's bounds (docs/decisions.md, "Bounds and a value's status"):
// the name of the first `indicator_bound` range holding it (a range of the value's location level
// before a range of every level), else good / ok / bad from the indicator's good_bound and bad_bound,
// else null. One SQL expression, so every read computes it the same way.
import { sql, type RawBuilder } from 'kysely'
import { Param } from '../api/query.js'
import type { Context } from '../api/resource.js'

/**
 * The status of `value` of `indicator` at `location` (SQL expressions, e.g. `t.value`). A range holds
 * its lower limit and not its upper one (direction 1), or the other way round (direction -1); a
 * missing limit is open. A range with a `location_type_id` holds only at locations of that type, and
 * is tried before the ranges of every level. Good and bad bounds give a status only as a pair, at
 * every level: their order says which way is better.
 */
export function statusOf(i: RawBuilder<unknown>, v: RawBuilder<unknown>, location: RawBuilder<unknown>): RawBuilder<string | null> {
  // Aliases of their own (range, bounds, at): the caller's stay visible inside.
  return sql<string | null>`case when ${v} is null then null else coalesce(
    (select range.bound_name from indicator_bound range where range.indicator_id = ${i}
       and (range.location_type_id is null
         or range.location_type_id = (select at.location_type_id from location at where at.id = ${location}))
       and (range.mn_val is null or ${v} > range.mn_val or (range.direction >= 0 and ${v} = range.mn_val))
       and (range.mx_val is null or ${v} < range.mx_val or (range.direction < 0 and ${v} = range.mx_val))
     order by range.location_type_id is null, range.id limit 1),
    (select case
       when bounds.good_bound is null or bounds.bad_bound is null or bounds.good_bound = bounds.bad_bound then null
       when bounds.good_bound > bounds.bad_bound then case when ${v} >= bounds.good_bound then 'good' when ${v} <= bounds.bad_bound then 'bad' else 'ok' end
       else case when ${v} <= bounds.good_bound then 'good' when ${v} >= bounds.bad_bound then 'bad' else 'ok' end end
     from indicator bounds where bounds.id = ${i})) end`
}

/** The `status` field of the datapoint reads: a synthetic field over `t`, shown with `with_status=1`. */
export const STATUS_FIELD = { kind: 'string' as const, expression: statusOf(sql`t.indicator_id`, sql`t.value`, sql`t.location_id`) }

/** The parameter that asks for each value's status, declared beside its reader. */
export const STATUS_PARAMS = {
  with_status: Param.boolean("1: each value's status against its indicator's bounds (good, ok, bad, or a bound range's name; null without bounds)"),
}

/** Whether the read asks for each value's status (`with_status=1`). */
export const withStatus = (ctx: Context<typeof STATUS_PARAMS>) => ctx.params.with_status === true
