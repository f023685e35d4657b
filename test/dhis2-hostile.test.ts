// DHIS2's doors as a hostile or careless client finds them (either engine, on the demo): a restricted
// user who names a unit after a UID does not take that UID's place, nor blocks a ministry's import by
// taking the names its units would have; bytes the database cannot hold, and
// XML nested past the parser's limit, are a 400 naming where; each value the pipeline refuses, each
// formula and each value a later one replaces is a conflict of the summary, never silently dropped
// (past the pipeline's lists of 100 too);
// ADX's entities are read; a form sent as metadata is a 415; CSV exports are neutralised.
import t from 'tap'
import { client } from './api.js'
import { admin, ADMIN_KEY, build } from './helper.js'
import { loadDemoData } from '../lib/engine/demo.js'

type Row = Record<string, unknown>

t.test('DHIS2’s doors, as a hostile or careless client finds them', async (t) => {
  const { app, db } = await build(t)
  await loadDemoData(db)
  const api = client(app)
  const locationId = async (code: string) => (await db.selectFrom('location').select('id').where('location_code', '=', code).executeTakeFirstOrThrow()).id
  const officer = (await api.post('/user/', { username: 'eastvale' })).body
  await api.post('/location_responsibility/', { user_id: officer.id, top_lvl_location_id: await locationId('VD2') })
  const hers = { authorization: `ApiToken ${(await api.post('/api_key/', { user_id: officer.id })).body.key}` }
  const adx = { authorization: `ApiToken ${ADMIN_KEY}`, 'content-type': 'application/adx+xml' }
  // The data elements by their short names, mapped once as any upload's codes are.
  for (const name of ['Children missed', 'Children vaccinated', 'Polio cases']) {
    const indicator = (await db.selectFrom('indicator').select('id').where('short_name', '=', name).executeTakeFirstOrThrow()).id
    t.equal((await api.post('/source_object_map/', { content_type: 'indicator', source_object_code: name, master_object_id: indicator })).status, 201)
  }

  // A unit she names after a UID the ministry has not sent yet: its import makes a unit of its own.
  const squat = await api.post('/api/metadata', { organisationUnits: [{ code: 'Abcdefghij1', name: 'Squat', parent: { code: 'VD2' } }] }, hers)
  t.match(squat.body.stats, { created: 1 })
  const ministry = await api.post('/api/metadata', { organisationUnits: [{ id: 'Abcdefghij1', code: 'VD14', name: 'Newtown', parent: { code: 'VD1' } }] })
  t.match(ministry.body.stats, { created: 1, updated: 0 }, 'the ministry’s unit is made, hers is not taken over')
  const squatRow = await db.selectFrom('location').select(['name', 'parent_location_id']).where('location_code', '=', 'Abcdefghij1').executeTakeFirstOrThrow()
  t.same(squatRow, { name: 'Squat', parent_location_id: await locationId('VD2') }, 'hers stays hers, where it was')
  // A unit she names after the UID an export gives another: that UID still names the other.
  const units = (await api.get('/api/metadata')).body.organisationUnits as Row[]
  const ashford = units.find((u) => u.code === 'VD11')!
  await api.post('/api/metadata', { organisationUnits: [{ code: ashford.id, name: 'Squat 2', parent: { code: 'VD2' } }] }, hers)
  const byUid = await api.get(`/api/dataValueSets?dataElement=Children%20missed&orgUnit=${ashford.id}&period=201610`)
  t.same(
    byUid.body.dataValues.map((v: Row) => v.orgUnit),
    ['VD11'],
    'the UID names Ashford, not the unit given it as a code',
  )

  // The names a ministry's unit would take, taken first by her: the ministry's atomic import still goes through.
  for (const [code, name] of [
    ['EV90', 'Newplace'],
    ['EV91', 'Newplace (NP1)'],
  ]) {
    t.match((await api.post('/api/metadata', { organisationUnits: [{ code, name, parent: { code: 'VD2' } }] }, hers)).body.stats, { created: 1 })
  }
  const named = await api.post('/api/metadata?atomicMode=ALL', { organisationUnits: [{ code: 'NP1', name: 'Newplace', parent: { code: 'VD1' } }] })
  t.match(named.body, { status: 'WARNING', stats: { created: 1 } }, 'made, with a warning')
  t.equal(
    (await db.selectFrom('location').select('name').where('location_code', '=', 'NP1').executeTakeFirstOrThrow()).name,
    'Newplace (NP1 2)',
    'under the next free name',
  )
  const again = await api.post('/api/metadata', { organisationUnits: [{ code: 'NP1', name: 'Newplace', parent: { code: 'VD1' } }] })
  t.match(again.body.stats, { created: 0, updated: 0, ignored: 1 }, 'imported again: its name kept, nothing changed')

  // What PostgreSQL's text cannot hold, or its columns, or the XML parser: a 400 naming where.
  for (const [path, body, headers, problem] of [
    [
      '/api/dataValueSets',
      { dataValues: [{ dataElement: 'Children missed', period: '201610', orgUnit: 'VD\u000011', value: '1' }] },
      undefined,
      /orgUnit: a NUL/,
    ],
    [
      '/api/dataValueSets',
      { dataValues: [{ dataElement: 'Children missed', period: '201610', orgUnit: 'U'.repeat(256), value: '1' }] },
      undefined,
      /at most 255/,
    ],
    [
      '/api/dataValueSets',
      'dataelement,period,orgunit,categoryoptioncombo,attributeoptioncombo,value\nX,201610,VD\u000011,,,1\n',
      { ...admin, 'content-type': 'application/csv' },
      /line 2, orgunit: a NUL/,
    ],
    ['/api/dataValueSets', `<adx>${'<a>'.repeat(102)}${'</a>'.repeat(102)}</adx>`, adx, /ADX: .*nested/i],
    ['/api/dataValueSets', '<adx><group orgUnit="VD\u000011" period="201610"><dataValue dataElement="X" value="1"/></group></adx>', adx, /NUL|not well-formed/],
    ['/api/metadata', { organisationUnits: [{ code: 'EV\u0000NUL', name: 'x', parent: { code: 'VD2' } }] }, undefined, /code: a NUL/],
  ] as const) {
    const refused = await api.post(path, body, headers)
    t.equal(refused.status, 400, `${path}: ${String(problem)}`)
    t.match(refused.body.message, problem)
  }
  const nulQuery = await api.get('/api/dataValueSets?dataElement=Children%20missed&orgUnit=VD%0011&period=201610')
  t.equal(nulQuery.status, 400, 'a NUL in a query: 400')
  t.equal((await api.get('/api/dataValueSets?dataElement=Children%20missed&orgUnit=VD1&startDate=2016-13-45')).status, 400, 'a day that is not one: 400')
  const everyDistrict = await api.get('/api/dataValueSets?dataElement=Children%20missed&orgUnit=VD1&children=TRUE&period=201610')
  t.equal(everyDistrict.body.dataValues.length, 3, 'children=TRUE as DHIS2 reads it')

  // Every value set aside is a conflict: what the pipeline refuses, a formula, one a later value replaces.
  const mixed = await api.post('/api/dataValueSets', {
    period: '201610',
    dataValues: [
      { dataElement: 'Children missed', orgUnit: 'VD21', value: '-5' },
      { dataElement: 'Children missed', orgUnit: 'VD22', value: 'abc' },
      { dataElement: 'Children missed', orgUnit: 'VD23', value: '=1+2' },
      { dataElement: 'Children vaccinated', orgUnit: 'VD23', value: '10' },
      { dataElement: 'Children vaccinated', orgUnit: 'VD23', value: '11' },
    ],
  })
  t.equal(mixed.status, 200)
  t.equal(mixed.body.status, 'WARNING', 'not "successful" while values were set aside')
  t.same(Object.fromEntries(mixed.body.response.conflicts.map((c: { value: string; indexes: number[] }) => [c.indexes.join(','), c.value])), {
    '0': 'value -5 of dataElement Children missed: a count is not negative',
    '1': 'value abc of dataElement Children missed: not a number',
    '2': '=1+2: a formula; a data value set carries values, not formulas',
    '3': 'dataElement Children vaccinated: a later value in this set has the same place and period; the last is kept',
  })
  t.match(mixed.body.response.importCount, { updated: 1, ignored: 4 })
  // Past the pipeline's lists of 100: every value set aside is named, none dropped unseen.
  const days = Array.from({ length: 150 }, (_, i) => new Date(Date.UTC(2016, 0, 1 + i)).toISOString().slice(0, 10).replaceAll('-', ''))
  const unreadable = await api.post('/api/dataValueSets', {
    dataValues: days.map((period) => ({ dataElement: 'Polio cases', period, orgUnit: 'VD21', value: 'abc' })),
  })
  t.same(
    unreadable.body.response.conflicts.map((c: { value: string; indexes: number[] }) => [c.value, c.indexes.length]),
    [['value abc of dataElement Polio cases: not a number', 150]],
    'all 150 values that are not numbers',
  )
  const outside = await api.post(
    '/api/dataValueSets',
    { dataValues: days.map((period) => ({ dataElement: 'Polio cases', period, orgUnit: 'VD11', value: '1' })) },
    hers,
  )
  t.same(
    outside.body.response.conflicts.map((c: { value: string; indexes: number[] }) => [c.value, c.indexes.length]),
    [['orgUnit VD11 is outside the locations you are responsible for', 150]],
    'all 150 values outside her part',
  )
  t.match(outside.body.response.importCount, { imported: 0, ignored: 150 })

  // ADX: XML's entities and character references read; a group's own categories are a disaggregation.
  const entities = await api.post(
    '/api/dataValueSets',
    '<adx><group orgUnit="VD&#49;1" period="2016-10-01/P1M"><dataValue dataElement="Children&#32;missed" value="77"/></group>' +
      '<group orgUnit="VD12" period="2016-10-01/P1M" SEX="F"><dataValue dataElement="Children missed" value="5"/></group></adx>',
    adx,
  )
  t.match(entities.body.response, { importCount: { updated: 1, ignored: 1 } })
  t.same(
    entities.body.response.conflicts.map((c: { object: string }) => c.object),
    ['SEX=F'],
    'a category on the group: every value in it set aside, named',
  )

  // A form sent as metadata (curl -d without a content type): 415, not an OK that imported nothing.
  const form = await api.post('/api/metadata', 'organisationUnits=x', { ...admin, 'content-type': 'application/x-www-form-urlencoded' })
  t.equal(form.status, 415)
  t.match(form.body.message, /application\/json/)

  // A code a spreadsheet would run: neutralised in the CSV export, as every CSV export is.
  await api.post('/api/metadata', { organisationUnits: [{ code: '@SUM(1)', name: 'Formulaic', parent: { code: 'VD2' } }] })
  const campaign = (await db.selectFrom('campaign').select('id').where('name', 'like', 'October%').executeTakeFirstOrThrow()).id
  const missed = (await db.selectFrom('indicator').select('id').where('short_name', '=', 'Children missed').executeTakeFirstOrThrow()).id
  await api.post('/campaign_datapoint/', { indicator_id: missed, location_id: await locationId('@SUM(1)'), campaign_id: campaign, value: 3 })
  const csv = await api.get('/api/dataValueSets.csv?dataElement=Children%20missed&orgUnit=VD2&children=true&period=201610')
  t.match(csv.text, /,'@SUM\(1\),/, 'its code with a leading quote')
})
