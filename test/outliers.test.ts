// Outliers (resources/campaign_outlier.ts, lib/engine/outliers.ts): a value far from its location's
// history (its last values: z-score), a history that never varied and a value that does, a value outside a min–max
// range set by hand, and ranges generated from history (min_max_generate) that keep the hand-set
// ones; a restricted user sees and generates within her part only; every bad parameter a 400. The
// history's summary is kept between reads, and what it gives equals the history grouped afresh after
// every change that makes it stale.
import t from 'tap'
import { admin, alice, build, engine } from './helper.js'
import { client } from './api.js'
import { erin, moreUsers, world } from './world.js'
import { sql } from 'kysely'
import { findOutliers, type Outlier } from '../lib/engine/outliers.js'

/** A min–max range as the API answers it. */
interface Range {
  location_id: number
  mn_val: number
  mx_val: number
  generated: boolean
}

/** A way to create rows (their id, or the refusal thrown), an SNID campaign type with `campaign(name, day)`, and a count indicator `doses`. */
async function outlierCatalog(api: ReturnType<typeof client>) {
  const created = async (path: string, body: Record<string, unknown>) => {
    const res = await api.post(path, body)
    if (res.status !== 201) throw new Error(res.text)
    return res.body.id as number
  }
  const campaignType = await created('/campaign_type/', { name: 'SNID' })
  const campaign = (name: string, start_date: string) => created('/campaign/', { name, campaign_type_id: campaignType, start_date, end_date: start_date })
  const doses = await created('/indicator/', { name: 'doses', short_name: 'doses', data_format: 'int' })
  return { created, campaign, doses }
}

