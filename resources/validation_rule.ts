import { ValidationRule } from '../schemas/validation_rule.js'
import { defineResource } from '../lib/api/resource.js'
import { validationError } from '../lib/core/errors.js'

// Rules over two indicators' final values at one location and campaign (docs/decisions.md,
// "Validation rules"): shared metadata, edited by metadata editors, read by everyone. Uploads and data
// entries are checked against them (lib/engine/validation.ts); validation_result lists what breaks them.

/** Formats whose values a rule compares (like with like; a class is a category, not a quantity), in words. */
const COMPARED_FORMATS: Record<string, string> = { int: 'a count', pct: 'a percentage', bool: 'a yes/no', date_int: 'a count by date' }

/**
 * Why a rule may not compare these two indicators' values: one takes values by date (rules check a
 * campaign's values), or they are not quantities of one kind (a count against a percentage, a yes/no
 * against either, a class).
 */
function incomparable(left: Side, right: Side): string | undefined {
  // Rules are checked on campaign values (lib/engine/validation.ts): a dated indicator's would never be.
  for (const side of [left, right])
    if (side.resource_name === 'date') return `${side.short_name} takes values by date: a rule compares values at one location and campaign`
  for (const side of [left, right])
    if (!(side.data_format in COMPARED_FORMATS)) return `${side.short_name} is a ${side.data_format} indicator: its values are not compared`
  if (left.data_format !== right.data_format)
    return `${left.short_name} is ${COMPARED_FORMATS[left.data_format]} and ${right.short_name} ${COMPARED_FORMATS[right.data_format]}: a rule compares values of one format`
  return undefined
}

type Side = { short_name: string; data_format: string; resource_name: string }

export default defineResource({
  name: 'validation_rule',
  schema: ValidationRule,
  required_fields_for_post: ['name', 'left_indicator_id', 'operator', 'right_indicator_id'],
  ordering: ['name'],
  list_delete_by: ['left_indicator_id', 'right_indicator_id'],
  hooks: {
    async beforeWrite(ctx, values, existing) {
      const row = { ...existing, ...values }
      if (typeof values.name === 'string' && !values.name.trim()) throw validationError('name', 'may not be blank')
      if (row.left_indicator_id === row.right_indicator_id) throw validationError('right_indicator_id', 'must differ from left_indicator_id')
      // A missing indicator named by its field, before the foreign key's less specific refusal.
      const sides: Side[] = []
      for (const field of ['left_indicator_id', 'right_indicator_id'] as const) {
        const found = await ctx.db
          .selectFrom('indicator')
          .select(['id', 'short_name', 'data_format', 'resource_name'])
          .where('id', '=', row[field] as number)
          .executeTakeFirst()
        if (!found) throw validationError(field, `no indicator with id ${row[field]}`)
        sides.push(found)
      }
      const problem = incomparable(sides[0], sides[1])
      if (problem) throw validationError('right_indicator_id', problem)
    },
  },
})
