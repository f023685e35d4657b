// Read-only links to a dashboard: made by its owner (or a superuser), opened without credentials, for
// that dashboard and its files only, never more than the creator may see now, revoked at once on
// every process, ended by expiry or the creator's deactivation; tokens stored as hashes.
import { createHash } from 'node:crypto'
import t from 'tap'
import { buildApp } from '../app.js'
import { loadDemoData } from '../lib/engine/demo.js'
import { admin, alice, build, engine, ROOT } from './helper.js'
import { join } from 'node:path'

async function demo(t: Parameters<typeof build>[0], config = {}) {
  const harness = await build(t, config)
  await loadDemoData(harness.db)
  const call = (method: string, url: string, headers: Record<string, string> = admin, payload?: unknown) =>
    harness.app.inject({ method: method as 'GET', url: `/api/v1${url}`, headers, payload: payload as never })
  const get = (url: string, headers: Record<string, string> = admin) => call('GET', url, headers)
  const ids = async (path: string, field: string) =>
    new Map(((await get(path)).json().objects as Array<Record<string, unknown>>).map((o) => [o[field] as string, o.id as number]))
  const location = await ids('/location/?limit=0', 'name')
  const dashboardId = (await ids('/dashboard/?limit=0', 'title')).get('Campaign overview')!
  const share = async (body: Record<string, unknown>, headers = admin) => call('POST', '/dashboard_share/', headers, body)
  /** The provinces' values a shared view's column chart holds, by location id. */
  const columnValues = (body: { data: { charts: unknown } }) => {
    const chart = Object.values(body.data.charts as Record<string, { uuid: string; objects: Array<{ location_id: number; value: number }> }>).find(
      (c) => c.uuid === 'demo-missed-by-province',
    )!
    return new Map(chart.objects.map((o) => [o.location_id, o.value]))
  }
  return { ...harness, call, get, location, dashboardId, share, columnValues }
}

