// The embedded database on its own thread, reached through its socket (lib/data/pglite-thread.ts): the
// server's event loop is free while a statement runs, psql connects to a running server's database,
// and connections sharing PGlite's one session take turns without seeing into each other's transactions.
import { execFile, spawn } from 'node:child_process'
import { createConnection } from 'node:net'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { sql } from 'kysely'
import pg from 'pg'
import copyStreams from 'pg-copy-streams'
import t from 'tap'
import { createDatabase, type Database } from '../lib/data/database.js'
import { MessageReader, NotificationScanner } from '../lib/data/pg-wire.js'
import { SOCKET_PORT } from '../lib/data/pglite-thread.js'
import { ensureTemplate } from '../lib/data/pglite-template.js'
import { admin, build, engine, tempDir } from './helper.js'
import { startServer, until200 } from './processes.js'

const run = promisify(execFile)
// A statement of a few seconds on either engine.
const LONG_SERIES = 10_000_000

t.test('a long statement holds neither the event loop nor /health', async (t) => {
  const { app, db } = await build(t)
  // Seconds of work in the database (pg_sleep does not sleep in PGlite).
  const began = performance.now()
  const working = sql`select sum(i) from generate_series(1, ${LONG_SERIES}) i`.execute(db).then(() => performance.now() - began)
  // A timer of 100 ms, and /health after it: on the loop the statement held, both came after it ended.
  const timer = await new Promise<number>((resolve) => setTimeout(() => resolve(performance.now() - began), 100))
  const health = await app.inject({ method: 'GET', url: '/health' })
  const answered = performance.now() - began
  const statement = await working
  t.ok(statement > 400, `the statement ran ${statement.toFixed(0)} ms`)
  t.ok(timer < statement / 4, `a 100 ms timer fired at ${timer.toFixed(0)} ms`)
  t.equal(health.statusCode, 200)
  t.equal(health.json().database, 'ok')
  t.ok(answered < statement / 2, `/health answered at ${answered.toFixed(0)} ms`)
})

t.test(
  'once a statement has answered, the session is free: busy() does not report the answered work',
  { skip: engine !== 'pglite' && 'the embedded database only' },
  async (t) => {
    // A database without an app: nothing else (a job queue's poll, a listener) takes the session meanwhile.
    const database = await createDatabase({ loadDataDir: await ensureTemplate() })
    t.teardown(() => database.close())
    let seenBusy = 0
    for (let i = 0; i < 300; i++) {
      await sql`select ${i}::int as n`.execute(database.db)
      if (database.embedded!.busy()) seenBusy++
    }
    t.equal(seenBusy, 0, 'free after each of 300 answers')
  },
)

t.test('psql connects to a running server through the socket in DATA_DIR', { skip: engine !== 'pglite' && 'the embedded database only' }, async (t) => {
  const dataDir = tempDir(t)
  const server = await startServer(t, { DATA_DIR: dataDir, DATABASE_URL: '' })
  await until200(server, '/health/ready')
  const { stdout } = await run('psql', ['-h', dataDir, '-X', '-A', '-t', '-c', 'select username from auth_user where is_superuser order by id'])
  t.same(stdout.trim().split('\n'), ['admin'])
  // A statement psql runs is the server's database, not a copy: the API sees it at once.
  await run('psql', ['-h', dataDir, '-X', '-c', `insert into campaign_type (name) values ('from psql')`])
  const types = await fetch(`${server.url}/api/v1/campaign_type/?name=from%20psql`, { headers: server.admin() })
  t.equal(((await types.json()) as { meta: { total_count: number } }).meta.total_count, 1)
  // While psql holds a statement, the server answers.
  const psql = spawn('psql', ['-h', dataDir, '-X', '-c', `select sum(i) from generate_series(1, ${LONG_SERIES}) i`], { stdio: 'ignore' })
  const ended = new Promise((resolve) => psql.once('exit', resolve))
  await new Promise((resolve) => setTimeout(resolve, 300))
  const started = performance.now()
  const health = await fetch(`${server.url}/health`)
  const waited = performance.now() - started
  await ended
  const statement = performance.now() - started
  t.equal(health.status, 200)
  t.ok(waited < statement / 4, `/health answered in ${waited.toFixed(0)} ms while psql's statement ran on for ${statement.toFixed(0)} ms`)
})

