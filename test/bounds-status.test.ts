// A value's status against its indicator's bounds (docs/decisions.md, "Bounds and a value's status"):
// good_bound and bad_bound in either direction, named ranges from indicator_bound (edited through the
// API, each limit's side by `direction`), on every datapoint read and export with `with_status=1`.
import { parse } from 'csv-parse/sync'
import t from 'tap'
import { build } from './helper.js'
import { client } from './api.js'
import { created } from './world.js'

type Api = ReturnType<typeof client>

/** One place, five campaigns and four indicators: higher is better, lower is better, named ranges, no bounds. */
async function boundedWorld(api: Api) {
  const type = await created(api.post('/location_type/', { name: 'Country', admin_level: 0 }))
  const place = await created(api.post('/location/', { name: 'L', location_code: 'L', location_type_id: type }))
  const campaignType = await created(api.post('/campaign_type/', { name: 'NID' }))
  const campaigns: number[] = []
  for (let month = 1; month <= 5; month++) {
    const start = `2016-0${month}-01`
    campaigns.push(await created(api.post('/campaign/', { name: `C${month}`, campaign_type_id: campaignType, start_date: start, end_date: start })))
  }
  const indicator = (name: string, extra = {}) => created(api.post('/indicator/', { name, short_name: name, data_format: 'int', ...extra }))
  const coverage = await indicator('coverage', { good_bound: 90, bad_bound: 70 })
  const missed = await indicator('missed', { good_bound: 5, bad_bound: 10 })
  const ranged = await indicator('ranged')
  const bare = await indicator('bare')
  const values: Record<number, number[]> = {
    [coverage]: [95, 90, 80, 70, 60],
    [missed]: [3, 5, 7, 10, 12],
    [ranged]: [0, 49, 50, 100, 101],
    [bare]: [1, 2, 3, 4, 5],
  }
  for (const [id, list] of Object.entries(values)) {
    for (const [i, value] of list.entries()) {
      await created(api.post('/campaign_datapoint/', { indicator_id: Number(id), location_id: place, campaign_id: campaigns[i], value }))
    }
  }
  return { place, campaigns, coverage, missed, ranged, bare }
}

/** The statuses of an indicator's values, in campaign order. */
async function statuses(api: Api, indicator: number, extra = '') {
  const res = await api.get(`/campaign_datapoint/?indicator__in=${indicator}&with_status=1&order_by=campaign_id${extra}`)
  if (res.status !== 200) throw new Error(res.text)
  return res.body.objects.map((o: { status: string | null }) => o.status)
}

t.test('with_status=1: good, ok and bad in both directions, named ranges, and none without bounds', async (t) => {
  const { app } = await build(t)
  const api = client(app)
  const w = await boundedWorld(api)
  t.same(await statuses(api, w.coverage), ['good', 'good', 'ok', 'bad', 'bad'], 'higher is better: the bounds themselves are good and bad')
  t.same(await statuses(api, w.missed), ['good', 'good', 'ok', 'bad', 'bad'], 'good_bound below bad_bound: lower is better')
  t.same(await statuses(api, w.bare), [null, null, null, null, null], 'no bounds, no status')
  const plain = await api.get(`/campaign_datapoint/?indicator__in=${w.coverage}`)
  t.notOk('status' in plain.body.objects[0], 'without with_status the objects are as before')

  // Named ranges: [0, 50) Low and [50, 100) High; then (100, ∞) Over, which holds its upper limit only.
  await created(api.post('/indicator_bound/', { indicator_id: w.ranged, bound_name: 'Low', mn_val: 0, mx_val: 50 }))
  const high = await created(api.post('/indicator_bound/', { indicator_id: w.ranged, bound_name: 'High', mn_val: 50, mx_val: 100 }))
  t.same(await statuses(api, w.ranged), ['Low', 'Low', 'High', null, null], 'a range holds its lower limit, not its upper one')
  await api.patch(`/indicator_bound/${high}/`, { direction: -1 })
  t.same(
    await statuses(api, w.ranged),
    ['Low', 'Low', null, 'High', null],
    'direction -1: it holds its upper limit instead, 50 is in no range (the cache follows the edit)',
  )
  await created(api.post('/indicator_bound/', { indicator_id: w.ranged, bound_name: 'Over', mn_val: 100 }))
  t.same(await statuses(api, w.ranged), ['Low', 'Low', null, 'High', 'Over'], 'an open limit')
  await created(api.post('/indicator_bound/', { indicator_id: w.ranged, bound_name: 'Overlapping', mn_val: 0, mx_val: 200 }))
  t.same(await statuses(api, w.ranged), ['Low', 'Low', 'Overlapping', 'High', 'Over'], 'overlapping ranges: the first one declared wins (100 is High)')
  t.match((await api.get(`/indicator/${w.ranged}/`)).body.bound_json, [
    { bound_name: 'Low' },
    { bound_name: 'High' },
    { bound_name: 'Over' },
    { bound_name: 'Overlapping' },
  ])

  // Ranges come before good and bad bounds; a value in no range falls back to them.
  await created(api.post('/indicator_bound/', { indicator_id: w.coverage, bound_name: 'Excellent', mn_val: 95 }))
  t.same(await statuses(api, w.coverage), ['Excellent', 'good', 'ok', 'bad', 'bad'])
  await api.patch(`/indicator/${w.coverage}/`, { bad_bound: 85 })
  t.same(await statuses(api, w.coverage), ['Excellent', 'good', 'bad', 'bad', 'bad'], 'an indicator edit changes the statuses read next')
  t.equal((await api.delete(`/indicator_bound/?indicator_id=${w.coverage}`)).status, 204)
  t.same((await api.get(`/indicator/${w.coverage}/`)).body.bound_json, [], 'bound_json follows a delete')
})

