// What the original rhizome web application sends (its `webapp/src/utilities/api.js` and the stores
// using it: superagent, form-urlencoded POSTs, `?format=json` on every call), replayed against the
// demo data: each request in the client's own form.
import t from 'tap'
import { build } from './helper.js'
import { client } from './api.js'
import { loadDemoData } from '../lib/engine/demo.js'

type Row = Record<string, unknown>
const FORM = { 'content-type': 'application/x-www-form-urlencoded' }

async function setup(t: Parameters<typeof build>[0]) {
  const harness = await build(t)
  await loadDemoData(harness.db)
  const api = client(harness.app)
  const get = (path: string) => api.get(`${path}${path.includes('?') ? '&' : '?'}format=json`)
  const post = (path: string, form: Record<string, string>) =>
    api.post(`${path}?format=json`, new URLSearchParams(form).toString(), { ...FORM, authorization: `ApiKey admin:${'a'.repeat(40)}` })
  return { ...harness, api, get, post }
}

t.test('campaign_datapoint takes start_date and end_date as the campaign window (RawData, TableChart)', async (t) => {
  const { get } = await setup(t)
  const campaigns = (await get('/campaign/')).body.objects as Row[]
  const first = campaigns.at(-1)! // ordered by -start_date
  const window = `start_date=${first.start_date}&end_date=${first.start_date}`
  const original = await get(`/campaign_datapoint/?indicator__in=1,2&location_id__in=2,3,4&group_by_time=campaign&${window}`)
  t.equal(original.status, 200, 'the original request is answered', { body: original.text })
  const spelled = await get(`/campaign_datapoint/?indicator__in=1,2&location_id__in=2,3,4&campaign_start=${first.start_date}&campaign_end=${first.start_date}`)
  t.same(original.body.objects, spelled.body.objects, 'the same rows as campaign_start/campaign_end')
  t.same(original.body.meta.campaign_ids, [first.id], 'only the campaign starting in the window')
  t.ok(original.body.objects.length > 0)
})

t.test('dates written YYYY-M-D are read as dates wherever a date is parsed; impossible dates are refused', async (t) => {
  const { get, post } = await setup(t)
  const created = await post('/campaign/', { name: 'March round', campaign_type_id: '1', start_date: '2017-3-5', end_date: '2017-3-9' })
  t.equal(created.status, 201, 'the form with one-digit dates is created', { body: created.text })
  t.match(created.body, { start_date: '2017-03-05', end_date: '2017-03-09' })
  const impossible = await post('/campaign/', { name: 'No such day', campaign_type_id: '1', start_date: '2017-2-30', end_date: '2017-3-9' })
  t.equal(impossible.status, 400)
  t.match(impossible.body.message, 'start_date: must be a date YYYY-MM-DD')
  t.equal((await get('/campaign/?start_date=2017-3-5')).body.meta.total_count, 1, 'as a filter')
  const window = await get('/campaign_datapoint/?indicator__in=1&campaign_start=2017-3-1&campaign_end=2017-3-31')
  t.equal(window.status, 200)
  t.same(window.body.meta.campaign_ids, [created.body.id], 'as a parameter')
  t.equal((await get('/date_datapoint/?indicator__in=1&start_date=2017-2-29')).status, 400, '2017 has no 29 February')
})

t.test('an id lookup satisfies document_id on source_submission and source_object_map; source_doc takes document_id', async (t) => {
  const { get, api } = await setup(t)
  const upload = await api.post('/document/', {
    docfile: Buffer.from('campaign,geocode,Vaccinated\nC1,VD11,5\nC1,VD12,6\n').toString('base64'),
    doc_title: 'round.csv',
    file_type: 'campaign',
  })
  t.equal(upload.status, 201)
  const doc = upload.body.id as number
  t.equal((await get(`/transform_upload/?document_id=${doc}`)).status, 200)
  const rows = (await get(`/source_submission/?document_id=${doc}`)).body.objects as Row[]
  const one = await get(`/source_submission/?id=${rows[1].id}`)
  t.equal(one.status, 200, 'a submission read by id', { body: one.text })
  t.same(
    one.body.objects.map((r: Row) => r.id),
    [rows[1].id],
  )
  t.same((await get(`/source_submission/?id__in=${rows[0].id},${rows[1].id}`)).body.objects.length, 2)
  const maps = (await get(`/source_object_map/?document_id=${doc}`)).body.objects as Row[]
  const map = await get(`/source_object_map/?id=${maps[0].id}`)
  t.equal(map.status, 200, 'a mapping read by id', { body: map.text })
  t.same(
    map.body.objects.map((m: Row) => m.id),
    [maps[0].id],
  )
  t.equal((await get('/source_object_map/')).status, 400, 'without either, the requirement holds')
  const byDocumentId = await get(`/source_doc/?document_id=${doc}`)
  t.equal(byDocumentId.status, 200, 'source_doc read by document_id', { body: byDocumentId.text })
  t.same(
    byDocumentId.body.objects.map((d: Row) => d.id),
    [doc],
  )
})

t.test('all_meta serves tag_json and bound_json as JSON text, which the original client parses', async (t) => {
  const { get } = await setup(t)
  const meta = await get('/all_meta/')
  t.equal(meta.status, 200)
  const indicators = meta.body.objects[0].indicators as Row[]
  t.ok(indicators.length > 0)
  for (const indicator of indicators) {
    t.type(indicator.tag_json, 'string')
    t.type(indicator.bound_json, 'string')
    t.ok(Array.isArray(JSON.parse(indicator.tag_json as string)), `${indicator.short_name}: JSON.parse gives the array`)
  }
  const tagged = indicators.find((i) => JSON.parse(i.tag_json as string).length > 0)
  t.ok(tagged, 'the demo has a tagged indicator')
  t.same(JSON.parse(tagged!.tag_json as string), (await get(`/indicator/${tagged!.id}/`)).body.tag_json, 'the same tags as the typed resource')
})

t.test('a location_depth that is not an integer is 400, whatever else is sent', async (t) => {
  const { get } = await setup(t)
  const res = await get("/campaign_datapoint/?indicator__in=1&location_depth=-1'")
  t.equal(res.status, 400)
  t.match(res.body, { code: 'INVALID_VALUE', message: `Invalid value for location_depth: "-1'" (expected integer)` })
  t.equal((await get('/campaign_datapoint/?indicator__in=1&location_id=x')).status, 400)
  t.equal((await get('/campaign_datapoint/?indicator__in=1,x')).status, 400)
  t.equal((await get('/campaign_datapoint/?indicator__in=1&location_depth=')).status, 200, 'empty is "not given"')
})
