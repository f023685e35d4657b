import { sql } from 'kysely'
import type { Database } from './database.js'

/**
 * `work`, one process at a time across every server on this PostgreSQL database (several processes,
 * several machines): a session lock on `key`, held on a connection set aside while `work` runs on the
 * pool's others. The embedded database belongs to one process, which needs no turns.
 */
export async function inTurn<T>(database: Database, key: number, work: () => Promise<T>): Promise<T> {
  if (database.engine !== 'postgres') return work()
  return database.db.connection().execute(async (held) => {
    await sql`select pg_advisory_lock(${key})`.execute(held)
    try {
      return await work()
    } finally {
      await sql`select pg_advisory_unlock(${key})`.execute(held)
    }
  })
}
