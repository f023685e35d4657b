// A value's status against its indicator's bounds (docs/decisions.md, "Bounds and a value's status"):
// the name of the first `indicator_bound` range holding it, else good / ok / bad from the indicator's
// good_bound and bad_bound, else null. One SQL expression, so every read computes it the same way.
import { sql, type RawBuilder } from 'kysely'
import type { Context } from '../api/resource.js'

/**
 * The status of `value` of `indicator` (SQL expressions, e.g. `t.value`). A range holds its lower
 * limit and not its upper one (direction 1), or the other way round (direction -1); a missing limit
 * is open. Good and bad bounds give a status only as a pair: their order says which way is better.
 */
export function statusOf(i: RawBuilder<unknown>, v: RawBuilder<unknown>): RawBuilder<string | null> {
  return sql<string | null>`case when ${v} is null then null else coalesce(
    (select b.bound_name from indicator_bound b where b.indicator_id = ${i}
       and (b.mn_val is null or ${v} > b.mn_val or (b.direction >= 0 and ${v} = b.mn_val))
       and (b.mx_val is null or ${v} < b.mx_val or (b.direction < 0 and ${v} = b.mx_val))
     order by b.id limit 1),
    (select case
       when s.good_bound is null or s.bad_bound is null or s.good_bound = s.bad_bound then null
       when s.good_bound > s.bad_bound then case when ${v} >= s.good_bound then 'good' when ${v} <= s.bad_bound then 'bad' else 'ok' end
       else case when ${v} <= s.good_bound then 'good' when ${v} >= s.bad_bound then 'bad' else 'ok' end end
     from indicator s where s.id = ${i})) end`
}

/** The `status` field of the datapoint reads: a synthetic field over `t`, shown with `with_status=1`. */
export const STATUS_FIELD = { kind: 'string' as const, expression: statusOf(sql`t.indicator_id`, sql`t.value`) }

/** Whether the read asks for each value's status (`with_status=1`). */
export const withStatus = (ctx: Context) => (ctx.params as { with_status?: boolean }).with_status === true
