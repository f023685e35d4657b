// acceptance.md 28–40, 89, 92: campaign_datapoint and date_datapoint reads, data entry and export.
import t from 'tap'
import { parse } from 'csv-parse/sync'
import { sql } from 'kysely'
import { build, tempDir } from './helper.js'
import { client } from './api.js'
import { afterDirectInserts, hMeta, smallWorld } from './fixtures.js'
import { caseDates } from './fixtures/upload-files.js'
import type { Kysely, KyselyPlugin, RootOperationNode } from 'kysely'
import { buildApp } from '../app.js'
import type { DB } from '../schemas/index.js'

type Api = ReturnType<typeof client>

const entry = (api: Api, indicator_id: number, location_id: number, campaign_id: number, value: number) =>
  api.post('/campaign_datapoint/', { indicator_id, location_id, campaign_id, value })

// acceptance.md 28, 29
t.test('campaign_datapoint reads: rows, empty results, the required parameter, value filters', async (t) => {
  const { app, db } = await build(t)
  const api = client(app)
  await hMeta(db)
  const created = await entry(api, 22, 12907, 201, 1.57)
  t.equal(created.status, 201, created.text)
  t.equal(created.body.value, 1.57)
  t.match(created.headers.location, new RegExp(`/api/v1/campaign_datapoint/${created.body.id}/$`))
  const res = await api.get('/campaign_datapoint/?indicator__in=22&campaign_start=2014-12-01&campaign_end=2014-12-01&location_id__in=12907&chart_uuid=abc123')
  t.equal(res.body.error, null)
  t.equal(res.body.meta.total_count, 1)
  t.same(res.body.objects, [{ id: created.body.id, indicator_id: 22, campaign_id: 201, location_id: 12907, value: 1.57 }])
  t.same(res.body.meta.indicator_ids, [22])
  t.equal(res.body.meta.chart_uuid, 'abc123')
  t.same(res.body.meta.campaign_ids, [201])
  t.same(res.body.meta.location_ids, [12907])

  t.equal((await api.get('/campaign_datapoint/?indicator__in=999999')).body.objects.length, 0)
  t.equal((await api.get('/campaign_datapoint/?indicator__in=22&campaign__in=999999')).body.objects.length, 0)
  const missing = await api.get('/campaign_datapoint/?campaign__in=201')
  t.equal(missing.status, 400)
  t.equal(missing.body.code, 'MISSING_REQUIRED_PARAMETER')
  t.equal(missing.body.message, 'Missing required parameter indicator__in')
  t.equal((await api.get('/campaign_datapoint/?indicator__in=22&value__gt=1')).body.objects.length, 1)
  t.equal((await api.get('/campaign_datapoint/?indicator__in=22&value__gt=2')).body.objects.length, 0)
})

// acceptance.md 30
t.test("filter_indicator selects locations by their values in the request's campaigns", async (t) => {
  const { app, db } = await build(t)
  const api = client(app)
  await hMeta(db)
  const lpd = (await api.post('/indicator/', { name: 'LPD Status', short_name: 'LPD Status', data_format: 'class' })).body.id
  const lqas = (await api.post('/indicator/', { name: 'LQAS', short_name: 'LQAS', data_format: 'class' })).body.id
  const states = [12910, 12911, 12912, 12913, 12914, 12915, 12916, 12917]
  const lpdValues = [1, 2, 1, 2, 1, 1, 2, 2]
  const lqasValues = [0, 1, 2, 0, 1, 2, 0, 1]
  for (const [i, state] of states.entries()) {
    t.equal((await entry(api, lpd, state, 99, lpdValues[i])).status, 201)
    t.equal((await entry(api, lqas, state, 99, lqasValues[i])).status, 201)
  }
  const base = `/campaign_datapoint/?indicator__in=${lqas}&campaign__in=99&location_id=12907&location_depth=1&filter_indicator=LPD Status`
  const one = await api.get(`${base}&filter_value=1`)
  t.same(
    one.body.objects.map((o: { location_id: number; value: number }) => [o.location_id, o.value]),
    [
      [12910, 0],
      [12912, 2],
      [12914, 1],
      [12915, 2],
    ],
  )
  t.ok(one.body.objects.every((o: { campaign_id: number }) => o.campaign_id === 99))
  t.same(one.body.meta.location_ids, [12910, 12912, 12914, 12915])
  t.same(
    (await api.get(`${base}&filter_value=2`)).body.objects.map((o: { location_id: number }) => o.location_id),
    [12911, 12913, 12916, 12917],
  )
  t.equal((await api.get(`${base}&filter_value=1,2`)).body.objects.length, 8)
  t.equal((await api.get(`${base.replace('LPD Status', 'Nope')}&filter_value=1`)).body.objects.length, 0)
  const locations = await api.get('/location/?location_id=12907&location_depth=1&filter_indicator=LPD Status&filter_value=1')
  t.same(
    locations.body.objects.map((o: { id: number }) => o.id),
    [12910, 12912, 12914, 12915],
  )
})

