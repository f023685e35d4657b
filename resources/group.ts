import { AuthGroup } from '../schemas/auth_group.js'
import { defineResource } from '../lib/api/resource.js'

export default defineResource({
  name: 'group',
  schema: AuthGroup,
  required_fields_for_post: ['name'],
  writers: 'superusers',
})
