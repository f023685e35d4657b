// Lookups over the declarations: a resource by any of its names or by its table, and what follows
// a delete (each owner's afterDelete hook, then the recompute rule).
import type { Context, Resource, Row } from '../lib/api/resource.js'
import { recomputeAfterDelete } from '../lib/engine/recompute.js'
import { resources } from './index.js'

/** Canonical names and aliases. */
export const byName = new Map<string, Resource>()
for (const resource of resources) for (const name of [resource.name, ...resource.aliases]) byName.set(name, resource)

const byTable = new Map<string, Resource>()
for (const resource of resources) if (resource.table && !byTable.has(resource.table)) byTable.set(resource.table, resource)

/** The resource that serves `table`, by name (`/schema` links relations to it). */
export const resourceOfTable = (table: string) => byTable.get(table)?.name

/**
 * What runs after rows of `table` were deleted, directly or by a cascade, in the delete's
 * transaction: the afterDelete hooks of every resource of that table, then campaigns that lost raw
 * datapoints are recomputed.
 */
export const afterDelete = (ctx: Context) => async (table: string, rows: Row[]) => {
  for (const resource of resources) {
    if (resource.table === table && resource.hooks.afterDelete) await resource.hooks.afterDelete({ ...ctx, resource }, rows)
  }
  await recomputeAfterDelete(ctx.db, table, rows)
}
