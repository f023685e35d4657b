// A restricted user's attacks, as a field officer responsible for province A would try them (SECURITY.md,
// "Who may do what"): through uploads and the pipeline, the code mappings, raw rows, other users'
// responsibilities, shared metadata and error messages. None may change or show anything outside A.
import t, { type Test } from 'tap'
import { sql, type Kysely } from 'kysely'
import type { DB } from '../schemas/index.js'
import { alice, build } from './helper.js'
import { client } from './api.js'
import { bob, moreUsers, upload, world } from './world.js'

type Row = Record<string, unknown>

/** Alice responsible for province A of the shared world. */
async function setup(t: Test) {
  const harness = await build(t)
  const api = client(harness.app)
  const w = await world(api)
  const users = await moreUsers(harness.db)
  const responsibility = await api.post('/location_responsibility/', { user_id: harness.aliceId, top_lvl_location_id: w.A })
  t.equal(responsibility.status, 201)
  return { ...harness, ...users, api, asAlice: client(harness.app, alice), w }
}

/** The campaign value (raw, aggregated or calculated) of indicator `n` at `location`. */
async function campaignValue(db: Kysely<DB>, w: Awaited<ReturnType<typeof world>>, location: number) {
  const row = await db
    .selectFrom('datapoint_with_computed')
    .select('value')
    .where('indicator_id', '=', w.n)
    .where('campaign_id', '=', w.C)
    .where('location_id', '=', location)
    .executeTakeFirst()
  return row?.value
}

/**
 * Every row of every datapoint table and of the shared metadata, as text: "nothing changed" is this,
 * equal. Of the code mappings, the mapped ones: an upload registers its new codes unmapped, for an
 * editor to map (ingestion §3.5), which changes no datapoint and no existing mapping.
 */
async function snapshot(db: Kysely<DB>): Promise<Record<string, string>> {
  const tables = [
    'datapoint',
    'doc_datapoint',
    'agg_datapoint',
    'datapoint_with_computed',
    'source_object_map',
    'location',
    'location_type',
    'location_tree',
    'location_polygon',
    'indicator',
    'campaign',
    'campaign_type',
    'calculated_indicator_component',
    'indicator_tag',
    'indicator_to_tag',
  ]
  const result: Record<string, string> = {}
  for (const table of tables) {
    const mapped = table === 'source_object_map' ? sql`where t.master_object_id <> -1` : sql``
    const { rows } = await sql<{ rows: string }>`select coalesce(json_agg(t order by t)::text, '[]') as rows from ${sql.table(table)} t ${mapped}`.execute(db)
    result[table] = rows[0].rows
  }
  return result
}