// acceptance.md 31
t.test('location_depth, location_type and the district fallback choose precomputed rows', async (t) => {
  const { app } = await build(t)
  const api = client(app)
  const type = async (name: string, admin_level: number) => (await api.post('/location_type/', { name, admin_level })).body.id
  const [country, region, province] = [await type('Country', 0), await type('Region', 1), await type('Province', 2)]
  const place = async (name: string, location_type_id: number, parent_location_id?: number) =>
    (await api.post('/location/', { name, location_code: name, location_type_id, parent_location_id })).body.id as number
  const afghanistan = await place('Afghanistan', country)
  const south = await place('South', region, afghanistan)
  const kandahar = await place('Kandahar', province, south)
  const hilmand = await place('Hilmand', province, south)
  const ct = (await api.post('/campaign_type/', { name: 'NID' })).body.id
  const c = (await api.post('/campaign/', { name: 'c', campaign_type_id: ct, start_date: '2014-01-01', end_date: '2014-01-05' })).body.id
  const i = (await api.post('/indicator/', { name: 'i', short_name: 'i', data_format: 'int' })).body.id
  t.equal((await entry(api, i, kandahar, c, 27)).status, 201)
  t.equal((await entry(api, i, hilmand, c, 31)).status, 201)
  const read = (rest: string) => api.get(`/campaign_datapoint/?indicator__in=${i}&campaign__in=${c}&location_id=${afghanistan}&${rest}`)
  const depth2 = await read('location_depth=2')
  t.equal(depth2.body.objects.length, 2)
  t.equal(
    depth2.body.objects.reduce((s: number, o: { value: number }) => s + o.value, 0),
    58,
  )
  t.same(
    (await read('location_depth=1')).body.objects.map((o: { location_id: number; value: number }) => [o.location_id, o.value]),
    [[south, 58]],
  )
  t.same(
    (await read('location_depth=0')).body.objects.map((o: { location_id: number; value: number }) => [o.location_id, o.value]),
    [[afghanistan, 58]],
  )
  t.equal((await read('location_type=Province')).body.objects.length, 2)
  const deep = await read('location_depth=3')
  t.equal(deep.status, 200)
  t.equal(deep.body.objects.length, 0)
})

// acceptance.md 32, 89 (part)
t.test('campaign_datapoint data entry: POST, PATCH and DELETE write raw values that survive recomputation', async (t) => {
  const { app, db } = await build(t)
  const api = client(app)
  await hMeta(db)
  const created = await entry(api, 22, 12910, 99, 10)
  t.equal(created.status, 201, created.text)
  t.equal(created.body.value, 10)
  const raw = await db
    .selectFrom('datapoint')
    .innerJoin('source_submission as s', 's.id', 'datapoint.source_submission_id')
    .innerJoin('source_doc as d', 'd.id', 's.document_id')
    .select(['d.doc_title', 's.instance_guid', 'datapoint.value'])
    .where('unique_index', '=', '12910_22_99')
    .executeTakeFirstOrThrow()
  t.same(raw, { doc_title: 'Data Entry', instance_guid: 'data-entry', value: 10 })

  const missing = await api.post('/campaign_datapoint/', { value: 10 })
  t.equal(missing.status, 400)
  t.equal(missing.body.message, 'Missing required field campaign_id, indicator_id, location_id')
  const again = await entry(api, 22, 12910, 99, 10)
  t.equal(again.status, 409)
  t.equal(again.body.message, 'key: "location_id, indicator_id, campaign_id" with value: "12910, 22, 99" already exists')
  const badFk = await entry(api, 22, 12910, 999999, 10)
  t.equal(badFk.status, 400)
  t.equal(badFk.body.code, 'FOREIGN_KEY_VIOLATION')
  t.equal(badFk.body.message, 'campaign_id: no campaign with id 999999')
  const notFinite = await api.post('/campaign_datapoint/', { indicator_id: 22, location_id: 12911, campaign_id: 99, value: 'NaN' })
  t.equal(notFinite.status, 400)
  t.match(notFinite.body.message, /^value: /)

  const id = created.body.id
  t.equal((await api.get(`/campaign_datapoint/${id}/`)).body.value, 10)
  const country = (await api.get('/campaign_datapoint/?indicator__in=22&campaign__in=99&location_id__in=12907')).body.objects[0]
  t.equal(country.value, 10, 'the country aggregates the entry')

  const patched = await api.patch(`/campaign_datapoint/${id}/`, { value: 1071.012 })
  t.equal(patched.status, 200, patched.text)
  t.same(patched.body, { id, indicator_id: 22, campaign_id: 99, location_id: 12910, value: 1071.012, validation: { count: 0, items: [] } })
  t.equal((await db.selectFrom('datapoint').select('value').where('unique_index', '=', '12910_22_99').executeTakeFirstOrThrow()).value, 1071.012)
  t.equal((await api.get('/agg_refresh/?campaign_id=99')).status, 200)
  const survived = await api.get(`/campaign_datapoint/${id}/`)
  t.equal(survived.body.value, 1071.012, 'the entry survives agg_refresh, with the same id')
  // A GET → edit → PATCH round trip echoes the key unchanged; changing it is refused.
  t.equal((await api.patch(`/campaign_datapoint/${id}/`, { ...survived.body, value: 5 })).body.value, 5)
  const moved = await api.patch(`/campaign_datapoint/${id}/`, { location_id: 12911 })
  t.equal(moved.status, 400)
  t.equal(moved.body.code, 'VALIDATION_ERROR')
  t.equal(moved.body.message, 'location_id: cannot be changed')
  t.equal((await api.patch(`/campaign_datapoint/${id}/`, { value: null })).status, 400)

  const notRaw = await api.delete(`/campaign_datapoint/${country.id}/`)
  t.equal(notRaw.status, 409)
  t.equal(notRaw.body.code, 'NOT_RAW')
  t.equal((await api.delete(`/campaign_datapoint/${id}/`)).status, 204)
  t.equal((await api.get(`/campaign_datapoint/${id}/`)).status, 404)
  t.equal((await api.get(`/campaign_datapoint/${country.id}/`)).status, 404, "the country's aggregate went with it")
})

