// Fault injection on PostgreSQL (SECURITY.md): the server connection killed in the middle of
// transform_upload, and the database going away and coming back under a running server.
import { createServer, connect, type Server, type Socket } from 'node:net'
import pg from 'pg'
import t from 'tap'
import { sql } from 'kysely'
import { build, engine, eventually, rowCounts } from './helper.js'
import { client } from './api.js'
import { atHalfWay, halfWayUpload } from './fixtures.js'
import { buildApp } from '../app.js'
import { createDatabase } from '../lib/data/database.js'

if (engine !== 'postgres') {
  t.comment('fault injection needs a PostgreSQL server (DATABASE_URL); PGlite runs in this process')
  t.pass('skipped on PGlite')
} else {
  const url = process.env.DATABASE_URL!

  t.test('the connection killed in the middle of transform_upload: a clean failure, nothing written, the server goes on', async (t) => {
    const { app, db } = await build(t)
    const api = client(app)
    const doc = await halfWayUpload(api.post)
    const before = await rowCounts(db)
    // Half-way through the rows the transaction waits, so a second connection can kill it there.
    await atHalfWay(t, db, 'pause_half_way', 'perform pg_sleep(30)')
    const killer = new pg.Client({ connectionString: url })
    await killer.connect()
    t.teardown(() => killer.end())
    const transform = api.get(`/transform_upload/?document_id=${doc}`)
    const killed = await eventually(
      async () =>
        (
          await killer.query(`select pg_terminate_backend(pid) as done from pg_stat_activity
        where wait_event = 'PgSleep' and query like '%source_submission%' and datname = current_database() and pid <> pg_backend_pid()`)
        ).rows.length,
      (n) => n > 0,
      10_000,
    )
    t.equal(killed, 1, 'the backend running the transform was terminated mid-way')
    const failed = await transform
    t.equal(failed.status, 503)
    t.same(failed.body, {
      statusCode: 503,
      error: 'Service Unavailable',
      code: 'DATABASE_UNAVAILABLE',
      message: 'Database unavailable',
      request_id: failed.headers['x-request-id'],
    })
    t.same(await rowCounts(db), before, 'no partial rows remain')
    await sql.raw('drop trigger pause_half_way on source_submission').execute(db)
    t.equal((await api.get('/campaign/')).status, 200, 'the server keeps answering')
    const again = await api.get(`/transform_upload/?document_id=${doc}`)
    t.equal(again.status, 200, 'and the same document then goes through')
    t.match(again.body.objects[0].ingest_stats, { submissions: { created: 3000 } })
  })

  /** A TCP relay to the PostgreSQL server that can be cut and restored: the database "goes away". */
  async function relay(target: URL) {
    const sockets = new Set<Socket>()
    let server: Server | undefined
    let port = 0
    const open = () =>
      new Promise<void>((resolve) => {
        server = createServer((inbound) => {
          const outbound = connect(Number(target.port || 5432), target.hostname)
          for (const s of [inbound, outbound]) {
            sockets.add(s)
            s.on('close', () => sockets.delete(s))
            s.on('error', () => s.destroy())
          }
          inbound.pipe(outbound).pipe(inbound)
        })
        server.listen(port, '127.0.0.1', () => {
          port = (server!.address() as { port: number }).port
          resolve()
        })
      })
    const cut = () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy()
        server!.close(() => resolve())
      })
    await open()
    return { port: () => port, cut, restore: open }
  }

  t.test('/health: 503 while the database is unreachable, 200 once it is back, without a restart', async (t) => {
    const { database } = await build(t)
    const target = new URL(url)
    const link = await relay(target)
    const proxied = new URL(url)
    proxied.port = String(link.port())
    proxied.hostname = '127.0.0.1'
    const searchPath = (await sql<{ s: string }>`select current_schema() as s`.execute(database.db)).rows[0].s
    const viaRelay = await createDatabase({ url: proxied.toString(), searchPath, poolSize: 3 })
    const app = await buildApp({ logger: false, database: viaRelay })
    t.teardown(async () => {
      await app.close()
      await viaRelay.close()
      await link.cut()
    })
    const api = client(app)
    t.same((await api.get('/health', {})).body, { status: 'ok', database: 'ok', model: 'ok' })
    t.equal((await api.get('/campaign/')).status, 200)

    await link.cut()
    const down = await api.get('/health', {})
    t.equal(down.status, 503)
    t.same(down.body, { status: 'down', database: 'down', model: 'ok' })
    const read = await api.get('/campaign/')
    t.equal(read.status, 503, 'API requests fail cleanly meanwhile')
    t.match(read.body, { code: 'DATABASE_UNAVAILABLE' })

    await link.restore()
    const back = await eventually(
      () => api.get('/health', {}),
      (r) => r.status === 200,
      10_000,
    )
    t.equal(back.status, 200, 'healthy again, same process')
    t.equal((await api.get('/campaign/')).status, 200, 'and serving')
  })
}
