// API keys and users (resource-api §5). Keys are 160 random bits shown once; only sha256(key) is stored.
// A fast hash is enough here: the keys are random, not passwords, so there is nothing to brute-force,
// and the hash doubles as the lookup index for `Bearer <key>`.
import { createHash, randomBytes } from 'node:crypto'
import { sql, type Kysely } from 'kysely'
import type { DB } from '../../schemas/index.js'

/** The channel every change to keys, users, permissions or roots notifies (sql/002). */
export const AUTH_CHANNEL = 'rhizome_auth'

/**
 * Members of this group may change the metadata everyone shares (indicators, campaigns, types, tags,
 * calculations, the location tree, code mappings; lib/engine/access.ts). It is one of the original
 * system's seeded groups: the one its "Manage System" pages were for.
 */
export const METADATA_EDITORS_GROUP = 'manage_system'

export interface AuthUser {
  id: number
  username: string
  is_superuser: boolean
  /** §6: the permission row's location, else the lowest-id root, else null. */
  top_lvl_location_id: number | null
  /** Non-superuser with a permission row: reads and writes are limited to that subtree. */
  restricted: boolean
  /** Member of the metadata editors' group (lib/engine/access.ts): may change shared metadata. */
  metadata_editor: boolean
  key_id: number
  /** Set when the request came with a session cookie instead of a key (lib/data/sessions.ts). */
  session_id?: number
}

export const newApiKey = () => randomBytes(20).toString('hex')
export const hashKey = (key: string) => createHash('sha256').update(key).digest('hex')

export type Credentials = { username?: string; key: string }

/**
 * Parses `ApiKey <username>:<key>` or `Bearer <key>`, and DHIS2's `ApiToken` with either (the key file
 * holds `username:key`); undefined when the header is malformed.
 */
export function parseAuthorization(header: string | undefined): Credentials | undefined {
  if (!header) return undefined
  const apiKey = /^(?:ApiKey|ApiToken)\s+(.+):([^:]+)$/i.exec(header.trim())
  if (apiKey) return { username: apiKey[1], key: apiKey[2] }
  // A bare key as a bearer token, or as DHIS2's clients send a personal access token.
  const bearer = /^(?:Bearer|ApiToken)\s+(\S+)$/i.exec(header.trim())
  if (bearer) return { key: bearer[1] }
  return undefined
}

/** HTTP Basic's `username:password` (RFC 7617, UTF-8), as DHIS2's clients send it; undefined when the header is not Basic or is malformed. */
export function parseBasic(header: string | undefined): { username: string; password: string } | undefined {
  const basic = header && /^Basic\s+([A-Za-z0-9+/]+={0,2})$/i.exec(header.trim())
  if (!basic) return undefined
  const pair = Buffer.from(basic[1], 'base64').toString('utf8')
  const colon = pair.indexOf(':')
  return colon > 0 ? { username: pair.slice(0, colon), password: pair.slice(colon + 1) } : undefined
}

/** The user as a key authenticates them: active, with permission, top-level location and groups. */
/** The active-user read every authentication joins its credential to (a key, a session). */
export function userQuery(db: Kysely<DB>) {
  return db
    .selectFrom('auth_user as u')
    .leftJoin('location_permission as lp', 'lp.user_id', 'u.id')
    .select([
      'u.id',
      'u.username',
      'u.is_superuser',
      'u.is_active',
      'lp.top_lvl_location_id as permission_location_id',
      sql<number | null>`coalesce(lp.top_lvl_location_id,
        (select min(id) from location where parent_location_id is null))`.as('top_lvl_location_id'),
      sql<boolean>`exists (select 1 from auth_user_groups ug join auth_group g on g.id = ug.group_id
        where ug.user_id = u.id and g.name = ${METADATA_EDITORS_GROUP})`.as('metadata_editor'),
    ])
}

type UserRow = Awaited<ReturnType<ReturnType<typeof userQuery>['executeTakeFirstOrThrow']>>

export const authUser = (row: UserRow, keyId: number): AuthUser => ({
  id: row.id,
  username: row.username,
  is_superuser: row.is_superuser,
  top_lvl_location_id: row.top_lvl_location_id,
  restricted: !row.is_superuser && row.permission_location_id !== null,
  metadata_editor: row.metadata_editor,
  key_id: keyId,
})

/** One round trip: key → active user, permission and top-level location. */
export async function findUserByKey(db: Kysely<DB>, credentials: Credentials): Promise<AuthUser | undefined> {
  const row = await userQuery(db)
    .innerJoin('api_key as k', 'k.user_id', 'u.id')
    .select('k.id as key_id')
    .where('k.key_hash', '=', hashKey(credentials.key))
    .executeTakeFirst()
  if (!row?.is_active) return undefined
  if (credentials.username !== undefined && credentials.username !== row.username) return undefined
  return authUser(row, row.key_id)
}

/** The active user `id` with today's rights (a background job runs with its requester's); no key. */
export async function findUserById(db: Kysely<DB>, id: number): Promise<AuthUser | undefined> {
  const row = await userQuery(db).where('u.id', '=', id).executeTakeFirst()
  return row?.is_active ? authUser(row, 0) : undefined
}

/** Stores a new key for the user and returns it in clear, the only time it is ever visible. */
export async function createApiKey(db: Kysely<DB>, userId: number, key = newApiKey()): Promise<string> {
  return (await insertApiKey(db, userId, key)).key
}

/** The same, with the new key's row id (the `api_key` resource answers both). */
export async function insertApiKey(db: Kysely<DB>, userId: number, key = newApiKey()): Promise<{ id: number; key: string }> {
  const { id } = await db
    .insertInto('api_key')
    .values({ user_id: userId, key_hash: hashKey(key) })
    .returning('id')
    .executeTakeFirstOrThrow()
  return { id, key }
}

export async function createUser(db: Kysely<DB>, user: { username: string; is_superuser?: boolean; email?: string }): Promise<number> {
  const { id } = await db
    .insertInto('auth_user')
    .values({
      username: user.username,
      email: user.email ?? '',
      is_superuser: user.is_superuser ?? false,
      is_staff: user.is_superuser ?? false,
    })
    .returning('id')
    .executeTakeFirstOrThrow()
  return id
}

/** Revokes one key (by its clear text) or every key of a user; returns how many were removed. */
export async function revokeKeys(db: Kysely<DB>, target: { key?: string; username?: string }): Promise<number> {
  let query = db.deleteFrom('api_key')
  if (target.key) query = query.where('key_hash', '=', hashKey(target.key))
  else if (target.username) {
    query = query.where('user_id', 'in', db.selectFrom('auth_user').select('id').where('username', '=', target.username))
  } else return 0
  const result = await query.executeTakeFirst()
  return Number(result.numDeletedRows)
}

const lastTouched = new Map<number, number>()

/** Records use of a key and the user's last login, at most once a minute per key. */
export async function touchKey(db: Kysely<DB>, user: AuthUser, now = Date.now()): Promise<void> {
  const previous = lastTouched.get(user.key_id)
  if (previous !== undefined && now - previous < 60_000) return
  lastTouched.set(user.key_id, now)
  await db.updateTable('api_key').set({ last_used_at: sql`now()` }).where('id', '=', user.key_id).execute()
  await db.updateTable('auth_user').set({ last_login: sql`now()` }).where('id', '=', user.id).execute()
}
