// The OpenAPI document describes everything the server answers: a validating proxy that nobody here
// wrote (Prism, `prism proxy`, which checks every request and response against the document and
// reports each mismatch in an `sl-violations` header) stands in front of the real server while the
// original front-end's traffic (form-urlencoded bodies, `format=json`, the original resource names,
// paths without the trailing slash, POST-that-updates) and every resource's list, detail, create,
// update and delete go through it. Not one violation is allowed.
import { spawn, type ChildProcess } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { ADMIN_KEY, build, tempDir } from './helper.js'
import type { Response } from './api.js'
import { moreUsers, SQUARE, upload, world } from './world.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const PRISM = join(ROOT, 'node_modules', '@stoplight', 'prism-cli', 'dist', 'index.js')
const FORM = 'application/x-www-form-urlencoded'

async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}

/** `prism proxy` in front of `upstream`; resolves once it listens. */
async function startProxy(document: string, upstream: string): Promise<{ url: string; process: ChildProcess }> {
  const port = await freePort()
  const child = spawn(process.execPath, [PRISM, 'proxy', document, upstream, '--port', String(port), '--host', '127.0.0.1', '--errors', 'false'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`prism did not start: ${output.slice(-2000)}`)), 90_000)
    const read = (chunk: Buffer) => {
      output += chunk.toString()
      if (output.includes('Prism is listening')) {
        clearTimeout(timer)
        resolve()
      }
    }
    child.stdout!.on('data', read)
    child.stderr!.on('data', read)
    child.on('exit', (code) => reject(new Error(`prism exited ${code}: ${output.slice(-2000)}`)))
  })
  return { url: `http://127.0.0.1:${port}`, process: child }
}

interface Violation {
  request: string
  violations: unknown
}

/** The test client's interface (test/api.ts) over HTTP through the proxy, collecting violations. */
function proxied(base: string, found: Violation[], defaultHeaders: Record<string, string>) {
  async function request(method: string, path: string, payload?: unknown, headers: Record<string, string> = defaultHeaders): Promise<Response> {
    const url = path.startsWith('/api/') || path === '/' || path.startsWith('/detect') ? path : `/api/v1${path}`
    const form = typeof payload === 'string'
    const res = await fetch(base + url, {
      method,
      headers: { ...(payload === undefined || form ? {} : { 'content-type': 'application/json' }), ...headers },
      body: payload === undefined ? undefined : form ? payload : JSON.stringify(payload),
    })
    const text = await res.text()
    const violations = res.headers.get('sl-violations')
    if (violations) found.push({ request: `${method} ${url}`, violations: JSON.parse(violations) })
    let body: unknown
    try {
      body = text ? JSON.parse(text) : undefined
    } catch {
      body = undefined
    }
    return { status: res.status, headers: Object.fromEntries(res.headers), body, text }
  }
  return {
    get: (path: string, headers?: Record<string, string>) => request('GET', path, undefined, headers),
    post: (path: string, payload?: unknown, headers?: Record<string, string>) => request('POST', path, payload, headers),
    patch: (path: string, payload?: unknown, headers?: Record<string, string>) => request('PATCH', path, payload, headers),
    put: (path: string, payload?: unknown, headers?: Record<string, string>) => request('PUT', path, payload, headers),
    delete: (path: string, headers?: Record<string, string>) => request('DELETE', path, undefined, headers),
    request,
  }
}

