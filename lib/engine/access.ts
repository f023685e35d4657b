// The authorization model (SECURITY.md, "Who may do what"): the roles, who may write each resource or
// run its action, and which locations and documents a requester may reach. The dispatcher asks here
// before every write and action; lib/api/crud.ts limits every read and write to the rows a declaration's
// `location_column` and `row_filter` allow; the pipeline applies a document's rows with its uploader's
// locations.
import { sql, type Kysely, type RawBuilder } from 'kysely'
import type { DB } from '../../schemas/index.js'
import { METADATA_EDITORS_GROUP, type AuthUser } from '../data/auth.js'
import { forbidden } from '../core/errors.js'

/**
 * Who may write a resource (POST, PATCH) or run its action. DELETE is the superuser's everywhere.
 * - `users`: every user (the location and document rules below still apply);
 * - `responsible`: metadata editors, and users with a location responsibility inside it (their part
 *   of the location tree);
 * - `metadata_editors`: metadata editors;
 * - `unrestricted`: users without a location responsibility (the action changes a whole campaign);
 * - `superusers`: nobody else (a user could otherwise widen their own access).
 * Superusers may do everything.
 */
export type Writers = 'users' | 'responsible' | 'metadata_editors' | 'unrestricted' | 'superusers'

const WHO: Record<Exclude<Writers, 'users'>, string> = {
  responsible: `a superuser, a metadata editor (group ${METADATA_EDITORS_GROUP}) or a user responsible for a location`,
  metadata_editors: `a superuser or a metadata editor (group ${METADATA_EDITORS_GROUP})`,
  unrestricted: 'a user without a location responsibility',
  superusers: 'a superuser',
}

function mayWrite(user: AuthUser, writers: Writers): boolean {
  if (user.is_superuser || writers === 'users') return true
  switch (writers) {
    case 'responsible':
      return user.metadata_editor || user.restricted
    case 'metadata_editors':
      return user.metadata_editor
    case 'unrestricted':
      return !user.restricted
    case 'superusers':
      return false
  }
}

/** 403 FORBIDDEN unless `user` may write `resource` (`verb`: modify a model, run an action). */
export function assertMayWrite(user: AuthUser, resource: { name: string; writers: Writers }, verb: 'modify' | 'run'): void {
  if (!mayWrite(user, resource.writers)) {
    throw forbidden(`Only ${WHO[resource.writers as Exclude<Writers, 'users'>]} may ${verb} ${resource.name}`)
  }
}

/**
 * Rows with an owner (charts, dashboards) are changed and deleted by their owner, superusers and
 * metadata editors; everyone may read them.
 */
export function assertOwner(user: AuthUser, resource: { name: string; owner_column?: string }, row: Record<string, unknown>): void {
  if (!resource.owner_column || user.is_superuser || user.metadata_editor || row[resource.owner_column] === user.id) return
  throw forbidden(
    `${resource.name} ${row.id} belongs to another user: only its owner, a superuser or a metadata editor (group ${METADATA_EDITORS_GROUP}) may change or delete it`,
    'OWNER_FORBIDDEN',
  )
}

/** Who may DELETE a row: superusers everywhere; on resources with owners, also as assertOwner says. */
export function assertMayDelete(user: AuthUser, resource: { owner_column?: string }): void {
  if (!user.is_superuser && !resource.owner_column) throw forbidden('Only a superuser may delete')
}

/** The role checks of a dispatched call (SECURITY.md's table): deletes, writes, and running an action. */
export function assertMayCall(user: AuthUser, resource: { name: string; writers: Writers; owner_column?: string; kind: string }, method: string): void {
  if (method === 'DELETE') assertMayDelete(user, resource)
  if (method === 'POST' || method === 'PATCH' || method === 'DELETE') assertMayWrite(user, resource, 'modify')
  else if (resource.kind === 'non_model') assertMayWrite(user, resource, 'run')
}

/** The locations a restricted user may reach, as a subquery of ids: their top-level location's subtree (resource-api §6). */
export function permittedLocations(user: AuthUser): RawBuilder<unknown> {
  return sql`(select lt.location_id from location_tree lt where lt.parent_location_id = ${user.top_lvl_location_id})`
}

/** resource-api §6: a restricted user may only write rows placed inside their subtree (403 LOCATION_FORBIDDEN). */
export async function assertLocationInReach(db: Kysely<DB>, user: AuthUser, location: unknown): Promise<void> {
  if (!user.restricted) return
  const inside =
    typeof location === 'number' &&
    (await db
      .selectFrom('location_tree')
      .select('lvl')
      .where('parent_location_id', '=', user.top_lvl_location_id!)
      .where('location_id', '=', location)
      .executeTakeFirst())
  if (!inside)
    throw forbidden(
      location == null ? 'The top of the tree (no parent) is outside your responsibility' : `Location ${String(location)} is outside your responsibility`,
      'LOCATION_FORBIDDEN',
    )
}

/**
 * A user with a location responsibility changes and processes only the documents they uploaded: a
 * document's rows are applied with its uploader's locations, and its ingest stats hold its rows' values.
 */
export function assertOwnDocument(user: AuthUser, document: { id: number; created_by_id: number | null }): void {
  if (user.restricted && document.created_by_id !== user.id) {
    throw forbidden(
      `Document ${document.id} was uploaded by another user: with a location responsibility you may only change or process your own documents`,
      'DOCUMENT_FORBIDDEN',
    )
  }
}

/**
 * The locations a document's rows may be written at: its uploader's subtree when the uploader has a
 * location responsibility (whoever runs the pipeline), null for everywhere. A document whose uploader
 * is gone (or the Data Entry document) is applied with the rights of the user who runs it.
 */
export async function documentLocations(db: Kysely<DB>, document: { created_by_id: number | null }, runner: AuthUser): Promise<Set<number> | null> {
  let top = runner.restricted ? runner.top_lvl_location_id : null
  if (document.created_by_id !== null) {
    const uploader = await db
      .selectFrom('auth_user as u')
      .leftJoin('location_permission as lp', 'lp.user_id', 'u.id')
      .select(['u.is_superuser', 'lp.top_lvl_location_id'])
      .where('u.id', '=', document.created_by_id)
      .executeTakeFirst()
    if (uploader) top = uploader.is_superuser ? null : uploader.top_lvl_location_id
  }
  if (top === null) return null
  const rows = await db.selectFrom('location_tree').select('location_id').where('parent_location_id', '=', top).execute()
  return new Set(rows.map((r) => r.location_id))
}
