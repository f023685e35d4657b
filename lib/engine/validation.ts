// Validation (docs/decisions.md, "Validation rules"): the final values (datapoint_with_computed) that
// break a validation rule (left value, operator, right value at one location and campaign) or fall
// outside their indicator's bounds. One SQL statement finds them for a scope the caller names: a
// campaign and a subtree (validation_result), what an upload wrote, one data entry's key.
import { sql, type Kysely, type RawBuilder } from 'kysely'
import type { DB } from '../../schemas/index.js'
import { ApiError } from '../core/errors.js'

/** A broken rule or bound at one location and campaign, with both values compared. */
export interface Violation {
  /** A bound has no id: `kind` bound, the right value is the limit it passed. */
  rule: { id: number | null; kind: 'rule' | 'bound'; name: string; operator: string; action: string }
  location: { id: number; name: string }
  campaign: { id: number; name: string }
  left: { indicator_id: number; value: number }
  right: { indicator_id: number | null; value: number }
}

/** The violations found (`count`), the first `limit` of them (the blocking ones first), and how many block. */
export interface Violations {
  count: number
  items: Violation[]
  blocked: number
}

export interface Check {
  /** Which final values to check, over `d` (its location_id, campaign_id, indicator_id). */
  scope: RawBuilder<boolean>
  /**
   * Whether the write being checked wrote one of the two values of a `block` rule's violation, over
   * `d`, `r.left_indicator_id` and `r.right_indicator_id`: only those refuse it. None: nothing blocks.
   */
  wrote?: RawBuilder<boolean>
  /** At most this many items (every violation is counted). */
  limit?: number
}

// A value that is not finite (a ratio over zero) says nothing about plausibility.
const finite = (alias: string) => sql`${sql.ref(`${alias}.value`)} not in ('NaN', 'Infinity', '-Infinity')`

const holds = sql`case r.operator when '<=' then d.value <= o.value when '<' then d.value < o.value when '=' then d.value = o.value
  when '>=' then d.value >= o.value when '>' then d.value > o.value else d.value <> o.value end`

interface Found {
  rule_id: number | null
  kind: 'rule' | 'bound'
  rule_name: string
  operator: string
  action: string
  location_id: number
  location_name: string
  campaign_id: number
  campaign_name: string
  left_indicator_id: number
  left_value: number
  right_indicator_id: number | null
  right_value: number
  blocking: boolean
  total: number | string
  blocked: number | string
}

/**
 * The violations within `check.scope`. An indicator's bounds at a location level are its
 * `indicator_bound` ranges of that level and of every level taken together: below the lowest lower
 * limit or above the highest upper one (a side where a range is open has no limit) is implausible; a
 * bound only flags.
 */
export async function findViolations(db: Kysely<DB>, check: Check): Promise<Violations> {
  const wrote = check.wrote ?? sql`false`
  const limit = check.limit === undefined ? sql`` : sql`limit ${sql.lit(Math.trunc(check.limit))}`
  const { rows } = await sql<Found>`
    select v.*, l.name as location_name, c.name as campaign_name,
      count(*) over () as total, count(*) filter (where v.blocking) over () as blocked
    from (
      select r.id as rule_id, 'rule' as kind, r.name as rule_name, r.operator, r.action,
        d.location_id, d.campaign_id, d.indicator_id as left_indicator_id, d.value as left_value,
        o.indicator_id as right_indicator_id, o.value as right_value, (r.action = 'block' and ${wrote}) as blocking
      from validation_rule r
      join datapoint_with_computed d on d.indicator_id = r.left_indicator_id
      join datapoint_with_computed o on o.location_id = d.location_id and o.campaign_id = d.campaign_id and o.indicator_id = r.right_indicator_id
      where ${check.scope} and ${finite('d')} and ${finite('o')} and not (${holds})
      union all
      select null, 'bound', i.short_name || ' within its bounds', case when d.value < b.lowest then '>=' else '<=' end, 'flag',
        d.location_id, d.campaign_id, d.indicator_id, d.value,
        null, case when d.value < b.lowest then b.lowest else b.highest end, false
      from (select x.indicator_id, lt.id as location_type_id,
              case when bool_and(x.mn_val is not null) then min(x.mn_val) end as lowest,
              case when bool_and(x.mx_val is not null) then max(x.mx_val) end as highest
            from indicator_bound x join location_type lt on x.location_type_id is null or x.location_type_id = lt.id
            group by x.indicator_id, lt.id) b
      join indicator i on i.id = b.indicator_id
      join datapoint_with_computed d on d.indicator_id = b.indicator_id
      join location dl on dl.id = d.location_id and dl.location_type_id = b.location_type_id
      where ${check.scope} and ${finite('d')} and (d.value < b.lowest or d.value > b.highest)
    ) v
    join location l on l.id = v.location_id
    join campaign c on c.id = v.campaign_id
    order by v.blocking desc, v.campaign_id, v.location_id, v.kind desc, v.rule_id, v.left_indicator_id
    ${limit}`.execute(db)
  return { count: Number(rows[0]?.total ?? 0), blocked: Number(rows[0]?.blocked ?? 0), items: rows.map(violation) }
}

