// The values of a campaign that break a validation rule or their indicator's bounds (docs/decisions.md,
// "Validation rules"), checked when read against the final values the dashboards show. A user with a
// location responsibility sees only what lies in their subtree.
import { sql } from 'kysely'
import { defineResource, type Context } from '../lib/api/resource.js'
import { Param } from '../lib/api/query.js'
import { permittedLocations } from '../lib/engine/access.js'
import { findViolations } from '../lib/engine/validation.js'

const params = {
  campaign_id: Param.integer('the campaign whose values are checked', { required: true }),
  location_id: Param.integer('that location and its descendants (default: every location you may see)'),
}

const ids = { type: 'object', properties: { id: { type: 'integer' }, name: { type: 'string' } }, required: ['id', 'name'] }
const value = (nullableIndicator: boolean) => ({
  type: 'object',
  properties: { indicator_id: { type: 'integer', ...(nullableIndicator ? { nullable: true } : {}) }, value: { type: 'number' } },
  required: ['indicator_id', 'value'],
})

/** One violation's fields (lib/engine/validation.ts, `Violation`) as JSON schemas: the objects' shape here, and a write's `validation`. */
export const VIOLATION_PROPERTIES = {
  rule: {
    type: 'object',
    description: 'the rule broken; a bound (kind `bound`) has no id',
    properties: {
      id: { type: 'integer', nullable: true },
      kind: { type: 'string', enum: ['rule', 'bound'] },
      name: { type: 'string' },
      operator: { type: 'string', enum: ['<=', '<', '=', '>=', '>', '!='] },
      action: { type: 'string', enum: ['flag', 'block'] },
    },
    required: ['id', 'kind', 'name', 'operator', 'action'],
  },
  location: ids,
  campaign: ids,
  left: value(false),
  right: { ...value(true), description: "the right indicator's value, or a bound's limit (no indicator)" },
}

/** A write's or an upload's `validation`: how many violations, and (the first 100 of) them. */
export const VALIDATION_SCHEMA = {
  type: 'object',
  description: 'the violations of validation rules and bounds where the write landed (docs/decisions.md, "Validation rules")',
  properties: {
    count: { type: 'integer' },
    items: { type: 'array', items: { type: 'object', properties: VIOLATION_PROPERTIES, required: Object.keys(VIOLATION_PROPERTIES) } },
  },
  required: ['count', 'items'],
}

/** The locations checked: `location_id`'s subtree (else all), within the requester's own. */
function locations(ctx: Context<typeof params>) {
  const { location_id } = ctx.params
  const within = location_id === undefined ? sql`true` : sql`d.location_id in (select location_id from location_tree where parent_location_id = ${location_id})`
  return ctx.user.restricted ? sql`${within} and d.location_id in ${permittedLocations(ctx.user)}` : within
}

export default defineResource({
  name: 'validation_result',
  kind: 'non_model',
  reads_only: true,
  description: "A campaign's values that break a validation rule or their indicator's bounds, in a location's subtree.",
  params,
  result_fields: { rule: 'json', location: 'json', campaign: 'json', left: 'json', right: 'json' },
  result_schemas: VIOLATION_PROPERTIES,
  action: async (ctx) => {
    const { campaign_id } = ctx.params
    const scope = sql<boolean>`d.campaign_id = ${campaign_id} and ${locations(ctx)}`
    const { items } = await findViolations(ctx.db, { scope })
    return items as unknown as Array<Record<string, unknown>>
  },
})
