import { AuthUser } from '../schemas/auth_user.js'
import { defineResource } from '../lib/api/resource.js'
import { validationError } from '../lib/core/errors.js'

const notYourself = () => validationError('id', 'you cannot delete or deactivate yourself')

export default defineResource({
  name: 'user',
  schema: AuthUser,
  required_fields_for_post: ['username'],
  writers: 'superusers',
  hooks: {
    async beforeWrite(ctx, values, existing) {
      if (existing && existing.id === ctx.user.id && values.is_active === false) throw notYourself()
    },
    async beforeDelete(ctx, row) {
      if (row.id === ctx.user.id) throw notYourself()
    },
  },
})
