import { col, table } from './columns.js'

/** A read-only link to a dashboard (sql/020): only sha256 of its token is stored. */
export const DashboardShare = table('dashboard_share', {
  id: col.id(),
  dashboard_id: col.fk('custom_dashboard', { onDelete: 'cascade' }),
  created_by_id: col.fk('auth_user', { readonly: true, onDelete: 'cascade' }),
  location_id: col.fk('location', { nullable: true, onDelete: 'cascade' }),
  token_hash: col.string({ maxLength: 64, unique: true, secret: true }),
  created_at: col.createdAt(),
  expires_at: col.datetime({ nullable: true }),
  /** The view the link was made from (sql/024): {campaign, location, start_date, end_date}. */
  view: col.json({ nullable: true }),
  /** Who or what the link is for, as its maker wrote it (sql/031). */
  label: col.string({ maxLength: 100, nullable: true }),
  /** The last 4 characters of the link's token: how its address ends, to tell links apart (sql/031). */
  token_end: col.string({ maxLength: 4, nullable: true, readonly: true }),
})
