// One request per dashboard: GET /dashboard/<id>/data/ answers every chart's rows under a view, each
// the same as the chart's own read (the path the app would call), with the requester's rights, through
// the read cache (honest on change) and with ETag / 304.
import { sql } from 'kysely'
import t from 'tap'
import { admin, alice, build } from './helper.js'
import { client } from './api.js'
import { dashboardOf, world } from './world.js'

t.test("a dashboard's data: every chart's rows, each the chart's own read", async (t) => {
  const harness = await build(t)
  const { app } = harness
  const api = client(app)
  const w = await world(api)
  const d = await dashboardOf(api, w)
  const res = await api.get(`/dashboard/${d.id}/data/`)
  t.equal(res.status, 200)
  t.same(Object.keys(res.body.charts).map(Number).sort(), [d.provinces, d.districts, d.cases].sort())
  t.same(res.body.view, { campaign: null, location: null, start_date: null, end_date: null })
  for (const [id, chart] of Object.entries(res.body.charts) as Array<[string, { read: string; objects: unknown[]; meta: Record<string, unknown> }]>) {
    const alone = await api.get(chart.read)
    t.equal(alone.status, 200, `chart ${id}: ${chart.read}`)
    t.same(chart.objects, alone.body.objects, `chart ${id}: the rows of its own read`)
    t.same(chart.meta.location_ids, alone.body.meta.location_ids)
  }
  t.match(
    res.body.charts[d.provinces].read,
    /^\/campaign_datapoint\/\?indicator__in=\d+&campaign__in=\d+&location_id=\d+&location_depth=1&chart_type=ColumnChart&with_coverage=1&limit=0$/,
  )
  t.match(res.body.charts[d.cases].read, /^\/date_datapoint\/.*group_by_time=month/, 'a chart_json saved as a string is read too')
  t.equal(res.body.charts[d.districts].objects.length, 2, 'two districts')

  // The view: a drill-down to province B reads B's children for the provinces chart.
  const drilled = await api.get(`/dashboard/${d.id}/data/?location=${w.B}`)
  t.same(drilled.body.view, { campaign: null, location: w.B, start_date: null, end_date: null })
  t.same(
    drilled.body.charts[d.provinces].objects.map((o: { location_id: number }) => o.location_id),
    [w.b1],
  )

  const etag = res.headers.etag as string
  t.ok(etag, 'an ETag')
  const again = await api.get(`/dashboard/${d.id}/data/`, { ...admin, 'if-none-match': etag })
  t.equal(again.status, 304, 'unchanged: 304')
  // A change anywhere drops the kept answer: the next one holds the new value.
  const a1Row = (await api.get(`/campaign_datapoint/?indicator__in=${w.n}&campaign__in=${w.C}&location_id__in=${w.a1}`)).body.objects[0]
  t.equal((await api.patch(`/campaign_datapoint/${a1Row.id}/`, { value: 99 })).status, 200)
  const changed = await api.get(`/dashboard/${d.id}/data/`, { ...admin, 'if-none-match': etag })
  t.equal(changed.status, 200, 'changed: a new answer')
  t.ok(
    changed.body.charts[d.districts].objects.some((o: { location_id: number; value: number }) => o.location_id === w.a1 && o.value === 99),
    'with the new value',
  )

  // Cache-Control: no-cache reaches every read the answer is made of, not only the answer kept whole.
  const { db } = harness
  await sql`alter table datapoint_with_computed disable trigger datapoint_with_computed_data_changed`.execute(db)
  try {
    await db
      .updateTable('datapoint_with_computed')
      .set({ value: 7 })
      .where('location_id', '=', w.a1)
      .where('indicator_id', '=', w.n)
      .where('campaign_id', '=', w.C)
      .execute()
  } finally {
    await sql`alter table datapoint_with_computed enable trigger datapoint_with_computed_data_changed`.execute(db)
  }
  const a1Value = (body: { charts: Record<number, { objects: Array<{ location_id: number; value: number }> }> }) =>
    body.charts[d.districts].objects.find((o) => o.location_id === w.a1)?.value
  t.equal(a1Value((await api.get(`/dashboard/${d.id}/data/`)).body), 99, 'unheard, the kept answer is served')
  t.equal(a1Value((await api.get(`/dashboard/${d.id}/data/`, { ...admin, 'cache-control': 'no-cache' })).body), 7, 'no-cache: read afresh, chart by chart')
})