t.test('a link: made by the owner, opened without credentials, its dashboard and files only', async (t) => {
  const { db, call, get, dashboardId, share, columnValues } = await demo(t)
  const made = await share({ dashboard_id: dashboardId })
  t.equal(made.statusCode, 201, made.body)
  const { id, token, url } = made.json()
  t.match(token, /^[\w-]{43}$/)
  t.equal(url, `/app/#/shared/${token}`)
  const stored = await db.selectFrom('dashboard_share').select('token_hash').where('id', '=', id).executeTakeFirstOrThrow()
  t.equal(stored.token_hash, createHash('sha256').update(token).digest('hex'), 'only the hash is stored')
  t.notMatch((await get('/dashboard_share/')).body, token, 'the token is never listed')

  const open = await call('GET', `/shared/${token}/`, {})
  t.equal(open.statusCode, 200, open.body)
  t.equal(open.headers['cache-control'], 'public, no-cache', 'a public URL, revalidated at every use')
  t.equal(open.headers['referrer-policy'], 'no-referrer')
  const body = open.json()
  t.equal(body.dashboard.title, 'Campaign overview')
  t.equal(columnValues(body).size, 3, 'the three provinces')
  t.ok(body.catalog.locations.length > 3, 'the names it shows')
  t.ok(
    Object.keys(body.reads).some((path) => path.startsWith('/geo/')),
    "the map's shapes read for the page",
  )
  const again = await call('GET', `/shared/${token}/`, { 'if-none-match': open.headers.etag as string })
  t.equal(again.statusCode, 304, 'kept, with an ETag')

  const pdf = await call('GET', `/shared/${token}/export_file/?type=pdf`, {})
  t.equal(pdf.statusCode, 200)
  t.equal(pdf.rawPayload.subarray(0, 5).toString(), '%PDF-', "the dashboard's PDF through the link")
  const column = body.dashboard.rows[0].charts[0].id
  t.equal((await call('GET', `/shared/${token}/export_file/?type=svg&chart_id=${column}`, {})).statusCode, 200, 'a chart of it')

  // Another dashboard: not through this link.
  const other = await call('POST', '/dashboard/', admin, { title: 'Other', rows: [] })
  const otherChart = await call('POST', '/custom_chart/', admin, {
    uuid: 'other',
    title: 'Other chart',
    chart_json: { type: 'ColumnChart', indicator_ids: [] },
  })
  const refusals: Array<[string, string, number]> = [
    ['GET', `/shared/${token}/export_file/?type=pdf&dashboard_id=${other.json().id}`, 400],
    ['GET', `/shared/${token}/export_file/?type=pdf&path=${encodeURIComponent(`#/dashboard/${other.json().id}`)}`, 400],
    ['GET', `/shared/${token}/export_file/?type=pdf&chart_id=${otherChart.json().id}`, 404],
  ]
  for (const [method, path, status] of refusals) t.equal((await call(method, path, {})).statusCode, status, `${method} ${path}`)
  // No write through the link: no such route, so no credentials for one.
  for (const method of ['POST', 'PATCH', 'DELETE']) t.equal((await call(method, `/shared/${token}/`, {}, {})).statusCode, 401, `${method} through the link`)
  // The token is no credential anywhere else.
  for (const authorization of [`Bearer ${token}`, `ApiKey admin:${token}`]) {
    t.equal((await call('GET', '/datapoint_history/', { authorization })).statusCode, 401, `datapoint_history with ${authorization.split(' ')[0]}`)
    t.equal((await call('GET', `/dashboard/${dashboardId}/`, { authorization })).statusCode, 401)
    t.equal((await call('PATCH', `/dashboard/${dashboardId}/`, { authorization }, { title: 'x' })).statusCode, 401, 'no write')
    t.equal((await call('POST', '/campaign_datapoint/', { authorization }, { value: 1 })).statusCode, 401, 'no write')
  }
  t.equal((await call('GET', '/shared/not-a-token/', {})).statusCode, 404)
  t.equal((await call('GET', `/shared/${'A'.repeat(43)}/`, {})).statusCode, 404)

  // Revoked: gone at once.
  t.equal((await call('DELETE', `/dashboard_share/${id}/`)).statusCode, 204)
  const gone = await call('GET', `/shared/${token}/`, {})
  t.equal(gone.statusCode, 404)
  t.equal(gone.json().code, 'SHARE_NOT_FOUND')
  t.equal((await call('GET', `/shared/${token}/export_file/?type=pdf`, {})).statusCode, 404)
})

t.test('who may share, and a link never shows more than its creator may see now', async (t) => {
  const { db, call, get, aliceId, location, dashboardId, share, columnValues } = await demo(t)
  t.equal((await share({ dashboard_id: dashboardId }, alice)).statusCode, 403, "not someone else's dashboard")
  await db
    .insertInto('location_permission')
    .values({ user_id: aliceId, top_lvl_location_id: location.get('Northmarch')! })
    .execute()
  // Her own dashboard of the demo's column chart.
  const charts = (await get('/custom_chart/?limit=0')).json().objects as Array<{ id: number; uuid: string }>
  const column = charts.find((c) => c.uuid === 'demo-missed-by-province')!.id
  const hers = await call('POST', '/dashboard/', alice, { title: 'Mine', rows: [{ charts: [column] }] })
  t.equal(hers.statusCode, 201, hers.body)
  const mine = hers.json().id
  t.equal((await share({ dashboard_id: mine, location_id: location.get('Eastvale') }, alice)).statusCode, 403, 'not outside her part')
  t.equal((await share({ dashboard_id: mine, location_id: location.get('Veridia') }, alice)).statusCode, 403, 'not above it')
  t.equal((await share({ dashboard_id: mine, expires_at: '2001-01-01T00:00:00' }, alice)).statusCode, 400, 'not expired already')
  t.equal((await share({ dashboard_id: 999999 }, alice)).statusCode, 400)
  const made = await share({ dashboard_id: mine }, alice)
  t.equal(made.statusCode, 201, made.body)
  const { id, token } = made.json()
  const open = async () => call('GET', `/shared/${token}/`, {})
  // The chart is saved for the viewer's location: the link reads as her, so her districts.
  const districts = ['Ashford', 'Brindle', 'Coldwater'].map((name) => location.get(name))
  t.same([...columnValues((await open()).json()).keys()].sort(), districts.sort(), 'her districts only')
  const svg = (await call('GET', `/shared/${token}/export_file/?type=svg`, {})).body
  t.match(svg, 'Ashford')
  t.notMatch(svg, 'Eastvale', 'her part only in the file too')

  // Lists: her own links; a superuser's, every link.
  t.same(
    ((await get('/dashboard_share/', alice)).json().objects as Array<{ id: number }>).map((s) => s.id),
    [id],
  )
  const adminShare = await share({ dashboard_id: dashboardId })
  t.same(
    ((await get('/dashboard_share/', alice)).json().objects as Array<{ id: number }>).map((s) => s.id),
    [id],
    "not the admin's",
  )
  t.equal((await call('DELETE', `/dashboard_share/${adminShare.json().id}/`, alice)).statusCode, 404, 'nor may she revoke it')
  t.equal(((await get('/dashboard_share/')).json().objects as unknown[]).length, 2)

  // Her rights shrink to Ashford, a district of Northmarch: the link shrinks with them.
  await db
    .updateTable('location_permission')
    .set({ top_lvl_location_id: location.get('Ashford')! })
    .where('user_id', '=', aliceId)
    .execute()
  const shrunk = await open()
  t.equal(shrunk.statusCode, 200)
  t.notOk(columnValues(shrunk.json()).has(location.get('Northmarch')!), 'Northmarch no longer shown whole')
  t.notMatch((await call('GET', `/shared/${token}/export_file/?type=svg`, {})).body, />81</, "not Northmarch's sum")

  // Deactivated: the link ends.
  await call('PATCH', `/user/${aliceId}/`, admin, { is_active: false })
  t.equal((await open()).statusCode, 404, "a deactivated creator's link is gone")
  await call('PATCH', `/user/${aliceId}/`, admin, { is_active: true })
  t.equal((await open()).statusCode, 200, 'and back with her')
  // Expired.
  await db
    .updateTable('dashboard_share')
    .set({ expires_at: '2001-01-01T00:00:00' } as never)
    .where('id', '=', id)
    .execute()
  t.equal((await open()).statusCode, 404, 'an expired link is gone')
})

t.test('a revoked link is gone on every process at once', { skip: engine !== 'postgres' && 'needs PostgreSQL: two processes on one database' }, async (t) => {
  const { database, call, dashboardId, share } = await demo(t)
  // A second server on the same database: its own cache of links.
  const other = await buildApp({ database, logger: false, config: { DATA_DIR: join(ROOT, '.data', 'test'), MAX_EVENT_LOOP_DELAY_MS: 0 } })
  await other.ready()
  t.teardown(() => other.close())
  const { id, token } = (await share({ dashboard_id: dashboardId })).json()
  const openThere = () => other.inject({ method: 'GET', url: `/api/v1/shared/${token}/` })
  t.equal((await openThere()).statusCode, 200, 'open on the other process (and its link kept)')
  t.equal((await call('DELETE', `/dashboard_share/${id}/`)).statusCode, 204)
  let status = 200
  for (let i = 0; i < 40 && status === 200; i++) {
    await new Promise((resolve) => setTimeout(resolve, 25))
    status = (await openThere()).statusCode
  }
  t.equal(status, 404, 'the other process refuses it within a second')
})

t.test('links are limited per client like anonymous reads', async (t) => {
  const { dashboardId, share, app } = await demo(t, { RATE_LIMIT_DETECT_MAX: 3 })
  const { token } = (await share({ dashboard_id: dashboardId })).json()
  const statuses = []
  for (let i = 0; i < 5; i++) statuses.push((await app.inject({ method: 'GET', url: `/api/v1/shared/${token}/`, remoteAddress: '203.0.113.9' })).statusCode)
  t.same(statuses, [200, 200, 200, 429, 429])
})

t.test('a link keeps the view it was made from; a bad view is a 400', async (t) => {
  const { call, get, location, dashboardId, share, columnValues } = await demo(t)
  const campaigns = new Map(((await get('/campaign/?limit=0')).json().objects as Array<{ id: number; name: string }>).map((c) => [c.name, c.id]))
  const october = campaigns.get('October 2016 - NID - bOPV')!
  const eastvale = location.get('Eastvale')!
  const view = { campaign: october, location: eastvale, start_date: '2016-01-01', end_date: '2016-12-31' }
  const made = await share({ dashboard_id: dashboardId, view })
  t.equal(made.statusCode, 201, made.body)
  const { id, token, url } = made.json()
  t.equal(url, `/app/#/shared/${token}?campaign=${october}&location=${eastvale}&start_date=2016-01-01&end_date=2016-12-31`, 'its address opens at the view')
  t.same((await get(`/dashboard_share/${id}/`)).json().view, view, 'listed with its view')

  const open = (await call('GET', `/shared/${token}/`, {})).json()
  t.same(open.view, view, 'the link answers its view')
  t.same(open.data.view, { campaign: october, location: eastvale, start_date: '2016-01-01', end_date: '2016-12-31' }, 'and its charts are read under it')
  const districts = ['Dunmore', 'Eastwick', 'Fallow'].map((name) => location.get(name))
  t.same([...columnValues(open).keys()].sort(), districts.sort(), "October at Eastvale: Eastvale's districts")
  const octoberRows = (
    await get(
      `/campaign_datapoint/?indicator__in=${open.data.charts[Object.keys(open.data.charts)[0]].read.match(/indicator__in=(\d+)/)[1]}&campaign__in=${october}&location_id=${eastvale}&location_depth=1`,
    )
  ).json().objects
  t.same([...columnValues(open).values()].sort(), octoberRows.map((r: { value: number }) => r.value).sort(), "October's values")
  // The reader's own view (she changed it in the page) wins over the link's.
  const march = campaigns.get('March 2016 - NID - OPV')!
  t.equal((await call('GET', `/shared/${token}/?campaign=${march}`, {})).json().data.view.campaign, march)

  const plain = (await call('GET', `/shared/${(await share({ dashboard_id: dashboardId })).json().token}/`, {})).json()
  t.same(plain.view, { campaign: null, location: null, start_date: null, end_date: null }, 'a link without a view: none')
  for (const bad of [{ campaign: 'first' }, { when: 1 }, { start_date: '2016-13-45' }, [1], { campaign: 999999 }, { location: 999999 }]) {
    const res = await share({ dashboard_id: dashboardId, view: bad })
    t.equal(res.statusCode, 400, `${JSON.stringify(bad)}: 400 (${res.json().message})`)
  }
})

t.test('a link carries its label and the end of its address, to tell links apart', async (t) => {
  const { db, get, dashboardId, share } = await demo(t)
  const first = await share({ dashboard_id: dashboardId, label: '  Ministry, weekly review  ' })
  t.equal(first.statusCode, 201, first.body)
  const second = await share({ dashboard_id: dashboardId, label: 'Partner NGO' })
  const [a, b] = [first.json(), second.json()]
  const listed = (await get(`/dashboard_share/?dashboard_id=${dashboardId}`)).json().objects as Array<{ id: number; label: string; token_end: string }>
  t.same(
    listed.map((l) => [l.id, l.label, l.token_end]).sort(),
    [
      [a.id, 'Ministry, weekly review', a.token.slice(-4)],
      [b.id, 'Partner NGO', b.token.slice(-4)],
    ].sort(),
    'each listed with its label (trimmed) and the last 4 characters of its address',
  )
  t.notMatch(JSON.stringify(listed), a.token.slice(0, 39), 'never more of the token')
  const stored = await db.selectFrom('dashboard_share').select(['label', 'token_end']).where('id', '=', a.id).executeTakeFirstOrThrow()
  t.same(stored, { label: 'Ministry, weekly review', token_end: a.token.slice(-4) })

  t.equal((await share({ dashboard_id: dashboardId, label: '   ' })).json().label, null, 'a label of blanks is none')
  t.equal((await share({ dashboard_id: dashboardId })).statusCode, 201, 'a label is not required of API clients')
  for (const [label, why] of [
    ['x'.repeat(101), 'longer than 100 characters'],
    [{ text: 'x' }, 'not text'],
  ] as const) {
    const res = await share({ dashboard_id: dashboardId, label })
    t.equal(res.statusCode, 400, `a label ${why}: 400 (${res.json().message})`)
    t.match(res.json().message, /label/, 'naming the field')
  }
  const ends = (await get(`/dashboard_share/?dashboard_id=${dashboardId}&limit=0`)).json().objects.map((l: { token_end: string }) => l.token_end)
  t.ok(
    ends.every((end: string) => /^[\w-]{4}$/.test(end)),
    'every link has its end',
  )
})
