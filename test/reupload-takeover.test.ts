// A re-upload writes only what it changes (ingestion §5.5, D26; lib/ingest/claims.ts): a key a newer document
// repeats at its value is held by the newer document without a write, and every later step behaves as if
// the newer document had written it: a refresh of the older one that no longer makes the key, a revert of
// either, a refresh of a document whose time lies between them, data entry, the history. On both engines.
import { randomInt } from 'node:crypto'
import { sql } from 'kysely'
import t, { type Test } from 'tap'
import { client } from './api.js'
import { build, engine, eventually, type Harness, heldOpen } from './helper.js'
import { created, upload, world } from './world.js'

async function setup(t: Test) {
  const { app, db } = await build(t)
  const api = client(app)
  const w = await world(api)
  // A campaign and codes of these tests' own (the world's campaign holds values already): K → the
  // campaign, p → a1, q → b1.
  const type = await created(api.post('/campaign_type/', { name: 'Takeover' }))
  // K's id is one no other test file uses: the campaign locks of the concurrency tests below are the
  // database's, and the PostgreSQL suite's files share one database (a schema each).
  await sql`select setval(pg_get_serial_sequence('campaign', 'id'), ${1_000_000 + randomInt(1_000_000_000)})`.execute(db)
  const K = await created(api.post('/campaign/', { name: 'K', campaign_type_id: type, start_date: '2016-03-01', end_date: '2016-03-05' }))
  const maps: Record<string, number> = {}
  for (const [content_type, code, master] of [
    ['campaign', 'K', K],
    ['location', 'p', w.a1],
    ['location', 'q', w.b1],
  ] as const)
    maps[code] = await created(api.post('/source_object_map/', { content_type, source_object_code: code, master_object_id: master }))
  const send = async (title: string, rows: string) => {
    const { id, run } = await upload(api, title, 'campaign', `campaign,geocode,n\n${rows}`)
    if (run.status !== 200) throw new Error(run.text)
    return { id, stats: run.body.objects[0].ingest_stats }
  }
  /** A document uploaded, not yet transformed. */
  const uploaded = (title: string, rows: string) =>
    created(api.post('/document/', { docfile: Buffer.from(`campaign,geocode,n\n${rows}`).toString('base64'), doc_title: title, file_type: 'campaign' }))
  /** The id of the campaign_datapoint row (the final value) at `location`'s key, which data entry edits. */
  const finalRow = async (location: number) =>
    (
      await db
        .selectFrom('datapoint_with_computed')
        .select('id')
        .where('location_id', '=', location)
        .where('indicator_id', '=', w.n)
        .where('campaign_id', '=', K)
        .executeTakeFirstOrThrow()
    ).id
  const key = (location: number) => `${location}_${w.n}_${K}`
  const value = async (location: number) =>
    (await db.selectFrom('datapoint').select('value').where('unique_index', '=', key(location)).executeTakeFirst())?.value
  const rowVersion = async () =>
    (await sql<{ k: string; v: string }>`select unique_index as k, xmin::text || ':' || ctid::text as v from datapoint order by 1`.execute(db)).rows
  const historyCount = async () => Number((await sql<{ n: number }>`select count(*)::int as n from datapoint_history`.execute(db)).rows[0].n)
  return { app, db, api, w, K, maps, send, uploaded, finalRow, key, value, rowVersion, historyCount }
}

t.test('an unchanged re-upload writes no row and no history: its keys count as unchanged', async (t) => {
  const { send, rowVersion, historyCount, db } = await setup(t)
  const first = await send('first.csv', 'K,p,10\nK,q,20\n')
  t.match(first.stats.datapoints, { inserted: 2 })
  const [rows, history] = [await rowVersion(), await historyCount()]
  const again = await send('again.csv', 'K,p,10\nK,q,20\n')
  t.match(again.stats.datapoints, { inserted: 0, updated: 0, unchanged: 2, superseded: 0, deleted: 0 })
  t.same(again.stats.campaigns_recomputed, [], 'nothing to recompute')
  t.same(await rowVersion(), rows, 'no datapoint row rewritten')
  t.equal(await historyCount(), history, 'no history: no value changed')
  const claims = await db.selectFrom('document_takeover').select('document_id').execute()
  t.same(
    claims.map((c) => c.document_id),
    [again.id],
    'the newer document holds its repeated keys by claim',
  )
})