t.test("a validating proxy finds no violation in the original client's traffic and every resource's reads and writes", async (t) => {
  const { app, db } = await build(t, { AUTH_FAILURE_MAX: 10_000 })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }
  const file = join(tempDir(t, 'rhizome-prism-'), 'openapi.json')
  writeFileSync(file, (await app.inject('/documentation/json')).body)
  const proxy = await startProxy(file, `http://127.0.0.1:${port}`)
  t.teardown(() => void proxy.process.kill())

  const found: Violation[] = []
  const admin = { authorization: `ApiKey admin:${ADMIN_KEY}` }
  const api = proxied(proxy.url, found, admin)
  const expect = (res: Response, status: number, what: string) =>
    t.equal(res.status, status, what, res.status === status ? {} : { body: res.text.slice(0, 500) })

  // The data every later request reads: locations, campaigns, indicators, mappings, uploads, polygons.
  const w = await world(api)
  const { erinId } = await moreUsers(db)

  // The original front-end: `?format=json` on every call, form-urlencoded writes, POST that updates.
  const form = (fields: Record<string, string | number>) => new URLSearchParams(Object.entries(fields).map(([k, v]) => [k, String(v)])).toString()
  const post = (path: string, fields: Record<string, string | number>) => api.post(`${path}?format=json`, form(fields), { ...admin, 'content-type': FORM })
  const type = await post('/campaign_type/', { name: 'SNID' })
  expect(type, 201, 'a form create')
  const campaign = await post('/campaign/', { name: 'March round', campaign_type_id: type.body.id, start_date: '2017-3-5', end_date: '2017-3-9' })
  expect(campaign, 201, 'a form create with one-digit dates')
  expect(await post('/campaign/', { id: campaign.body.id, name: 'March round (2)' }), 200, 'the legacy update of a campaign: 200')
  const chart = await post('/custom_chart/', { uuid: 'c-1', title: 'Missed', chart_json: JSON.stringify({ type: 'ColumnChart', indicator_ids: [w.n] }) })
  expect(chart, 201, 'a chart from a form')
  expect(
    await post('/custom_chart/', { id: chart.body.id, title: 'Missed children', uuid: 'c-1', chart_json: '{"type":"LineChart"}' }),
    200,
    'the legacy update of a chart',
  )
  expect(await post('/indicator/', { id: w.n, name: 'n (renamed)' }), 200, 'of an indicator')
  const tag = await post('/indicator_tag/', { tag_name: 'Polio' })
  expect(await post('/indicator_tag/', { id: tag.body.id, tag_name: 'Polio (all)' }), 200, 'of a tag')
  const map = (await api.get(`/source_object_map/?document_id=${w.campaignDoc}&format=json`)).body.objects[0]
  expect(await post('/source_object_map/', { id: map.id, master_object_id: map.master_object_id }), 200, 'of a mapping')
  const link = await post('/indicator_to_tag/', { indicator_id: w.n, indicator_tag_id: tag.body.id })
  expect(link, 201, 'a tag link')
  expect(await api.delete(`/api/v1/indicator_to_tag?id=${link.body.id}`), 204, 'a slash-less list DELETE by ?id=')
  expect(await api.get(`/api/v1/custom_chart/${chart.body.id}?format=json`), 200, 'a slash-less detail')
  expect(await api.get('/api/v1/campaign?format=json'), 200, 'a slash-less list')
  const board = await post('/custom_dashboard/', { title: 'Overview', rows: JSON.stringify([{ charts: ['c-1'] }]) })
  expect(board, 201, 'a dashboard under its original name')
  expect(await api.get(`/api/v1/custom_dashboard/${board.body.id}?format=json`), 200, 'read under its original name, slash-less')
  expect(await api.get(`/source_doc/?document_id=${w.campaignDoc}&format=json`), 200, 'source_doc')
  expect(await api.get('/indicator_calculation/?format=json'), 200, 'indicator_calculation')
  expect(
    await api.get(`/campaign_datapoint/?indicator__in=${w.n}&location_id__in=${w.a1},${w.b1}&campaign_start=2016-01-01&campaign_end=2016-12-31&format=json`),
    200,
    'the original datapoint read',
  )
  expect(
    await api.get(`/date_datapoint/?indicator__in=${w.cases}&location_id=${w.R}&location_depth=1&group_by_time=quarter&format=json`),
    200,
    'grouped by quarter',
  )
  expect(
    await api.get(`/campaign_datapoint/?indicator__in=${w.n}&campaign__in=${w.C}&location_id=${w.R}&location_depth=2&chart_type=ColumnChart`),
    200,
    'ColumnChart',
  )
  expect(await api.get('/all_meta/?format=json'), 200, 'all_meta')

  // Every resource: a list, and a detail of its first row; then creates, updates and deletes.
  const required: Record<string, string> = {
    indicator__in: String(w.n),
    campaign__in: String(w.C),
    document_id: String(w.campaignDoc),
    campaign_id: String(w.C),
    user_id: '1',
  }
  const listed: Record<string, Array<{ id?: number }>> = {}
  for (const r of (await import('../resources/index.js')).resources) {
    if (['transform_upload', 'refresh_master', 'queue_process', 'agg_refresh', 'cache_meta'].includes(r.name)) continue
    const query = r.GET_params_required.map((p) => `${p}=${required[p]}`).join('&')
    const list = await api.get(`/${r.name}/?${query}`)
    expect(list, 200, `${r.name}: list`)
    listed[r.name] = list.body.objects ?? []
    const first = listed[r.name].find((o) => typeof o.id === 'number')
    if (r.kind === 'model' && first) expect(await api.get(`/${r.name}/${first.id}/`), 200, `${r.name}: detail`)
  }
  expect(await api.get(`/transform_upload/?document_id=${w.campaignDoc}`), 200, 'transform_upload')
  expect(await api.get(`/refresh_master/?document_id=${w.campaignDoc}`, { ...admin, prefer: 'respond-async' }), 202, 'refresh_master in the background')
  expect(await api.get(`/queue_process/?document_id=${w.dateDoc}`), 200, 'queue_process')
  expect(await api.get(`/agg_refresh/?campaign_id=${w.C}`), 200, 'agg_refresh')
  expect(await api.get('/cache_meta/'), 200, 'cache_meta')

  const created: Array<[string, number]> = []
  const create = async (name: string, body: Record<string, unknown>) => {
    const res = await api.post(`/${name}/`, body)
    expect(res, 201, `${name}: create`)
    created.push([name, res.body.id])
    return res.body.id as number
  }
  const group = await create('group', { name: 'viewers' })
  await create('user_group', { user_id: erinId, group_id: group })
  const user = await create('user', { username: 'zoe', email: 'zoe@example.org' })
  await create('api_key', { user_id: user })
  await create('location_responsibility', { user_id: user, top_lvl_location_id: w.A })
  const detailType = await create('doc_detail_type', { name: 'status' })
  await create('doc_detail', { doc_detail_type_id: detailType, document_id: w.campaignDoc, doc_detail_value: 'checked' })
  const district = await create('location', {
    name: 'a2',
    location_code: 'a2',
    location_type_id: (await api.get(`/location/${w.a1}/`)).body.location_type_id,
    parent_location_id: w.A,
  })
  await create('geo', {
    location_id: district,
    geo_json: SQUARE,
  })
  await create('calculated_indicator_component', { indicator_id: w.cases, indicator_component_id: w.n, calculation: 'PART_TO_BE_SUMMED' })
  await create('campaign_datapoint', { indicator_id: w.n, location_id: district, campaign_id: w.C, value: 4 })
  await create('date_datapoint', { indicator_id: w.cases, location_id: district, data_date: '2016-02-01', value: 2 })
  const patches: Record<string, Record<string, unknown>> = {
    group: { name: 'readers' },
    user: { first_name: 'Zoe' },
    location_responsibility: { top_lvl_location_id: w.B },
    doc_detail_type: { name: 'state' },
    doc_detail: { doc_detail_value: 'rechecked' },
    location: { name: 'a2 (new)' },
    calculated_indicator_component: { calculation: 'NUMERATOR' },
    campaign_datapoint: { value: 5 },
    date_datapoint: { value: 3 },
    geo: {
      geo_json: {
        type: 'Polygon',
        coordinates: [
          [
            [0, 0],
            [2, 0],
            [2, 2],
            [0, 0],
          ],
        ],
      },
    },
  }
  for (const [name, id] of created) {
    expect(await api.get(`/${name}/${id}/`), 200, `${name}: detail of the new row`)
    if (patches[name]) expect(await api.patch(`/${name}/${id}/`, patches[name]), 200, `${name}: update`)
  }
  const { id: doc } = await upload(api, 'extra.csv', 'campaign', 'campaign,geocode,n\nC,a1,12\n')
  expect(await api.patch(`/document/${doc}/`, { doc_title: 'extra (checked).csv' }), 200, 'document: update')
  created.push(['document', doc])
  for (const [name, id] of created.reverse()) {
    if (name === 'location_responsibility') continue // zoe's only one: 409 (test/hardening.test.ts)
    expect(await api.delete(`/${name}/${id}/?cascade=true`), 204, `${name}: delete`)
  }

  // DHIS2's paths: the tree out and back in; a data value set in as JSON, CSV and ADX (a period no
  // campaign starts in: a summary with its conflict), and out in each format.
  const metadata = await api.get('/api/metadata')
  expect(metadata, 200, 'DHIS2 metadata out')
  expect(await api.post('/api/metadata', metadata.body), 200, 'and back in')
  const element = (await api.get(`/indicator/${w.n}/`)).body.short_name
  const unit = (await api.get(`/location/${w.a1}/`)).body.location_code
  const sets: Array<[string, string]> = [
    ['application/json', JSON.stringify({ dataValues: [{ dataElement: element, period: '190001', orgUnit: unit, value: '1' }] })],
    ['application/csv', `dataelement,period,orgunit,categoryoptioncombo,attributeoptioncombo,value\n${element},190001,${unit},,,1\n`],
    [
      'application/adx+xml',
      `<adx xmlns="urn:ihe:qrph:adx:2015"><group orgUnit="${unit}" period="1900-01-01/P1M" dataSet="x"><dataValue dataElement="${element}" value="1"/></group></adx>`,
    ],
  ]
  for (const [type, body] of sets) expect(await api.post('/api/dataValueSets', body, { ...admin, 'content-type': type }), 200, `a data value set in, ${type}`)
  const asked = `/api/dataValueSets?dataElement=${encodeURIComponent(element)}&orgUnit=${encodeURIComponent(unit)}&startDate=1900-01-01&endDate=2999-12-31`
  for (const accept of ['application/json', 'application/csv', 'application/adx+xml'])
    expect(await api.get(asked, { ...admin, accept }), 200, `values out, ${accept}`)

  t.same(found, [], 'no request or answer violates the document')
  t.ok(Object.keys(listed).length > 20, `${Object.keys(listed).length} resources read through the proxy`)
})
