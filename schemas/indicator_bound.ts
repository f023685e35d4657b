import { col, table } from './columns.js'

export const IndicatorBound = table('indicator_bound', {
  id: col.id(),
  indicator_id: col.fk('indicator'),
  mn_val: col.float({ nullable: true }),
  mx_val: col.float({ nullable: true }),
  bound_name: col.string({ maxLength: 255 }),
  direction: col.integer({ default: 1 }),
  /** The level the range holds at (a location type); null: every level. */
  location_type_id: col.fk('location_type', { nullable: true }),
})
