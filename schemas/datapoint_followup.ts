import { col, table } from './columns.js'

/**
 * A value marked for follow-up with a comment, and resolved with another (sql/035). Its key, location
 * and value are the datapoint's as it was marked: the follow-up outlives the value.
 */
export const DatapointFollowup = table('datapoint_followup', {
  id: col.id(),
  datapoint_id: col.integer(),
  unique_index: col.string({ maxLength: 255, readonly: true }),
  location_id: col.integer({ readonly: true }),
  indicator_id: col.integer({ readonly: true }),
  campaign_id: col.integer({ nullable: true, readonly: true }),
  data_date: col.date({ nullable: true, readonly: true }),
  /** The value when it was marked. */
  value: col.float({ nullable: true, readonly: true }),
  comment: col.string({ maxLength: 2000 }),
  created_by_id: col.fk('auth_user', { nullable: true, readonly: true, onDelete: 'set null' }),
  created_at: col.createdAt(),
  resolution_comment: col.string({ maxLength: 2000, nullable: true }),
  resolved_by_id: col.fk('auth_user', { nullable: true, readonly: true, onDelete: 'set null' }),
  resolved_at: col.datetime({ nullable: true, readonly: true }),
})