t.test("a restricted user's dashboard data holds only her part; bad views are 4xx", async (t) => {
  const { app, aliceId } = await build(t)
  const api = client(app)
  const w = await world(api)
  const d = await dashboardOf(api, w)
  t.equal((await api.post('/location_responsibility/', { user_id: aliceId, top_lvl_location_id: w.A })).status, 201)
  const hers = await api.get(`/dashboard/${d.id}/data/`, alice)
  t.equal(hers.status, 200)
  const locations = Object.values(hers.body.charts as Record<string, { objects?: Array<{ location_id: number }> }>).flatMap((c) =>
    (c.objects ?? []).map((o) => o.location_id),
  )
  t.notOk(locations.includes(w.b1) || locations.includes(w.B), 'nothing of province B')
  t.same(hers.body.charts[d.districts].objects, (await api.get(hers.body.charts[d.districts].read, alice)).body.objects, 'her own read of the chart')
  t.notSame(hers.body.charts[d.districts].objects, (await api.get(`/dashboard/${d.id}/data/`)).body.charts[d.districts].objects, 'not the admin’s')

  const bad = await api.get(`/dashboard/${d.id}/data/?campaign=first`)
  t.equal(bad.status, 400)
  t.match(bad.body.message, /campaign/)
  t.equal((await api.get('/dashboard/999999/data/')).status, 404)
  t.equal((await api.get('/dashboard/abc/data/')).status, 404)
  t.equal((await api.get(`/dashboard/${d.id}/data/`, {})).status, 401, 'no credentials: 401')
})

t.test("a chart saved for the viewer's location: the country's provinces for the admin, her districts for a provincial officer", async (t) => {
  const { app, db, aliceId } = await build(t)
  const { loadDemoData } = await import('../lib/engine/demo.js')
  await loadDemoData(db)
  const api = client(app)
  const names = new Map(((await api.get('/location/?limit=0')).body.objects as Array<{ id: number; name: string }>).map((l) => [l.name, l.id]))
  const dashboardId = (await api.get('/dashboard/?limit=0')).body.objects[0].id as number
  const column = async (headers?: Record<string, string>) => {
    const res = await api.get(`/dashboard/${dashboardId}/data/`, headers)
    t.equal(res.status, 200)
    const chart = Object.values(res.body.charts as Record<string, { uuid: string; objects: Array<{ location_id: number }> }>).find(
      (c) => c.uuid === 'demo-missed-by-province',
    )!
    return chart.objects.map((o) => o.location_id).sort()
  }
  const ids = (...list: string[]) => list.map((name) => names.get(name)!).sort()
  t.same(await column(), ids('Northmarch', 'Eastvale', 'Southreach'), 'the admin: the provinces')
  t.equal((await api.post('/location_responsibility/', { user_id: aliceId, top_lvl_location_id: names.get('Northmarch') })).status, 201)
  t.same(await column(alice), ids('Ashford', 'Brindle', 'Coldwater'), 'her: her three districts')
  // A drill-down is still a drill-down: the view's location at the chart's depth.
  const drilled = await api.get(`/dashboard/${dashboardId}/data/?location=${names.get('Brindle')}`, alice)
  t.equal(drilled.status, 200)
  // Another province's location is not hers: the API's own 403, carried as the chart's error.
  const outside = await api.get(`/dashboard/${dashboardId}/data/?location=${names.get('Eastvale')}`, alice)
  t.notOk(JSON.stringify(outside.body).includes(`"location_id":${names.get('Dunmore')}`), 'nothing of Eastvale')
})
