// A re-upload writes only what it changes (ingestion §5.5, D26; lib/ingest/claims.ts): a key a newer document
// repeats at its value is held by the newer document without a write, and every later step behaves as if
// the newer document had written it: a refresh of the older one that no longer makes the key, a revert of
// either, a refresh of a document whose time lies between them, data entry, the history. On both engines.
import t from 'tap'
import { created, upload } from './world.js'
import { takeoverWorld as setup } from './takeover-setup.js'

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