t.test('PATCH of a computed value makes it raw; it then wins over the aggregate', async (t) => {
  const { app } = await build(t)
  const api = client(app)
  const type = (await api.post('/location_type/', { name: 'Country', admin_level: 0 })).body.id
  const country = (await api.post('/location/', { name: 'K', location_code: 'K', location_type_id: type })).body.id
  const child = (await api.post('/location/', { name: 'P', location_code: 'P', location_type_id: type, parent_location_id: country })).body.id
  const ct = (await api.post('/campaign_type/', { name: 'NID' })).body.id
  const c = (await api.post('/campaign/', { name: 'c', campaign_type_id: ct, start_date: '2014-01-01', end_date: '2014-01-05' })).body.id
  const i = (await api.post('/indicator/', { name: 'i', short_name: 'i', data_format: 'int' })).body.id
  await entry(api, i, child, c, 4)
  const aggregate = (await api.get(`/campaign_datapoint/?indicator__in=${i}&location_id__in=${country}`)).body.objects[0]
  t.equal(aggregate.value, 4)
  const entered = await api.patch(`/campaign_datapoint/${aggregate.id}/`, { value: 100 })
  t.equal(entered.body.value, 100, entered.text)
  const childRow = (await api.get(`/campaign_datapoint/?indicator__in=${i}&location_id__in=${child}`)).body.objects[0]
  t.equal((await api.patch(`/campaign_datapoint/${childRow.id}/`, { value: 9 })).body.value, 9)
  const after = (await api.get(`/campaign_datapoint/${aggregate.id}/`)).body
  t.equal(after.value, 100, 'the entered value at the country stays, the child change does not overwrite it')
  t.equal((await api.delete(`/campaign_datapoint/${aggregate.id}/`)).status, 204)
  t.equal((await api.get(`/campaign_datapoint/?indicator__in=${i}&location_id__in=${country}`)).body.objects[0].value, 9, 'back to the aggregate')
})

/** The data of scenario 33 on a self-made world: two states of one country, campaigns A and B. */
async function densityWorld(api: Api) {
  const type = (await api.post('/location_type/', { name: 'Country', admin_level: 0 })).body.id
  const country = (await api.post('/location/', { name: 'Nigeria', location_code: 'NG', location_type_id: type })).body.id
  const state = async (name: string) =>
    (await api.post('/location/', { name, location_code: name, location_type_id: type, parent_location_id: country })).body.id as number
  const [kano, abia] = [await state('Kano'), await state('Abia')]
  const ct = (await api.post('/campaign_type/', { name: 'NID' })).body.id
  const a = (await api.post('/campaign/', { name: 'A', campaign_type_id: ct, start_date: '2016-03-01', end_date: '2016-03-05' })).body.id
  const b = (await api.post('/campaign/', { name: 'B', campaign_type_id: ct, start_date: '2015-01-01', end_date: '2015-01-05' })).body.id
  const i = (await api.post('/indicator/', { name: 'Child not available', short_name: 'Child not available', data_format: 'int' })).body.id
  const j = (await api.post('/indicator/', { name: 'Refused', short_name: 'Refused', data_format: 'int' })).body.id
  await entry(api, i, kano, a, 1)
  await entry(api, i, kano, b, 2)
  await entry(api, i, abia, a, 3)
  return { country, kano, abia, a, b, i, j }
}