t.test('the older document refreshed after a remap that drops a key the newer repeats: the newer keeps it', async (t) => {
  const { api, w, maps, send, value } = await setup(t)
  const older = await send('older.csv', 'K,p,10\nK,q,20\n')
  await send('newer.csv', 'K,p,10\n')
  t.equal((await api.patch(`/source_object_map/${maps.p}/`, { master_object_id: w.A })).status, 200, 'p remapped to A')
  const refreshed = await api.get(`/refresh_master/?document_id=${older.id}`)
  t.equal(refreshed.status, 200, refreshed.text)
  t.match(refreshed.body.objects[0].ingest_stats.datapoints, { deleted: 0 }, 'nothing of its own to delete: the newer document holds a1')
  t.equal(await value(w.a1), 10, 'a1 kept, held by the newer document')
  t.equal(await value(w.A), 10, "the older document's row now at A")
})

t.test('after a revert of the newer document, the older holds its keys again', async (t) => {
  const { api, w, maps, send, value } = await setup(t)
  const older = await send('older.csv', 'K,p,10\nK,q,20\n')
  const newer = await send('newer.csv', 'K,p,10\n')
  const reverted = await api.get(`/revert_document/?document_id=${newer.id}`)
  t.equal(reverted.status, 200, reverted.text)
  t.match(reverted.body.objects[0], { restored: { count: 1 }, deleted: { count: 0 }, conflicts: { count: 0 } }, 'a1 back to the older document')
  t.equal(await value(w.a1), 10, 'its value unchanged')
  t.equal((await api.patch(`/source_object_map/${maps.p}/`, { master_object_id: w.A })).status, 200)
  const refreshed = await api.get(`/refresh_master/?document_id=${older.id}`)
  t.match(refreshed.body.objects[0].ingest_stats.datapoints, { deleted: 1 }, 'the older document no longer makes a1: deleted')
  t.equal(await value(w.a1), undefined)
})

t.test('a revert of the older document: the keys the newer repeats are conflicts', async (t) => {
  const { api, w, send, value, key } = await setup(t)
  const older = await send('older.csv', 'K,p,10\nK,q,20\n')
  await send('newer.csv', 'K,p,10\n')
  const reverted = await api.get(`/revert_document/?document_id=${older.id}`)
  t.equal(reverted.status, 200, reverted.text)
  const summary = reverted.body.objects[0]
  t.match(summary, { conflicts: { count: 1 }, deleted: { count: 1 } })
  t.equal(summary.conflicts.items[0].unique_index, key(w.a1), 'a1 is the newer document’s')
  t.equal(await value(w.a1), 10, 'kept')
  t.equal(await value(w.b1), undefined, "b1, the older document's alone, is gone")
})

t.test('a refresh of a document whose time lies between the two does not take the newer one’s key', async (t) => {
  const { api, w, send, value } = await setup(t)
  await send('older.csv', 'K,p,10\n')
  // `m` is mapped only later: the middle document writes nothing until its refresh.
  const middle = await send('middle.csv', 'K,m,30\n')
  t.match(middle.stats.datapoints, { inserted: 0 })
  await send('newer.csv', 'K,p,10\n')
  const codes = (await api.get(`/source_object_map/?document_id=${middle.id}`)).body.objects as Array<{ id: number; source_object_code: string }>
  const m = codes.find((c) => c.source_object_code === 'm')!.id
  t.equal((await api.patch(`/source_object_map/${m}/`, { master_object_id: w.a1 })).status, 200, 'm mapped to a1')
  const refreshed = await api.get(`/refresh_master/?document_id=${middle.id}`)
  t.equal(refreshed.status, 200, refreshed.text)
  t.match(refreshed.body.objects[0].ingest_stats.datapoints, { superseded: 1, updated: 0 }, 'superseded by the newer document')
  t.equal(await value(w.a1), 10)
})

t.test('data entry between them, and on a key held by claim: the history says who held it', async (t) => {
  const { api, db, w, send, finalRow, value, key } = await setup(t)
  const older = await send('older.csv', 'K,p,10\n')
  // Data entry edits the campaign_datapoint row (the final value) at the key.
  const enter = async (value: number) => {
    const answer = await api.patch(`/campaign_datapoint/${await finalRow(w.a1)}/`, { value })
    t.equal(answer.status, 200, answer.text)
  }
  await enter(10)
  const newer = await send('newer.csv', 'K,p,10\n')
  t.match(newer.stats.datapoints, { unchanged: 1, updated: 0 }, 'the entry’s value repeated: held by claim')
  // A new entry changes the value: before it, the history records the newer document's takeover.
  await enter(12)
  const history = await db
    .selectFrom('datapoint_history')
    .select(['change', 'value_before', 'value_after', 'document_id'])
    .where('unique_index', '=', key(w.a1))
    .orderBy('id')
    .execute()
  const dataEntry = (await db.selectFrom('source_doc').select('id').where('guid', '=', 'data-entry').executeTakeFirstOrThrow()).id
  t.same(
    history.map((h) => [h.change, h.value_before, h.value_after, h.document_id]),
    [
      ['insert', null, 10, older.id],
      ['update', 10, 10, dataEntry],
      ['update', 10, 10, newer.id],
      ['update', 10, 12, dataEntry],
    ],
    'inserted by the older document, taken by the entry, by the newer document, changed by the entry',
  )
  // Reverting the newer document now: its takeover was overwritten since, a conflict.
  const reverted = (await api.get(`/revert_document/?document_id=${newer.id}`)).body.objects[0]
  t.match(reverted, { conflicts: { count: 1 }, restored: { count: 0 } })
  t.equal(await value(w.a1), 12)
})

