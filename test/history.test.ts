// The datapoint history (sql/012) and revert_document (lib/ingest/revert.ts), on both engines.
import t from 'tap'
import { sql, type Kysely } from 'kysely'
import type { DB } from '../schemas/index.js'
import { admin, alice, build, eventually } from './helper.js'
import { client } from './api.js'
import { upload, world } from './world.js'

type Api = ReturnType<typeof client>
const INDICATORS = ['v1', 'v2', 'v3', 'v4', 'v5']

/** Every stored value, raw and computed, without row ids (a recompute renumbers its rows). */
async function values(db: Kysely<DB>) {
  const raw = await sql<Record<string, unknown>>`select unique_index, value, source_submission_id from datapoint order by unique_index`.execute(db)
  const agg = await sql<Record<string, unknown>>`select location_id, indicator_id, campaign_id, value, is_raw from agg_datapoint order by 1, 2, 3`.execute(db)
  const computed = await sql<
    Record<string, unknown>
  >`select location_id, indicator_id, campaign_id, value from datapoint_with_computed order by 1, 2, 3`.execute(db)
  return { raw: raw.rows, agg: agg.rows, computed: computed.rows }
}

/** The world of test/world.ts, plus five mapped indicators, a ratio of two of them, and a second campaign. */
async function historyWorld(api: Api) {
  const w = await world(api)
  const ids: Record<string, number> = {}
  for (const name of INDICATORS) {
    ids[name] = (await api.post('/indicator/', { name, short_name: name, data_format: 'int' })).body.id
    await api.post('/source_object_map/', { content_type: 'indicator', source_object_code: name, master_object_id: ids[name] })
  }
  const ratio = (await api.post('/indicator/', { name: 'ratio', short_name: 'ratio', data_format: 'pct' })).body.id as number
  await api.post('/calculated_indicator_component/', { indicator_id: ratio, indicator_component_id: ids.v1, calculation: 'NUMERATOR' })
  await api.post('/calculated_indicator_component/', { indicator_id: ratio, indicator_component_id: ids.v2, calculation: 'DENOMINATOR' })
  const campaignType = (await api.get('/campaign_type/')).body.objects[0].id
  const C2 = (await api.post('/campaign/', { name: 'C2', campaign_type_id: campaignType, start_date: '2016-02-01', end_date: '2016-02-05' })).body.id as number
  await api.post('/source_object_map/', { content_type: 'campaign', source_object_code: 'C2', master_object_id: C2 })
  return { ...w, ids, ratio, C2 }
}

const header = `campaign,geocode,${INDICATORS.join(',')}\n`
// A: 10 cells; B: the same 10 changed, and 5 new cells (campaign C2).
const fileA = `${header}C,a1,1,2,3,4,5\nC,b1,6,7,8,9,10\n`
const fileB = `${header}C,a1,11,12,13,14,15\nC,b1,16,17,18,19,20\nC2,a1,21,22,23,24,25\n`

async function uploaded(api: Api, title: string, csv: string, headers = admin) {
  const { id, run } = await upload(api, title, 'campaign', csv, headers)
  if (run.status !== 200) throw new Error(run.text)
  return id
}