t.test('a campaign_datapoint page written by PostgreSQL: numbers, order, fields, non-finite values, pages past the end', async (t) => {
  const { app, db } = await build(t)
  const api = client(app)
  const { location, campaign } = await smallWorld(api.post)
  const values = ['2.5', '1e-7', '1e21', '-0.125', 'NaN', 'Infinity']
  const indicators: number[] = []
  for (const [n, value] of values.entries()) {
    indicators.push((await api.post('/indicator/', { name: `v${n}`, short_name: `v${n}`, data_format: 'int' })).body.id)
    await sql`insert into datapoint_with_computed (indicator_id, location_id, campaign_id, value)
      values (${indicators[n]}, ${location}, ${campaign}, ${value}::float8)`.execute(db)
  }
  const read = (rest = '') => api.get(`/campaign_datapoint/?indicator__in=${indicators.join(',')}&campaign__in=${campaign}${rest}`)
  const all = await read('&order_by=value')
  t.equal(all.status, 200)
  t.equal(all.headers['content-type'], 'application/json; charset=utf-8')
  t.same(Object.keys(all.body.objects[0]), ['id', 'indicator_id', 'campaign_id', 'location_id', 'value'], 'query_fields order')
  // PostgreSQL sorts Infinity and NaN last; both are written as null, as JSON.stringify writes them.
  t.same(
    all.body.objects.map((o: { value: number | null }) => o.value),
    [-0.125, 1e-7, 2.5, 1e21, null, null],
  )
  t.same(
    all.body.objects.map((o: { indicator_id: number }) => o.indicator_id),
    [3, 1, 0, 2, 5, 4].map((i) => indicators[i]),
  )
  t.equal(all.body.meta.total_count, 6)
  t.same(all.body.meta.location_ids, [], 'no selection parameter: no location ids')
  const descending = await read('&order_by=-value')
  t.same(
    descending.body.objects.map((o: { value: number | null }) => o.value),
    [null, null, 1e21, 2.5, 1e-7, -0.125],
  )
  const some = await read('&fields=location_id,value&order_by=value&limit=2&offset=1')
  t.same(some.body.objects, [
    { location_id: location, value: 1e-7 },
    { location_id: location, value: 2.5 },
  ])
  t.equal(some.body.meta.total_count, 6)
  const past = await read('&limit=2&offset=10')
  t.same(past.body.objects, [])
  t.equal(past.body.meta.total_count, 6, 'counted apart when the page is past the end')
  const selected = await read(`&location_id__in=${location}&order_by=value`)
  t.same(selected.body.meta.location_ids, [location])
  t.equal(selected.body.objects.length, 6)
})

// acceptance.md 33
t.test('chart_type=ColumnChart fills missing location × indicator × campaign rows with nulls', async (t) => {
  const { app } = await build(t)
  const api = client(app)
  const { kano, abia, a, b, i } = await densityWorld(api)
  const url = `/campaign_datapoint/?indicator__in=${i}&campaign__in=${a},${b}&location_id__in=${kano},${abia}`
  const dense = await api.get(`${url}&chart_type=ColumnChart`)
  t.equal(dense.body.meta.total_count, 4)
  const [first, second] = kano < abia ? [kano, abia] : [abia, kano]
  const [ca, cb] = a < b ? [a, b] : [b, a]
  t.same(
    dense.body.objects.map((o: { location_id: number; campaign_id: number }) => [o.location_id, o.campaign_id]),
    [
      [first, ca],
      [first, cb],
      [second, ca],
      [second, cb],
    ],
  )
  const holes = dense.body.objects.filter((o: { id: number | null }) => o.id === null)
  t.same(holes, [{ id: null, indicator_id: i, campaign_id: b, location_id: abia, value: null }])
  t.equal((await api.get(url)).body.objects.length, 3)
  const page = await api.get(`${url}&chart_type=ColumnChart&limit=1&offset=3`)
  t.equal(page.body.meta.total_count, 4, 'total counts the dense rows')
  t.equal(page.body.objects.length, 1)
  const empty = await api.get(`/campaign_datapoint/?indicator__in=${i}&campaign__in=999&chart_type=ColumnChart`)
  t.equal(empty.status, 200)
  t.equal(empty.body.objects.length, 0)
  const ordered = await api.get(`${url}&chart_type=ColumnChart&order_by=-value`)
  t.same(
    ordered.body.objects.map((o: { value: number | null }) => o.value),
    [null, 3, 2, 1],
    'order_by applies to dense rows (nulls first when descending)',
  )
})

// acceptance.md 92
t.test('campaign_datapoint exports as long and wide CSV', async (t) => {
  const { app } = await build(t)
  const api = client(app)
  const { kano, abia, a, b, i, j } = await densityWorld(api)
  const long = await api.get(`/campaign_datapoint/?indicator__in=${i}&campaign__in=${a},${b}&format=csv`)
  t.equal(long.status, 200)
  t.equal(long.headers['content-type'], 'text/csv; charset=utf-8')
  t.equal(long.headers['content-disposition'], 'attachment; filename="campaign_datapoint.csv"')
  const lines = long.text.split('\r\n')
  t.equal(lines[0], 'id,indicator_id,campaign_id,location_id,value')
  t.equal(lines.filter((l) => l).length, 1 + 3 + 2, 'the three entries and the country aggregates of A and B')

  const wide = await api.get(
    `/campaign_datapoint/?indicator__in=${i},${j}&campaign__in=${a},${b}&location_id__in=${kano},${abia}&format=csv&shape=wide&limit=1`,
  )
  t.equal(wide.status, 200, wide.text)
  t.equal(wide.headers['x-total-count'], '3')
  const rows = parse(wide.text, { columns: true }) as Record<string, string>[]
  t.same(Object.keys(rows[0]), ['location_id', 'location', 'campaign_id', 'campaign', 'Child not available', 'Refused'])
  // Ordered by location name (Abia before Kano), then campaign start date (B before A); limit ignored.
  t.same(
    rows.map((r) => [r.location, r.campaign, r['Child not available'], r.Refused]),
    [
      ['Abia', 'A', '3', ''],
      ['Kano', 'B', '2', ''],
      ['Kano', 'A', '1', ''],
    ],
  )
  const notCsv = await api.get(`/campaign_datapoint/?indicator__in=${i}&shape=wide`)
  t.equal(notCsv.status, 400)
  t.equal((await api.get('/campaign/?format=csv&shape=wide')).status, 400)
  t.equal((await api.get('/campaign/?format=csv&shape=wide')).body.code, 'INVALID_VALUE')
  const empty = await api.get(`/campaign_datapoint/?indicator__in=${i}&campaign__in=999&format=csv`)
  t.equal(empty.text, 'id,indicator_id,campaign_id,location_id,value\r\n', 'an empty export is the header line')
})

