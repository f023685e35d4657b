// A parent's int total is the sum of its children's final values, whatever gave each child its value
// (docs/contract: ingestion §7 step 5; acceptance scenario 71a), through every path that recomputes:
// a first upload, a key-by-key recompute of one corrected cell, a revert, a data entry and agg_refresh.
import t from 'tap'
import { build } from './helper.js'
import { client } from './api.js'
import { created, locationLevels } from './world.js'
import { recomputePending } from '../lib/engine/pending-recomputes.js'

type Api = ReturnType<typeof client>

/** K → P → D1, D2, D3; vacc, missed, targeted ← vacc + missed, pm = missed / targeted; codes mapped. */
async function scenario(api: Api) {
  const { country, province, district, place } = await locationLevels(api)
  const K = await place('K', country)
  const P = await place('P', province, K)
  const [D1, D2, D3] = [await place('D1', district, P), await place('D2', district, P), await place('D3', district, P)]
  const ct = await created(api.post('/campaign_type/', { name: 'NID' }))
  const C = await created(api.post('/campaign/', { name: 'C', campaign_type_id: ct, start_date: '2016-10-01', end_date: '2016-10-05' }))
  const indicator = (name: string, data_format: string) => created(api.post('/indicator/', { name, short_name: name, data_format }))
  const [vacc, missed, targeted, pm] = [
    await indicator('vacc', 'int'),
    await indicator('missed', 'int'),
    await indicator('targeted', 'int'),
    await indicator('pm', 'pct'),
  ]
  for (const [indicator_id, indicator_component_id, calculation] of [
    [targeted, vacc, 'PART_TO_BE_SUMMED'],
    [targeted, missed, 'PART_TO_BE_SUMMED'],
    [pm, missed, 'NUMERATOR'],
    [pm, targeted, 'DENOMINATOR'],
  ] as const)
    await created(api.post('/calculated_indicator_component/', { indicator_id, indicator_component_id, calculation }))
  for (const [content_type, code, master_object_id] of [
    ['campaign', 'C', C],
    ['location', 'K', K],
    ['location', 'P', P],
    ['location', 'D1', D1],
    ['location', 'D2', D2],
    ['location', 'D3', D3],
    ['indicator', 'vacc', vacc],
    ['indicator', 'missed', missed],
    ['indicator', 'targeted', targeted],
  ] as const)
    await created(api.post('/source_object_map/', { content_type, source_object_code: code, master_object_id }))
  const value = async (indicator: number, location: number) => {
    const res = await api.get(`/campaign_datapoint/?indicator__in=${indicator}&campaign__in=${C}&location_id__in=${location}`)
    return res.body.objects[0]?.value as number | undefined
  }
  const upload = async (csv: string) => {
    const doc = await api.post('/document/', { docfile: Buffer.from(csv).toString('base64'), doc_title: 'october.csv', file_type: 'campaign' })
    if (doc.status !== 201) throw new Error(doc.text)
    const run = await api.get(`/transform_upload/?document_id=${doc.body.id}`)
    if (run.status !== 200) throw new Error(run.text)
    return { id: doc.body.id as number, stats: run.body.objects[0].ingest_stats }
  }
  return { C, K, P, D1, D2, D3, vacc, missed, targeted, pm, value, upload }
}

const close = (a: number | undefined, b: number) => a !== undefined && Math.abs(a - b) < 1e-5

t.test('scenario 71a: a corrected district moves its province and country by the difference only', async (t) => {
  const { app } = await build(t)
  const api = client(app)
  const s = await scenario(api)
  const totals = async () => ({
    D1: await s.value(s.targeted, s.D1),
    P: await s.value(s.targeted, s.P),
    K: await s.value(s.targeted, s.K),
  })

  // A first upload: every district's vaccinated and missed; targeted calculated everywhere.
  await s.upload('campaign,geocode,vacc,missed\nC,D1,1150,24\nC,D2,1120,53\nC,D3,1160,57\n')
  t.same(await totals(), { D1: 1174, P: 3564, K: 3564 }, 'first upload: the sums of parts, added up')
  t.equal(await s.value(s.targeted, s.D2), 1173)
  t.equal(await s.value(s.targeted, s.D3), 1217)

  // One district sends its row again with its targeted corrected: recomputed key by key.
  const correction = await s.upload('campaign,geocode,vacc,missed,targeted\nC,D1,1150,24,1000\n')
  t.ok(correction.stats.recomputed_keys > 0, `the correction was recomputed key by key (${correction.stats.recomputed_keys} keys)`)
  const corrected = { D1: 1000, P: 3390, K: 3390 }
  t.same(await totals(), corrected, 'key by key: 1,000 + 1,173 + 1,217 at the province and the country')
  t.ok(close(await s.value(s.pm, s.P), 134 / 3390), 'the province’s percent missed uses its total')
  t.equal(await s.value(s.vacc, s.P), 3430, 'vaccinated unchanged')
  t.equal(await s.value(s.missed, s.P), 134, 'missed unchanged')

  const refreshed = await api.get(`/agg_refresh/?campaign_id=${s.C}`)
  t.equal(refreshed.status, 200)
  t.same(await totals(), corrected, 'agg_refresh gives the same')
  t.ok(close(await s.value(s.pm, s.P), 134 / 3390))

  const reverted = await api.get(`/revert_document/?document_id=${correction.id}`)
  t.equal(reverted.status, 200, reverted.text)
  t.same(await totals(), { D1: 1174, P: 3564, K: 3564 }, 'a revert of the correction restores the sums')

  // The same correction as a data entry.
  t.equal((await api.post('/campaign_datapoint/', { indicator_id: s.targeted, location_id: s.D1, campaign_id: s.C, value: 1000 })).status, 201)
  t.same(await totals(), corrected, 'a data entry gives the same')

  // A raw value at the province stops what is below it.
  t.equal((await api.post('/campaign_datapoint/', { indicator_id: s.targeted, location_id: s.P, campaign_id: s.C, value: 5000 })).status, 201)
  t.same(await totals(), { D1: 1000, P: 5000, K: 5000 }, 'a raw total at the province wins')
  t.ok(close(await s.value(s.pm, s.P), 134 / 5000))
  await api.get(`/agg_refresh/?campaign_id=${s.C}`)
  t.same(await totals(), { D1: 1000, P: 5000, K: 5000 }, 'and agg_refresh agrees')
})