const violation = (r: Found): Violation => ({
  rule: { id: r.rule_id, kind: r.kind, name: r.rule_name, operator: r.operator, action: r.action },
  location: { id: r.location_id, name: r.location_name },
  campaign: { id: r.campaign_id, name: r.campaign_name },
  left: { indicator_id: r.left_indicator_id, value: Number(r.left_value) },
  right: { indicator_id: r.right_indicator_id, value: Number(r.right_value) },
})

/** One violation in words: the rule, where, and the values that break it. */
export const describeViolation = (v: Violation) =>
  `"${v.rule.name}" at ${v.location.name} (location ${v.location.id}), campaign ${v.campaign.name} (${v.campaign.id}): ` +
  `${v.left.value} ${v.rule.operator} ${v.right.value} does not hold`

/**
 * 422 VALIDATION_BLOCKED when `found` holds violations of `block` rules by the write: the transaction
 * it is thrown in rolls back, so nothing of the write is kept. `details.violations` lists them.
 */
export function assertNotBlocked(found: Violations): void {
  if (!found.blocked) return
  const blocking = found.items.slice(0, found.blocked)
  const listed = blocking.map(describeViolation).join('; ')
  const more = found.blocked > blocking.length ? ` (and ${found.blocked - blocking.length} more)` : ''
  throw new ApiError(422, 'VALIDATION_BLOCKED', `Refused by validation rule: ${listed}${more}`, {
    violations: blocking,
    count: found.blocked,
  })
}

/** The answer's `validation` field: the violations' count and (the first of) them, without the blocking count. */
export const reported = ({ count, items }: Violations) => ({ count, items })

/** A data entry's check: every value at its location and campaign; a block rule over its indicator refuses it. */
export const entryCheck = (entry: { location_id: number; campaign_id: number; indicator_id: number }): Check => ({
  scope: sql`d.location_id = ${entry.location_id} and d.campaign_id = ${entry.campaign_id}`,
  wrote: sql`${entry.indicator_id} in (r.left_indicator_id, r.right_indicator_id)`,
})

/**
 * An upload's check: every value at the locations and campaigns its cells were staged at; a block
 * rule refuses it where the document carries a value of one of the rule's indicators.
 */
export const documentCheck = (documentId: number, limit: number): Check => {
  const D = sql.lit(Math.trunc(documentId))
  return {
    scope: sql`(d.location_id, d.campaign_id) in (select s.location_id, s.campaign_id from doc_datapoint s where s.document_id = ${D} and s.campaign_id is not null)`,
    wrote: sql`exists (select 1 from doc_datapoint s where s.document_id = ${D} and s.location_id = d.location_id
      and s.campaign_id = d.campaign_id and s.indicator_id in (r.left_indicator_id, r.right_indicator_id))`,
    limit,
  }
}