t.test('a wide export reads no meta: the selected ids are not queried (they were, and never awaited)', async (t) => {
  // The statements of a computed read (the read cache would read through an executor of its own).
  const { app } = await build(t, { READ_CACHE_BYTES: 0 })
  const api = client(app)
  const { kano, abia, a, i } = await densityWorld(api)
  // Every statement the server reads with goes through this executor (PostgreSQL: the GETs' own pool).
  const executor = (app.db.reads ?? app.db.db).getExecutor() as unknown as { executeQuery: (...args: unknown[]) => Promise<unknown> }
  const original = executor.executeQuery
  const sent: string[] = []
  executor.executeQuery = function (this: unknown, ...args: unknown[]) {
    sent.push((args[0] as { sql: string }).sql)
    return original.apply(this, args)
  }
  t.teardown(() => {
    executor.executeQuery = original
  })
  const selection = `location_id__in=${kano},${abia}`
  const readsIds = () => sent.some((text) => text.includes('json_agg(distinct id order by id)'))
  t.equal((await api.get(`/campaign_datapoint/?indicator__in=${i}&campaign__in=${a}&${selection}`)).status, 200)
  t.ok(readsIds(), 'the JSON read queries the ids for meta (the check can see it)')
  for (const url of [
    `/campaign_datapoint/?indicator__in=${i}&campaign__in=${a}&${selection}&format=csv&shape=wide`,
    `/date_datapoint/?indicator__in=${i}&${selection}&format=csv&shape=wide`,
  ]) {
    sent.length = 0
    const res = await api.get(url)
    t.equal(res.status, 200, res.text)
    t.notOk(readsIds(), url)
  }
})

t.test('CSV export without a limit streams every row up to max_limit, in pages', async (t) => {
  const { app, db } = await build(t)
  const api = client(app)
  const { country, a, i } = await densityWorld(api)
  const submission = (await db.selectFrom('source_submission').select('id').executeTakeFirstOrThrow()).id
  // 25,000 date rows (more than two export pages) written directly.
  await sql`insert into datapoint (indicator_id, location_id, data_date, value, source_submission_id, unique_index, precedence_at)
    select ${i}, ${country}, date '2000-01-01' + g, g, ${submission}, 'bulk_' || g, now() from generate_series(1, 25000) g`.execute(db)
  const res = await api.get(`/date_datapoint/?indicator__in=${i}&format=csv&order_by=-value`)
  t.equal(res.status, 200)
  t.equal(res.headers['x-total-count'], '25000')
  const lines = res.text.split('\r\n').filter((l) => l)
  t.equal(lines.length, 25001)
  const values = lines.slice(1).map((l) => Number(l.split(',')[4]))
  t.equal(new Set(values).size, 25000, 'no row twice across pages')
  t.same([values[0], values[24999]], [25000, 1])
  const page = await api.get(`/date_datapoint/?indicator__in=${i}&format=csv&limit=5&offset=10&order_by=value`)
  t.same(
    page.text
      .split('\r\n')
      .filter((l) => l)
      .slice(1)
      .map((l) => Number(l.split(',')[4])),
    [11, 12, 13, 14, 15],
  )
  t.ok(a)
})

/** H-DATE (acceptance.md §0): Lorvania 1234 → province 432 → district 4321, the 24 dated cases of fixtures/upload-files.ts at the district. */
async function hDate(api: Api, db: Kysely<DB>) {
  await db
    .insertInto('location_type')
    .values([
      { id: 1, name: 'Country', admin_level: 0 },
      { id: 2, name: 'Province', admin_level: 1 },
      { id: 3, name: 'District', admin_level: 2 },
    ] as never)
    .execute()
  await db
    .insertInto('location')
    .values([
      { id: 1234, name: 'Lorvania', location_code: 'LV', location_type_id: 1, parent_location_id: null },
      { id: 432, name: 'Cindermoor', location_code: 'LV-03', location_type_id: 2, parent_location_id: 1234 },
      { id: 4321, name: 'Cindermoor East', location_code: 'LV-03-03', location_type_id: 3, parent_location_id: 432 },
    ] as never)
    .execute()
  await afterDirectInserts(db, ['location_type', 'location'])
  const P = (await api.post('/indicator/', { name: 'Polio Cases', short_name: 'Polio Cases', data_format: 'date_int', resource_name: 'date' })).body
    .id as number
  const ids: number[] = []
  for (const data_date of caseDates()) {
    const res = await api.post('/date_datapoint/', { indicator_id: P, location_id: 4321, data_date, value: 1 })
    if (res.status !== 201) throw new Error(res.text)
    ids.push(res.body.id)
  }
  return { P, ids }
}

