// First start on an empty database: create the superuser `admin` and one key (resource-api §5).
import { chmod, mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { sql, type Kysely } from 'kysely'
import type { DB } from '../../schemas/index.js'
import { createApiKey, createUser } from './auth.js'
import type { Config } from '../core/config.js'

/** Returns the new key when admin was created now, else undefined (nothing is rewritten). */
export async function ensureAdmin(db: Kysely<DB>, config: Config, print: (line: string) => void): Promise<string | undefined> {
  const key = await db.transaction().execute(async (trx) => {
    // Serialise concurrent first starts.
    await sql`select pg_advisory_xact_lock(724051)`.execute(trx)
    const any = await trx.selectFrom('auth_user').select('id').limit(1).executeTakeFirst()
    if (any) return undefined
    const id = await createUser(trx, { username: 'admin', is_superuser: true })
    return createApiKey(trx, id, config.ADMIN_API_KEY)
  })
  if (!key) return undefined
  if (!config.ADMIN_API_KEY) {
    await mkdir(config.DATA_DIR, { recursive: true })
    const file = join(config.DATA_DIR, 'admin-api-key')
    await writeFile(file, `admin:${key}\n`, { mode: 0o600 })
    await chmod(file, 0o600)
    print(`admin API key: admin:${key} (also in ${file})`)
  }
  return key
}