t.test('a sum of parts is calculated at a parent only where no child has a value of it', async (t) => {
  const { app } = await build(t)
  const api = client(app)
  const s = await scenario(api)
  // Values at the province only (a provincial report): targeted is its own sum of parts there.
  await s.upload('campaign,geocode,vacc,missed\nC,P,900,100\n')
  t.equal(await s.value(s.targeted, s.P), 1000, 'the province’s own calculation')
  t.equal(await s.value(s.targeted, s.K), 1000, 'the country sums its one child')
  // A district reports: the province's total becomes its children's (only D1 has one).
  await s.upload('campaign,geocode,vacc,missed\nC,D1,40,2\n')
  t.equal(await s.value(s.targeted, s.D1), 42)
  t.equal(await s.value(s.vacc, s.P), 900, 'the province’s raw vaccinated stands')
  t.equal(await s.value(s.targeted, s.P), 42, 'the province’s total is its children’s sum')
})

t.test('a campaign computed under the earlier rule is recomputed whole at start, and until then by any recompute', async (t) => {
  const { app, db } = await build(t)
  const api = client(app)
  const s = await scenario(api)
  await s.upload('campaign,geocode,vacc,missed\nC,D1,1150,24\nC,D2,1120,53\nC,D3,1160,57\n')
  await api.post('/campaign_datapoint/', { indicator_id: s.targeted, location_id: s.D1, campaign_id: s.C, value: 1000 })
  // The province's total as the earlier rule left it: the corrected district's value only.
  const stale = () =>
    db
      .updateTable('datapoint_with_computed')
      .set({ value: 1000 })
      .where('campaign_id', '=', s.C)
      .where('indicator_id', '=', s.targeted)
      .where('location_id', 'in', [s.P, s.K])
      .execute()
  await stale()
  await db.insertInto('campaign_recompute_pending').values({ campaign_id: s.C }).execute()
  t.equal(await recomputePending(db), 1, 'one campaign recomputed')
  t.equal(await s.value(s.targeted, s.P), 3390, 'its province’s total is its children’s')
  t.same(await db.selectFrom('campaign_recompute_pending').selectAll().execute(), [], 'nothing waits any more')
  t.equal(await recomputePending(db), 0)

  // Still waiting, a correction that would be recomputed key by key recomputes the campaign whole.
  await stale()
  await db.insertInto('campaign_recompute_pending').values({ campaign_id: s.C }).execute()
  const correction = await s.upload('campaign,geocode,vacc,missed\nC,D2,1120,60\n')
  t.equal(correction.stats.recomputed_keys, 0, 'recomputed whole')
  t.equal(await s.value(s.targeted, s.P), 3397, 'every total right: 1,000 + 1,180 + 1,217')
  t.same(await db.selectFrom('campaign_recompute_pending').selectAll().execute(), [], 'and it waits no more')
})

t.test('a campaign without a value is recomputed to nothing, with a calculated int in the catalog', async (t) => {
  const { app } = await build(t)
  const api = client(app)
  const s = await scenario(api)
  const refreshed = await api.get(`/agg_refresh/?campaign_id=${s.C}`)
  t.equal(refreshed.status, 200, refreshed.text)
  t.equal(await s.value(s.targeted, s.K), undefined)
})

t.test('a district moved to another province takes its values with it: both provinces recomputed', async (t) => {
  const { app } = await build(t)
  const api = client(app)
  const s = await scenario(api)
  await s.upload('campaign,geocode,vacc,missed\nC,D1,1150,24\nC,D2,1120,53\nC,D3,1160,57\n')
  const province = (await api.get(`/location/${s.P}/`)).body as { location_type_id: number }
  const Q = await created(api.post('/location/', { name: 'Q', location_code: 'Q', location_type_id: province.location_type_id, parent_location_id: s.K }))
  const moved = await api.patch(`/location/${s.D3}/`, { parent_location_id: Q })
  t.equal(moved.status, 200, moved.text)
  t.equal(await s.value(s.targeted, s.P), 1174 + 1173, 'the province without it')
  t.equal(await s.value(s.targeted, Q), 1217, 'the province it joined')
  t.equal(await s.value(s.vacc, Q), 1160)
  t.equal(await s.value(s.targeted, s.K), 3564, 'the country unchanged')
})
