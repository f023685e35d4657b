import { col, table } from '../lib/data/columns.js'

export const AuthGroup = table('auth_group', {
  id: col.id(),
  name: col.string({ maxLength: 150, unique: true }),
})
