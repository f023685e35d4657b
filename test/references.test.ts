// datapoint's references to indicator, location, campaign and source_submission are checked once per
// statement by triggers (sql/007), with the guarantees of the foreign keys they replace.
import t, { type Test } from 'tap'
import { sql, type Kysely } from 'kysely'
import { build, engine, heldOpen } from './helper.js'
import { client } from './api.js'
import { smallWorld } from './fixtures.js'
import type { DB } from '../schemas/index.js'

/** A location, campaign and indicator, a raw datapoint on them entered through the API, and its submission. */
async function world(t: Test) {
  const { app, db } = await build(t)
  const api = client(app)
  const ids = await smallWorld(api.post)
  const entered = await api.post('/campaign_datapoint/', { indicator_id: ids.indicator, location_id: ids.location, campaign_id: ids.campaign, value: 1 })
  t.equal(entered.status, 201)
  const { source_submission_id: submission } = await db.selectFrom('datapoint').select('source_submission_id').executeTakeFirstOrThrow()
  const typeId = (await db.selectFrom('location').select('location_type_id').where('id', '=', ids.location).executeTakeFirstOrThrow()).location_type_id
  const newLocation = async (name: string) => (await api.post('/location/', { name, location_code: name, location_type_id: typeId })).body.id as number
  return { app, api, db, ...ids, submission, newLocation }
}

/** The error of `statement`, which must fail as a foreign key does (23503, its detail). */
async function refused(t: Test, statement: Promise<unknown>, detail: string) {
  const error = (await statement.then(
    () => undefined,
    (e: unknown) => e,
  )) as { code?: string; detail?: string } | undefined
  t.equal(error?.code, '23503', detail)
  t.equal(error?.detail, detail)
}

const insertDatapoint = (db: Kysely<DB>, row: { indicator: number; location: number; campaign: number | null; submission: number }, key: string) =>
  sql`insert into datapoint (indicator_id, location_id, campaign_id, data_date, value, source_submission_id, unique_index, precedence_at)
    values (${row.indicator}, ${row.location}, ${row.campaign}, ${row.campaign === null ? sql`date '2016-01-01'` : sql`null`}, 1, ${row.submission}, ${key}, now())`.execute(
    db,
  )

t.test('a write naming a missing row is refused whole, as by a foreign key', async (t) => {
  const w = await world(t)
  const good = { indicator: w.indicator, location: w.location, campaign: w.campaign, submission: w.submission }
  await refused(t, insertDatapoint(w.db, { ...good, location: 999_999 }, 'k1'), 'Key (location_id)=(999999) is not present in table "location".')
  await refused(t, insertDatapoint(w.db, { ...good, indicator: 999_998 }, 'k2'), 'Key (indicator_id)=(999998) is not present in table "indicator".')
  await refused(t, insertDatapoint(w.db, { ...good, campaign: 999_997 }, 'k3'), 'Key (campaign_id)=(999997) is not present in table "campaign".')
  await refused(
    t,
    insertDatapoint(w.db, { ...good, submission: 999_996 }, 'k4'),
    'Key (source_submission_id)=(999996) is not present in table "source_submission".',
  )
  // One bad row among good ones: the statement writes nothing.
  await refused(
    t,
    sql`insert into datapoint (indicator_id, location_id, campaign_id, value, source_submission_id, unique_index, precedence_at)
      select ${w.indicator}, case when g = 2 then 999999 else ${w.location} end, ${w.campaign}, g, ${w.submission}, 'bulk' || g, now()
      from generate_series(1, 3) g`.execute(w.db),
    'Key (location_id)=(999999) is not present in table "location".',
  )
  t.equal(Number((await sql<{ n: number }>`select count(*) as n from datapoint`.execute(w.db)).rows[0].n), 1, 'only the entered datapoint')
  await refused(t, sql`update datapoint set indicator_id = 999995`.execute(w.db), 'Key (indicator_id)=(999995) is not present in table "indicator".')
  await insertDatapoint(w.db, { ...good, campaign: null }, 'dated')
  t.pass('a date datapoint (no campaign) names no campaign')
  const api = await w.api.post('/campaign_datapoint/', { indicator_id: w.indicator, location_id: 999_999, campaign_id: w.campaign, value: 2 })
  t.match(api.body, { code: 'FOREIGN_KEY_VIOLATION', message: 'location_id: no location with id 999999' })
})

t.test('a referenced row cannot be deleted, renumbered or truncated away', async (t) => {
  const w = await world(t)
  const still = (id: number) => `Key (id)=(${id}) is still referenced from table "datapoint".`
  await refused(t, sql`delete from location where id = ${w.location}`.execute(w.db), still(w.location))
  await refused(t, sql`delete from indicator where id = ${w.indicator}`.execute(w.db), still(w.indicator))
  await refused(t, sql`delete from campaign where id = ${w.campaign}`.execute(w.db), still(w.campaign))
  await refused(t, sql`delete from source_submission where id = ${w.submission}`.execute(w.db), still(w.submission))
  await refused(t, sql`update indicator set id = 999999 where id = ${w.indicator}`.execute(w.db), still(w.indicator))
  const spare = await w.newLocation('spare')
  await sql`delete from location where id = ${spare}`.execute(w.db)
  t.pass('an unreferenced location is deleted')
  await refused(
    t,
    w.db.transaction().execute((trx) => sql`truncate location cascade`.execute(trx)),
    still(w.location),
  )
  // Truncating datapoint in the same command leaves nothing that names the emptied table.
  const rollback = new Error('rollback')
  const together = await w.db
    .transaction()
    .execute(async (trx) => {
      await sql`truncate location, datapoint cascade`.execute(trx)
      throw rollback
    })
    .catch((e: unknown) => e)
  t.equal(together, rollback)
  t.ok(await w.db.selectFrom('location').select('id').where('id', '=', w.location).executeTakeFirst(), 'rolled back: the location is there')
})

t.test(
  'concurrent writers and deleters wait for each other, then refuse (PostgreSQL)',
  { skip: engine === 'pglite' && 'PGlite runs one connection: no concurrent transactions' },
  async (t) => {
    const w = await world(t)
    const good = { indicator: w.indicator, location: w.location, campaign: w.campaign, submission: w.submission }
    const pending = <T>(promise: Promise<T>) =>
      Promise.race([
        promise.then(
          () => 'settled',
          () => 'settled',
        ),
        new Promise((r) => setTimeout(() => r('waiting'), 300)),
      ])

    // A writer holds the named row; a delete of it waits for the writer's commit, then refuses.
    const first = await w.newLocation('first')
    const writer = await heldOpen(w.db, (trx) => insertDatapoint(trx, { ...good, location: first }, 'concurrent-1'))
    const deleter = w.db.transaction().execute((trx) => sql`delete from location where id = ${first}`.execute(trx))
    t.equal(await pending(deleter), 'waiting', 'the delete waits for the writer')
    await writer.commit()
    await refused(t, deleter, `Key (id)=(${first}) is still referenced from table "datapoint".`)

    // A delete holds the row; a write naming it waits for the delete's commit, then refuses.
    const second = await w.newLocation('second')
    const remover = await heldOpen(w.db, (trx) => sql`delete from location where id = ${second}`.execute(trx))
    const late = w.db.transaction().execute((trx) => insertDatapoint(trx, { ...good, location: second }, 'concurrent-2'))
    t.equal(await pending(late), 'waiting', 'the write waits for the delete')
    await remover.commit()
    await refused(t, late, `Key (location_id)=(${second}) is not present in table "location".`)
  },
)