t.test('outliers of a campaign: far from history, never varied, outside a range; ranges generated from history', async (t) => {
  const { app, db, aliceId } = await build(t)
  const editor = await moreUsers(db)
  const api = client(app)
  const w = await world(api)
  const { created, campaign, doses } = await outlierCatalog(api)
  const visits = await created('/indicator/', { name: 'visits', short_name: 'visits', data_format: 'int' })
  const access = await created('/indicator/', { name: 'access', short_name: 'access', data_format: 'bool' })
  // Four campaigns of history, then the one judged.
  const history = [
    await campaign('H1', '2015-01-10'),
    await campaign('H2', '2015-03-10'),
    await campaign('H3', '2015-05-10'),
    await campaign('H4', '2015-07-10'),
  ]
  const judged = await campaign('D', '2016-06-01')
  const enter = (indicator_id: number, location_id: number, campaign_id: number, value: number) =>
    created('/campaign_datapoint/', { indicator_id, location_id, campaign_id, value })
  for (const [i, h] of history.entries()) {
    await enter(doses, w.a1, h, [100, 104, 98, 102][i]) // mean 101, sd 2.58
    await enter(doses, w.b1, h, [50, 52, 48, 50][i])
    await enter(visits, w.b1, h, 10) // never varied
    await enter(access, w.a1, h, [0, 1, 0, 1][i])
  }
  await enter(doses, w.a1, judged, 150) // 19 standard deviations above
  await enter(doses, w.b1, judged, 51) // within its history
  await enter(visits, w.b1, judged, 12) // its history was always 10
  await enter(access, w.a1, judged, 1) // a yes/no: not measured

  const outliers = async (query: string, as = api) => {
    const res = await as.get(`/campaign_outlier/?campaign_id=${judged}${query}`)
    t.equal(res.status, 200, res.text)
    return res.body.objects as Outlier[]
  }
  const found = await outliers('')
  t.same(
    found.map((o) => [o.method, o.location.name, o.indicator.name, o.value]),
    [
      ['z_score', 'a1', 'doses', 150],
      ['z_score', 'b1', 'visits', 12],
    ],
    'the value far from its history, and the one whose history never varied; not the yes/no, not the value within',
  )
  t.match(found[0], { campaign: { id: judged, name: 'D' }, mean: 101, history_values: 4, range: null })
  t.ok(Math.abs((found[0].z ?? 0) - 49 / 2.5819889) < 0.001, `its z-score: ${found[0].z}`)
  t.same([found[1].z, found[1].sd, found[1].mean], [null, 0, 10], 'a history that never varied has no z-score')
  t.same(await outliers('&z=20'), [found[1]], 'a higher threshold: 19 deviations is no longer far')
  t.same(
    (await outliers('&history=2')).map((o) => [o.location.name, o.indicator.name, o.mean]),
    [['a1', 'doses', 100]],
    'two values of history (98 and 102): too few for a history that never varied',
  )

  // A range set by hand: b1's doses from 0 to 50; its 51 is outside.
  const range = await api.post('/min_max_range/', { location_id: w.b1, indicator_id: doses, mn_val: 0, mx_val: 50 })
  t.equal(range.status, 201, range.text)
  t.equal(range.body.generated, false, 'set by hand')
  t.match(
    (await outliers('')).find((o) => o.method === 'min_max'),
    { location: { name: 'b1' }, value: 51, range: { mn_val: 0, mx_val: 50, generated: false } },
  )

  // Ranges generated from history: a1's doses 101 ± 2 × 2.58; b1's doses kept as set by hand.
  const generated = await api.get(`/min_max_generate/?campaign_id=${judged}`, erin)
  t.equal(generated.status, 200, generated.text)
  t.same(generated.body.objects, [{ campaign_id: judged, ranges_written: 2 }], 'a1 doses, b1 visits (b1 doses is set by hand)')
  const ranges = (await api.get(`/min_max_range/?indicator_id=${doses}&order_by=location_id`)).body.objects as Range[]
  t.match(ranges, [
    { location_id: w.a1, generated: true },
    { location_id: w.b1, mn_val: 0, mx_val: 50, generated: false },
  ])
  t.ok(Math.abs(ranges[0].mn_val - (101 - 2 * 2.5819889)) < 0.001 && Math.abs(ranges[0].mx_val - (101 + 2 * 2.5819889)) < 0.001, 'the mean ± 2 deviations')
  t.same(
    (await outliers('')).map((o) => [o.method, o.location.name, o.indicator.name]),
    [
      ['z_score', 'a1', 'doses'],
      ['z_score', 'b1', 'visits'],
      ['min_max', 'a1', 'doses'],
      ['min_max', 'b1', 'doses'],
      ['min_max', 'b1', 'visits'],
    ],
    'each value outside its range',
  )
  const again = await api.get(`/min_max_generate/?campaign_id=${judged}&factor=10`)
  t.same(again.body.objects, [{ campaign_id: judged, ranges_written: 2 }], 'generated again: replaced, not added')
  t.equal((await api.get('/min_max_range/?limit=0')).body.objects.length, 3, 'two generated and one by hand')

  // A provincial officer of A: a1's outliers only, whatever she names.
  t.equal((await api.post('/location_responsibility/', { user_id: aliceId, top_lvl_location_id: w.A })).status, 201)
  const asAlice = client(app, alice)
  t.same([...new Set((await outliers('', asAlice)).map((o) => o.location.name))], ['a1'], 'hers only')
  t.same(await outliers(`&location_id=${w.B}`, asAlice), [], 'B is not hers')
  t.same(
    (await asAlice.get('/min_max_range/?limit=0')).body.objects.map((r: { location_id: number }) => r.location_id),
    [w.a1],
    'her ranges only',
  )
  t.equal((await asAlice.get(`/min_max_generate/?campaign_id=${judged}`)).status, 403, 'ranges are metadata: not hers to generate')
  t.equal((await asAlice.post('/min_max_range/', { location_id: w.b1, indicator_id: visits, mn_val: 0, mx_val: 1 })).status, 403)
  // A metadata editor responsible for A: ranges inside A only, by hand or generated.
  const { erinId } = editor
  t.equal((await api.post('/location_responsibility/', { user_id: erinId, top_lvl_location_id: w.A })).status, 201)
  const outside = await api.post('/min_max_range/', { location_id: w.b1, indicator_id: visits, mn_val: 0, mx_val: 1 }, erin)
  t.equal(outside.status, 403, 'outside her subtree')
  t.match(outside.body.code, 'LOCATION_FORBIDDEN')
  const aRange = (await api.get(`/min_max_range/?location_id=${w.a1}&indicator_id=${doses}`)).body.objects[0] as Range & { id: number }
  t.equal((await api.patch(`/min_max_range/${aRange.id}/`, { location_id: w.b1 }, erin)).status, 403, 'nor moved out of it')
  t.equal((await api.post('/min_max_range/', { location_id: w.a1, indicator_id: visits, mn_val: 0, mx_val: 1 }, erin)).status, 201, 'inside it')
  const hersGenerated = await api.get(`/min_max_generate/?campaign_id=${judged}`, erin)
  t.same(hersGenerated.body.objects, [{ campaign_id: judged, ranges_written: 1 }], 'generated: a1 doses only (b1 is not hers)')

  // Bad parameters: 400s that name them; a range upside down; an unknown campaign.
  for (const [query, named] of [
    ['', /campaign_id/],
    [`campaign_id=${judged}&z=0`, /z: must be above 0/],
    [`campaign_id=${judged}&z=far`, /z.*number/],
    [`campaign_id=${judged}&history=1`, /history: must be from 2 to 100/],
  ] as const) {
    const res = await api.get(`/campaign_outlier/?${query}`)
    t.equal(res.status, 400, query)
    t.match(res.body.message, named)
  }
  t.equal((await api.get(`/min_max_generate/?campaign_id=${judged}&factor=-1`)).status, 400)
  t.equal((await api.get('/min_max_generate/?campaign_id=999999')).status, 404)
  const upsideDown = await api.post('/min_max_range/', { location_id: w.a1, indicator_id: visits, mn_val: 5, mx_val: 1 })
  t.equal(upsideDown.status, 400)
  t.match(upsideDown.body.message, /mn_val: must not be above mx_val/)
})

