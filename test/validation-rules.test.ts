// Validation rules (docs/decisions.md, "Validation rules"): a rule compares two indicators' final
// values at one location and campaign; what breaks it (or an indicator's bounds) is reported in the
// upload's report, in a data entry's answer and by validation_result, within the reader's subtree. A
// `block` rule refuses the upload or the entry, and nothing of it is written.
import { Ajv } from 'ajv'
import addFormats from 'ajv-formats'
import t from 'tap'
import { alice, build, rowCounts } from './helper.js'
import { client } from './api.js'
import { bob, created, erin, locationLevels, moreUsers, upload } from './world.js'

type Api = ReturnType<typeof client>
type Row = Record<string, unknown>

/** R → provinces A, B → districts a1, b1; campaign C; `missed` and `targeted`; the codes of an upload mapped. */
async function country(api: Api) {
  const { country, province, district, place } = await locationLevels(api)
  const R = await place('R', country)
  const A = await place('A', province, R)
  const B = await place('B', province, R)
  const a1 = await place('a1', district, A)
  const b1 = await place('b1', district, B)
  const type = await created(api.post('/campaign_type/', { name: 'NID' }))
  const C = await created(api.post('/campaign/', { name: 'C', campaign_type_id: type, start_date: '2016-01-01', end_date: '2016-01-05' }))
  const indicator = (name: string) => created(api.post('/indicator/', { name, short_name: name, data_format: 'int' }))
  const missed = await indicator('missed')
  const targeted = await indicator('targeted')
  for (const [content_type, code, master] of [
    ['location', 'a1', a1],
    ['location', 'b1', b1],
    ['campaign', 'C', C],
    ['indicator', 'missed', missed],
    ['indicator', 'targeted', targeted],
  ] as const) {
    await created(api.post('/source_object_map/', { content_type, source_object_code: code, master_object_id: master }))
  }
  return { R, A, B, a1, b1, C, missed, targeted, district }
}

type World = Awaited<ReturnType<typeof country>>

/** The rule "missed ≤ targeted", made by a metadata editor. */
const missedRule = (w: World, as: Api, action?: string) =>
  created(as.post('/validation_rule/', { name: 'missed ≤ targeted', left_indicator_id: w.missed, operator: '<=', right_indicator_id: w.targeted, action }))

/** Each violation in short: rule name, location, left and right values. */
const brief = (items: Row[]) =>
  items.map((v) => {
    const { rule, location, left, right } = v as Record<string, Row>
    return [rule.name, location.name, left.value, right.value]
  })

async function results(api: Api, query: string) {
  const res = await api.get(`/validation_result/?${query}`)
  if (res.status !== 200) throw new Error(res.text)
  return res.body.objects as Row[]
}

