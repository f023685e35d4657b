// The closure table `location_tree` (resource-api §23, §43): incremental maintenance on every write,
// and the full rebuild that cache_meta runs. Both must give the same rows.
import { sql, type Kysely } from 'kysely'
import type { DB } from '../../schemas/index.js'
import { badRequest } from '../core/errors.js'

type Executor = Kysely<DB>

/** Insert of L under `parent`: (L, L, 0) plus (A, L, k + 1) for every ancestor row (A, parent, k). */
export async function addToTree(db: Executor, id: number, parent: number | null): Promise<void> {
  await db.insertInto('location_tree').values({ parent_location_id: id, location_id: id, lvl: 0 }).execute()
  if (parent === null) return
  await sql`insert into location_tree (parent_location_id, location_id, lvl)
    select parent_location_id, ${id}, lvl + 1 from location_tree where location_id = ${parent}`.execute(db)
}

/** 400 LOCATION_CYCLE when `parent` is L itself or one of its descendants. */
export async function checkNoCycle(db: Executor, id: number, parent: number | null): Promise<void> {
  if (parent === null) return
  const inSubtree = await db.selectFrom('location_tree').select('lvl').where('parent_location_id', '=', id).where('location_id', '=', parent).executeTakeFirst()
  if (parent === id || inSubtree) {
    throw badRequest('LOCATION_CYCLE', `parent_location_id ${parent} would make location ${id} its own ancestor`)
  }
}

/** Moves L's whole subtree under `parent` (null = make it a root). */
export async function moveInTree(db: Executor, id: number, parent: number | null): Promise<void> {
  // Unlink every proper ancestor of L from every member of subtree(L)...
  await sql`delete from location_tree
    where location_id in (select location_id from location_tree where parent_location_id = ${id})
      and parent_location_id in (select parent_location_id from location_tree where location_id = ${id} and lvl > 0)`.execute(db)
  if (parent === null) return
  // ...then link the new parent's ancestors (self included) to every member of the subtree.
  await sql`insert into location_tree (parent_location_id, location_id, lvl)
    select a.parent_location_id, s.location_id, a.lvl + 1 + s.lvl
    from location_tree a cross join location_tree s
    where a.location_id = ${parent} and s.parent_location_id = ${id}`.execute(db)
}

/** Full rebuild from location.parent_location_id; returns the number of rows. */
export async function rebuildTree(db: Executor): Promise<number> {
  await sql`delete from location_tree`.execute(db)
  const result = await sql`insert into location_tree (parent_location_id, location_id, lvl)
    with recursive up(parent_location_id, location_id, lvl) as (
      select id, id, 0 from location
      union all
      select l.parent_location_id, up.location_id, up.lvl + 1
      from up join location l on l.id = up.parent_location_id
      where l.parent_location_id is not null)
    select parent_location_id, location_id, lvl from up`.execute(db)
  return Number(result.numAffectedRows ?? 0)
}