t.test("an upload names districts of another province: those rows are not written, now or at anyone's later refresh", async (t) => {
  const { api, db, w } = await setup(t)
  const bBefore = await campaignValue(db, w, w.b1)
  const rootBefore = await campaignValue(db, w, w.R)
  t.equal(bBefore, 20)

  const mine = await upload(api, 'eve.csv', 'campaign', 'campaign,geocode,n\nC,a1,7\nC,b1,1\n', alice)
  t.equal(mine.run.status, 200, 'alice runs transform_upload on her upload', { body: mine.run.text })
  const stats = mine.run.body.objects[0].ingest_stats
  t.match(stats.rows, { processed: 1, location_forbidden: 1 })
  t.same(stats.forbidden_rows, { count: 1, items: [{ row_number: 1, location_code: 'b1', reason: "location outside the uploader's responsibility" }] })
  t.match(stats.datapoints, { updated: 1 }, "only a1's value was written")
  t.equal(await campaignValue(db, w, w.b1), bBefore, "b1's value is unchanged")
  t.equal(await campaignValue(db, w, w.a1), 7, 'a1 has the uploaded value')
  t.equal(await campaignValue(db, w, w.R), (rootBefore as number) - 10 + 7, "the country's total moves by a1's change only")
  const statuses = await db
    .selectFrom('source_submission')
    .select(['location_code', 'process_status'])
    .where('document_id', '=', mine.id)
    .orderBy('row_number')
    .execute()
  t.same(statuses, [
    { location_code: 'a1', process_status: 'PROCESSED' },
    { location_code: 'b1', process_status: 'LOCATION_FORBIDDEN' },
  ])

  // The superuser re-runs it later: still applied with alice's rights.
  const later = await api.get(`/refresh_master/?document_id=${mine.id}`)
  t.equal(later.status, 200)
  t.equal(later.body.objects[0].ingest_stats.rows.location_forbidden, 1)
  t.equal(await campaignValue(db, w, w.b1), bBefore, "b1's value is unchanged after the superuser's refresh")

  // A document of only the other province's rows changes nothing at all.
  const before = await snapshot(db)
  const elsewhere = await upload(api, 'eve-b.csv', 'campaign', 'campaign,geocode,n\nC,b1,1\n', alice)
  t.equal(elsewhere.run.status, 200)
  t.same(elsewhere.run.body.objects[0].ingest_stats.campaigns_recomputed, [])
  const after = await snapshot(db)
  for (const table of ['datapoint', 'agg_datapoint', 'datapoint_with_computed', 'doc_datapoint']) t.equal(after[table], before[table], `${table} unchanged`)
})

t.test("code mappings are shared metadata: a restricted user can neither remap nor add one, nor refresh another user's document", async (t) => {
  const { api, asAlice, aliceId, db, w } = await setup(t)
  const b1Map = (await api.get(`/source_object_map/?document_id=${w.campaignDoc}&source_object_code=b1`)).body.objects[0]
  const before = await snapshot(db)
  const patch = await asAlice.patch(`/source_object_map/${b1Map.id}/`, { master_object_id: w.a1 })
  t.equal(patch.status, 403)
  t.match(patch.body, { code: 'FORBIDDEN', message: 'Only a superuser or a metadata editor (group manage_system) may modify source_object_map' })
  t.equal((await asAlice.post('/source_object_map/', { content_type: 'location', source_object_code: 'new', master_object_id: w.a1 })).status, 403)
  t.equal((await asAlice.post('/source_object_map/', { id: b1Map.id, master_object_id: w.a1 })).status, 403, 'nor through the legacy POST update')
  const refresh = await asAlice.get(`/refresh_master/?document_id=${w.campaignDoc}`)
  t.equal(refresh.status, 403)
  t.equal(refresh.body.code, 'DOCUMENT_FORBIDDEN')
  for (const action of ['transform_upload', 'queue_process']) t.equal((await asAlice.get(`/${action}/?document_id=${w.campaignDoc}`)).status, 403, action)
  t.same(await snapshot(db), before, 'nothing changed')

  // A restricted metadata editor maps codes, to locations inside the subtree only.
  const group = await db.selectFrom('auth_group').select('id').where('name', '=', 'manage_system').executeTakeFirstOrThrow()
  t.equal((await api.post('/user_group/', { user_id: aliceId, group_id: group.id })).status, 201)
  const a1Map = (await api.get(`/source_object_map/?document_id=${w.campaignDoc}&source_object_code=a1`)).body.objects[0]
  const outside = await asAlice.patch(`/source_object_map/${a1Map.id}/`, { master_object_id: w.b1 })
  t.equal(outside.status, 403)
  t.equal(outside.body.code, 'LOCATION_FORBIDDEN')
  t.equal((await asAlice.patch(`/source_object_map/${a1Map.id}/`, { master_object_id: w.A })).status, 200, 'inside her subtree she may')
})

