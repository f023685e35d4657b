// The PostgreSQL pool behind Kysely (lib/data/database.ts): statements run as named prepared statements,
// and Kysely keeps one connection object per pg client instead of building one per query.
import { Kysely, PostgresDialect, sql } from 'kysely'
import pg from 'pg'
import t from 'tap'
import { emptyDatabase, engine } from './helper.js'
import { migrateToLatest } from '../lib/data/migrations.js'
import { preparedStatements } from '../lib/data/database.js'
import { DATA_CHANNEL } from '../lib/data/notified-cache.js'

if (engine !== 'postgres') {
  t.comment('the pg pool wrapper needs a PostgreSQL server (DATABASE_URL)')
  t.pass('skipped on PGlite')
} else {
  t.test("a schema migrates while another schema's tables are created and dropped (pg-boss's queues, other schemas)", async (t) => {
    const churner = new pg.Client({ connectionString: process.env.DATABASE_URL })
    await churner.connect()
    const churn = `churn_${process.pid}`
    await churner.query(`create schema ${churn}`)
    let churning = true
    const churned = (async () => {
      for (let i = 0; churning; i++) {
        await churner.query(`create table ${churn}.t${i} (id serial primary key, a int, b int, c int)`)
        await churner.query(`drop table ${churn}.t${i}`)
      }
    })()
    t.teardown(async () => {
      churning = false
      await churned
      await churner.query(`drop schema ${churn} cascade`)
      await churner.end()
    })
    for (let i = 0; i < 4; i++) {
      const database = await emptyDatabase()
      try {
        t.ok((await migrateToLatest(database)).length > 10, `migration ${i + 1} applied every file`)
      } finally {
        await database.close()
      }
    }
  })

  t.test('one Kysely connection per pg client, and each statement prepared once on it', async (t) => {
    const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 1 })
    let created = 0
    const db = new Kysely<unknown>({
      dialect: new PostgresDialect({ pool: preparedStatements(pool), onCreateConnection: async () => void created++ }),
    })
    t.teardown(() => db.destroy())
    for (let i = 0; i < 20; i++) {
      const { rows } = await sql<{ n: number }>`select ${i}::int4 + 1 as n`.execute(db)
      t.equal(rows[0].n, i + 1)
    }
    // Before the fix, every checkout returned a new wrapper of the same client: 20 connections.
    t.equal(created, 1, 'Kysely built one connection for the one pg client')
    const { rows } = await sql<{ statements: number }>`select count(*)::int4 as statements from pg_prepared_statements
      where statement like ${'%::int4 + 1 as n'}`.execute(db)
    t.equal(rows[0].statements, 1, 'the repeated statement was prepared once, by name')
  })

  t.test('a client comes back as the same wrapper, and one released with an error is replaced by a new one', async (t) => {
    const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 1 })
    const wrapped = preparedStatements(pool)
    t.teardown(() => wrapped.end())
    const first = await wrapped.connect()
    first.release()
    const again = await wrapped.connect()
    t.equal(again, first, 'the same client comes back as the same object')
    again.release(new Error('broken'))
    const next = await wrapped.connect()
    t.not(next, first, 'a destroyed client is not handed out again')
    const { rows } = await next.query('select $1::int4 as n', [7])
    t.equal(rows[0].n, 7)
    next.release()
  })

  t.test('concurrent write confirmations take turns on their connection (pg refuses overlapping queries from 9)', async (t) => {
    const warnings: string[] = []
    const onWarning = (warning: Error) => warnings.push(warning.message)
    process.on('warning', onWarning)
    t.teardown(() => process.off('warning', onWarning))
    const database = await emptyDatabase()
    t.teardown(() => database.close())
    const stopListening = await database.listen(
      DATA_CHANNEL,
      () => {},
      () => {},
    )
    t.teardown(() => stopListening())
    // Before the fix, each confirmation asked the one connection at once: pg's DeprecationWarning.
    const answers = await Promise.all(Array.from({ length: 8 }, () => database.confirmHeard(DATA_CHANNEL, 2000)))
    t.same(answers, Array(8).fill([]), 'every listener confirmed each')
    await new Promise((resolve) => setImmediate(resolve))
    t.same(
      warnings.filter((w) => w.includes('already executing a query')),
      [],
      'no query was asked of a busy client',
    )
  })
}
