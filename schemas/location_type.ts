import { col, table } from './columns.js'

export const LocationType = table('location_type', {
  id: col.id(),
  name: col.string({ maxLength: 55, unique: true }),
  admin_level: col.integer({ unique: true }),
})
