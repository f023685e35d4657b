import { col, table } from './columns.js'

export const CustomDashboard = table('custom_dashboard', {
  id: col.id(),
  title: col.string({ maxLength: 255, unique: true }),
  description: col.string({ maxLength: 1000, default: '' }),
  layout: col.integer({ nullable: true, default: 0 }),
  rows: col.json({ nullable: true }),
  /** Who made it: they, superusers and metadata editors change and delete it (set by the server). */
  owner_id: col.fk('auth_user', { nullable: true, readonly: true, onDelete: 'set null' }),
})