t.test('the history summary is kept between reads and follows every change that makes it stale', async (t) => {
  const { app, db } = await build(t)
  const api = client(app)
  const w = await world(api)
  const { created, campaign, doses } = await outlierCatalog(api)
  const history = [await campaign('H1', '2015-01-10'), await campaign('H2', '2015-03-10'), await campaign('H3', '2015-05-10')]
  const judged = await campaign('D', '2016-06-01')
  const enter = (location_id: number, campaign_id: number, value: number) =>
    created('/campaign_datapoint/', { indicator_id: doses, location_id, campaign_id, value })
  const a1History = [await enter(w.a1, history[0], 100), await enter(w.a1, history[1], 104), await enter(w.a1, history[2], 98)]
  for (const [i, h] of history.entries()) await enter(w.b1, h, [50, 52, 48][i])
  await enter(w.a1, judged, 150)
  const b1Judged = await enter(w.b1, judged, 51)

  const runs = async () => (await sql<{ campaign_id: number }>`select campaign_id from outlier_history_run`.execute(db)).rows.map((r) => r.campaign_id)
  // What the API answers (from the summary), and what grouping the history afresh finds (a read-only
  // transaction cannot keep a summary): the same, after every change.
  const rounded = (o: Outlier) => [o.method, o.datapoint_id, o.value, o.history_values, o.mean?.toFixed(6), o.sd?.toFixed(6)]
  const same = async (what: string) => {
    const res = await api.get(`/campaign_outlier/?campaign_id=${judged}`)
    t.equal(res.status, 200, res.text)
    const afresh = await db.transaction().execute(async (trx) => {
      await sql`set transaction read only`.execute(trx)
      return findOutliers(trx, { campaignId: judged, scope: sql<boolean>`true`, z: 3, history: 6, summariesKept: 12 })
    })
    t.same((res.body.objects as Outlier[]).map(rounded), afresh.map(rounded), what)
    return res.body.objects as Outlier[]
  }
  t.same(await runs(), [], 'no summary before the first read')
  t.same(
    (await same('the first read')).map((o) => o.value),
    [150],
    "a1's 150 is far from 100, 104, 98",
  )
  t.same(await runs(), [judged], 'its summary kept')
  await api.patch(`/campaign_datapoint/${b1Judged}/`, { value: 90 })
  t.same(await runs(), [judged], "a value of the campaign itself: its history's summary stays")
  t.same((await same('a value of the campaign changed')).map((o) => o.value).sort(), [150, 90], "b1's 90 far from 50, 52, 48")
  const changes: Array<[string, () => Promise<unknown>]> = [
    ['an earlier value changed', () => api.patch(`/campaign_datapoint/${a1History[0]}/`, { value: 148 })],
    ['an earlier value deleted', () => api.delete(`/campaign_datapoint/${a1History[1]}/`)],
    ['an earlier value added', () => enter(w.a1, history[1], 151)],
    ['a campaign added before it', async () => enter(w.b1, await campaign('H4', '2016-01-10'), 89)],
    ['a campaign moved after it', () => api.patch(`/campaign/${history[2]}/`, { start_date: '2017-01-10', end_date: '2017-01-10' })],
    ["the indicator's format changed", () => api.patch(`/indicator/${doses}/`, { data_format: 'pct' })],
  ]
  for (const [what, change] of changes) {
    await same(`before: ${what}`)
    t.same(await runs(), [judged], `kept before: ${what}`)
    await change()
    t.same(await runs(), [], `stale after: ${what}`)
    await same(`after: ${what}`)
  }
  t.same(await same('at the end'), [], "a1's 150 is near its history now (148, 151), b1's 90 within its spread (50, 52, 89)")
})