t.test('what a document holds: its results and its deletion count the keys it holds by claim', async (t) => {
  const { api, db, w, send, value } = await setup(t)
  const older = await send('older.csv', 'K,p,10\nK,q,20\n')
  const newer = await send('newer.csv', 'K,p,10\nK,q,20\n')
  const refused = await api.delete(`/document/${newer.id}/`)
  t.equal(refused.status, 409, 'the newer document holds two datapoints')
  t.match(refused.body.message, /datapoint/)
  const deleted = await api.delete(`/document/${older.id}/?cascade=true`)
  t.equal(deleted.status, 204, deleted.text)
  t.equal(await value(w.a1), 10, 'the keys the newer document holds stay')
  t.equal(await value(w.b1), 20)
  t.equal(await db.selectFrom('source_doc').select('id').where('id', '=', older.id).executeTakeFirst(), undefined, 'the older is gone')

  // A date file repeated: the newer document's results list the rows it holds by claim.
  await created(api.post('/source_object_map/', { content_type: 'location', source_object_code: 'pd', master_object_id: w.a1 }))
  const dates = async (title: string) => {
    const { id, run } = await upload(api, title, 'date', 'unique_key,geocode,data_date,cases\n1,pd,2016-05-01,4\n')
    t.equal(run.status, 200, run.text)
    return id
  }
  const first = await dates('first-dates.csv')
  const second = await dates('second-dates.csv')
  const results = async (document: number) =>
    ((await api.get(`/date_doc_result/?document_id=${document}`)).body.objects as Array<{ value: number }>).map((r) => r.value)
  t.same(await results(second), [4], 'the newer date document holds the repeated value')
  t.same(await results(first), [], 'the older holds it no more')
})

type Db = Harness['db']

/** How many backends wait for campaign `campaign`'s lock (lib/engine/campaign-locks.ts). */
const campaignWaiters = async (db: Db, campaign: number) =>
  (
    await sql<{ n: number }>`select count(*)::int as n from pg_locks where locktype = 'advisory' and not granted and classid = 2
      and objid = ${campaign} and database = (select oid from pg_database where datname = current_database())`.execute(db)
  ).rows[0].n

/**
 * Another transaction, open until `end()`, that did `work`: backends that need what it holds wait for
 * it (`waiters()`: how many, by its transaction id).
 */
async function holding(t: Test, db: Db, work: (trx: Db) => Promise<unknown>) {
  let xid = ''
  const held = await heldOpen(db, async (trx) => {
    await work(trx)
    await sql`select pg_current_xact_id()`.execute(trx)
    xid = (
      await sql<{ xid: string }>`select transactionid::text as xid from pg_locks
        where pid = pg_backend_pid() and locktype = 'transactionid' and granted`.execute(trx)
    ).rows[0].xid
  })
  let ended = false
  const end = async () => {
    if (ended) return
    ended = true
    await held.commit()
  }
  // Ended with its test in any case: left open, it would hold the database's next reset.
  t.teardown(end)
  const waiters = async () =>
    (
      await sql<{ n: number }>`select count(*)::int as n from pg_locks
        where locktype = 'transactionid' and not granted and transactionid::text = ${xid}`.execute(db)
    ).rows[0].n
  return { waiters, end }
}

/** Polls `probe` until it gives `n`, or `answered()` says the request it watches has answered. */
const until = (probe: () => Promise<number>, n: number, answered = () => false) =>
  eventually(
    async () => (answered() ? -1 : await probe()),
    (count) => count === n || count === -1,
    20_000,
  )

/** A request's answer, and whether it came yet. */
function answering<T>(request: Promise<T>) {
  let answered = false
  const answer = request.finally(() => {
    answered = true
  })
  return { answer, answered: () => answered }
}

const concurrent = { skip: engine === 'pglite' && 'PGlite runs one connection: no concurrent transactions' }

/** Who holds the key at `location` now: the document of its row's submission. */
async function holderOf(db: Db, key: string) {
  const row = await db
    .selectFrom('datapoint as d')
    .innerJoin('source_submission as s', 's.id', 'd.source_submission_id')
    .select(['s.document_id', 'd.value'])
    .where('d.unique_index', '=', key)
    .executeTakeFirst()
  return row && { document: row.document_id, value: row.value }
}

