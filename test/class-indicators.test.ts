// Class indicators (docs/decisions.md, "Class indicators"): labels per value (indicator_class_map),
// uploads that accept a label or a known value, reads that return the label, counts per class over a
// subtree instead of a sum, and no calculation with a class.
import t from 'tap'
import { alice, build } from './helper.js'
import { client } from './api.js'
import { created, locationLevels } from './world.js'

type Api = ReturnType<typeof client>

/** R → province P → nine districts (codes D1…D9), a campaign C, LQAS (class: 1 pass, 0 fail, 2 not done) and n (int). */
async function lqasWorld(api: Api) {
  const { country, province, district, place } = await locationLevels(api)
  const R = await place('R', country)
  const P = await place('P', province, R)
  const districts: number[] = []
  for (let i = 1; i <= 9; i++) districts.push(await place(`D${i}`, district, P))
  const campaignType = await created(api.post('/campaign_type/', { name: 'NID' }))
  const C = await created(api.post('/campaign/', { name: 'C', campaign_type_id: campaignType, start_date: '2016-01-01', end_date: '2016-01-05' }))
  const lqas = await created(api.post('/indicator/', { name: 'LQAS', short_name: 'LQAS', data_format: 'class' }))
  const n = await created(api.post('/indicator/', { name: 'n', short_name: 'n', data_format: 'int' }))
  for (const [value, label] of [
    [1, 'pass'],
    [0, 'fail'],
    [2, 'not done'],
  ] as const) {
    await created(api.post('/indicator_class_map/', { indicator_id: lqas, value, label }))
  }
  for (const [content_type, code, id] of [
    ['campaign', 'C', C],
    ['indicator', 'LQAS', lqas],
    ...districts.map((d, i) => ['location', `D${i + 1}`, d] as const),
  ] as const) {
    await created(api.post('/source_object_map/', { content_type, source_object_code: code, master_object_id: id }))
  }
  return { R, P, districts, C, lqas, n }
}

async function ingest(api: Api, csv: string) {
  const doc = await api.post('/document/', { docfile: Buffer.from(csv).toString('base64'), doc_title: 'lqas.csv', file_type: 'campaign' })
  if (doc.status !== 201) throw new Error(doc.text)
  const run = await api.get(`/transform_upload/?document_id=${doc.body.id}`)
  if (run.status !== 200) throw new Error(run.text)
  return run.body.objects[0].ingest_stats
}

t.test('a class upload takes labels, reads return them, and a province counts its districts per class', async (t) => {
  const { app } = await build(t)
  const api = client(app)
  const w = await lqasWorld(api)
  // Seven pass (labels in any case and spacing, or the value itself), two fail; two cells refused.
  const cells = ['pass', 'PASS', ' Pass ', '1', 'pass', 'pass', 'pass', 'fail', '0']
  const rows = cells.map((cell, i) => `C,D${i + 1},${cell}`)
  const stats = await ingest(api, ['campaign,geocode,LQAS', ...rows].join('\n'))
  t.match(stats.datapoints, { inserted: 9 })
  const refused = await ingest(api, ['campaign,geocode,LQAS', 'C,D1,maybe', 'C,D2,3'].join('\n'))
  t.same(
    refused.rejected_cells.items.map((c: { row_number: number; value: string; reason: string }) => [c.row_number, c.value, c.reason]),
    [
      [0, 'maybe', 'not a class of the indicator: 0 fail, 1 pass, 2 not done'],
      [1, '3', 'not a class of the indicator: 0 fail, 1 pass, 2 not done'],
    ],
    'a word that is no label, and a number that is no class, are refused and named',
  )

  const read = await api.get(`/campaign_datapoint/?indicator__in=${w.lqas}&campaign__in=${w.C}&location_id=${w.P}&location_depth=1&with_labels=1`)
  t.equal(read.status, 200)
  t.same(
    read.body.objects.map((o: { value: number; label: string }) => `${o.value} ${o.label}`).sort(),
    ['0 fail', '0 fail', '1 pass', '1 pass', '1 pass', '1 pass', '1 pass', '1 pass', '1 pass'],
    'each value with its label',
  )
  const province = await api.get(`/campaign_datapoint/?indicator__in=${w.lqas}&campaign__in=${w.C}&location_id__in=${w.P}`)
  t.same(province.body.objects, [], 'a class is never summed: the province has no value of its own')

  const counts = await api.get(`/campaign_datapoint/?indicator__in=${w.lqas},${w.n}&campaign__in=${w.C}&location_id=${w.R}&location_depth=1&count_classes=1`)
  t.equal(counts.status, 200)
  t.same(
    counts.body.objects.map((o: { location_id: number; label: string; count: number }) => [o.location_id, o.label, o.count]),
    [
      [w.P, 'fail', 2],
      [w.P, 'pass', 7],
    ],
    'the province: 7 pass, 2 fail (n, an int, is not counted)',
  )
  t.same(counts.body.meta.location_ids, [w.P])
  const whole = await api.get(`/campaign_datapoint/?indicator__in=${w.lqas}&campaign__in=${w.C}&count_classes=1`)
  t.same(
    whole.body.objects.map((o: { location_id: number; count: number }) => [o.location_id, o.count]),
    [
      [w.R, 2],
      [w.R, 7],
    ],
    'without a selection: the country',
  )
})

