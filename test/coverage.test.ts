// Coverage of aggregated values (docs/decisions.md, "Coverage of aggregated values"): how many of a
// location's children hold a value against how many there are, flagged below the indicator's
// threshold; a value stored at the location itself overrides its children's sum, with no double
// counting above it, and has no coverage.
import t from 'tap'
import { build } from './helper.js'
import { client } from './api.js'
import { created, locationLevels } from './world.js'

type Api = ReturnType<typeof client>

/** R → P1 (nine districts, seven with a value) and P2 (three districts with values, and a value of its own). */
async function coverageWorld(api: Api) {
  const { country, province, district, place } = await locationLevels(api)
  const R = await place('R', country)
  const P1 = await place('P1', province, R)
  const P2 = await place('P2', province, R)
  const p1Districts: number[] = []
  for (let i = 1; i <= 9; i++) p1Districts.push(await place(`d1-${i}`, district, P1))
  const p2Districts: number[] = []
  for (let i = 1; i <= 3; i++) p2Districts.push(await place(`d2-${i}`, district, P2))
  const campaignType = await created(api.post('/campaign_type/', { name: 'NID' }))
  const C = await created(api.post('/campaign/', { name: 'C', campaign_type_id: campaignType, start_date: '2016-01-01', end_date: '2016-01-05' }))
  const missed = await created(api.post('/indicator/', { name: 'missed', short_name: 'missed', data_format: 'int', coverage_threshold: 0.8 }))
  const enter = (location_id: number, value: number) => created(api.post('/campaign_datapoint/', { indicator_id: missed, location_id, campaign_id: C, value }))
  for (const district of p1Districts.slice(0, 7)) await enter(district, 10)
  for (const district of p2Districts) await enter(district, 1)
  await enter(P2, 100)
  return { R, P1, P2, p1Districts, C, missed }
}

type Row = { location_id: number; value: number; coverage: { reported: number; expected: number; below_threshold: boolean } | null }

t.test('with_coverage=1: reported of expected children, the threshold, raw values and leaves', async (t) => {
  const { app } = await build(t)
  const api = client(app)
  const w = await coverageWorld(api)
  const read = async (extra: string) => {
    const res = await api.get(`/campaign_datapoint/?indicator__in=${w.missed}&campaign__in=${w.C}&with_coverage=1&${extra}`)
    if (res.status !== 200) throw new Error(res.text)
    return new Map((res.body.objects as Row[]).map((o) => [o.location_id, o]))
  }
  const provinces = await read(`location_id=${w.R}&location_depth=1`)
  t.same(
    provinces.get(w.P1),
    { ...provinces.get(w.P1), value: 70, coverage: { reported: 7, expected: 9, below_threshold: true } },
    'P1: 7 of 9 districts, below 80 %',
  )
  t.same(provinces.get(w.P2)!.coverage, null, 'P2 holds its own value: no coverage')
  t.equal(provinces.get(w.P2)!.value, 100, 'its own value overrides its districts’ sum (3)')
  const root = await read(`location_id=${w.R}&location_depth=0`)
  t.same(root.get(w.R)!.coverage, { reported: 2, expected: 2, below_threshold: false }, 'R: both provinces reported')
  t.equal(root.get(w.R)!.value, 170, 'R: P1’s 70 and P2’s own 100, P2’s districts not counted twice')
  const districts = await read(`location_id=${w.P1}&location_depth=1`)
  t.same(districts.get(w.p1Districts[0])!.coverage, null, 'a district has no children: no coverage')

  // More districts report: 8 of 9 is not below 80 %.
  await created(api.post('/campaign_datapoint/', { indicator_id: w.missed, location_id: w.p1Districts[7], campaign_id: w.C, value: 10 }))
  t.same((await read(`location_id=${w.R}&location_depth=1`)).get(w.P1)!.coverage, { reported: 8, expected: 9, below_threshold: false }, 'the cache follows')

  const plain = await api.get(`/campaign_datapoint/?indicator__in=${w.missed}&campaign__in=${w.C}`)
  t.notOk('coverage' in plain.body.objects[0], 'without with_coverage the objects are as before')
  const dense = await api.get(
    `/campaign_datapoint/?indicator__in=${w.missed}&campaign__in=${w.C}&location_id=${w.R}&location_depth=1&chart_type=ColumnChart&with_coverage=1`,
  )
  if (dense.status !== 200) t.fail(dense.text)
  t.same(
    dense.body.objects.map((o: Row) => o.coverage),
    [{ reported: 8, expected: 9, below_threshold: false }, null],
    'the ColumnChart mode too',
  )
  t.equal((await api.get(`/campaign_datapoint/?indicator__in=${w.missed}&with_coverage=most`)).status, 400)
  const refused = await api.patch(`/indicator/${w.missed}/`, { coverage_threshold: 1.5 })
  t.equal(refused.status, 400)
  t.match(refused.body.message, /^coverage_threshold: /)
})