t.test('a rule missed ≤ targeted flags 1,234 missed of 1,000 targeted: in the upload report and in validation_result', async (t) => {
  const { app, db } = await build(t)
  await moreUsers(db)
  const api = client(app)
  const w = await country(api)
  const rule = await missedRule(w, client(app, erin))

  const { run } = await upload(api, 'round.csv', 'campaign', 'campaign,geocode,missed,targeted\nC,a1,1234,1000\nC,b1,5,10\n')
  t.equal(run.status, 200, 'a flag never refuses')
  const expected = {
    rule: { id: rule, kind: 'rule', name: 'missed ≤ targeted', operator: '<=', action: 'flag' },
    location: { id: w.a1, name: 'a1' },
    campaign: { id: w.C, name: 'C' },
    left: { indicator_id: w.missed, value: 1234 },
    right: { indicator_id: w.targeted, value: 1000 },
  }
  t.same(run.body.objects[0].ingest_stats.validation, { count: 1, items: [expected] }, 'the report names the rule, the location and both values')
  const written = await api.get(`/campaign_datapoint/?indicator__in=${w.missed}&campaign__in=${w.C}&location_id__in=${w.a1}`)
  t.same(
    written.body.objects.map((o: Row) => o.value),
    [1234],
    'the flagged value is saved',
  )

  // validation_result checks the final values: the province and the country sum to the same 1,234 of 1,000.
  t.same(
    brief(await results(api, `campaign_id=${w.C}`)),
    [
      ['missed ≤ targeted', 'R', 1239, 1010],
      ['missed ≤ targeted', 'A', 1234, 1000],
      ['missed ≤ targeted', 'a1', 1234, 1000],
    ],
    'every location of the campaign, in location order',
  )
  const subtree = await results(api, `campaign_id=${w.C}&location_id=${w.A}`)
  t.same(
    subtree.map((v) => (v.location as Row).id),
    [w.A, w.a1],
    'location_id: that location and its descendants',
  )
  t.same(subtree[1], expected, 'the same item as in the report')
  t.same(await results(api, `campaign_id=${w.C}&location_id=${w.B}`), [], 'nothing broken under B')

  // An indicator's bounds count as a check too: above the highest upper limit of its ranges.
  await created(api.post('/indicator_bound/', { indicator_id: w.missed, bound_name: 'few', mn_val: 0, mx_val: 100 }))
  await created(api.post('/indicator_bound/', { indicator_id: w.missed, bound_name: 'many', mn_val: 100, mx_val: 500 }))
  const bounded = (await results(api, `campaign_id=${w.C}&location_id=${w.a1}`)).map((v) => [v.rule, v.right])
  t.same(
    bounded,
    [
      [expected.rule, expected.right],
      [
        { id: null, kind: 'bound', name: 'missed within its bounds', operator: '<=', action: 'flag' },
        { indicator_id: null, value: 500 },
      ],
    ],
    'a bound flags, its limit as the right value',
  )
  // Ranges of one location level bound that level only (a district's count is no province's limit).
  const boundAt = async (location: number) =>
    (await results(api, `campaign_id=${w.C}&location_id=${location}`)).filter((v) => (v.rule as Row).kind === 'bound').map((v) => (v.location as Row).name)
  t.same(await boundAt(w.A), ['A', 'a1'], 'ranges of every level bound the province too')
  for (const range of (await api.get(`/indicator_bound/?indicator_id=${w.missed}`)).body.objects as Row[]) {
    t.equal((await api.patch(`/indicator_bound/${range.id}/`, { location_type_id: w.district })).status, 200)
  }
  t.same(await boundAt(w.A), ['a1'], 'district ranges: the district is flagged, the province is not')
})

t.test('a user responsible for B sees only the violations of her subtree', async (t) => {
  const { app, db, aliceId } = await build(t)
  await moreUsers(db)
  const api = client(app)
  const w = await country(api)
  await missedRule(w, api)
  t.equal((await upload(api, 'round.csv', 'campaign', 'campaign,geocode,missed,targeted\nC,a1,1234,1000\nC,b1,50,20\n')).run.status, 200)
  t.equal((await api.post('/location_responsibility/', { user_id: aliceId, top_lvl_location_id: w.B })).status, 201)
  const asAlice = client(app, alice)
  const places = async (query: string) => (await results(asAlice, query)).map((v) => (v.location as Row).name)
  t.same(await places(`campaign_id=${w.C}`), ['B', 'b1'], 'her subtree only, not R, A or a1')
  t.same(await places(`campaign_id=${w.C}&location_id=${w.R}`), ['B', 'b1'], 'a location above her subtree shows only her part of it')
  t.same(await places(`campaign_id=${w.C}&location_id=${w.A}`), [], 'a sibling subtree shows nothing')
  t.same(
    (await results(api, `campaign_id=${w.C}`)).map((v) => (v.location as Row).name),
    ['R', 'A', 'B', 'a1', 'b1'],
    'a superuser sees them all',
  )
})

