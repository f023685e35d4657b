import { IndicatorClassMap } from '../schemas/indicator_class_map.js'
import { defineResource } from '../lib/api/resource.js'
import { validationError } from '../lib/core/errors.js'

// The labels of class indicators' values (docs/decisions.md, "Class indicators"), edited by metadata
// editors: uploads accept a label for its value, reads return it (`with_labels=1`).
export default defineResource({
  name: 'indicator_class_map',
  schema: IndicatorClassMap,
  required_fields_for_post: ['indicator_id', 'value', 'label'],
  ordering: ['indicator_id', 'value'],
  list_delete_by: ['indicator_id'],
  hooks: {
    async beforeWrite(ctx, values, existing) {
      const indicatorId = (values.indicator_id ?? existing?.indicator_id) as number
      const indicator = await ctx.db.selectFrom('indicator').select(['short_name', 'data_format']).where('id', '=', indicatorId).executeTakeFirst()
      if (indicator && indicator.data_format !== 'class') {
        throw validationError('indicator_id', `${indicator.short_name} is not a class indicator (data_format ${indicator.data_format})`)
      }
      if (typeof values.label === 'string' && !values.label.trim()) throw validationError('label', 'may not be blank')
    },
  },
})
