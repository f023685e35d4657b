import { col, table } from './columns.js'

export const AuthGroup = table('auth_group', {
  id: col.id(),
  name: col.string({ maxLength: 150, unique: true }),
})