t.test('a block rule refuses the upload and the data entry, and nothing is written', async (t) => {
  const { app, db } = await build(t)
  await moreUsers(db)
  const api = client(app)
  const w = await country(api)
  t.equal((await upload(api, 'first.csv', 'campaign', 'campaign,geocode,missed,targeted\nC,a1,10,1000\n')).run.status, 200)
  const rule = await missedRule(w, api, 'block')

  const doc = await created(
    api.post('/document/', { docfile: Buffer.from('campaign,geocode,missed\nC,a1,1234\n').toString('base64'), doc_title: 'second.csv', file_type: 'campaign' }),
  )
  let before = await rowCounts(db)
  const refused = await api.get(`/transform_upload/?document_id=${doc}`)
  t.equal(refused.status, 422)
  t.equal(refused.body.code, 'VALIDATION_BLOCKED')
  t.match(refused.body.message, /"missed ≤ targeted" at a1 \(location \d+\), campaign C \(\d+\): 1234 <= 1000 does not hold/)
  t.match(refused.body.details, {
    count: 1,
    violations: [{ rule: { id: rule, action: 'block' }, location: { id: w.a1 }, left: { value: 1234 }, right: { value: 1000 } }],
  })
  t.same(await rowCounts(db), before, 'the upload wrote nothing')
  const value = async () => (await api.get(`/campaign_datapoint/?indicator__in=${w.missed}&campaign__in=${w.C}&location_id__in=${w.a1}`)).body.objects[0] as Row
  t.equal((await value()).value, 10, 'the value before the upload stands')
  t.equal((await api.get(`/document/${doc}/`)).body.ingest_stats, null, 'the document has no report')

  // Data entry: a new value (POST) and a changed one (PATCH), at a1 and, with no targeted value there, at b1.
  before = await rowCounts(db)
  const post = await api.post('/campaign_datapoint/', { indicator_id: w.targeted, location_id: w.a1, campaign_id: w.C, value: 1 })
  t.equal(post.status, 409, 'a1 already has targeted: the entry is a PATCH')
  const patch = await api.patch(`/campaign_datapoint/${(await value()).id}/`, { value: 2000 })
  t.equal(patch.status, 422)
  t.equal(patch.body.code, 'VALIDATION_BLOCKED')
  t.match(patch.body.message, /"missed ≤ targeted" at a1 .*: 2000 <= 1000 does not hold/, 'names the rule, the location and the values')
  t.same(await rowCounts(db), before, 'the entry wrote nothing')
  t.equal((await value()).value, 10)
  const entered = await api.post('/campaign_datapoint/', { indicator_id: w.targeted, location_id: w.b1, campaign_id: w.C, value: 10 })
  t.equal(entered.status, 201)
  t.same(entered.body.validation, { count: 0, items: [] }, 'a write that breaks nothing says so')
  before = await rowCounts(db)
  const blocked = await api.post('/campaign_datapoint/', { indicator_id: w.missed, location_id: w.b1, campaign_id: w.C, value: 11 })
  t.equal(blocked.status, 422, 'POST: 11 missed of 10 targeted')
  t.same(await rowCounts(db), before, 'nothing written')
  t.equal((await api.post('/campaign_datapoint/', { indicator_id: w.missed, location_id: w.b1, campaign_id: w.C, value: 9 })).status, 201)

  // The same rule as a flag: the write is saved and its answer lists the violation.
  t.equal((await api.patch(`/validation_rule/${rule}/`, { action: 'flag' })).status, 200)
  const flagged = await api.patch(`/campaign_datapoint/${(await value()).id}/`, { value: 2000 })
  t.equal(flagged.status, 200)
  t.equal(flagged.body.value, 2000)
  t.match(flagged.body.validation, {
    count: 1,
    items: [{ rule: { id: rule, action: 'flag' }, location: { id: w.a1 }, left: { value: 2000 }, right: { value: 1000 } }],
  })
})

