import { col, table } from './columns.js'

/** Closure table of the location hierarchy, maintained by lib/data/location-tree.ts; keyed by the pair. */
export const LocationTree = table('location_tree', {
  parent_location_id: col.fk('location', { onDelete: 'cascade', primaryKey: true }),
  location_id: col.fk('location', { onDelete: 'cascade', primaryKey: true }),
  lvl: col.integer(),
})