t.test('history keeps every change of an upload; reverting it puts the values before it back, keeps a later entry as a conflict', async (t) => {
  const { app, db, adminId } = await build(t)
  const api = client(app)
  const w = await historyWorld(api)
  const A = await uploaded(api, 'a.csv', fileA)
  const afterA = await values(db)
  const B = await uploaded(api, 'b.csv', fileB)
  // A data entry on one of the cells B changed (a1, v1, C: 11 → 99).
  const cell = await api.get(`/campaign_datapoint/?indicator__in=${w.ids.v1}&campaign__in=${w.C}&location_id__in=${w.a1}`)
  const entry = await api.patch(`/campaign_datapoint/${cell.body.objects[0].id}/`, { value: 99 })
  t.equal(entry.status, 200, entry.text)

  const history = await api.get(`/datapoint_history/?document_id=${B}&limit=100`)
  t.equal(history.status, 200, history.text)
  const changes = history.body.objects as Array<Record<string, unknown>>
  t.equal(changes.length, 15, '10 changes and 5 new cells')
  const updates = changes.filter((c) => c.change === 'update')
  t.equal(updates.length, 10)
  t.same(
    updates.map((c) => [c.value_before, c.value_after]).sort((x, y) => (x[0] as number) - (y[0] as number)),
    Array.from({ length: 10 }, (_, i) => [i + 1, i + 11]),
    "each change with A's value before and B's after",
  )
  t.equal(changes.filter((c) => c.change === 'insert' && c.campaign_id === w.C2 && c.value_before === null).length, 5)
  for (const c of changes) {
    t.match(c, { document_id: B, user_id: adminId, via: 'api', reverted_document_id: null })
    t.match(c.request_id, /\S/, 'the request that made it')
    t.match(c.changed_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}$/)
  }
  const typed = (await api.get(`/datapoint_history/?unique_index=${w.a1}_${w.ids.v1}_${w.C}`)).body.objects
  t.same(
    typed.map((c: Record<string, unknown>) => [c.change, c.value_before, c.value_after, c.document_id === A || c.document_id === B]),
    [
      ['insert', null, 1, true],
      ['update', 1, 11, true],
      ['update', 11, 99, false],
    ],
    'the cell: inserted by A, changed by B, then by the data entry',
  )

  const reverted = await api.get(`/revert_document/?document_id=${B}`)
  t.equal(reverted.status, 200, reverted.text)
  const summary = reverted.body.objects[0]
  t.match(summary, { document_id: B, forced: false, unchanged: 0, without_history: 0 })
  t.equal(summary.restored.count, 9)
  t.equal(summary.deleted.count, 5)
  t.same(
    summary.campaigns_recomputed,
    [w.C, w.C2].sort((a, b) => a - b),
  )
  t.equal(summary.conflicts.count, 1)
  t.match(summary.conflicts.items[0], { unique_index: `${w.a1}_${w.ids.v1}_${w.C}`, value_now: 99, value_before_document: 1 })
  const afterRevert = await values(db)
  const withoutEntry = (rows: Array<Record<string, unknown>>) => rows.filter((r) => r.unique_index !== `${w.a1}_${w.ids.v1}_${w.C}`)
  t.same(withoutEntry(afterRevert.raw), withoutEntry(afterA.raw), "A's values back with A's sources, B's new cells gone")
  t.equal(afterRevert.raw.find((r) => r.unique_index === `${w.a1}_${w.ids.v1}_${w.C}`)?.value, 99, 'the entry is kept')
  // The ratio v1 / v2 reads the entry at a1 (and so at A and R); everywhere else it is as after A.
  const ratios = (rows: Array<Record<string, unknown>>, where: number[]) =>
    rows.filter((r) => r.indicator_id === w.ratio && !where.includes(r.location_id as number))
  t.same(ratios(afterRevert.computed, [w.a1, w.A, w.R]), ratios(afterA.computed, [w.a1, w.A, w.R]), 'calculated values as after A')
  t.ok(ratios(afterA.computed, [w.a1, w.A, w.R]).length > 0)
  t.notOk(
    afterRevert.computed.some((r) => r.campaign_id === w.C2),
    'nothing computed for the campaign only B wrote',
  )

  const historyCount = async () => Number((await sql<{ n: number }>`select count(*) as n from datapoint_history`.execute(db)).rows[0].n)
  const before = await historyCount()
  const again = (await api.get(`/revert_document/?document_id=${B}`)).body.objects[0]
  t.match(again, { restored: { count: 0 }, deleted: { count: 0 }, conflicts: { count: 1 } }, 'a second revert: only the conflict, again')
  t.same(await values(db), afterRevert, 'and nothing changes')
  t.equal(await historyCount(), before, 'nor is anything recorded')

  const forced = await api.get(`/revert_document/?document_id=${B}&force=1`)
  t.equal(forced.status, 200, forced.text)
  t.match(forced.body.objects[0], { forced: true, restored: { count: 1 }, conflicts: { count: 0 } })
  t.same(await values(db), afterA, 'forced: every value, aggregate and calculated value exactly as after A alone')
  const revertRows = (await api.get(`/datapoint_history/?reverted_document_id=${B}&limit=100`)).body.objects
  t.equal(revertRows.length, 15, 'the revert is history too')
  t.match(revertRows.at(-1), { change: 'update', value_before: 99, value_after: 1, document_id: A })
  t.equal((await api.get(`/revert_document/?document_id=${B}&force=true`)).body.objects[0].restored.count, 0, 'nothing left to revert')
})

