import { col, table } from './columns.js'

export const LocationPermission = table('location_permission', {
  id: col.id(),
  user_id: col.fk('auth_user', { unique: true, onDelete: 'cascade' }),
  top_lvl_location_id: col.fk('location'),
})
