import { connect } from 'node:net'
import t from 'tap'
import pg from 'pg'
import { sql } from 'kysely'
import { buildApp } from '../app.js'
import { createDatabase } from '../lib/data/database.js'
import { migrateToLatest } from '../lib/data/migrations.js'
import { createApiKey, createUser } from '../lib/data/auth.js'
import { tempDir } from './helper.js'

async function ownDatabase() {
  const url = process.env.DATABASE_URL
  if (!url) return { database: await createDatabase({}), drop: async () => {} }
  const schema = `graceful_${process.pid}`
  const admin = new pg.Client({ connectionString: url })
  await admin.connect()
  await admin.query(`create schema ${schema}`)
  return {
    database: await createDatabase({ url, searchPath: schema, poolSize: 3 }),
    drop: async () => {
      await admin.query(`drop schema if exists ${schema}_jobs cascade`)
      await admin.query(`drop schema ${schema} cascade`)
      await admin.end()
    },
  }
}

/** An app (not listening yet) on a migrated database of its own, with `admin`; dropped after `t`. */
async function appOnOwnDatabase(t: { teardown(fn: () => unknown): void }) {
  const { database, drop } = await ownDatabase()
  t.teardown(async () => {
    await database.close()
    await drop()
  })
  await migrateToLatest(database)
  await createApiKey(database.db, await createUser(database.db, { username: 'admin', is_superuser: true }), 'c'.repeat(40))
  return buildApp({ database, logger: false, config: { DATA_DIR: tempDir(t, 'rhizome-graceful-') } })
}

t.test('close() lets an in-flight request finish before the database closes', async (t) => {
  const app = await appOnOwnDatabase(t)
  const events: string[] = []
  let answeredAt = 0
  // The slow request's arrival: close() is called while it runs, not before it has arrived (a loaded
  // machine took more than 50 ms to route it, and it was refused as the server was closing).
  let arrived!: () => void
  const running = new Promise<void>((resolve) => (arrived = resolve))
  app.addHook('preHandler', async (request) => {
    if (request.url.includes('transform_upload')) arrived()
  })
  app.addHook('onResponse', async (request) => {
    if (request.url.includes('transform_upload')) {
      events.push('response sent')
      answeredAt = Date.now()
    }
  })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}/api/v1`
  const headers = { authorization: `ApiKey admin:${'c'.repeat(40)}`, 'content-type': 'application/json' }
  // A request that takes a while: 2,000 rows through transform_upload (many statements in a row).
  const csv = Buffer.from(['campaign,geocode,n', ...Array.from({ length: 2000 }, (_, i) => `C,G${i},${i}`)].join('\n'))
  const doc = await fetch(`${base}/document/`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ docfile: csv.toString('base64'), doc_title: 'slow.csv', file_type: 'campaign' }),
  })
  const { id } = (await doc.json()) as { id: number }
  const slow = fetch(`${base}/transform_upload/?document_id=${id}`, { headers }).then(async (res) => ({ status: res.status, text: await res.text() }))
  await running
  await new Promise((resolve) => setTimeout(resolve, 50))
  // close() resolves once the onClose hooks (where the database plugin closes its pool) have run.
  await app.close()
  events.push('closed')
  const finished = await slow
  t.same(events, ['response sent', 'closed'], 'close() waited for the request')
  // Regression: the client's keep-alive connection, idle only after close() began, held close() open
  // until its 60 s timeout.
  t.ok(Date.now() - answeredAt < 10_000, `close() returned ${Date.now() - answeredAt} ms after the answer`)
  t.equal(finished.status, 200, 'the request running when close() was called completed')
  t.match(finished.text, /"created":2000/)
})

t.test('close() also waits for a handler whose client has gone away', async (t) => {
  const app = await appOnOwnDatabase(t)
  const events: string[] = []
  // A handler that is still working (and will need the database) when its client leaves.
  app.get('/slow-probe', async () => {
    await new Promise((resolve) => setTimeout(resolve, 200))
    await sql`select 1`.execute(app.db.db)
    events.push('handler done')
    return { ok: true }
  })
  await app.listen({ port: 0, host: '127.0.0.1' })
  // The client sends its request and hangs up (what a load generator does when its run ends).
  const socket = connect((app.server.address() as { port: number }).port, '127.0.0.1')
  await new Promise((resolve) => socket.once('connect', resolve))
  socket.write('GET /slow-probe HTTP/1.1\r\nhost: localhost\r\n\r\n')
  await new Promise((resolve) => setTimeout(resolve, 50))
  socket.destroy()
  await new Promise((resolve) => setTimeout(resolve, 20))
  await app.close()
  events.push('closed')
  t.same(events, ['handler done', 'closed'], 'the database stayed open until the handler finished')
})
