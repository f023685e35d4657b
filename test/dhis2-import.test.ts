// DHIS2's `POST /api/dataValueSets` on the demo data (either engine): a data value set in JSON and in
// CSV goes through the upload pipeline (a document, its values in the API, the province's total
// recomputed), answered with DHIS2's import summary: counts, and a conflict naming each value set
// aside and why (a period no campaign starts in, a disaggregation, an unmapped code, a place outside
// the importer's part). A dry run counts and keeps nothing; `ApiToken` authenticates as DHIS2's clients do.
import t from 'tap'
import { client } from './api.js'
import { ADMIN_KEY, build, rowCounts } from './helper.js'
import { loadDemoData } from '../lib/engine/demo.js'

t.test('a DHIS2 data value set imported through the upload pipeline', async (t) => {
  const { app, db } = await build(t)
  await loadDemoData(db)
  const api = client(app)
  const indicatorId = async (name: string) => (await db.selectFrom('indicator').select('id').where('short_name', '=', name).executeTakeFirstOrThrow()).id
  const locationId = async (code: string) => (await db.selectFrom('location').select('id').where('location_code', '=', code).executeTakeFirstOrThrow()).id
  const [missed, vaccinated] = [await indicatorId('Children missed'), await indicatorId('Children vaccinated')]
  const [ashford, northmarch] = [await locationId('VD11'), await locationId('VD1')]
  const october = (await db.selectFrom('campaign').select('id').where('name', 'like', 'October%').executeTakeFirstOrThrow()).id
  // A DHIS2 UID and a code, each mapped once to an indicator, as any upload's codes are.
  for (const [code, indicator] of [
    ['fClA2Erf6IO', missed],
    ['VACCINATED', vaccinated],
  ] as const) {
    t.equal((await api.post('/source_object_map/', { content_type: 'indicator', source_object_code: code, master_object_id: indicator })).status, 201)
  }
  const value = async (indicator: number, location: number) =>
    (await api.get(`/campaign_datapoint/?indicator__in=${indicator}&campaign__in=${october}&location_id__in=${location}`)).body.objects[0]?.value
  const provinceBefore = await value(missed, northmarch)
  const ashfordBefore = await value(missed, ashford)

  const set = {
    period: '201610',
    orgUnit: 'VD11',
    dataValues: [
      { dataElement: 'fClA2Erf6IO', value: String(ashfordBefore + 7) },
      { dataElement: 'VACCINATED', value: '1234', categoryOptionCombo: 'HllvX50cXC0' },
      { dataElement: 'NOT_MAPPED', value: '5' },
      { dataElement: 'fClA2Erf6IO', period: '201601', value: '9' },
      { dataElement: 'fClA2Erf6IO', categoryOptionCombo: 'Female0to5', value: '3' },
      { dataElement: 'fClA2Erf6IO', period: '2016W40', value: '3' },
    ],
  }

  // A dry run: the same summary, nothing kept.
  const counts = await rowCounts(db)
  const dry = await api.post('/api/dataValueSets?dryRun=true', set)
  t.equal(dry.status, 200, 'the import ran: 200, its status WARNING, as DHIS2 answered before 2.38')
  t.match(dry.body, {
    httpStatusCode: 200,
    status: 'WARNING',
    response: { responseType: 'ImportSummary', importCount: { imported: 0, updated: 2, ignored: 4 } },
  })
  t.same(await rowCounts(db), counts, 'a dry run keeps nothing')
  t.equal(await value(missed, ashford), ashfordBefore, 'the value unchanged')

  const done = await api.post('/api/dataValueSets', set)
  t.equal(done.status, 200)
  t.equal(done.body.status, 'WARNING')
  t.same(done.body.response.importCount, { imported: 0, updated: 2, ignored: 4, deleted: 0 }, 'two values updated, four set aside')
  const why = Object.fromEntries(done.body.response.conflicts.map((c: { value: string; indexes: number[] }) => [c.indexes.join(','), c.value]))
  t.same(
    why,
    {
      '2': 'dataElement NOT_MAPPED is not mapped to an indicator: map the code, then import again',
      '3': 'no campaign starts in period 201601',
      '4': 'categoryOptionCombo Female0to5: only the default combination is read (a disaggregation is an indicator of its own)',
      '5': 'no campaign starts in period 2016W40',
    },
    'each value set aside is named by its index, with why',
  )
  t.equal(await value(missed, ashford), ashfordBefore + 7, 'Ashford’s value through the pipeline')
  t.equal(await value(vaccinated, ashford), 1234)
  t.equal(await value(missed, northmarch), provinceBefore + 7, 'its province’s total recomputed')
  const document = (await api.get(`/document/${done.body.response.document_id}/`)).body
  t.match(document, { doc_title: /^dataValueSets\.csv/, file_type: 'campaign' }, 'stored as a document, as an upload is')

  // CSV with DHIS2's header, authenticated by ApiToken: the same value again is counted, not changed.
  const csv = [
    'dataelement,period,orgunit,categoryoptioncombo,attributeoptioncombo,value',
    `fClA2Erf6IO,201610,VD11,,,${ashfordBefore + 7}`,
    'VACCINATED,201610,VD12,,,777',
  ].join('\n')
  const viaCsv = await api.post('/api/dataValueSets', csv, { authorization: `ApiToken ${ADMIN_KEY}`, 'content-type': 'application/csv' })
  t.equal(viaCsv.status, 200)
  t.match(viaCsv.body, { httpStatusCode: 200, status: 'OK', response: { status: 'SUCCESS', importCount: { imported: 0, updated: 1, ignored: 1 } } })
  t.equal(await value(vaccinated, await locationId('VD12')), 777, 'Brindle’s value from the CSV')

  // A provincial officer of Eastvale: Ashford is outside her part; nothing of it is written.
  const officer = (await api.post('/user/', { username: 'eastvale' })).body
  await api.post('/location_responsibility/', { user_id: officer.id, top_lvl_location_id: await locationId('VD2') })
  const key = (await api.post('/api_key/', { user_id: officer.id })).body.key
  const hers = await api.post(
    '/api/dataValueSets',
    { dataValues: [{ dataElement: 'VACCINATED', period: '201610', orgUnit: 'VD11', value: '1' }] },
    {
      authorization: `ApiToken ${key}`,
    },
  )
  t.equal(hers.body.status, 'WARNING')
  t.same(hers.body.response.conflicts, [{ object: 'VD11', value: 'orgUnit VD11 is outside the locations you are responsible for', indexes: [0] }])
  t.equal(await value(vaccinated, ashford), 1234, 'Ashford’s value unchanged')

  // What cannot be read is a 400 that says what.
  for (const [body, problem] of [
    [{ values: [] }, /dataValues/],
    [{ dataValues: [{ dataElement: 'VACCINATED', value: '1' }] }, /dataValues\[0\]: period is required/],
  ] as const) {
    const refused = await api.post('/api/dataValueSets', body)
    t.equal(refused.status, 400)
    t.match(refused.body.message, problem)
  }
  const reserved = await api.post('/api/dataValueSets', { dataValues: [{ dataElement: 'geocode', period: '201610', orgUnit: 'VD11', value: 'VD21' }] })
  t.same(
    reserved.body.response.conflicts.map((c: { value: string }) => c.value),
    ['dataElement geocode: a column name an upload reserves (geocode, campaign, location_name, unique_key, data_date)'],
  )
  const tooLarge = await api.post('/api/dataValueSets', {
    dataValues: Array.from({ length: 40_000 }, (_, i) => ({ dataElement: 'X', period: '201610', orgUnit: `U${i}`, value: '1' })),
  })
  t.equal(tooLarge.status, 413, 'a set past 2 MB: 413, sent in parts instead')
  // A campaign made through the API (its name mapped to it by no one yet): its values land all the same.
  const type = (await db.selectFrom('campaign_type').select('id').executeTakeFirstOrThrow()).id
  const december = await api.post('/campaign/', { name: 'December 2016 - mop-up', campaign_type_id: type, start_date: '2016-12-05', end_date: '2016-12-09' })
  t.equal(december.status, 201, december.text.slice(0, 200))
  const mopUp = await api.post('/api/dataValueSets', { dataValues: [{ dataElement: 'VACCINATED', period: '201612', orgUnit: 'VD11', value: '88' }] })
  t.match(mopUp.body.response, { importCount: { imported: 1 }, conflicts: [] }, 'a new campaign’s value imported, not dropped unseen')
  // What cannot be written whole is refused before anything is: a table past its cells, a field not text.
  const wide = await api.post('/api/dataValueSets', {
    period: '201610',
    orgUnit: 'VD11',
    // One past the file's columns less its geocode and campaign (a 422 naming the file's columns before).
    dataValues: Array.from({ length: 1999 }, (_, i) => ({ dataElement: `E${i}`, value: '1' })),
  })
  t.equal(wide.status, 400)
  t.match(wide.body, { code: 'DATA_VALUE_SET_TOO_WIDE', message: /1999 data elements: at most 1998/ })
  const odd = await api.post('/api/dataValueSets', { dataValues: [{ dataElement: { toString: 1 }, period: '201610', orgUnit: 'VD11', value: '1' }] })
  t.equal(odd.status, 400)
  t.match(odd.body.message, /dataValues\[0\]\.dataElement: a string or a number is required/)
  const ancient = await api.post('/api/dataValueSets', { dataValues: [{ dataElement: 'VACCINATED', period: '00261015', orgUnit: 'VD11', value: '1' }] })
  t.same(
    ancient.body.response.conflicts.map((c: { value: string }) => c.value),
    ['00261015: a year from 1900'],
  )
  const strategy = await api.post('/api/dataValueSets?importStrategy=REPLACE', set)
  t.equal(strategy.status, 400)
  t.match(strategy.body.message, /importStrategy REPLACE: CREATE_AND_UPDATE, CREATE, UPDATE or DELETE/)
  // CREATE leaves a stored value as it is and adds the new; UPDATE changes only stored ones.
  const decemberValue = async (location: number) =>
    (await api.get(`/campaign_datapoint/?indicator__in=${vaccinated}&campaign__in=${december.body.id}&location_id__in=${location}`)).body.objects[0]?.value
  const created = await api.post('/api/dataValueSets?importStrategy=CREATE', {
    dataValues: [
      { dataElement: 'fClA2Erf6IO', period: '201610', orgUnit: 'VD11', value: '4242' },
      { dataElement: 'VACCINATED', period: '201612', orgUnit: 'VD12', value: '55' },
    ],
  })
  t.match(created.body.response, { importOptions: { importStrategy: 'CREATE' }, importCount: { imported: 1, updated: 0, ignored: 1 }, conflicts: [] })
  t.equal(await value(missed, ashford), ashfordBefore + 7, 'CREATE: the stored value unchanged')
  t.equal(await decemberValue(await locationId('VD12')), 55, 'CREATE: the new value stored')
  const updated = await api.post('/api/dataValueSets?importStrategy=UPDATE', {
    dataValues: [
      { dataElement: 'fClA2Erf6IO', period: '201610', orgUnit: 'VD11', value: '4242' },
      { dataElement: 'VACCINATED', period: '201612', orgUnit: 'VD13', value: '9' },
    ],
  })
  t.match(updated.body.response, { importCount: { imported: 0, updated: 1, ignored: 1 }, conflicts: [] })
  t.equal(await value(missed, ashford), 4242, 'UPDATE: the stored value changed')
  t.equal(await decemberValue(await locationId('VD13')), undefined, 'UPDATE: no new value')
  t.equal((await api.post('/api/dataValueSets', set, {})).status, 401, 'no credentials: 401')
  // Other spellings of the path reach the same routes: never without credentials.
  for (const path of ['/api/dataValueSets/', '//api/dataValueSets', '/api/dataValueSet%73']) {
    t.equal((await api.post(path, set, {})).status, 401, `POST ${path} without credentials: 401`)
    t.equal((await api.get(`${path}?dataElement=VACCINATED&orgUnit=VD11&period=201610`, {})).status, 401, `GET ${path} without credentials: 401`)
  }
})

