import { AuthUserGroups } from '../schemas/auth_user_groups.js'
import { defineResource } from '../lib/api/resource.js'

export default defineResource({
  name: 'user_group',
  schema: AuthUserGroups,
  required_fields_for_post: ['user_id', 'group_id'],
  writers: 'superusers',
})