t.test("a document's raw rows: a restricted user reads those mapped inside the subtree and their own unmapped ones", async (t) => {
  const { app, api, asAlice, w } = await setup(t)
  const all = (await api.get(`/source_submission/?document_id=${w.campaignDoc}`)).body.objects as Row[]
  t.same(
    all.map((r) => r.location_code),
    ['a1', 'b1'],
  )
  const mine = (await asAlice.get(`/source_submission/?document_id=${w.campaignDoc}`)).body
  t.same(
    mine.objects.map((r: Row) => r.location_code),
    ['a1'],
  )
  t.equal(mine.meta.total_count, 1)
  const b1Row = all.find((r) => r.location_code === 'b1')!
  t.equal((await asAlice.get(`/source_submission/${b1Row.id}/`)).status, 404)
  t.equal((await asAlice.get(`/source_submission/${all[0].id}/`)).status, 200)
  const csv = await asAlice.get(`/source_submission/?document_id=${w.campaignDoc}&format=csv`)
  t.equal(csv.status, 200)
  t.equal(csv.text.trim().split(/\r?\n/).join('\n'), 'campaign,geocode,n\nC,a1,10')
  t.match((await api.get(`/source_submission/?document_id=${w.campaignDoc}&format=csv`)).text, /C,b1,20/, 'the superuser gets every row')

  // Unmapped codes: visible to their uploader, not to another restricted user's eyes.
  const hers = await upload(api, 'unmapped.csv', 'campaign', 'campaign,geocode,n\nC,zz9,5\n', alice)
  const theirs = await upload(api, 'admins-unmapped.csv', 'campaign', 'campaign,geocode,n\nC,zz8,5\n')
  t.same(
    (await asAlice.get(`/source_submission/?document_id=${hers.id}`)).body.objects.map((r: Row) => r.location_code),
    ['zz9'],
  )
  t.same((await asAlice.get(`/source_submission/?document_id=${theirs.id}`)).body.objects, [])
  t.same(
    (await client(app, bob).get(`/source_submission/?document_id=${theirs.id}`)).body.objects.map((r: Row) => r.location_code),
    ['zz8'],
    'a user without a responsibility reads every row',
  )
})

t.test("another user's responsibility is not found; one's own is", async (t) => {
  const { api, asAlice, aliceId, bobId, w } = await setup(t)
  const bobs = await api.post('/location_responsibility/', { user_id: bobId, top_lvl_location_id: w.B })
  t.equal(bobs.status, 201)
  t.equal((await asAlice.get(`/location_responsibility/${bobs.body.id}/`)).status, 404)
  const own = (await asAlice.get(`/location_responsibility/?user_id=${aliceId}`)).body.objects[0]
  t.equal((await asAlice.get(`/location_responsibility/${own.id}/`)).status, 200)
  t.equal((await asAlice.get(`/location_responsibility/?user_id=${bobId}`)).status, 403)
})

t.test('shared metadata: a restricted user can change no indicator, campaign, type or tag', async (t) => {
  const { api, asAlice, db, w } = await setup(t)
  const before = await snapshot(db)
  const types = (await api.get('/location_type/')).body.objects as Row[]
  const campaignType = (await api.get('/campaign_type/')).body.objects[0] as Row
  const attempts: Array<[string, Row]> = [
    [`/indicator/${w.n}/`, { name: 'renamed' }],
    [`/campaign/${w.C}/`, { name: 'renamed' }],
    [`/campaign_type/${campaignType.id}/`, { name: 'renamed' }],
    [`/location_type/${types.find((ty) => ty.name === 'District')!.id}/`, { name: 'Renamed' }],
  ]
  for (const [url, body] of attempts) {
    const res = await asAlice.patch(url, body)
    t.equal(res.status, 403, `PATCH ${url}`)
    t.equal(res.body.code, 'FORBIDDEN')
  }
  for (const path of ['/indicator/', '/campaign/', '/campaign_type/', '/location_type/', '/indicator_tag/', '/calculated_indicator_component/']) {
    t.equal((await asAlice.post(path, { name: 'x', short_name: 'x', tag_name: 'x' })).status, 403, `POST ${path}`)
  }
  t.equal((await asAlice.get(`/agg_refresh/?campaign_id=${w.C}`)).status, 403, 'nor recompute a whole campaign')
  // The list route reads its parameters before the handler: who may call is checked first, so a refused
  // user learns nothing from a 400 about what the door would take, and nothing is queued.
  for (const path of ['/agg_refresh/?campaign_id=abc', '/agg_refresh/', '/agg_refresh/?campaign_id=1&campaign_id=2']) {
    for (const prefer of [undefined, 'respond-async']) {
      const refused = await api.get(path, prefer ? { ...alice, prefer } : alice)
      t.equal(refused.status, 403, `GET ${path}${prefer ? ' (respond-async)' : ''}: 403 before any 400`)
      t.equal(refused.body.code, 'FORBIDDEN')
    }
  }
  t.equal((await api.get('/job/')).body.meta.total_count, 0, 'no job was queued')
  t.equal((await asAlice.get('/cache_meta/')).status, 403)
  t.same(await snapshot(db), before, 'nothing changed')
})

