// Sessions of people signed in with a password (sql/013): the cookie holds a random token, the database
// its SHA-256. A session ends when it has been idle too long, at its absolute end, on sign-out, when
// the user's password changes or the user is deactivated (triggers delete them, sql/013 and sql/014).
import { createHmac, randomBytes } from 'node:crypto'
import { sql, type ExpressionBuilder, type Kysely } from 'kysely'
import type { DB } from '../../schemas/index.js'
import { type AuthUser, authUser, hashKey, userQuery } from './auth.js'
import type { Config } from '../core/config.js'

export interface SessionLimits {
  /** A session unused this long ends. */
  idleMs: number
  /** A session ends this long after sign-in, however used. */
  absoluteMs: number
}

/** The limits the configuration sets (SESSION_IDLE_MS, SESSION_ABSOLUTE_MS). */
export const sessionLimits = (config: Pick<Config, 'SESSION_IDLE_MS' | 'SESSION_ABSOLUTE_MS'>): SessionLimits => ({
  idleMs: config.SESSION_IDLE_MS,
  absoluteMs: config.SESSION_ABSOLUTE_MS,
})

/**
 * A session's last use is written at most once a minute (a read per request would otherwise be a write),
 * and at a tenth of the idle limit when that is shorter: a session then ends between 90 % and 100 % of
 * SESSION_IDLE_MS after its last use, whatever the limit.
 */
export const touchIntervalMs = (limits: SessionLimits) => Math.min(60_000, limits.idleMs / 10)

/** Opens a session for `userId`; returns the token for the cookie (shown nowhere else). */
export async function openSession(db: Kysely<DB>, userId: number, limits: SessionLimits): Promise<string> {
  await purgeEndedSessions(db, limits)
  const token = randomBytes(32).toString('base64url')
  await db
    .insertInto('user_session')
    .values({ user_id: userId, token_hash: hashKey(token), expires_at: sql<string>`now() + ${`${limits.absoluteMs} milliseconds`}::interval` })
    .execute()
  await db.updateTable('auth_user').set({ last_login: sql`now()` }).where('id', '=', userId).execute()
  return token
}

/** The active user of a live session, with its rights today; its last use noted now and then (touchIntervalMs). */
export async function findUserBySession(db: Kysely<DB>, token: string, limits: SessionLimits): Promise<AuthUser | undefined> {
  // One round trip: the session and its user's rights today.
  const row = await userQuery(db)
    .innerJoin('user_session as s', 's.user_id', 'u.id')
    .select(['s.id as session_id', sql<number>`extract(epoch from now() - s.last_seen_at) * 1000`.as('idle_ms')])
    .where('s.token_hash', '=', hashKey(token))
    .where('s.expires_at', '>', sql<string>`now()`)
    .executeTakeFirst()
  if (!row?.is_active || row.idle_ms > limits.idleMs) return undefined
  if (row.idle_ms > touchIntervalMs(limits)) await db.updateTable('user_session').set({ last_seen_at: sql`now()` }).where('id', '=', row.session_id).execute()
  return { ...authUser(row, 0), session_id: row.session_id }
}

/** Ends the session of `token` (sign-out); whether there was one. */
export async function endSession(db: Kysely<DB>, token: string): Promise<boolean> {
  const ended = await db.deleteFrom('user_session').where('token_hash', '=', hashKey(token)).executeTakeFirst()
  return Number(ended.numDeletedRows) > 0
}

/**
 * Deletes the sessions that have ended (past their absolute end, or idle too long): on every sign-in
 * and on a schedule (plugins/jobs.ts), so the table holds live sessions only. Returns how many went.
 */
export async function purgeEndedSessions(db: Kysely<DB>, limits: SessionLimits): Promise<number> {
  const idleSince = sql<string>`now() - ${`${limits.idleMs} milliseconds`}::interval`
  const ended = (eb: ExpressionBuilder<DB, 'user_session'>) => eb.or([eb('expires_at', '<=', sql<string>`now()`), eb('last_seen_at', '<', idleSince)])
  // Looked for first: a DELETE of nothing still fires the statement triggers that tell every server to drop its caches.
  if (!(await db.selectFrom('user_session').select('id').where(ended).limit(1).executeTakeFirst())) return 0
  const purged = await db.deleteFrom('user_session').where(ended).executeTakeFirst()
  return Number(purged.numDeletedRows)
}

/**
 * What the web app keeps of a session on a shared browser (docs/decisions.md, "A shared browser"):
 * how long it lasts at most from now if unused, and the user's outbox key, with which the page seals
 * each value it queues, so that a queued value is only ever sent by its author. The key is derived from
 * the password hash, which never leaves the server: it is the same in each of her sessions, and
 * changes with her password.
 */
export async function sessionFacts(db: Kysely<DB>, sessionId: number, limits: SessionLimits) {
  const row = await db
    .selectFrom('user_session as s')
    .innerJoin('auth_user as u', 'u.id', 's.user_id')
    .select([
      'u.id',
      'u.password_hash',
      sql<number>`extract(epoch from least(s.expires_at, s.last_seen_at + ${`${limits.idleMs} milliseconds`}::interval) - now())`.as('left_s'),
    ])
    .where('s.id', '=', sessionId)
    .executeTakeFirst()
  if (!row?.password_hash) return {}
  const outboxKey = createHmac('sha256', row.password_hash).update(`outbox:${row.id}`).digest('hex')
  return { session_expires_in_s: Math.max(0, Math.floor(Number(row.left_s))), outbox_key: outboxKey }
}
