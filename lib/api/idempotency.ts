// Retried writes (docs/decisions.md, "Retried writes"; the IETF httpapi Idempotency-Key draft): a POST
// or PATCH sent again with the same Idempotency-Key answers what the first one answered, with its
// status, and writes nothing again. A client that lost the answer (a cut network, a restarted server)
// can resend a write without knowing whether it arrived.
import { createHash } from 'node:crypto'
import { sql, type Kysely } from 'kysely'
import type { FastifyRequest } from 'fastify'
import type { DB } from '../../schemas/index.js'
import { ApiError, badRequest } from '../core/errors.js'
import { assertLocationInReach } from '../engine/access.js'
import type { Context } from './resource.js'

/** How long a user's key is kept: a repeat after that is a new write. */
export const IDEMPOTENCY_KEY_HOURS = 24
const MAX_KEY_LENGTH = 255

/** What a write answers, whole: a repeat with the same key is answered the same. `body`: its JSON text. */
export interface WriteOutcome {
  status: number
  headers: Record<string, string>
  body: string
}

/** The Idempotency-Key of `request` (a structured-field string: quoted; a bare token is taken too), if any. */
export function idempotencyKeyOf(request: FastifyRequest): string | undefined {
  const header = request.headers['idempotency-key']
  if (header === undefined) return undefined
  const text = (Array.isArray(header) ? header.join(',') : header).trim()
  const key = /^"([^"\\]*)"$/.exec(text)?.[1] ?? text
  if (!key || key.length > MAX_KEY_LENGTH || !/^[\x20-\x7e]+$/.test(key) || key.includes('"')) {
    throw badRequest('INVALID_IDEMPOTENCY_KEY', `Idempotency-Key: a string of 1 to ${MAX_KEY_LENGTH} printable ASCII characters, in double quotes`)
  }
  return key
}

// The request a key stands for: its method, URL and body as parsed (so the same JSON spaced otherwise is the same request).
const fingerprintOf = (request: FastifyRequest) =>
  createHash('sha256')
    .update(`${request.method} ${request.url}\n${JSON.stringify(request.body ?? null)}`)
    .digest('hex')

/**
 * Runs `write` once per key, in the write's own transaction (`ctx.db`): the key is claimed first, so a
 * concurrent request with the same key waits on the unique index until the first one ends; committed,
 * it finds the first answer; rolled back (the write was refused), it writes in its turn. A refusal is
 * never kept: a client that mends its request may send it again under the same key.
 */
export async function once(ctx: Context, request: FastifyRequest, key: string, write: () => Promise<WriteOutcome>): Promise<WriteOutcome> {
  const db = ctx.db
  const fingerprint = fingerprintOf(request)
  const mine = { user_id: ctx.user.id, key }
  await db.deleteFrom('idempotency_key').where('user_id', '=', mine.user_id).where('key', '=', key).where('expires_at', '<=', sql<string>`now()`).execute()
  const known = await db.selectFrom('idempotency_key').select('id').where('user_id', '=', mine.user_id).where('key', '=', key).executeTakeFirst()
  if (!known) await assertRoomForKey(db, mine.user_id, ctx.config.IDEMPOTENCY_KEYS_PER_USER)
  const claimed = await db
    .insertInto('idempotency_key')
    .values({ ...mine, fingerprint, status: 0, headers: '{}', answer: '', expires_at: sql<string>`now() + ${`${IDEMPOTENCY_KEY_HOURS} hours`}::interval` })
    .onConflict((oc) => oc.columns(['user_id', 'key']).doNothing())
    .returning('id')
    .executeTakeFirst()
  if (!claimed) return stillPermitted(ctx, await kept(db, mine, fingerprint))
  const outcome = await write()
  await db
    .updateTable('idempotency_key')
    .set({ status: outcome.status, headers: JSON.stringify(outcome.headers), answer: outcome.body })
    .where('id', '=', claimed.id)
    .execute()
  return outcome
}

/**
 * A user keeps at most `limit` keys at a time (each for IDEMPOTENCY_KEY_HOURS): a new one past that is
 * 429, retried once her oldest has expired. Concurrent new keys may pass the count together, by the
 * few that run at once; the table is bounded all the same.
 */
async function assertRoomForKey(db: Kysely<DB>, userId: number, limit: number) {
  const row = await db
    .selectFrom('idempotency_key')
    .select([sql<string>`count(*)`.as('n'), sql<number | null>`ceil(extract(epoch from min(expires_at) - now()))`.as('free_in_s')])
    .where('user_id', '=', userId)
    .where('expires_at', '>', sql<string>`now()`)
    .executeTakeFirstOrThrow()
  if (Number(row.n) < limit) return
  const seconds = Math.max(1, Number(row.free_in_s ?? 1))
  throw new ApiError(
    429,
    'TOO_MANY_IDEMPOTENCY_KEYS',
    `You have ${limit} Idempotency-Keys kept (IDEMPOTENCY_KEYS_PER_USER); the oldest expires in ${seconds} s`,
    { limit },
    { 'retry-after': String(seconds) },
  )
}

/**
 * A kept answer only while its row is still the user's to write: a restricted user whose part has
 * changed since gets the refusal a fresh write would get, not the first answer (the row's location
 * is in the answer of every write that takes keys).
 */
async function stillPermitted(ctx: Context, outcome: WriteOutcome): Promise<WriteOutcome> {
  if (!ctx.user.restricted || outcome.status >= 300) return outcome
  await assertLocationInReach(ctx.db, ctx.user, (JSON.parse(outcome.body) as { location_id?: unknown }).location_id)
  return outcome
}

/** The first answer under the key, or 422 when the key was used for another request (the draft's answer). */
async function kept(db: Kysely<DB>, mine: { user_id: number; key: string }, fingerprint: string): Promise<WriteOutcome> {
  const row = await db
    .selectFrom('idempotency_key')
    .select(['fingerprint', 'status', 'headers', 'answer'])
    .where('user_id', '=', mine.user_id)
    .where('key', '=', mine.key)
    .executeTakeFirstOrThrow()
  if (row.fingerprint !== fingerprint) {
    throw new ApiError(422, 'IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was used for another request: send a new key with a new request')
  }
  return { status: row.status, headers: row.headers as Record<string, string>, body: row.answer }
}

/** Deletes the keys past their time (on a schedule, plugins/jobs.ts). Returns how many went. */
export async function purgeExpiredIdempotencyKeys(db: Kysely<DB>): Promise<number> {
  const purged = await db.deleteFrom('idempotency_key').where('expires_at', '<=', sql<string>`now()`).executeTakeFirst()
  return Number(purged.numDeletedRows)
}
