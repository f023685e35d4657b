import { sql } from 'kysely'
import { CalculatedIndicatorComponent } from '../schemas/calculated_indicator_component.js'
import { defineResource, type Context, type Row } from '../lib/api/resource.js'
import { badRequest, validationError } from '../lib/core/errors.js'

/** The component graph (component → calculated) must stay acyclic (resource-api §19). */
async function checkAcyclic(ctx: Context, values: Row, existing?: Row) {
  const calculated = (values.indicator_id ?? existing?.indicator_id) as number
  const component = (values.indicator_component_id ?? existing?.indicator_component_id) as number
  const cycle = () => badRequest('CALCULATION_CYCLE', `indicator ${component} cannot be a component of ${calculated}: it would depend on itself`)
  if (calculated === component) throw cycle()
  // A class is a category, not a number: nothing is calculated from or into one.
  const classes = await ctx.db
    .selectFrom('indicator')
    .select(['id', 'short_name'])
    .where('id', 'in', [calculated, component])
    .where('data_format', '=', 'class')
    .execute()
  for (const { id, short_name } of classes) {
    const field = id === component ? 'indicator_component_id' : 'indicator_id'
    throw validationError(field, `${short_name} is a class indicator: its values are classes, not numbers to calculate with`)
  }
  // Does `component` already depend, transitively, on `calculated`?
  const { rows } = await sql`with recursive deps(id) as (
      select indicator_component_id from calculated_indicator_component where indicator_id = ${component}
      union select c.indicator_component_id from calculated_indicator_component c join deps on c.indicator_id = deps.id)
    select 1 from deps where id = ${calculated} limit 1`.execute(ctx.db)
  if (rows.length) throw cycle()
}

export default defineResource({
  name: 'calculated_indicator_component',
  aliases: ['indicator_calculation'],
  schema: CalculatedIndicatorComponent,
  query_fields: ['id', 'indicator_id', 'indicator__short_name', 'indicator_component_id', 'indicator_component__short_name', 'calculation', 'created_at'],
  required_fields_for_post: ['indicator_id', 'indicator_component_id', 'calculation'],
  list_delete_by: ['indicator_id'],
  hooks: { beforeWrite: checkAcyclic },
})