t.test("answers reveal nothing outside the subtree: mappings' names, others' ingest stats, unique-key clashes", async (t) => {
  const { api, asAlice, w } = await setup(t)
  const maps = (await asAlice.get(`/source_object_map/?document_id=${w.campaignDoc}`)).body.objects as Row[]
  t.notOk(
    maps.some((m) => m.source_object_code === 'b1'),
    'the mapping to b1 is not listed',
  )
  t.ok(
    maps.some((m) => m.source_object_code === 'a1' && m.master_object_name === 'a1'),
    'the mapping inside is',
  )
  const b1Map = (await api.get(`/source_object_map/?document_id=${w.campaignDoc}&source_object_code=b1`)).body.objects[0]
  t.equal((await asAlice.get(`/source_object_map/${b1Map.id}/`)).status, 404)

  const doc = await api.get(`/document/${w.campaignDoc}/`)
  t.ok(doc.body.ingest_stats, 'the superuser reads the ingest stats')
  t.equal((await asAlice.get(`/document/${w.campaignDoc}/`)).body.ingest_stats, null, "alice does not read another's")

  const locationType = (await api.get('/location_type/')).body.objects.find((ty: Row) => ty.name === 'District').id
  const clash = await asAlice.post('/location/', { name: 'dup', location_code: 'b1', location_type_id: locationType, parent_location_id: w.A })
  t.equal(clash.status, 409)
  t.equal(clash.body.message, 'key: "location_code" with this value already exists')
  const adminClash = await api.post('/location/', { name: 'dup', location_code: 'b1', location_type_id: locationType, parent_location_id: w.A })
  t.equal(adminClash.body.message, 'key: "location_code" with value: "b1" already exists', 'the superuser gets the value')
})

t.test('documents: a restricted user changes only their own, and their details', async (t) => {
  const { api, asAlice, w } = await setup(t)
  const mine = await upload(api, 'mine.csv', 'campaign', 'campaign,geocode,n\nC,a1,3\n', alice)
  const patchOther = await asAlice.patch(`/document/${w.campaignDoc}/`, { doc_title: 'taken over' })
  t.equal(patchOther.status, 403)
  t.equal(patchOther.body.code, 'DOCUMENT_FORBIDDEN')
  t.equal((await asAlice.patch(`/document/${mine.id}/`, { doc_title: 'renamed' })).status, 200)
  const type = (await api.post('/doc_detail_type/', { name: 'status' })).body.id
  t.equal((await asAlice.post('/doc_detail/', { document_id: w.campaignDoc, doc_detail_type_id: type, doc_detail_value: 'x' })).status, 403)
  t.equal((await asAlice.post('/doc_detail/', { document_id: mine.id, doc_detail_type_id: type, doc_detail_value: 'x' })).status, 201)
})

