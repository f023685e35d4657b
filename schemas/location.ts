import { col, table } from './columns.js'

export const Location = table('location', {
  id: col.id(),
  name: col.string({ maxLength: 255, unique: true }),
  location_code: col.string({ maxLength: 255, unique: true }),
  location_type_id: col.fk('location_type'),
  parent_location_id: col.fk('location', { nullable: true }),
  latitude: col.float({ nullable: true }),
  longitude: col.float({ nullable: true }),
  lpd_status: col.integer({ nullable: true }),
  created_at: col.createdAt(),
})
