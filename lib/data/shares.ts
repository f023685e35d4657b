// Read-only links to a dashboard (sql/020). A link is a capability: whoever holds its token sees one
// dashboard as its creator may see it now, narrowed to the link's location, and nothing else. The
// identity a link reads with is derived at each use from the creator's current rights, so a creator
// whose rights shrink shrinks the link, and a deactivated creator (or one whose part of the country
// no longer meets the link's) ends it.
import { randomBytes } from 'node:crypto'
import { sql, type Kysely } from 'kysely'
import type { DB } from '../../schemas/index.js'
import { type AuthUser, authUser, hashKey, userQuery } from './auth.js'

/** 256 random bits, URL-safe. */
export const newShareToken = () => randomBytes(32).toString('base64url')
/** Tokens are random, so a fast hash is enough (as for keys). */
export const hashShareToken = hashKey

export interface Share {
  id: number
  dashboard_id: number
  /** Whom the link reads as: its creator's rights today, within the link's location; never a superuser. */
  reader: AuthUser
  /** The view it was made from, which it opens at (null: the dashboard as saved). */
  view: ShareView | null
}

/** Whether `location` lies in the subtree of `top` (itself included). */
async function within(db: Kysely<DB>, location: number, top: number): Promise<boolean> {
  const row = await db
    .selectFrom('location_tree')
    .select(sql<number>`1`.as('one'))
    .where('location_id', '=', location)
    .where('parent_location_id', '=', top)
    .executeTakeFirst()
  return row !== undefined
}

/**
 * The top of what a link shows: the link's location when its creator may see it, the creator's own
 * top when the link's location lies above it; null when they do not meet (the link shows nothing).
 */
export async function shareTop(db: Kysely<DB>, creator: AuthUser, location: number | null): Promise<number | null | 'whole'> {
  if (location === null) return creator.restricted ? creator.top_lvl_location_id : 'whole'
  if (!creator.restricted || creator.top_lvl_location_id === null) return location
  if (await within(db, location, creator.top_lvl_location_id)) return location
  if (await within(db, creator.top_lvl_location_id, location)) return creator.top_lvl_location_id
  return null
}

/** The live link of `token` (not expired, creator active, rights meeting its location), else undefined. */
export async function findShare(db: Kysely<DB>, token: string): Promise<Share | undefined> {
  const share = await db
    .selectFrom('dashboard_share')
    .select(['id', 'dashboard_id', 'created_by_id', 'location_id', 'view'])
    .where('token_hash', '=', hashShareToken(token))
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', sql<string>`now()`)]))
    .executeTakeFirst()
  if (!share) return undefined
  const row = await userQuery(db).where('u.id', '=', share.created_by_id).executeTakeFirst()
  if (!row?.is_active) return undefined
  const creator = authUser(row, 0)
  const top = await shareTop(db, creator, share.location_id)
  if (top === null) return undefined
  const reader: AuthUser = {
    id: creator.id,
    username: creator.username,
    is_superuser: false,
    metadata_editor: false,
    restricted: top !== 'whole',
    top_lvl_location_id: top === 'whole' ? creator.top_lvl_location_id : top,
    key_id: 0,
  }
  const view = typeof share.view === 'string' ? JSON.parse(share.view) : share.view
  return { id: share.id, dashboard_id: share.dashboard_id, reader, view: (view as ShareView | null) ?? null }
}

/** The view a link opens at (sql/024): the app's own view keys, each optional. */
export interface ShareView {
  campaign?: number
  location?: number
  start_date?: string
  end_date?: string
}

const VIEW_KEYS = ['campaign', 'location', 'start_date', 'end_date'] as const
const isId = (v: unknown) => Number.isInteger(v) && (v as number) > 0 && (v as number) < 2 ** 31
const isDay = (v: unknown) => typeof v === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(v) && !Number.isNaN(Date.parse(v))

/**
 * A link's view as given (`view` of `POST /dashboard_share/`), its empty keys left out; null for none.
 * Throws `fail(message)` naming what is wrong: a key the app's view has not, an id or a day that is not one.
 */
export function shareViewOf(given: unknown, fail: (message: string) => Error): ShareView | null {
  if (given === undefined || given === null) return null
  if (typeof given !== 'object' || Array.isArray(given)) throw fail('view must be an object {campaign, location, start_date, end_date}')
  const view: ShareView = {}
  for (const [key, value] of Object.entries(given)) {
    if (!(VIEW_KEYS as readonly string[]).includes(key)) throw fail(`view has no key ${key}: it takes campaign, location, start_date and end_date`)
    if (value === null || value === undefined || value === '') continue
    const day = key === 'start_date' || key === 'end_date'
    if (day ? !isDay(value) : !isId(value)) throw fail(`view.${key} must be ${day ? 'a day (YYYY-MM-DD)' : 'an id'}, not ${JSON.stringify(value)}`)
    Object.assign(view, { [key]: value })
  }
  return Object.keys(view).length ? view : null
}
