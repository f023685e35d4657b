// How complete an aggregated value is (docs/decisions.md, "Coverage of aggregated values"): of a
// location's children, how many hold a value of the same indicator and campaign (`reported`) against
// how many there are (`expected`), and whether that share is below the indicator's coverage_threshold.
// A value stored at the location itself (raw: it overrides its children's sum) and a location without
// children have no coverage (null).
import { sql, type RawBuilder } from 'kysely'
import { Param } from '../api/query.js'
import type { Context } from '../api/resource.js'

/** The coverage of the value of (indicator, location, campaign): `{reported, expected, below_threshold}` or null. */
export function coverageOf(indicator: RawBuilder<unknown>, location: RawBuilder<unknown>, campaign: RawBuilder<unknown>): RawBuilder<unknown> {
  // Aliases of their own: the caller's (t, r, c, i, l…) stay visible inside.
  return sql`case when exists (select 1 from datapoint coverage_raw
      where coverage_raw.unique_index = (${location} || '_' || ${indicator} || '_' || ${campaign}) collate "C") then null
    else (select case when count(*) = 0 then null else json_build_object(
        'reported', count(coverage_value.id), 'expected', count(*),
        'below_threshold', coalesce(count(coverage_value.id)::float8 / count(*) <
          (select coverage_indicator.coverage_threshold from indicator coverage_indicator where coverage_indicator.id = ${indicator}), false)) end
      from location coverage_child left join datapoint_with_computed coverage_value
        on coverage_value.location_id = coverage_child.id and coverage_value.indicator_id = ${indicator} and coverage_value.campaign_id = ${campaign}
      where coverage_child.parent_location_id = ${location}) end`
}

/** The `coverage` field of campaign_datapoint: a synthetic field over `t`, shown with `with_coverage=1`. */
export const COVERAGE_FIELD = { kind: 'json' as const, expression: coverageOf(sql`t.indicator_id`, sql`t.location_id`, sql`t.campaign_id`) }

/** The parameter that asks for each value's coverage, declared beside its reader. */
export const COVERAGE_PARAMS = {
  with_coverage: Param.boolean(
    "1: each value's coverage, {reported, expected, below_threshold}: of its location's children, how many hold a value (null for a value stored at the location itself)",
  ),
}

/** Whether the read asks for each value's coverage (`with_coverage=1`). */
export const withCoverage = (ctx: Context<typeof COVERAGE_PARAMS>) => ctx.params.with_coverage === true
