// resource-api §6: a user responsible for one province sees nothing of its sibling (or of the root
// above it) from any read resource, whatever location parameters are sent; writes outside are 403,
// detail reads outside are 404.
import t from 'tap'
import { sql } from 'kysely'
import { build, alice } from './helper.js'
import { client } from './api.js'
import { resources } from '../resources/index.js'
import type { Resource } from '../lib/resource.js'

type Api = ReturnType<typeof client>
type Row = Record<string, unknown>

/** Root R → provinces A and B → districts a1 and b1, with data everywhere, written by the admin. */
async function world(api: Api) {
  const id = async (res: Promise<{ status: number; body: { id: number }; text: string }>) => {
    const r = await res
    if (r.status !== 201) throw new Error(r.text)
    return r.body.id
  }
  const type = (name: string, admin_level: number) => id(api.post('/location_type/', { name, admin_level }))
  const [country, province, district] = [await type('Country', 0), await type('Province', 1), await type('District', 2)]
  const place = (name: string, location_type_id: number, parent_location_id?: number) =>
    id(api.post('/location/', { name, location_code: name, location_type_id, parent_location_id }))
  const R = await place('R', country)
  const A = await place('A', province, R)
  const B = await place('B', province, R)
  const a1 = await place('a1', district, A)
  const b1 = await place('b1', district, B)
  const ct = await id(api.post('/campaign_type/', { name: 'NID' }))
  const C = await id(api.post('/campaign/', { name: 'C', campaign_type_id: ct, start_date: '2016-01-01', end_date: '2016-01-05' }))
  const n = await id(api.post('/indicator/', { name: 'n', short_name: 'n', data_format: 'int' }))
  const lpd = await id(api.post('/indicator/', { name: 'LPD', short_name: 'LPD', data_format: 'class' }))
  const cases = await id(api.post('/indicator/', { name: 'cases', short_name: 'cases', data_format: 'date_int', resource_name: 'date' }))
  for (const [location, value] of [[a1, 1], [b1, 2], [B, 5]]) {
    await id(api.post('/campaign_datapoint/', { indicator_id: n, location_id: location, campaign_id: C, value }))
    await id(api.post('/campaign_datapoint/', { indicator_id: lpd, location_id: location, campaign_id: C, value: 1 }))
  }
  // An uploaded campaign file (doc_datapoint, campaign_doc_result) and date file (date_doc_result).
  for (const [content_type, code, master] of [['location', 'a1', a1], ['location', 'b1', b1], ['campaign', 'C', C], ['indicator', 'n', n], ['indicator', 'cases', cases]] as const) {
    await id(api.post('/source_object_map/', { content_type, source_object_code: code, master_object_id: master }))
  }
  const upload = async (title: string, file_type: string, csv: string) => {
    const doc = await id(api.post('/document/', { docfile: Buffer.from(csv).toString('base64'), doc_title: title, file_type }))
    const run = await api.get(`/transform_upload/?document_id=${doc}`)
    if (run.status !== 200) throw new Error(run.text)
    return doc
  }
  const campaignDoc = await upload('campaign.csv', 'campaign', 'campaign,geocode,n\nC,a1,10\nC,b1,20\n')
  const dateDoc = await upload('date.csv', 'date', 'unique_key,geocode,data_date,cases\n1,a1,2015-01-01,1\n2,b1,2015-01-01,2\n3,b1,2015-02-01,3\n')
  for (const location of [a1, b1]) {
    const polygon = { type: 'Polygon', coordinates: [[[0, 0], [1, 0], [1, 1], [0, 0]]] }
    const geo = await api.post('/geo/', { location_id: location, geo_json: polygon })
    if (geo.status !== 201) throw new Error(geo.text)
  }
  return { R, A, B, a1, b1, C, n, lpd, cases, campaignDoc, dateDoc }
}