t.test('a revert as a background job; bad parameters; the Data Entry document', async (t) => {
  const { app, db } = await build(t, { JOB_POLL_MS: 500 })
  const api = client(app)
  await historyWorld(api)
  await uploaded(api, 'a.csv', fileA)
  const afterA = await values(db)
  const B = await uploaded(api, 'b.csv', fileB)
  const accepted = await api.get(`/revert_document/?document_id=${B}`, { ...admin, prefer: 'respond-async' })
  t.equal(accepted.status, 202, accepted.text)
  const job = await eventually(
    () => api.get(`/job/${accepted.body.id}/`),
    (r) => ['completed', 'failed'].includes(r.body?.state),
    30_000,
  )
  t.equal(job.body.state, 'completed', job.text)
  t.match(job.body.result, { document_id: B, restored: { count: 10 }, deleted: { count: 5 } })
  t.same(await values(db), afterA)
  t.match((await api.get(`/datapoint_history/?reverted_document_id=${B}&limit=1`)).body.objects[0], { via: 'job', job_id: accepted.body.id })

  const badForce = await api.get(`/revert_document/?document_id=${B}&force=yes`)
  t.equal(badForce.status, 400)
  t.match(badForce.body, { code: 'INVALID_VALUE', message: /force/ })
  t.equal((await api.get('/revert_document/?document_id=999999')).status, 404)
  t.equal((await api.get('/revert_document/')).status, 400)
  const dataEntry = (await sql<{ id: number }>`select id from source_doc where guid = 'data-entry'`.execute(db)).rows[0].id
  const refused = await api.get(`/revert_document/?document_id=${dataEntry}`)
  t.equal(refused.status, 409)
  t.equal(refused.body.code, 'NOT_AN_UPLOAD')
})

t.test('no pipeline step runs on the Data Entry document, at once or as a job: the typed values stay', async (t) => {
  const { app, db } = await build(t)
  const api = client(app)
  const w = await historyWorld(api)
  const typed = await api.post('/campaign_datapoint/', { indicator_id: w.ids.v1, location_id: w.a1, campaign_id: w.C, value: 7 })
  t.equal(typed.status, 201, typed.text)
  const before = await values(db)
  const dataEntry = (await sql<{ id: number }>`select id from source_doc where guid = 'data-entry'`.execute(db)).rows[0].id
  for (const step of ['transform_upload', 'refresh_master', 'queue_process', 'revert_document']) {
    for (const headers of [admin, { ...admin, prefer: 'respond-async' }]) {
      const refused = await api.get(`/${step}/?document_id=${dataEntry}`, headers)
      t.equal(refused.status, 409, `${step}${headers === admin ? '' : ' as a job'}: ${refused.text}`)
      t.equal(refused.body.code, 'NOT_AN_UPLOAD')
    }
  }
  t.same(await values(db), before, 'every typed value kept')
  t.equal((await api.get('/job/')).body.objects.length, 0, 'no job queued')
})