// acceptance.md 34–39
t.test('date_datapoint groups by year, quarter, month and all_time, reads discrete values, several targets, and refuses bad groupings', async (t) => {
  const { app, db } = await build(t)
  const api = client(app)
  // The 24 cases by month: 2014 Jan 2, Feb 1, Apr 1, May 2, Jul 1, Sep 3, Oct 1, Dec 1; 2015 Jan 2,
  // Mar 1, Jun 2, Jul 1, Aug 2, Nov 1; 2016 Feb 1, Mar 1, May 1.
  const { P, ids } = await hDate(api, db)
  t.equal(ids.length, 24)
  const grouped = (rest: string) => api.get(`/date_datapoint/?indicator__in=${P}&${rest}`)
  const pairs = (res: { body: { objects: Array<{ time_grouping: unknown; value: number }> } }) => res.body.objects.map((o) => [o.time_grouping, o.value])

  const year = await grouped('group_by_time=year&start_date=2013-01-01&end_date=2016-12-01&location_id=1234&location_depth=1')
  t.same(year.body.objects, [
    { indicator_id: P, location_id: 432, time_grouping: 2014, value: 12 },
    { indicator_id: P, location_id: 432, time_grouping: 2015, value: 9 },
    { indicator_id: P, location_id: 432, time_grouping: 2016, value: 3 },
  ])
  t.equal(year.body.meta.indicator_ids[0], P)
  t.same(year.body.meta.time_groupings, [2014, 2015, 2016])
  t.same(year.body.meta.location_ids, [432])

  t.same((await grouped('group_by_time=all_time&location_id=4321&location_depth=0&start_date=2013-01-01&end_date=2016-01-01')).body.objects, [
    { indicator_id: P, location_id: 4321, time_grouping: 1, value: 21 },
  ])

  const discrete = (location: number, start: string, end: string) =>
    grouped(`group_by_time=year&location_id__in=${location}&start_date=${start}&end_date=${end}`)
  t.equal((await discrete(1234, '2013-01-01', '2016-12-01')).body.objects.length, 0)
  t.equal((await discrete(1234, '2014-01-01', '2014-12-31')).body.objects.length, 0)
  const raw = await discrete(4321, '2013-01-01', '2016-12-01')
  t.equal(raw.body.objects.length, 24)
  t.same(Object.keys(raw.body.objects[0]), ['id', 'indicator_id', 'location_id', 'data_date', 'value'])
  t.same(raw.body.meta.time_groupings, [])
  t.equal((await discrete(4321, '2014-01-01', '2014-12-31')).body.objects.length, 12)

  const quarter = await grouped('group_by_time=quarter&location_id=1234&location_depth=1&start_date=2013-01-01&end_date=2016-07-01')
  t.same(pairs(quarter), [
    ['20141', 3],
    ['20142', 3],
    ['20143', 4],
    ['20144', 2],
    ['20151', 3],
    ['20152', 2],
    ['20153', 3],
    ['20154', 1],
    ['20161', 2],
    ['20162', 1],
  ])
  t.same(pairs(await grouped('group_by_time=all_time&location_id=1234&location_depth=1&start_date=2013-01-01&end_date=2016-07-01')), [[1, 24]])
  // A partial page still reports every bucket and the whole count; so does a page past the end.
  const partial = await grouped('group_by_time=quarter&location_id=1234&location_depth=1&start_date=2013-01-01&end_date=2016-07-01&limit=2&offset=1')
  t.same(pairs(partial), [
    ['20142', 3],
    ['20143', 4],
  ])
  t.equal(partial.body.meta.total_count, 10)
  t.same(partial.body.meta.time_groupings, quarter.body.meta.time_groupings)
  t.equal(quarter.body.meta.time_groupings.length, 10)
  const beyond = await grouped('group_by_time=quarter&location_id=1234&location_depth=1&start_date=2013-01-01&end_date=2016-07-01&offset=50')
  t.same([beyond.body.objects.length, beyond.body.meta.total_count], [0, 10])
  const month = await grouped('group_by_time=month&location_id=1234&location_depth=1&start_date=2013-01-01&end_date=2016-07-01')
  t.equal(month.body.objects.length, 17, '8 months of 2014, 6 of 2015 and 3 of 2016')
  const months = new Map(pairs(month) as Array<[string, number]>)
  t.same([months.get('201401'), months.get('201402'), months.get('201409'), months.get('201410'), months.get('201605')], [2, 1, 3, 1, 1])
  t.equal(month.body.meta.time_groupings[0], '201401')
  t.equal(month.body.meta.time_groupings.at(-1), '201605')

  t.equal((await api.get('/date_datapoint/?indicator__in=999999&group_by_time=year')).body.objects.length, 0)
  for (const bad of ['xxx', 'campaign']) {
    const res = await grouped(`group_by_time=${bad}&location_id=1234`)
    t.equal(res.status, 400)
    t.equal(res.body.code, 'INVALID_GROUPING')
  }

  const province = (
    await api.post('/location/', {
      name: 'Other',
      location_code: '433',
      location_type_id: (await api.get('/location/432/')).body.location_type_id,
      parent_location_id: 1234,
    })
  ).body.id
  const district = (
    await api.post('/location/', {
      name: 'Other district',
      location_code: '4322',
      location_type_id: (await api.get('/location/4321/')).body.location_type_id,
      parent_location_id: province,
    })
  ).body.id
  for (const data_date of ['2015-03-01', '2015-04-01']) await api.post('/date_datapoint/', { indicator_id: P, location_id: district, data_date, value: 1 })
  const several = await grouped('group_by_time=year&location_id=1234&location_depth=1')
  t.same(
    several.body.objects.map((o: { location_id: number; time_grouping: number; value: number }) => [o.location_id, o.time_grouping, o.value]),
    [
      [432, 2014, 12],
      [432, 2015, 9],
      [province, 2015, 2],
      [432, 2016, 3],
    ],
  )

  const wide = await grouped('group_by_time=year&location_id=1234&location_depth=1&format=csv&shape=wide')
  const lines = wide.text.split('\r\n').filter((l) => l)
  t.equal(lines[0], 'location_id,location,time_grouping,Polio Cases')
  t.same(
    lines.filter((l) => l.startsWith('432,')),
    ['432,Cindermoor,2014,12', '432,Cindermoor,2015,9', '432,Cindermoor,2016,3'],
  )
})

