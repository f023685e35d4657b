// First start on an empty database: create the superuser `admin` with one key (resource-api §5) and a
// first password for the web sign-in (to be changed: `npm run cli -- set-password admin`).
import { randomBytes } from 'node:crypto'
import { chmod, mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { sql, type Kysely } from 'kysely'
import type { DB } from '../../schemas/index.js'
import { createApiKey, createUser } from './auth.js'
import { hashPassword } from './passwords.js'
import type { Config } from '../core/config.js'
import { lockKey } from './lock-keys.js'

/** Writes `text` to DATA_DIR/`name`, readable by this user only. */
async function secretFile(config: Config, name: string, text: string): Promise<string> {
  await mkdir(config.DATA_DIR, { recursive: true })
  const file = join(config.DATA_DIR, name)
  await writeFile(file, `${text}\n`, { mode: 0o600 })
  await chmod(file, 0o600)
  return file
}

/** Returns the new key when admin was created now, else undefined (nothing is rewritten). */
export async function ensureAdmin(db: Kysely<DB>, config: Config, print: (line: string) => void): Promise<string | undefined> {
  const password = randomBytes(12).toString('base64url')
  const key = await db.transaction().execute(async (trx) => {
    // Serialise concurrent first starts.
    await sql`select pg_advisory_xact_lock(${lockKey('first start')})`.execute(trx)
    const any = await trx.selectFrom('auth_user').select('id').limit(1).executeTakeFirst()
    if (any) return undefined
    const id = await createUser(trx, { username: 'admin', is_superuser: true })
    await trx
      .updateTable('auth_user')
      .set({ password_hash: await hashPassword(password) })
      .where('id', '=', id)
      .execute()
    return createApiKey(trx, id, config.ADMIN_API_KEY)
  })
  if (!key) return undefined
  if (!config.ADMIN_API_KEY) {
    const file = await secretFile(config, 'admin-api-key', `admin:${key}`)
    print(`admin API key: admin:${key} (also in ${file})`)
  }
  const file = await secretFile(config, 'admin-password', password)
  print(`admin password for the web app: ${password} (also in ${file}; change it: npm run cli -- set-password admin)`)
  return key
}