t.test('a user responsible for province A gets nothing of province B or the root', async (t) => {
  const { app, aliceId } = await build(t)
  const api = client(app)
  const w = await world(api)
  t.equal((await api.post('/location_responsibility/', { user_id: aliceId, top_lvl_location_id: w.A })).status, 201)
  const asAlice = client(app, alice)
  const permitted = new Set([w.A, w.a1])

  const selections = [
    '',
    `location_id=${w.B}`,
    `location_id=${w.B}&location_depth=1`,
    `location_id__in=${w.B},${w.b1}`,
    `location_id__in=${w.B},${w.b1},${w.a1}`,
    `location_id=${w.R}`,
    `location_id=${w.R}&location_depth=1`,
    `location_id=${w.R}&location_depth=2`,
    `location_id=${w.R}&location_type=District`,
    `location_id=${w.R}&location_depth=2&filter_indicator=LPD&filter_value=1`,
    `filter_indicator=LPD&filter_value=1&campaign__in=${w.C}`,
  ]
  const reads: Array<[string, string]> = [
    [`/campaign_datapoint/?indicator__in=${w.n},${w.lpd}&campaign__in=${w.C}`, 'location_id'],
    [`/campaign_datapoint/?indicator__in=${w.n},${w.lpd}&campaign__in=${w.C}&chart_type=ColumnChart`, 'location_id'],
    [`/date_datapoint/?indicator__in=${w.cases}`, 'location_id'],
    [`/date_datapoint/?indicator__in=${w.cases}&group_by_time=year`, 'location_id'],
    [`/date_datapoint/?indicator__in=${w.cases}&group_by_time=all_time`, 'location_id'],
    [`/doc_datapoint/?document_id=${w.campaignDoc}`, 'location_id'],
    [`/date_doc_result/?document_id=${w.dateDoc}`, 'location_id'],
    [`/campaign_doc_result/?document_id=${w.campaignDoc}`, 'location_id'],
    ['/geo/?', 'location_id'],
    ['/location/?', 'id'],
  ]
  let requests = 0
  let rowsSeen = 0
  for (const [url, column] of reads) {
    for (const selection of selections) {
      const res = await asAlice.get(`${url}${url.endsWith('?') ? '' : '&'}${selection}`)
      requests++
      // doc_datapoint and the document results take location_id / location_id__in as plain filters
      // and refuse the selection-only parameters: a refusal shows nothing either.
      if (res.status === 400 && res.body.code === 'UNKNOWN_FILTER' && url.includes('document_id')) continue
      if (res.status !== 200) {
        t.fail(`${url} ${selection}: ${res.status} ${res.text}`)
        continue
      }
      const outside = (res.body.objects as Row[]).filter((o) => !permitted.has(o[column] as number))
      rowsSeen += res.body.objects.length
      if (outside.length) t.fail(`${url} ${selection}: rows outside the subtree ${JSON.stringify(outside)}`)
      const metaOutside = ((res.body.meta.location_ids ?? []) as number[]).filter((l) => !permitted.has(l))
      if (metaOutside.length) t.fail(`${url} ${selection}: meta.location_ids outside ${metaOutside}`)
    }
  }
  t.pass(`${requests} reads, ${rowsSeen} rows, none outside A's subtree`)
  t.ok(rowsSeen > 0, 'the reads do return the permitted rows')

  // The same reads as the admin do reach B: the matrix is not empty by accident.
  const adminB = await api.get(`/campaign_datapoint/?indicator__in=${w.n}&campaign__in=${w.C}&location_id=${w.B}`)
  t.same(adminB.body.objects.map((o: Row) => o.value), [5])
  t.same((await asAlice.get(`/campaign_datapoint/?indicator__in=${w.n}&campaign__in=${w.C}&location_id=${w.R}&location_depth=2`)).body.objects.map((o: Row) => [o.location_id, o.value]), [[w.a1, 10]])
  // Grouped date sums only count the permitted descendants: A gets a1's case, not b1's.
  t.same((await asAlice.get(`/date_datapoint/?indicator__in=${w.cases}&group_by_time=all_time`)).body.objects.map((o: Row) => [o.location_id, o.value]), [[w.A, 1]])

  // CSV exports (long and wide) go through the same reads.
  for (const url of [`/campaign_datapoint/?indicator__in=${w.n}&campaign__in=${w.C}&format=csv`, `/campaign_datapoint/?indicator__in=${w.n}&campaign__in=${w.C}&format=csv&shape=wide`, `/date_datapoint/?indicator__in=${w.cases}&format=csv&shape=wide&group_by_time=year&location_id=${w.R}&location_depth=1`]) {
    const csv = await asAlice.get(url)
    t.equal(csv.status, 200)
    t.notMatch(csv.text, /\bb1\b|\bB\b|(^|\n)R,/, `${url}: nothing of B`)
  }

  // Detail reads outside are 404; writes outside are 403 LOCATION_FORBIDDEN; inside they work.
  const bRow = (await api.get(`/campaign_datapoint/?indicator__in=${w.n}&campaign__in=${w.C}&location_id__in=${w.b1}`)).body.objects[0]
  t.equal((await asAlice.get(`/campaign_datapoint/${bRow.id}/`)).status, 404)
  t.equal((await asAlice.patch(`/campaign_datapoint/${bRow.id}/`, { value: 0 })).status, 404)
  const bDate = (await api.get(`/date_datapoint/?indicator__in=${w.cases}&location_id__in=${w.b1}`)).body.objects[0]
  t.equal((await asAlice.get(`/date_datapoint/${bDate.id}/`)).status, 404)
  t.equal((await asAlice.get(`/location/${w.B}/`)).status, 404)
  const forbidden = await asAlice.post('/campaign_datapoint/', { indicator_id: w.lpd, location_id: w.R, campaign_id: w.C, value: 1 })
  t.equal(forbidden.status, 403)
  t.equal(forbidden.body.code, 'LOCATION_FORBIDDEN')
  t.equal(forbidden.body.message, `Location ${w.R} is outside your responsibility`)
  t.equal((await asAlice.post('/date_datapoint/', { indicator_id: w.cases, location_id: w.b1, data_date: '2016-01-01', value: 1 })).status, 403)
  const aDate = (await asAlice.get(`/date_datapoint/?indicator__in=${w.cases}&location_id__in=${w.a1}`)).body.objects[0]
  t.equal((await asAlice.patch(`/date_datapoint/${aDate.id}/`, { location_id: w.b1 })).status, 403, 'nor move a row out')
  t.equal((await asAlice.post('/date_datapoint/', { indicator_id: w.cases, location_id: w.a1, data_date: '2016-01-01', value: 1 })).status, 201)
  t.equal((await asAlice.delete(`/date_datapoint/${aDate.id}/`)).status, 403, 'only superusers delete')
})