// acceptance.md 40
t.test('date_datapoint data entry writes, changes and deletes raw dated values', async (t) => {
  const { app, db } = await build(t)
  const api = client(app)
  const { P, ids } = await hDate(api, db)
  const patched = await api.patch(`/date_datapoint/${ids[0]}/`, { value: 101.01 })
  t.equal(patched.status, 200, patched.text)
  t.equal(patched.body.value, 101.01)
  const created = await api.post('/date_datapoint/', { indicator_id: P, data_date: '2016-01-01', location_id: 432, value: 10.0 })
  t.equal(created.status, 201, created.text)
  t.equal(created.body.value, 10)
  t.equal(created.body.unique_index, `432_${P}_2016-01-01`)
  t.same(Object.keys(created.body), [
    'id',
    'indicator_id',
    'location_id',
    'campaign_id',
    'data_date',
    'value',
    'source_submission_id',
    'unique_index',
    'created_at',
  ])
  const second = await api.post('/date_datapoint/', { indicator_id: P, data_date: '2016-02-02', location_id: 432, value: 10.0 })
  t.equal(second.body.data_date, '2016-02-02')
  t.equal((await api.post('/date_datapoint/', { value: 10 })).body.message, 'Missing required field indicator_id, location_id, data_date')
  t.equal(
    (await api.post('/date_datapoint/', { indicator_id: P, location_id: 432, value: 1, time_grouping: 2016 })).body.message,
    'Missing required field data_date',
  )
  const dup = await api.post('/date_datapoint/', { indicator_id: P, data_date: '2016-01-01', location_id: 432, value: 10.0 })
  t.equal(dup.status, 409)
  t.equal(dup.body.message, `key: "location_id, indicator_id, data_date" with value: "432, ${P}, 2016-01-01" already exists`)
  const detail = await api.get(`/date_datapoint/${created.body.id}/`)
  t.equal(detail.body.value, 10)
  t.equal(detail.body.campaign_id, null)
  // Moving a row re-keys it; onto another row's key is a conflict.
  const moved = await api.patch(`/date_datapoint/${second.body.id}/`, { data_date: '2016-03-03' })
  t.equal(moved.body.unique_index, `432_${P}_2016-03-03`)
  t.equal((await api.patch(`/date_datapoint/${second.body.id}/`, { data_date: '2016-01-01' })).status, 409)
  t.equal((await api.patch(`/date_datapoint/${second.body.id}/`, { campaign_id: 1 })).status, 400, 'a date row cannot become a campaign row')
  t.equal((await api.post('/date_datapoint/', { indicator_id: P, data_date: '2016-05-01', location_id: 432, value: 1, unique_index: 'x' })).status, 400)
  t.equal((await api.delete(`/date_datapoint/${created.body.id}/`)).status, 204)
  t.equal((await api.get(`/date_datapoint/${created.body.id}/`)).status, 404)
  // Campaign rows are not date rows: 404 here.
  const campaignRow = await db.selectFrom('datapoint').select('id').where('data_date', 'is', null).executeTakeFirst()
  if (campaignRow) t.equal((await api.get(`/date_datapoint/${campaignRow.id}/`)).status, 404)
})

