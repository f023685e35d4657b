import { sql } from 'kysely'
import type { Database } from './database.js'
import { lockKey } from './lock-keys.js'

/**
 * `work`, one process at a time across every server on this PostgreSQL database (several processes,
 * several machines): a session lock on `kind` in this schema, held on a connection set aside while `work` runs on the
 * pool's others. The embedded database belongs to one process, which needs no turns.
 */
export async function inTurn<T>(database: Database, kind: string, work: () => Promise<T>): Promise<T> {
  if (database.engine !== 'postgres') return work()
  return database.db.connection().execute(async (held) => {
    // The key is computed once: the unlock must name the same key, whatever the search path is then.
    const { rows } = await sql<{ key: string }>`select ${lockKey(kind)} as key`.execute(held)
    const key = rows[0].key
    await sql`select pg_advisory_lock(${key}::bigint)`.execute(held)
    try {
      return await work()
    } finally {
      await sql`select pg_advisory_unlock(${key}::bigint)`.execute(held)
    }
  })
}