t.test("summaries are kept for the setting's history only, and for the latest campaigns read only", async (t) => {
  const { app, db } = await build(t, { OUTLIER_SUMMARIES_KEPT: 1 })
  const api = client(app)
  const w = await world(api)
  const { created, campaign, doses } = await outlierCatalog(api)
  const campaigns = [
    await campaign('H1', '2015-01-10'),
    await campaign('H2', '2015-03-10'),
    await campaign('D1', '2016-06-01'),
    await campaign('D2', '2016-08-01'),
  ]
  for (const [i, c] of campaigns.entries()) await created('/campaign_datapoint/', { indicator_id: doses, location_id: w.a1, campaign_id: c, value: 100 + i })
  // The campaigns with a summary kept, and those with rows in outlier_history.
  const summaries = async () => ({
    runs: (await sql<{ id: number }>`select campaign_id as id from outlier_history_run order by 1`.execute(db)).rows.map((r) => r.id),
    rows: (await sql<{ id: number }>`select distinct campaign_id as id from outlier_history order by 1`.execute(db)).rows.map((r) => r.id),
  })
  const read = async (query: string) => t.equal((await api.get(`/campaign_outlier/?${query}`)).status, 200, query)
  await read(`campaign_id=${campaigns[2]}&history=2`)
  t.same(await summaries(), { runs: [], rows: [] }, "a history asked for (2, not the setting's 6): grouped afresh, nothing kept")
  await read(`campaign_id=${campaigns[2]}`)
  t.same(await summaries(), { runs: [campaigns[2]], rows: [campaigns[2]] }, "the setting's history: D1's summary kept")
  await read(`campaign_id=${campaigns[3]}`)
  t.same(await summaries(), { runs: [campaigns[3]], rows: [campaigns[3]] }, "OUTLIER_SUMMARIES_KEPT 1: D2's replaces D1's, its rows with it")
})

const oneConnection = engine === 'pglite' && 'one connection: no write runs beside a read'

t.test('while a write of earlier values is under way, a read groups the history itself', { skip: oneConnection }, async (t) => {
  const { app, db } = await build(t)
  const api = client(app)
  const w = await world(api)
  const { created, campaign, doses } = await outlierCatalog(api)
  const history = [await campaign('H1', '2015-01-10'), await campaign('H2', '2015-03-10'), await campaign('H3', '2015-05-10')]
  const judged = await campaign('D', '2016-06-01')
  const enter = (campaign_id: number, value: number) => created('/campaign_datapoint/', { indicator_id: doses, location_id: w.a1, campaign_id, value })
  for (const [i, h] of history.entries()) await enter(h, [100, 102, 101][i])
  await enter(judged, 150)
  // Computed afresh (no-cache): the read cache hears of the direct change below a moment after it.
  const read = async () =>
    ((await api.get(`/campaign_outlier/?campaign_id=${judged}`, { ...admin, 'cache-control': 'no-cache' })).body.objects as Outlier[]).map((o) => o.value)
  const runs = async () => (await sql<{ n: number }>`select count(*)::int as n from outlier_history_run`.execute(db)).rows[0].n
  await db.transaction().execute(async (trx) => {
    // An earlier value changed, not committed: its trigger holds the summaries' lock (shared).
    const changed = await sql`update datapoint set value = 1000 where campaign_id = ${history[0]} and indicator_id = ${doses}`.execute(trx)
    t.equal(Number(changed.numAffectedRows), 1, 'the earlier value, changed')
    t.same(await read(), [150], '150 is far from 100, 102 and 101: the committed history, grouped by the read')
    t.equal(await runs(), 0, 'no summary kept from a snapshot the write will change')
  })
  t.same(await read(), [], 'committed: 150 is within the spread of 1000, 102 and 101')
  t.equal(await runs(), 1, 'and the summary is kept again')
})