t.test('nobody writes history through the API; a change made with SQL is in it', async (t) => {
  const { app, db } = await build(t)
  const api = client(app)
  const w = await historyWorld(api)
  await uploaded(api, 'a.csv', fileA)
  const [first] = (await api.get('/datapoint_history/?limit=1')).body.objects
  for (const [method, path] of [
    ['POST', '/datapoint_history/'],
    ['PATCH', `/datapoint_history/${first.id}/`],
    ['DELETE', `/datapoint_history/${first.id}/`],
    ['DELETE', '/datapoint_history/?document_id=1'],
  ]) {
    const res = await app.inject({ method: method as 'POST', url: `/api/v1${path}`, headers: admin, payload: method === 'DELETE' ? undefined : {} })
    t.equal(res.statusCode, 405, `${method} ${path}`)
  }
  await t.rejects(sql`update datapoint_history set value_after = 0`.execute(db), /append-only/, 'not even with SQL: append-only')

  const key = `${w.b1}_${w.ids.v3}_${w.C}`
  await sql`update datapoint set value = 42 where unique_index = ${key}`.execute(db)
  const rows = (await api.get(`/datapoint_history/?unique_index=${key}&change=update`)).body.objects
  t.match(rows, [{ value_before: 8, value_after: 42, via: 'sql', user_id: null, request_id: null }])
  await sql`delete from datapoint where unique_index = ${key}`.execute(db)
  t.match((await api.get(`/datapoint_history/?unique_index=${key}&change=delete`)).body.objects, [{ value_before: 42, value_after: null, via: 'sql' }])
  await sql`truncate datapoint`.execute(db)
  const truncated = await api.get('/datapoint_history/?change=delete&via=sql&limit=0')
  t.ok(truncated.body.meta.total_count > 10, 'a TRUNCATE records every row it removed')
})

t.test('a restricted user reverts only their documents and reads history only inside their subtree', async (t) => {
  const { app, db, aliceId } = await build(t)
  const api = client(app)
  const w = await historyWorld(api)
  await api.post('/location_responsibility/', { user_id: aliceId, top_lvl_location_id: w.A })
  const adminDoc = await uploaded(api, 'a.csv', fileA)
  const aliceDoc = await uploaded(api, 'alice.csv', `${header}C,a1,31,32,33,34,35\nC,b1,36,37,38,39,40\n`, alice)
  const aliceRun = await api.get(`/datapoint_history/?document_id=${aliceDoc}&limit=100`, alice)
  t.equal(aliceRun.status, 200)
  t.equal(aliceRun.body.objects.length, 5, "her upload wrote a1's five cells only (b1 is outside her subtree)")
  const seen = (await api.get('/datapoint_history/?limit=1000', alice)).body.objects as Array<{ location_id: number }>
  t.ok(seen.length > 0)
  t.same([...new Set(seen.map((r) => r.location_id))].sort(), [w.a1], 'only history inside province A')
  t.equal((await api.get(`/datapoint_history/?location_id=${w.b1}`, alice)).body.objects.length, 0, 'b1 is not hers to read')
  t.equal((await api.get(`/datapoint_history/?location_id=${w.B}&location_depth=1`, admin)).body.objects.length > 0, true, 'the selection works')

  const other = await api.get(`/revert_document/?document_id=${adminDoc}`, alice)
  t.equal(other.status, 403)
  t.equal(other.body.code, 'DOCUMENT_FORBIDDEN')
  const b1Before = await sql`select unique_index, value from datapoint where location_id = ${w.b1} order by 1`.execute(db)
  const own = await api.get(`/revert_document/?document_id=${aliceDoc}`, alice)
  t.equal(own.status, 200, own.text)
  t.equal(own.body.objects[0].restored.count, 5)
  const a1Values = await sql<{ value: number }>`select value from datapoint where location_id = ${w.a1} and campaign_id = ${w.C}
    and indicator_id = any(${Object.values(w.ids)}::int4[]) order by indicator_id`.execute(db)
  t.same(
    a1Values.rows.map((r) => r.value),
    [1, 2, 3, 4, 5],
    "a1 back to the admin's values",
  )
  t.same(
    (await sql`select unique_index, value from datapoint where location_id = ${w.b1} order by 1`.execute(db)).rows,
    b1Before.rows,
    'nothing outside her subtree',
  )
})
