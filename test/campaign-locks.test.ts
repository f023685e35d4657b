// One writer per campaign (lib/engine/campaign-locks.ts; docs/decisions.md): each step that writes a
// campaign's raw datapoints waits for the campaign before the reads it decides on. Each scenario stops
// one step half-way, with another transaction holding what it needs next, while the other step
// starts; PostgreSQL only (PGlite runs one transaction at a time).
import { sql } from 'kysely'
import t, { type Test } from 'tap'
import { lockKey } from '../lib/data/lock-keys.js'
import { engine, eventually, type Harness, heldOpen } from './helper.js'
import { takeoverWorld as setup } from './takeover-setup.js'

type Db = Harness['db']

/** How many backends wait for campaign `campaign`'s lock (lib/engine/campaign-locks.ts). */
const campaignWaiters = async (db: Db, campaign: number) =>
  // A 64-bit key shows as classid (its high 32 bits) and objid (its low ones), objsubid 1.
  (
    await sql<{ n: number }>`select count(*)::int as n from pg_locks where locktype = 'advisory' and not granted and objsubid = 1
      and ((classid::int8 << 32) | objid::int8) = ${lockKey('campaign', campaign)}
      and database = (select oid from pg_database where datname = current_database())`.execute(db)
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
  const campaign = await holding(t, db, (trx) => sql`select pg_advisory_xact_lock(${lockKey('campaign', K)})`.execute(trx))
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

t.test('a location deleted with its values waits for their campaign before it deletes them', concurrent, async (t) => {
  const { db, api, w, K, send, key } = await setup(t)
  await send('values.csv', 'K,p,10\n')
  const campaign = await holding(t, db, (trx) => sql`select pg_advisory_xact_lock(${lockKey('campaign', K)})`.execute(trx))
  const deletion = answering(api.delete(`/location/${w.a1}/?cascade=true`))
  t.equal(await until(() => campaignWaiters(db, K), 1, deletion.answered), 1, 'the deletion waits for the campaign')
  // Waiting, it has not touched the campaign's values: another writer may still lock the row.
  const free = await sql`select id from datapoint where unique_index = ${key(w.a1)} for update nowait`.execute(db).then(
    () => 'free',
    (error: { code?: string }) => `locked (${error.code})`,
  )
  t.equal(free, 'free', 'the value is not yet deleted')
  await campaign.end()
  const deleted = await deletion.answer
  t.equal(deleted.status, 204, deleted.text)
  t.equal((await db.selectFrom('datapoint').select('id').where('unique_index', '=', key(w.a1)).executeTakeFirst()) ?? null, null, 'then it is')
})
