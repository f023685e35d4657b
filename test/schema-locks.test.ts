// Advisory locks belong to the whole PostgreSQL database: the app keys each of its locks by its schema
// too (lib/data/lock-keys.ts), so two deployments, or two test processes, in two schemas of one
// database do not wait on each other. In one schema the locks hold as before. PostgreSQL only: an
// embedded database is one process's.
import { type Kysely, sql } from 'kysely'
import t from 'tap'
import { lockKey } from '../lib/data/lock-keys.js'
import { migrateToLatest } from '../lib/data/migrations.js'
import { lockCampaigns } from '../lib/engine/campaign-locks.js'
import type { DB } from '../schemas/index.js'
import { emptyDatabase, engine, heldOpen } from './helper.js'

const skip = engine !== 'postgres' && 'PostgreSQL only: an embedded database belongs to one process'

/** Whether `lock` is taken in a transaction of `db` that gives up after 300 ms: 'taken', or the error's code. */
async function tryLock(db: Kysely<DB>, lock: (trx: Kysely<DB>) => Promise<unknown>): Promise<string> {
  return db
    .transaction()
    .execute(async (trx) => {
      await sql`set local lock_timeout = '300ms'`.execute(trx)
      await lock(trx)
      return 'taken'
    })
    .catch((error: { code?: string }) => `refused (${error.code})`)
}

t.test('two schemas of one database take the same locks at once; one schema waits', { skip }, async (t) => {
  const [a, b] = [await emptyDatabase(), await emptyDatabase()]
  t.teardown(async () => {
    await a.close()
    await b.close()
  })
  for (const database of [a, b]) await migrateToLatest(database)
  const outlierSummaries = (trx: Kysely<DB>) => sql`select pg_advisory_xact_lock(outlier_history_lock_key())`.execute(trx)
  const locks: Array<[string, (trx: Kysely<DB>) => Promise<unknown>]> = [
    ['campaign 1', (trx) => lockCampaigns(trx, [1])],
    ["the outlier summaries' lock", outlierSummaries],
    ['document 7', (trx) => sql`select pg_advisory_xact_lock(${lockKey('document', 7)})`.execute(trx)],
  ]
  for (const [what, lock] of locks) {
    const held = await heldOpen(a.db, lock)
    t.equal(await tryLock(b.db, lock), 'taken', `${what}: held in one schema, taken in another`)
    t.equal(await tryLock(a.db, lock), 'refused (55P03)', `${what}: in the same schema, waited for`)
    await held.commit()
  }
  const keys = await sql<{ a: string; b: string }>`select ${lockKey('campaign', 1)} as a, ${lockKey('document', 1)} as b`.execute(a.db)
  t.not(keys.rows[0].a, keys.rows[0].b, "a campaign's key is not a document's of the same id")
})
