import { ValidationRule } from '../schemas/validation_rule.js'
import { defineResource } from '../lib/api/resource.js'
import { validationError } from '../lib/core/errors.js'

// Rules over two indicators' final values at one location and campaign (docs/decisions.md,
// "Validation rules"): shared metadata, edited by metadata editors, read by everyone. Uploads and data
// entries are checked against them (lib/engine/validation.ts); validation_result lists what breaks them.
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
      for (const field of ['left_indicator_id', 'right_indicator_id'] as const) {
        if (!(field in values)) continue
        const found = await ctx.db
          .selectFrom('indicator')
          .select('id')
          .where('id', '=', values[field] as number)
          .executeTakeFirst()
        if (!found) throw validationError(field, `no indicator with id ${values[field]}`)
      }
    },
  },
})
