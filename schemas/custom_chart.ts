import { col, table } from './columns.js'

export const CustomChart = table('custom_chart', {
  id: col.id(),
  uuid: col.string({ maxLength: 255, unique: true }),
  title: col.string({ maxLength: 255, unique: true }),
  chart_json: col.json(),
  /** Who made it: they, superusers and metadata editors change and delete it (set by the server). */
  owner_id: col.fk('auth_user', { nullable: true, readonly: true, onDelete: 'set null' }),
})
