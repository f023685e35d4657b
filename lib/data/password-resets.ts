// One-time password reset links (sql/016): an administrator issues one for a user, whoever holds it
// sets that user's password once before it expires. Only the token's sha256 is stored; using a link
// ends the user's sessions and every other link of theirs (the triggers of a new password_hash).
import { randomBytes } from 'node:crypto'
import { sql, type Kysely } from 'kysely'
import type { DB } from '../../schemas/index.js'
import { hashKey } from './auth.js'

/** How long a link works: long enough to pass it on the same day, short enough to be of little use if lost. */
export const RESET_LIFETIME_MS = 24 * 60 * 60 * 1000

/** A new link's token (256 random bits, URL-safe) for `userId`, issued by `issuerId`; the token is shown once. */
export async function issueReset(db: Kysely<DB>, userId: number, issuerId: number, lifetimeMs = RESET_LIFETIME_MS) {
  const token = randomBytes(32).toString('base64url')
  const row = await db
    .insertInto('password_reset')
    .values({
      user_id: userId,
      token_hash: hashKey(token),
      created_by_id: issuerId,
      expires_at: sql<string>`now() + ${`${lifetimeMs} milliseconds`}::interval`,
    })
    .returning(['id', 'user_id', 'expires_at'])
    .executeTakeFirstOrThrow()
  return { ...row, token }
}

/** The active user a link that still works is for, or undefined (unknown, used, expired, or the user disabled). */
export async function resetHolder(db: Kysely<DB>, token: string): Promise<{ id: number; username: string } | undefined> {
  return db
    .selectFrom('password_reset as r')
    .innerJoin('auth_user as u', 'u.id', 'r.user_id')
    .select(['u.id', 'u.username'])
    .where('r.token_hash', '=', hashKey(token))
    .where('r.expires_at', '>', sql<string>`now()`)
    .where('u.is_active', '=', true)
    .executeTakeFirst()
}

/**
 * Uses a link: in one transaction the link is taken (so two uses at once cannot both succeed) and the
 * password set. Returns the user's id, or undefined when the link no longer works.
 */
export function redeemReset(db: Kysely<DB>, token: string, passwordHash: string): Promise<number | undefined> {
  return db.transaction().execute(async (trx) => {
    const taken = await trx
      .deleteFrom('password_reset')
      .where('token_hash', '=', hashKey(token))
      .where('expires_at', '>', sql<string>`now()`)
      .returning('user_id')
      .executeTakeFirst()
    if (!taken) return undefined
    const updated = await trx
      .updateTable('auth_user')
      .set({ password_hash: passwordHash })
      .where('id', '=', taken.user_id)
      .where('is_active', '=', true)
      .executeTakeFirst()
    return updated.numUpdatedRows > 0n ? taken.user_id : undefined
  })
}