t.test('a restricted user counts classes only inside her part', async (t) => {
  const { app, aliceId } = await build(t)
  const api = client(app)
  const w = await lqasWorld(api)
  await ingest(api, ['campaign,geocode,LQAS', 'C,D1,pass', 'C,D2,fail', 'C,D3,pass'].join('\n'))
  t.equal((await api.post('/location_responsibility/', { user_id: aliceId, top_lvl_location_id: w.districts[0] })).status, 201)
  const counts = (extra: string) => api.get(`/campaign_datapoint/?indicator__in=${w.lqas}&campaign__in=${w.C}&count_classes=1${extra}`, alice)
  const hers = await counts('')
  t.same(
    hers.body.objects.map((o: { location_id: number; label: string; count: number }) => [o.location_id, o.label, o.count]),
    [[w.districts[0], 'pass', 1]],
    'without a selection: her own district',
  )
  const above = await counts(`&location_id=${w.P}&location_depth=0`)
  t.ok(above.status === 403 || above.body.objects.length === 0, `the province above her is not counted for her (${above.status})`)
})

t.test('labels are checked, and no calculation takes a class', async (t) => {
  const { app } = await build(t)
  const api = client(app)
  const w = await lqasWorld(api)
  const notClass = await api.post('/indicator_class_map/', { indicator_id: w.n, value: 1, label: 'one' })
  t.equal(notClass.status, 400)
  t.match(notClass.body.message, /^indicator_id: n is not a class indicator/)
  t.equal((await api.post('/indicator_class_map/', { indicator_id: w.lqas, value: 5, label: 'pass' })).status, 409, 'a label twice')
  t.equal((await api.post('/indicator_class_map/', { indicator_id: w.lqas, value: 1, label: 'passed' })).status, 409, 'a value twice')
  t.equal((await api.post('/indicator_class_map/', { indicator_id: w.lqas, value: 7, label: '  ' })).status, 400, 'a blank label')
  const sum = await created(api.post('/indicator/', { name: 'sum', short_name: 'sum', data_format: 'int' }))
  const calc = await api.post('/calculated_indicator_component/', { indicator_id: sum, indicator_component_id: w.lqas, calculation: 'PART_TO_BE_SUMMED' })
  t.equal(calc.status, 400)
  t.match(calc.body.message, /^indicator_component_id: LQAS is a class indicator/)
  const into = await api.post('/calculated_indicator_component/', { indicator_id: w.lqas, indicator_component_id: sum, calculation: 'PART_TO_BE_SUMMED' })
  t.match(into.body.message, /^indicator_id: LQAS is a class indicator/)
  t.equal((await api.get(`/indicator_class_map/?indicator_id=${w.lqas}`)).body.meta.total_count, 3, 'nothing half written')
})
