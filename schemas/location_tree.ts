import { col, table } from '../lib/data/columns.js'

/** Closure table of the location hierarchy, maintained by lib/data/location-tree.ts. */
export const LocationTree = table('location_tree', {
  parent_location_id: col.fk('location', { onDelete: 'cascade' }),
  location_id: col.fk('location', { onDelete: 'cascade' }),
  lvl: col.integer(),
})