// A newer document repeats the older one's value; the older one is deleted. One after the other,
// either order leaves the key at 10, held by the newer document: deleted first, the key is gone and
// the newer one writes it; synced first, the newer one holds it by claim and the deletion leaves it.
// The two scenarios below stop each step half-way, the other running meanwhile.

t.test("an older document's deletion half done when the newer one's sync starts: the sync waits, then writes the key", concurrent, async (t) => {
  const { db, api, w, K, send, uploaded, key } = await setup(t)
  const older = await send('older.csv', 'K,p,10\n')
  const newer = await uploaded('newer.csv', 'K,p,10\n')
  // The deletion's recompute stops at the campaign's derived rows, which another transaction holds:
  // by then it has deleted the key, and holds the campaign.
  const derived = await holding(t, db, (trx) => sql`select id from datapoint_with_computed where campaign_id = ${K} for update`.execute(trx))
  const deletion = answering(api.delete(`/document/${older.id}/?cascade=true`))
  t.equal(await until(derived.waiters, 1, deletion.answered), 1, 'the deletion stops in its recompute')
  const sync = answering(api.get(`/transform_upload/?document_id=${newer}`))
  t.equal(await until(() => campaignWaiters(db, K), 1, sync.answered), 1, 'the sync waits for the campaign before it reads the key')
  await derived.end()
  const [deleted, run] = await Promise.all([deletion.answer, sync.answer])
  t.equal(deleted.status, 204, deleted.text)
  t.equal(run.status, 200, run.text)
  t.same(await holderOf(db, key(w.a1)), { document: newer, value: 10 }, 'the newer document wrote the key the deletion removed')
})

t.test("a newer document's sync half done when the older one is deleted: the deletion waits, then leaves the key", concurrent, async (t) => {
  const { db, api, w, K, send, uploaded, key } = await setup(t)
  const older = await send('older.csv', 'K,p,10\n')
  const newer = await uploaded('newer.csv', 'K,p,10\n')
  // The sync stops where it records its claim, a row another transaction is inserting: by then it has
  // decided to hold the key by claim, and holds the campaign.
  const claim = await holding(t, db, (trx) => sql`insert into document_takeover (document_id, synced_at) values (${newer}, now())`.execute(trx))
  const sync = answering(api.get(`/transform_upload/?document_id=${newer}`))
  t.equal(await until(claim.waiters, 1, sync.answered), 1, 'the sync stops as it records its claim')
  const deletion = answering(api.delete(`/document/${older.id}/?cascade=true`))
  t.equal(await until(() => campaignWaiters(db, K), 1, deletion.answered), 1, 'the deletion waits for the campaign before it reads the claims')
  await claim.end()
  const [run, deleted] = await Promise.all([sync.answer, deletion.answer])
  t.equal(run.status, 200, run.text)
  t.match(run.body.objects[0].ingest_stats.datapoints, { unchanged: 1, inserted: 0 }, 'held by claim')
  t.equal(deleted.status, 204, deleted.text)
  t.same(await holderOf(db, key(w.a1)), { document: newer, value: 10 }, 'the deletion left the key the newer document holds')
})

t.test('data entry on a key a waiting sync writes: each in turn, neither undone', concurrent, async (t) => {
  const { db, api, w, K, send, uploaded, finalRow, value } = await setup(t)
  await send('older.csv', 'K,p,10\n')
  const newer = await uploaded('newer.csv', 'K,p,11\n')
  const row = await finalRow(w.a1)
  // The sync waits for the campaign first, then the entry. Had the entry written the key before it
  // waited (in its recompute), the sync would then wait for the entry's row while holding the campaign
  // the entry waits for, and the database would undo one of them (503).
  const campaign = await holding(t, db, (trx) => sql`select pg_advisory_xact_lock(2, ${K})`.execute(trx))
  const sync = answering(api.get(`/transform_upload/?document_id=${newer}`))
  t.equal(await until(() => campaignWaiters(db, K), 1, sync.answered), 1, 'the sync waits for the campaign')
  const entry = answering(api.patch(`/campaign_datapoint/${row}/`, { value: 12 }))
  t.equal(await until(() => campaignWaiters(db, K), 2, entry.answered), 2, 'the entry waits for the campaign')
  await campaign.end()
  const [run, entered] = await Promise.all([sync.answer, entry.answer])
  t.equal(run.status, 200, run.text)
  t.equal(entered.status, 200, entered.text)
  t.equal(await value(w.a1), 12, 'the entry came last')
})