t.test('with_status in the ColumnChart mode, the CSV exports, date reads and OpenAPI; bad bounds refused', async (t) => {
  const { app } = await build(t)
  const api = client(app)
  const w = await boundedWorld(api)
  const dense = await api.get(
    `/campaign_datapoint/?indicator__in=${w.coverage},${w.bare}&campaign__in=${w.campaigns[0]},${w.campaigns[2]}&chart_type=ColumnChart&with_status=1`,
  )
  t.same(
    dense.body.objects.map((o: { indicator_id: number; status: string | null }) => [o.indicator_id, o.status]),
    [
      [w.coverage, 'good'],
      [w.coverage, 'ok'],
      [w.bare, null],
      [w.bare, null],
    ],
  )
  const long = parse((await api.get(`/campaign_datapoint/?indicator__in=${w.missed}&with_status=1&format=csv&order_by=campaign_id`)).text, {
    columns: true,
  }) as Array<Record<string, string>>
  t.same(
    long.map((r: Record<string, string>) => [r.value, r.status]),
    [
      ['3', 'good'],
      ['5', 'good'],
      ['7', 'ok'],
      ['10', 'bad'],
      ['12', 'bad'],
    ],
    'the long CSV has a status column',
  )
  const wide = parse((await api.get(`/campaign_datapoint/?indicator__in=${w.coverage},${w.missed}&with_status=1&format=csv&shape=wide`)).text, {
    columns: true,
  }) as Array<Record<string, string>>
  t.same(Object.keys(wide[0]), ['location_id', 'location', 'campaign_id', 'campaign', 'coverage', 'missed', 'coverage status', 'missed status'])
  t.same(
    wide.map((r: Record<string, string>) => [r.coverage, r['coverage status'], r.missed, r['missed status']]),
    [
      ['95', 'good', '3', 'good'],
      ['90', 'good', '5', 'good'],
      ['80', 'ok', '7', 'ok'],
      ['70', 'bad', '10', 'bad'],
      ['60', 'bad', '12', 'bad'],
    ],
    'the wide CSV: a status column per indicator after the values',
  )

  const polio = await created(
    api.post('/indicator/', { name: 'cases', short_name: 'cases', data_format: 'int', resource_name: 'date', good_bound: 0, bad_bound: 3 }),
  )
  for (const [day, value] of [
    ['2016-01-05', 2],
    ['2016-02-05', 2],
    ['2017-01-05', 0],
  ] as const) {
    await created(api.post('/date_datapoint/', { indicator_id: polio, location_id: w.place, data_date: day, value }))
  }
  const flat = await api.get(`/date_datapoint/?indicator__in=${polio}&with_status=1&order_by=data_date`)
  t.same(
    flat.body.objects.map((o: { status: string }) => o.status),
    ['ok', 'ok', 'good'],
  )
  const yearly = await api.get(`/date_datapoint/?indicator__in=${polio}&group_by_time=year&with_status=1`)
  t.same(
    yearly.body.objects.map((o: { time_grouping: number; value: number; status: string }) => [o.time_grouping, o.value, o.status]),
    [
      [2016, 4, 'bad'],
      [2017, 0, 'good'],
    ],
    'a sum has the status of its value',
  )

  const bad = await api.get(`/campaign_datapoint/?indicator__in=${w.coverage}&with_status=maybe`)
  t.equal(bad.status, 400)
  t.match(bad.body.message, /with_status/)
  const refused = await api.post('/indicator_bound/', { indicator_id: w.ranged, bound_name: 'Upside down', mn_val: 10, mx_val: 5 })
  t.equal(refused.status, 400)
  t.match(refused.body.message, /^mn_val: /)
  t.equal((await api.post('/indicator_bound/', { indicator_id: w.ranged, bound_name: 'Sideways', direction: 0 })).status, 400)
  t.equal((await api.get(`/indicator_bound/?indicator_id=${w.ranged}`)).body.meta.total_count, 0, 'nothing written')

  const openapi = (await app.inject('/documentation/json')).json()
  const get = openapi.paths['/api/v1/campaign_datapoint/'].get
  t.ok(
    get.parameters.some((p: { name: string }) => p.name === 'with_status'),
    'with_status is documented',
  )
})

