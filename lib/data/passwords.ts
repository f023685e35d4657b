// Passwords, hashed with scrypt (node:crypto) and a salt of their own: `scrypt$N$r$p$salt$hash`, so
// the cost can rise later and old hashes still verify.
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto'
import { promisify } from 'node:util'
import type { Kysely } from 'kysely'
import type { DB } from '../../schemas/index.js'

const scryptAsync = promisify(scrypt) as (password: string, salt: Buffer, length: number, options: ScryptOptions) => Promise<Buffer>
/** N = 2^15 (140 ms a hash on the 2-core development machine, 32 MiB of memory), r = 8, p = 1: OWASP's scrypt minimum is N = 2^17 at 128 MiB for p = 1; see SECURITY.md. */
const COST = { N: 2 ** 15, r: 8, p: 1 }
const LENGTH = 32
/** Long enough to be a passphrase, short enough that hashing it is not a way to make the server work. */
export const PASSWORD_MIN = 10
export const PASSWORD_MAX = 1024

export class PasswordRefused extends Error {
  override name = 'PasswordRefused'
}

/** The hash of a new password (PasswordRefused when it is too short or too long). */
export async function hashPassword(password: string): Promise<string> {
  if (password.length < PASSWORD_MIN) throw new PasswordRefused(`a password has at least ${PASSWORD_MIN} characters`)
  if (password.length > PASSWORD_MAX) throw new PasswordRefused(`a password has at most ${PASSWORD_MAX} characters`)
  const salt = randomBytes(16)
  const hash = await scryptAsync(password, salt, LENGTH, { ...COST, maxmem: 64 * 1024 * 1024 })
  return ['scrypt', COST.N, COST.r, COST.p, salt.toString('base64'), hash.toString('base64')].join('$')
}

/** The hash of a password nobody knows: a user without a password costs a check as long as one with. */
const NOBODY = 'scrypt$32768$8$1$dODt1pOlsW+7eDVzVbg7uw==$UZAy316RLBJv5jPr5CRnB/N4OXHFQ63BhsAfQgxmhXg='

/**
 * Whether `password` is the one `stored` was made from. A missing user or password takes as long as a
 * wrong password (the answer's time does not tell which usernames exist).
 */
export async function verifyPassword(password: string, stored: string | null | undefined): Promise<boolean> {
  const parts = (stored ?? NOBODY).split('$')
  if (parts.length !== 6 || parts[0] !== 'scrypt' || password.length > PASSWORD_MAX) return false
  const [N, r, p] = parts.slice(1, 4).map(Number)
  const expected = Buffer.from(parts[5], 'base64')
  const actual = await scryptAsync(password, Buffer.from(parts[4], 'base64'), expected.length, { N, r, p, maxmem: 256 * 1024 * 1024 })
  return stored !== null && stored !== undefined && timingSafeEqual(actual, expected)
}

/** Sets the password of `username` (its sessions end: sql/013); false when there is no such user. */
export async function setPassword(db: Kysely<DB>, username: string, password: string): Promise<boolean> {
  const password_hash = await hashPassword(password)
  const updated = await db.updateTable('auth_user').set({ password_hash }).where('username', '=', username).executeTakeFirst()
  return Number(updated.numUpdatedRows) > 0
}