t.test(
  'connections take turns on the one session: a transaction is seen whole or not at all',
  { skip: engine !== 'pglite' && 'the embedded database only' },
  async (t) => {
    const database = await createDatabase({ loadDataDir: await ensureTemplate() })
    t.teardown(() => database.close())
    const url = database.embedded!.url()
    const writer = new pg.Client({ connectionString: url })
    const reader = new pg.Client({ connectionString: url })
    await writer.connect()
    await reader.connect()
    t.teardown(() => Promise.all([writer.end(), reader.end()]))
    await writer.query('create table turn (n int)')
    await writer.query('begin')
    await writer.query('insert into turn values (1)')
    let read: number | undefined
    const reading = reader.query('select count(*)::int as n from turn').then((r) => (read = r.rows[0].n))
    await new Promise((resolve) => setTimeout(resolve, 200))
    t.equal(read, undefined, 'a read waits while another connection is inside its transaction')
    await writer.query('insert into turn values (2)')
    await writer.query('commit')
    await reading
    t.equal(read, 2, 'and sees the transaction whole once committed')

    // COPY FROM STDIN through the socket, and its error told as PostgreSQL tells it.
    const stream = writer.query(copyStreams.from('copy turn (n) from stdin'))
    stream.end('3\nfour\n')
    const failure = await new Promise<Error & { code?: string }>((resolve) => stream.on('error', resolve))
    t.equal(failure.code, '22P02', 'a bad row is refused with its SQLSTATE')
    t.equal((await writer.query('select count(*)::int as n from turn')).rows[0].n, 2, 'and nothing of the COPY is written')

    // A client gone inside its transaction: nothing of it stays, and the others go on.
    const leaver = new pg.Client({ connectionString: url })
    await leaver.connect()
    leaver.on('error', () => {})
    await leaver.query('begin')
    await leaver.query('insert into turn values (99)')
    const after = reader.query('select count(*)::int as n from turn')
    ;(leaver as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy()
    t.equal((await after).rows[0].n, 2)
  },
)

t.test('requests wait their turn behind a long transaction, however long', { skip: engine !== 'pglite' && 'the embedded database only' }, async (t) => {
  const database = await createDatabase({ loadDataDir: await ensureTemplate(), poolSize: 1 })
  t.teardown(() => database.close())
  const holder = new pg.Client({ connectionString: database.embedded!.url() })
  await holder.connect()
  t.teardown(() => holder.end())
  await holder.query('begin')
  // The pool's one connection waits for the session; the second query waits for that connection.
  const first = sql`select 1 as n`.execute(database.db)
  const second = sql`select 2 as n`.execute(database.db)
  await new Promise((resolve) => setTimeout(resolve, 6_000))
  await holder.query('commit')
  t.same([(await first).rows, (await second).rows], [[{ n: 1 }], [{ n: 2 }]], 'both answered once the transaction ended, 6 s later')
})

t.test(
  'a client that breaks the protocol or leaves mid-exchange harms nobody else',
  { skip: engine !== 'pglite' && 'the embedded database only' },
  async (t) => {
    const database = await createDatabase({ loadDataDir: await ensureTemplate() })
    t.teardown(() => database.close())
    const path = join(database.embedded!.socketDir, `.s.PGSQL.${SOCKET_PORT}`)
    const raw = async (bytes: Buffer) => {
      const socket = createConnection(path)
      socket.on('error', () => {})
      await new Promise((resolve) => socket.once('connect', resolve))
      socket.write(bytes)
      return socket
    }
    const message = (type: string, body: Buffer) => {
      const out = Buffer.concat([Buffer.from(type), Buffer.alloc(4), body])
      out.writeInt32BE(body.length + 4, 1)
      return out
    }
    const startup = Buffer.alloc(8)
    startup.writeInt32BE(8, 0)
    startup.writeInt32BE(196608, 4)
    // A start-up packet that says it is 0 bytes long: that connection is closed, the thread lives.
    const liar = await raw(Buffer.from([0, 0, 0, 0, 0, 0, 0, 0]))
    await new Promise((resolve) => liar.once('close', resolve))
    t.same((await sql<{ n: number }>`select 1 as n`.execute(database.db)).rows, [{ n: 1 }], 'the database answers after a packet that is no protocol')

    // Parse, Bind and Execute of an insert, and gone before its Sync: the insert is not committed by the next one.
    await sql`create table mid (n int)`.execute(database.db)
    const leaver = await raw(
      Buffer.concat([
        startup,
        message('P', Buffer.from('\0insert into mid values (1)\0\0\0')),
        message('B', Buffer.from('\0\0\0\0\0\0\0\0')),
        message('E', Buffer.from('\0\0\0\0\0')),
      ]),
    )
    await new Promise((resolve) => setTimeout(resolve, 300))
    leaver.destroy()
    await new Promise((resolve) => setTimeout(resolve, 300))
    t.same(
      (await sql<{ n: number }>`select count(*)::int as n from mid`.execute(database.db)).rows,
      [{ n: 0 }],
      'nothing of the unfinished exchange is committed',
    )
  },
)

t.test('notifications reach the process whichever connection commits them', { skip: engine !== 'pglite' && 'the embedded database only' }, async (t) => {
  const database = await createDatabase({ loadDataDir: await ensureTemplate() })
  t.teardown(() => database.close())
  const heard: string[] = []
  await database.listen(
    'bench',
    (payload) => heard.push(payload),
    () => {},
  )
  const client = new pg.Client({ connectionString: database.embedded!.url() })
  await client.connect()
  t.teardown(() => client.end())
  await client.query('begin')
  await client.query(`notify bench, 'one'`)
  t.same(heard, [], 'not before the commit')
  await client.query('commit')
  await client.query(`select pg_notify('bench', 'two')`)
  t.same(await database.confirmHeard('bench', 1000), [])
  t.same(heard, ['one', 'two'])
})

/** The longest stretch the embedded session was held (by anyone) while `work` ran, and how long it ran. */
async function sessionHeldDuring<T>(database: Database, work: () => Promise<T>) {
  let longest = 0
  let heldSince: number | undefined
  let working = true
  const watching = (async () => {
    while (working) {
      const now = performance.now()
      if (database.embedded!.busy()) heldSince ??= now
      else heldSince = undefined
      if (heldSince !== undefined) longest = Math.max(longest, now - heldSince)
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
  })()
  const started = performance.now()
  const result = await work()
  const took = performance.now() - started
  working = false
  await watching
  return { result, took, longest }
}

t.test("an upload's file is read before its transaction opens", { skip: engine !== 'pglite' && 'the embedded database only' }, async (t) => {
  const { app, database } = await build(t)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const address = app.server.address() as { port: number }
  // Seconds of reading in the parse thread: 12 MB of a campaign file.
  const lines = ['geocode,campaign,missed,vaccinated']
  for (let i = 0; lines.length < 400_000; i++) lines.push(`LOC-${i % 20},CAMP-${i % 3},${(i * 7) % 1000},${(i * 3) % 1000}`)
  const form = new FormData()
  form.set('file_type', 'campaign')
  form.set('docfile', new Blob([lines.join('\n')]), 'big.csv')
  const upload = await sessionHeldDuring(database, () =>
    fetch(`http://127.0.0.1:${address.port}/api/v1/document/`, { method: 'POST', headers: admin, body: form }),
  )
  t.equal(upload.result.status, 201)
  t.ok(upload.took > 500, `the upload took ${upload.took.toFixed(0)} ms`)
  t.ok(upload.longest < upload.took / 3, `the session was held ${upload.longest.toFixed(0)} ms at most`)

  // Its transform reads the file again, in the parse thread, before its own transaction opens.
  const { id } = (await upload.result.json()) as { id: number }
  const transform = await sessionHeldDuring(database, () =>
    fetch(`http://127.0.0.1:${address.port}/api/v1/transform_upload/?document_id=${id}`, { headers: admin }),
  )
  t.equal(transform.result.status, 200)
  const { timings_ms } = ((await transform.result.json()) as { objects: Array<{ ingest_stats: { timings_ms: Record<string, number> } }> }).objects[0]
    .ingest_stats
  t.ok(
    transform.longest < transform.took - timings_ms.transform / 2,
    `the transform took ${transform.took.toFixed(0)} ms and held the session ${transform.longest.toFixed(0)} ms at most`,
  )
})

t.test(
  'PostgreSQL: a GET does not wait for a connection behind long writes',
  { skip: engine !== 'postgres' && 'the embedded database is one session' },
  async (t) => {
    const { app, db } = await build(t)
    // The key is known first (its lookup is cached), as on a server that has been answering.
    t.equal((await app.inject({ method: 'GET', url: '/api/v1/campaign/', headers: admin })).statusCode, 200)
    // Every connection of the main pool held for 8 s, as transforms and recomputes hold theirs: a read
    // that waited behind them would take over 7 s, one that did not under 4 s even on a loaded machine.
    const holding = Array.from({ length: 5 }, () => db.transaction().execute((trx) => sql`select pg_sleep(8)`.execute(trx)))
    await new Promise((resolve) => setTimeout(resolve, 200))
    const started = performance.now()
    const read = await app.inject({ method: 'GET', url: '/api/v1/campaign/', headers: { ...admin, 'cache-control': 'no-cache' } })
    const waited = performance.now() - started
    await Promise.all(holding)
    t.equal(read.statusCode, 200)
    t.ok(waited < 4000, `the list was read in ${waited.toFixed(0)} ms while every other connection was held`)
  },
)

t.test('the protocol is read across any cut of the bytes', async (t) => {
  const startup = Buffer.from([0, 0, 0, 8, 0, 3, 0, 0])
  const query = Buffer.concat([Buffer.from('Q'), Buffer.from([0, 0, 0, 13]), Buffer.from('select 1\0')])
  const bytes = Buffer.concat([startup, query, query])
  const reader = new MessageReader()
  const messages = [...bytes].flatMap((byte) => reader.push(Buffer.from([byte])))
  t.same(
    messages.map((m) => m.type),
    [0, 81, 81],
  )
  const notification = Buffer.concat([Buffer.from('A'), Buffer.from([0, 0, 0, 15, 0, 0, 0, 1]), Buffer.from('ch\0hi!\0')])
  const other = Buffer.concat([Buffer.from('C'), Buffer.from([0, 0, 0, 11]), Buffer.from('NOTIFY\0')])
  const heard: string[] = []
  const scanner = new NotificationScanner((channel, payload) => heard.push(`${channel}:${payload}`))
  for (const byte of Buffer.concat([other, notification, other, notification])) scanner.feed(Buffer.from([byte]))
  t.same(heard, ['ch:hi!', 'ch:hi!'])
})