t.test('a range of one location level grades that level only; a level-specific range wins at its level', async (t) => {
  const { app } = await build(t)
  const api = client(app)
  const province = await created(api.post('/location_type/', { name: 'Province', admin_level: 1 }))
  const district = await created(api.post('/location_type/', { name: 'District', admin_level: 2 }))
  const north = await created(api.post('/location/', { name: 'North', location_code: 'N', location_type_id: province }))
  const east = await created(api.post('/location/', { name: 'East', location_code: 'E', location_type_id: district, parent_location_id: north }))
  const campaignType = await created(api.post('/campaign_type/', { name: 'NID' }))
  const campaign = await created(api.post('/campaign/', { name: 'C', campaign_type_id: campaignType, start_date: '2016-01-01', end_date: '2016-01-01' }))
  const missed = await created(api.post('/indicator/', { name: 'missed', short_name: 'missed', data_format: 'int' }))
  for (const [location, value] of [
    [east, 150],
    [north, 900],
  ]) {
    await created(api.post('/campaign_datapoint/', { indicator_id: missed, location_id: location, campaign_id: campaign, value }))
  }
  const byPlace = async (extra = '') => {
    const res = await api.get(`/campaign_datapoint/?indicator__in=${missed}&with_status=1${extra}`)
    t.equal(res.status, 200, res.text)
    return Object.fromEntries(res.body.objects.map((o: { location_id: number; status: string | null }) => [o.location_id, o.status]))
  }

  // "critical" from 100 children missed, meant for districts: a province of 900 is not critical.
  const critical = await created(api.post('/indicator_bound/', { indicator_id: missed, bound_name: 'critical', mn_val: 100, location_type_id: district }))
  t.same(await byPlace(), { [east]: 'critical', [north]: null }, 'the province value is graded by no district range')
  t.match((await api.get(`/indicator/${missed}/`)).body.bound_json, [{ bound_name: 'critical', location_type_id: district }], 'bound_json carries the level')

  // A range without a level holds everywhere, after the ranges of the value's own level.
  await created(api.post('/indicator_bound/', { indicator_id: missed, bound_name: 'many', mn_val: 100 }))
  t.same(await byPlace(), { [east]: 'critical', [north]: 'many' }, 'the district range wins at its level, the range of every level elsewhere')
  t.same(await byPlace('&chart_type=ColumnChart'), { [east]: 'critical', [north]: 'many' }, 'the ColumnChart mode too')
  const wide = parse((await api.get(`/campaign_datapoint/?indicator__in=${missed}&with_status=1&format=csv&shape=wide`)).text, { columns: true }) as Array<
    Record<string, string>
  >
  t.same(
    wide.map((r) => [r.location, r['missed status']]),
    [
      ['East', 'critical'],
      ['North', 'many'],
    ],
    'the wide CSV too',
  )
  const polio = await created(api.post('/indicator/', { name: 'cases', short_name: 'cases', data_format: 'int', resource_name: 'date' }))
  await created(api.post('/indicator_bound/', { indicator_id: polio, bound_name: 'outbreak', mn_val: 1, location_type_id: district }))
  await created(api.post('/date_datapoint/', { indicator_id: polio, location_id: east, data_date: '2016-01-05', value: 2 }))
  const yearAt = async (location: number) =>
    (await api.get(`/date_datapoint/?indicator__in=${polio}&location_id=${location}&group_by_time=year&with_status=1`)).body.objects.map(
      (o: { value: number; status: string | null }) => [o.value, o.status],
    )
  t.same(await yearAt(east), [[2, 'outbreak']], "a date sum is graded at its location's level")
  t.same(await yearAt(north), [[2, null]], 'the same sum at the province is not')

  // The level is validated: an unknown one is a 4xx naming the field, never a 500.
  const unknown = await api.patch(`/indicator_bound/${critical}/`, { location_type_id: 9999 })
  t.ok(unknown.status >= 400 && unknown.status < 500, `an unknown level is refused (${unknown.status})`)
  t.match(unknown.body.message, /location_type/)
  const typeDelete = await api.delete(`/location_type/${district}/`)
  t.ok(typeDelete.status >= 400 && typeDelete.status < 500, 'a level in use is not deleted')
})
