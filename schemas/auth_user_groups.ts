import { col, table } from './columns.js'

export const AuthUserGroups = table(
  'auth_user_groups',
  {
    id: col.id(),
    user_id: col.fk('auth_user', { onDelete: 'cascade' }),
    group_id: col.fk('auth_group'),
  },
  { unique: [['user_id', 'group_id']] },
)