t.test('validation_rule: bad input is a 4xx naming the field; only metadata editors and superusers write', async (t) => {
  const { app, db, aliceId } = await build(t)
  await moreUsers(db)
  const api = client(app)
  const w = await country(api)
  const rule = { name: 'r', left_indicator_id: w.missed, operator: '<=', right_indicator_id: w.targeted }
  const refused = async (body: Row, field: string) => {
    const res = await api.post('/validation_rule/', { ...rule, ...body })
    t.equal(res.status, 400, `${JSON.stringify(body)}: 400`)
    t.match(res.body.message, new RegExp(`^${field}\\b`), `${JSON.stringify(body)}: names ${field}`, { body: res.text })
  }
  await refused({ operator: '=<' }, 'operator')
  await refused({ action: 'warn' }, 'action')
  await refused({ left_indicator_id: 999_999 }, 'left_indicator_id')
  await refused({ right_indicator_id: 999_999 }, 'right_indicator_id')
  await refused({ right_indicator_id: w.missed }, 'right_indicator_id')
  await refused({ name: ' ' }, 'name')
  // Sides a rule cannot compare: values never found at one key, or quantities of another kind.
  const other = (short_name: string, body: Row) => created(api.post('/indicator/', { name: short_name, short_name, data_format: 'int', ...body }))
  const cases = await other('cases', { resource_name: 'date' })
  const share = await other('share', { data_format: 'pct' })
  const reached = await other('reached', { data_format: 'bool' })
  const lqas = await other('lqas', { data_format: 'class' })
  for (const [right, reason] of [
    [cases, /cases takes values by date: a rule compares values at one location and campaign/],
    [share, /missed is a count and share a percentage: a rule compares values of one format/],
    [reached, /missed is a count and reached a yes\/no/],
    [lqas, /lqas is a class indicator: its values are not compared/],
  ] as const) {
    const res = await api.post('/validation_rule/', { ...rule, right_indicator_id: right, action: 'block' })
    t.equal(res.status, 400)
    t.match(res.body.message, reason)
  }
  const missing = await api.post('/validation_rule/', { name: 'r', left_indicator_id: w.missed })
  t.equal(missing.status, 400)
  t.match(missing.text, /operator/)
  const id = await created(api.post('/validation_rule/', rule))
  t.equal((await api.patch(`/validation_rule/${id}/`, { left_indicator_id: w.targeted })).status, 400, 'a PATCH making left = right')
  t.equal((await api.post('/validation_rule/', rule)).status, 409, 'names are unique')
  t.equal((await api.get('/validation_result/')).status, 400, 'validation_result needs campaign_id')

  t.equal((await api.post('/location_responsibility/', { user_id: aliceId, top_lvl_location_id: w.A })).status, 201)
  for (const [who, headers] of [
    ['a plain user', bob],
    ['a restricted user', alice],
  ] as const) {
    const res = await api.post('/validation_rule/', { ...rule, name: who }, headers)
    t.equal(res.status, 403, `${who} cannot write a rule`)
    t.equal((await api.patch(`/validation_rule/${id}/`, { action: 'block' }, headers)).status, 403)
    t.equal((await api.get(`/validation_rule/${id}/`, headers)).status, 200, `${who} reads rules`)
  }
  t.equal((await api.post('/validation_rule/', { ...rule, name: 'by erin', action: 'block' }, erin)).status, 201, 'a metadata editor writes one')
  const spare = await created(api.post('/indicator/', { name: 'spare', short_name: 'spare', data_format: 'int' }))
  const onSpare = await created(api.post('/validation_rule/', { ...rule, name: 'on spare', right_indicator_id: spare }))
  t.equal((await api.delete(`/indicator/${spare}/`)).status, 204, 'an indicator with rules can be deleted')
  t.equal((await api.get(`/validation_rule/${onSpare}/`)).status, 404, 'its rules go with it')
})

t.test("the answers validate against the OpenAPI document: validation_result's objects and a data entry's validation", async (t) => {
  const { app } = await build(t)
  const api = client(app)
  const w = await country(api)
  await missedRule(w, api)
  const document = (await app.inject('/documentation/json')).json()
  const ajv = new Ajv({ strict: false, allErrors: true })
  addFormats.default(ajv)
  ajv.addSchema(document, 'openapi')
  const conforms = (path: string, method: string, status: number, body: unknown) => {
    const pointer = ['paths', path, method, 'responses', String(status), 'content', 'application/json', 'schema']
      .map((p) => p.replaceAll('~', '~0').replaceAll('/', '~1'))
      .join('/')
    t.ok(ajv.validate({ $ref: `openapi#/${pointer}` }, body), `${method.toUpperCase()} ${path} ${status}`, { errors: ajv.errorsText(ajv.errors) })
  }
  const targeted = await api.post('/campaign_datapoint/', { indicator_id: w.targeted, location_id: w.a1, campaign_id: w.C, value: 10 })
  const missed = await api.post('/campaign_datapoint/', { indicator_id: w.missed, location_id: w.a1, campaign_id: w.C, value: 11 })
  t.equal(missed.body.validation.count, 1)
  conforms('/api/v1/campaign_datapoint/', 'post', 201, missed.body)
  const patched = await api.patch(`/campaign_datapoint/${targeted.body.id}/`, { value: 5 })
  t.equal(patched.body.validation.items[0].right.value, 5)
  conforms('/api/v1/campaign_datapoint/{id}/', 'patch', 200, patched.body)
  const listed = await api.get(`/validation_result/?campaign_id=${w.C}`)
  t.equal(listed.body.objects.length, 3)
  conforms('/api/v1/validation_result/', 'get', 200, listed.body)
  const schema = document.paths['/api/v1/validation_result/'].get.responses['200'].content['application/json'].schema
  t.same(Object.keys(schema.properties.objects.items.properties), ['rule', 'location', 'campaign', 'left', 'right'], 'each field has its own schema')
  t.ok(document.paths['/api/v1/campaign_datapoint/{id}/'].patch.responses['422'], 'a refused entry (422) is documented')
})