t.test('repeated parameters: a filter given twice with different values is refused; lists concatenate', async (t) => {
  const { api, w } = await setup(t)
  const twice = await api.get(`/campaign/?id=${w.C}&id=${w.C + 1}`)
  t.equal(twice.status, 400)
  t.match(twice.body, { code: 'DUPLICATE_PARAMETER', message: 'Parameter id is given more than once with different values' })
  t.equal((await api.get(`/campaign/?id=${w.C}&id=${w.C}`)).status, 200, 'the same value twice is harmless')
  t.equal((await api.get(`/location/?name__startswith=a&name__startswith=b`)).status, 400)
  const lists = await api.get(`/location/?location_id__in=${w.a1}&location_id__in=${w.b1}`)
  t.same(lists.body.objects.map((l: Row) => l.id).sort(), [w.a1, w.b1].sort(), 'location_id__in parts are one list')
})

t.test('after every attempt of a restricted user, every datapoint table and the shared metadata are byte-identical', async (t) => {
  const { api, asAlice, db, w } = await setup(t)
  const before = await snapshot(db)
  const bMap = (await api.get(`/source_object_map/?document_id=${w.campaignDoc}&source_object_code=b1`)).body.objects[0]
  const bRow = (await api.get(`/campaign_datapoint/?indicator__in=${w.n}&campaign__in=${w.C}&location_id__in=${w.b1}`)).body.objects[0]
  const bDate = (await api.get(`/date_datapoint/?indicator__in=${w.cases}&location_id__in=${w.b1}`)).body.objects[0]
  const statuses: number[] = []
  const attempt = async (res: Promise<{ status: number }>) => statuses.push((await res).status)
  await attempt(asAlice.patch(`/source_object_map/${bMap.id}/`, { master_object_id: w.a1 }))
  await attempt(asAlice.post('/source_object_map/', { content_type: 'location', source_object_code: 'q', master_object_id: w.b1 }))
  await attempt(asAlice.get(`/refresh_master/?document_id=${w.campaignDoc}`))
  await attempt(asAlice.get(`/transform_upload/?document_id=${w.dateDoc}`))
  await attempt(asAlice.get(`/queue_process/?document_id=${w.campaignDoc}`))
  await attempt(asAlice.get(`/agg_refresh/?campaign_id=${w.C}`))
  await attempt(asAlice.get('/cache_meta/'))
  await attempt(asAlice.patch(`/campaign_datapoint/${bRow.id}/`, { value: 0 }))
  await attempt(asAlice.post('/campaign_datapoint/', { indicator_id: w.n, location_id: w.b1, campaign_id: w.C, value: 1 }))
  await attempt(asAlice.post('/campaign_datapoint/', { id: bRow.id, value: 1 }))
  await attempt(asAlice.patch(`/date_datapoint/${bDate.id}/`, { value: 0 }))
  await attempt(asAlice.post('/date_datapoint/', { indicator_id: w.cases, location_id: w.B, data_date: '2015-01-01', value: 9 }))
  await attempt(asAlice.delete(`/campaign_datapoint/${bRow.id}/`))
  await attempt(asAlice.patch(`/location/${w.b1}/`, { name: 'mine now', parent_location_id: w.A }))
  await attempt(asAlice.patch(`/location/${w.A}/`, { parent_location_id: null }))
  await attempt(asAlice.post('/location/', { name: 'new root', location_code: 'nr', location_type_id: 1 }))
  await attempt(asAlice.patch(`/indicator/${w.n}/`, { data_format: 'pct' }))
  for (const csv of ['campaign,geocode,n\nC,b1,1\nC,R,1\n', 'campaign,geocode,n\nC,B,99\n']) {
    const { run } = await upload(api, `attack-${statuses.length}.csv`, 'campaign', csv, alice)
    statuses.push(run.status)
  }
  t.ok(
    statuses.every((s) => s === 200 || (s >= 400 && s < 500)),
    `every attempt was answered: ${statuses.join(' ')}`,
  )
  t.same(await snapshot(db), before, 'byte-identical')
})