t.test('access-control matrix: every resource and method, for anonymous, a wrong key, a restricted user and a superuser', async (t) => {
  // Hundreds of wrong keys from one address would (rightly) lock it out: test/protection.test.ts.
  const { app, aliceId, db } = await build(t, { AUTH_FAILURE_MAX: 100_000 })
  const api = client(app)
  const w = await world(api)
  t.equal((await api.post('/location_responsibility/', { user_id: aliceId, top_lvl_location_id: w.A })).status, 201)
  // A row in every other resource too, so each one has a detail to read and delete.
  const created = async (path: string, body: Row) => {
    const res = await api.post(path, body)
    if (res.status !== 201) throw new Error(`${path}: ${res.text}`)
    return res.body.id as number
  }
  const tag = await created('/indicator_tag/', { tag_name: 'Polio' })
  await created('/indicator_to_tag/', { indicator_id: w.n, indicator_tag_id: tag })
  await created('/calculated_indicator_component/', { indicator_id: w.lpd, indicator_component_id: w.n, calculation: 'PART_TO_BE_SUMMED' })
  await created('/custom_chart/', { uuid: 'chart-1', title: 'chart', chart_json: { type: 'table' } })
  await created('/dashboard/', { title: 'board' })
  await created('/user_group/', { user_id: aliceId, group_id: await created('/group/', { name: 'viewers' }) })
  await created('/doc_detail/', { doc_detail_type_id: await created('/doc_detail_type/', { name: 'status' }), document_id: w.campaignDoc, doc_detail_value: 'ok' })
  const asAlice = client(app, alice)
  const permitted = new Set([w.A, w.a1])
  const params: Record<string, number> = { indicator__in: w.n, campaign__in: w.C, document_id: w.campaignDoc, campaign_id: w.C, user_id: aliceId }
  const listUrl = (r: Resource) => `/api/v1/${r.name}/?${r.GET_params_required.map((p) => `${p}=${params[p]}`).join('&')}`
  const firstRow = async (r: Resource) => withId(r, (await api.get(listUrl(r))).body.objects?.[0] as Row | undefined)
  // geo's list shows features by location; its rows (polygons) have their own ids.
  const withId = async (r: Resource, row: Row | undefined) =>
    row && row.id === undefined
      ? { ...row, id: (await sql<{ id: number }>`select id from ${sql.table(r.table!)} where location_id = ${row.location_id}`.execute(db)).rows[0].id }
      : row
  const rowKey = (_r: Resource, row: Row) => row.id
  const outside = (r: Resource, row: Row) => r.location_column !== undefined && !permitted.has(row[r.location_column] as number)
  let checked = 0

  for (const r of resources) {
    const row = r.kind === 'model' ? await firstRow(r) : undefined
    const detail = `/api/v1/${r.name}/${row ? rowKey(r, row) : 1}/`
    const requests: Array<[string, string]> = [['GET', listUrl(r)], ['GET', `/api/v1/${r.name}/schema/`], ['POST', `/api/v1/${r.name}/`], ['PUT', detail], ['PATCH', detail], ['DELETE', detail], ['GET', detail]]
    for (const [method, url] of requests) {
      for (const [who, headers] of [['anonymous', {}], ['a wrong key', { authorization: `Bearer ${'0'.repeat(40)}` }]] as const) {
        const res = await app.inject({ method: method as 'GET', url, headers, payload: method === 'GET' ? undefined : {} })
        t.equal(res.statusCode, 401, `${who}: ${method} ${url}`)
        checked++
      }
    }

    // The restricted user: reads inside the subtree only, never a delete.
    t.equal((await asAlice.get(`/api/v1/${r.name}/schema/`)).status, 200, `alice: ${r.name} schema`)
    const list = await asAlice.get(listUrl(r))
    t.equal(list.status, 200, `alice: ${r.name} list`)
    const leaked = ((list.body.objects ?? []) as Row[]).filter((o) => outside(r, o))
    t.same(leaked, [], `alice: ${r.name} list holds nothing outside A`)
    checked += 2
    if (r.kind !== 'model') continue
    if (row) {
      const read = await asAlice.get(detail)
      t.equal(read.status, outside(r, row) ? 404 : 200, `alice: ${r.name} detail ${outside(r, row) ? 'outside' : 'inside'} her subtree`)
      const denied = await asAlice.delete(detail)
      if (r.methods.detail.includes('DELETE')) {
        t.equal(denied.status, 403, `alice: DELETE ${r.name}`)
        t.equal(denied.body.message, 'Only a superuser may delete')
      } else t.equal(denied.status, 405, `${r.name} is read-only`)
      checked += 2
    }
    if (r.write_requires_superuser) {
      t.equal((await asAlice.post(`/api/v1/${r.name}/`, {})).status, 403, `alice: POST ${r.name} needs a superuser`)
      checked++
    }
    // The superuser reads everything.
    t.equal((await api.get(listUrl(r))).status, 200, `admin: ${r.name} list`)
    if (row) t.equal((await api.get(detail)).status, 200, `admin: ${r.name} detail`)
    checked += 2
  }

  // The superuser deletes a row of every model resource that still has one (cascades may have taken some).
  let deleted = 0
  // Dependents first; the last row, so that `admin` (the first user) stays.
  for (const r of resources.filter((r) => r.kind === 'model' && r.methods.detail.includes('DELETE')).reverse()) {
    const list = await api.get(listUrl(r))
    t.equal(list.status, 200, `admin: ${r.name} list before the delete`)
    const rows = await Promise.all(((list.body.objects ?? []) as Row[]).map((o) => withId(r, o)))
    const row = rows.sort((a, b) => Number(b!.id) - Number(a!.id))[0]
    if (!row) {
      t.comment(`${r.name}: no row left`)
      continue
    }
    const res = await api.delete(`/api/v1/${r.name}/${rowKey(r, row)}/?cascade=true`)
    t.equal(res.status, 204, `admin: DELETE ${r.name}/${rowKey(r, row)}`, res.status === 204 ? {} : { body: res.text })
    deleted++
  }
  t.ok(deleted >= 19, `the superuser deleted rows of ${deleted} resources`)
  t.ok(checked > 400, `${checked} access checks`)
})