// acceptance.md 41
t.test("doc_datapoint lists a document's staged cells; date_datapoint describes itself", async (t) => {
  const { app, db } = await build(t)
  const api = client(app)
  const { location, campaign, indicator } = await smallWorld(api.post)
  const document = (await db.insertInto('source_doc').values({ doc_title: 'D', file_type: 'campaign', guid: 'd' }).returning('id').executeTakeFirstOrThrow()).id
  const submission = (
    await db
      .insertInto('source_submission')
      .values({ document_id: document, instance_guid: 'r1', row_number: 0, submission_json: '{}' })
      .returning('id')
      .executeTakeFirstOrThrow()
  ).id
  await db
    .insertInto('doc_datapoint')
    .values({
      document_id: document,
      source_submission_id: submission,
      column_name: 'n',
      indicator_id: indicator,
      location_id: location,
      campaign_id: campaign,
      value: 1123,
    })
    .execute()
  t.equal((await api.get(`/doc_datapoint/?document_id=${document}`)).body.objects[0].value, 1123)
  const missing = await api.get('/doc_datapoint/')
  t.equal(missing.status, 400)
  t.equal(missing.body.message, 'Missing required parameter document_id')
  const schema = await api.get('/date_datapoint/schema/')
  t.equal(schema.status, 200)
  t.same(schema.body.GET_params_required, ['indicator__in'])
  t.same(schema.body.allowed_methods, ['GET', 'POST', 'PATCH', 'DELETE'])
})

t.test('concurrent first data entries: each 201, or 409 for the same key; never a 500 (found by bench/soak)', async (t) => {
  const { app } = await build(t)
  const api = client(app)
  const { campaign, indicator } = await smallWorld(api.post)
  const type = (await api.get('/location_type/')).body.objects[0].id
  const locations: number[] = []
  for (let i = 0; i < 12; i++) locations.push((await api.post('/location/', { name: `P${i}`, location_code: `P${i}`, location_type_id: type })).body.id)
  // The first entries race to create the Data Entry submission.
  const distinct = await Promise.all(
    locations.map((location_id, i) => api.post('/campaign_datapoint/', { indicator_id: indicator, location_id, campaign_id: campaign, value: i })),
  )
  t.same(
    distinct.map((r) => r.status),
    locations.map(() => 201),
    distinct.find((r) => r.status !== 201)?.text ?? 'all created',
  )
  const same = await Promise.all(
    Array.from({ length: 6 }, (_, i) =>
      api.post('/campaign_datapoint/', { indicator_id: indicator, location_id: locations[0], campaign_id: campaign, value: 100 + i }),
    ),
  )
  t.same(
    same.map((r) => r.status),
    same.map(() => 409),
    'the key exists: 409 for each',
  )
  const values = await api.get(`/campaign_datapoint/?indicator__in=${indicator}&campaign__in=${campaign}&location_id__in=${locations.join(',')}`)
  t.same(
    values.body.objects.map((o: { value: number }) => o.value).sort((a: number, b: number) => a - b),
    locations.map((_, i) => i),
  )
})

t.test('a datapoint read sends its page statement before the meta ids read (the page is the longer one)', async (t) => {
  const { app: setup, database } = await build(t)
  const { location, campaign, indicator } = await smallWorld(client(setup).post)
  // Statements in the order the app issues them: a plugin sees each one as it is compiled for execution.
  const issued: string[] = []
  const describe = (node: RootOperationNode) =>
    node.kind === 'RawNode' && node.sqlFragments[0].trimStart().startsWith('select json_agg(distinct id') ? 'meta ids' : node.kind
  const recorder: KyselyPlugin = {
    transformQuery: ({ node }) => (issued.push(describe(node)), node),
    transformResult: async ({ result }) => result,
  }
  const app = await buildApp({
    logger: false,
    // The GETs read through their own pool on PostgreSQL.
    database: { ...database, db: database.db.withPlugin(recorder), reads: database.reads?.withPlugin(recorder) },
    config: { DATA_DIR: tempDir(t, 'rhizome-order-') },
  })
  t.teardown(() => app.close())
  const api = client(app)
  const reads = [
    `/campaign_datapoint/?indicator__in=${indicator}&campaign__in=${campaign}&location_id=${location}`,
    `/campaign_datapoint/?indicator__in=${indicator}&campaign__in=${campaign}&location_id=${location}&chart_type=ColumnChart`,
    `/date_datapoint/?indicator__in=${indicator}&location_id__in=${location}`,
  ]
  for (const read of reads) {
    issued.length = 0
    const res = await api.get(read)
    t.equal(res.status, 200, res.text)
    t.same(res.body.meta.location_ids, [location])
    t.equal(issued.at(-1), 'meta ids', `${read}: the meta ids read comes last (${issued.join(', ')})`)
    t.equal(issued.filter((statement) => statement === 'meta ids').length, 1, 'read once')
    t.ok(issued.length >= 2, 'after the page statement')
  }
})