t.test('a DHIS2 data value set out, and back in unchanged', async (t) => {
  const { app, db } = await build(t)
  await loadDemoData(db)
  const api = client(app)
  const missed = (await db.selectFrom('indicator').select('id').where('short_name', '=', 'Children missed').executeTakeFirstOrThrow()).id
  t.equal((await api.post('/source_object_map/', { content_type: 'indicator', source_object_code: 'MISSED', master_object_id: missed })).status, 201)

  const out = await api.get('/api/dataValueSets?dataElement=MISSED&orgUnit=VD1&children=true&period=201610')
  t.equal(out.status, 200)
  t.same(
    out.body.dataValues.map((v: { orgUnit: string; period: string; dataElement: string }) => [v.orgUnit, v.period, v.dataElement]),
    [
      ['VD11', '201610', 'MISSED'],
      ['VD12', '201610', 'MISSED'],
      ['VD13', '201610', 'MISSED'],
    ],
    'Northmarch’s three districts as entered: the province’s computed total is not a data value',
  )
  const stored = (
    await api.get(
      `/campaign_datapoint/?indicator__in=${missed}&location_id__in=${(await db.selectFrom('location').select('id').where('location_code', '=', 'VD11').executeTakeFirstOrThrow()).id}&campaign__in=${(await db.selectFrom('campaign').select('id').where('name', 'like', 'October%').executeTakeFirstOrThrow()).id}`,
    )
  ).body.objects[0].value
  t.equal(out.body.dataValues[0].value, String(stored), 'Ashford’s value as the API holds it')

  // The same as CSV, imported back: every value unchanged, nothing set aside.
  const csv = await api.get('/api/dataValueSets.csv?dataElement=MISSED&orgUnit=VD1&children=true&startDate=2016-01-01&endDate=2016-12-31')
  t.match(csv.headers['content-type'], /^application\/csv/)
  const lines = csv.text.trim().split('\n')
  t.equal(lines[0], 'dataelement,period,orgunit,categoryoptioncombo,attributeoptioncombo,value')
  t.equal(lines.length, 1 + 3 * 3, 'three districts, three campaigns of 2016')
  const back = await api.post('/api/dataValueSets', csv.text, { authorization: `ApiToken ${ADMIN_KEY}`, 'content-type': 'application/csv' })
  t.match(
    back.body,
    { status: 'OK', response: { importCount: { imported: 0, updated: 0, ignored: 9, deleted: 0 }, conflicts: [] } },
    'back in: nine values unchanged',
  )

  // A restricted reader gets her subtree only, whatever she asks.
  const officer = (await api.post('/user/', { username: 'eastvale' })).body
  const eastvale = (await db.selectFrom('location').select('id').where('location_code', '=', 'VD2').executeTakeFirstOrThrow()).id
  await api.post('/location_responsibility/', { user_id: officer.id, top_lvl_location_id: eastvale })
  const key = (await api.post('/api_key/', { user_id: officer.id })).body.key
  const hers = await api.get('/api/dataValueSets?dataElement=MISSED&orgUnit=VD&children=true&period=201610', { authorization: `ApiToken ${key}` })
  t.same([...new Set(hers.body.dataValues.map((v: { orgUnit: string }) => v.orgUnit))], ['VD21', 'VD22', 'VD23'], 'Eastvale’s districts only')
  // A unit outside her part is answered as a unit that does not exist: no answer tells her which codes exist.
  const officerAsks = (orgUnit: string) =>
    api.get(`/api/dataValueSets?dataElement=MISSED&orgUnit=${orgUnit}&period=201610`, { authorization: `ApiToken ${key}` })
  const [elsewhere, nowhere] = [await officerAsks('VD11'), await officerAsks('VD99')]
  t.equal(elsewhere.status, 400, 'Ashford, in another province: as unknown')
  t.same(
    [elsewhere.body.code, elsewhere.body.message.replace('VD11', 'X')],
    [nowhere.body.code, nowhere.body.message.replace('VD99', 'X')],
    'the same answer as for a code no unit has',
  )
  t.equal((await officerAsks('VD21')).status, 200, 'her own district')

  // CSV asked for by Accept, in either of its names.
  for (const accept of ['application/csv', 'text/csv']) {
    const asked = await api.get('/api/dataValueSets?dataElement=MISSED&orgUnit=VD11&period=201610', { authorization: `ApiToken ${ADMIN_KEY}`, accept })
    t.equal(asked.status, 200, `Accept: ${accept}`)
    t.match(asked.headers['content-type'], new RegExp(`^${accept}`))
    t.match(asked.text, /^dataelement,period,orgunit,/)
  }

  // Parameters repeated, as DHIS2's clients send them.
  const two = await api.get('/api/dataValueSets?dataElement=MISSED&dataElement=Children%20vaccinated&orgUnit=VD11&orgUnit=VD12&period=201610&period=201603')
  t.equal(two.status, 200, two.text.slice(0, 200))
  t.equal(two.body.dataValues.length, 2 * 2 * 2, 'two data elements, two places, two campaigns')

  for (const [query, problem] of [
    ['orgUnit=VD1&period=201610', /dataElement/],
    ['dataElement=NOPE&orgUnit=VD1&period=201610', /dataElement NOPE/],
    ['dataElement=MISSED&orgUnit=XX&period=201610', /orgUnit XX/],
    ['dataElement=MISSED&orgUnit=VD1&period=2016S1', /period 2016S1/],
    ['dataElement=MISSED&orgUnit=VD1&startDate=foo', /startDate foo: a day as YYYY-MM-DD/],
  ] as const) {
    const refused = await api.get(`/api/dataValueSets?${query}`)
    t.equal(refused.status, 400, query)
    t.match(refused.body.message, problem)
  }
})
