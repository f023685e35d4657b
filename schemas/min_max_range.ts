import { col, table } from './columns.js'

/**
 * A location's expected range of an indicator's values (sql/033): a value outside it is an outlier.
 * `generated`: made from the location's history, and replaced when ranges are generated again.
 */
export const MinMaxRange = table(
  'min_max_range',
  {
    id: col.id(),
    location_id: col.fk('location', { onDelete: 'cascade' }),
    indicator_id: col.fk('indicator', { onDelete: 'cascade' }),
    mn_val: col.float({ nullable: true }),
    mx_val: col.float({ nullable: true }),
    generated: col.boolean({ default: false }),
    created_at: col.createdAt(),
  },
  { unique: [['location_id', 'indicator_id']] },
)
