// DHIS2 data values by date and `importStrategy=DELETE` on the demo data (either engine): a value of
// an indicator that takes values by date lands on its period's first day as a date upload, beside the
// same set's campaign values; it goes out on its day; DELETE deletes what a set names, recomputes the
// totals above it and keeps its history, counts what it did as DHIS2 does, and deletes nothing outside
// a restricted importer's part.
import t from 'tap'
import { sql } from 'kysely'
import { client } from './api.js'
import { build, rowCounts } from './helper.js'
import { loadDemoData } from '../lib/engine/demo.js'

t.test('dated values in and out, and values deleted by a data value set', async (t) => {
  const { app, db } = await build(t)
  await loadDemoData(db)
  const api = client(app)
  const idOf = async (table: 'indicator' | 'location', column: 'short_name' | 'location_code', value: string) =>
    (await db.selectFrom(table).select('id').where(sql.ref(column), '=', value).executeTakeFirstOrThrow()).id
  const [polio, missed] = [await idOf('indicator', 'short_name', 'Polio cases'), await idOf('indicator', 'short_name', 'Children missed')]
  const [ashford, brindle, northmarch] = [
    await idOf('location', 'location_code', 'VD11'),
    await idOf('location', 'location_code', 'VD12'),
    await idOf('location', 'location_code', 'VD1'),
  ]
  const october = (await db.selectFrom('campaign').select('id').where('name', 'like', 'October%').executeTakeFirstOrThrow()).id
  for (const [code, indicator] of [
    ['POLIO', polio],
    ['MISSED', missed],
  ] as const) {
    t.equal((await api.post('/source_object_map/', { content_type: 'indicator', source_object_code: code, master_object_id: indicator })).status, 201)
  }
  const dated = async (location: number, day: string) =>
    (
      await db
        .selectFrom('datapoint')
        .select('value')
        .where('indicator_id', '=', polio)
        .where('location_id', '=', location)
        .where('data_date', '=', day)
        .executeTakeFirst()
    )?.value
  /** `body` sent to `path` as a dry run, which keeps nothing, then for real: the dry run's summary and the real answer. */
  const dryThenReal = async (path: string, body: unknown) => {
    const counts = await rowCounts(db)
    const dry = await api.post(`${path}${path.includes('?') ? '&' : '?'}dryRun=true`, body)
    t.same(await rowCounts(db), counts, `${path}: a dry run keeps nothing`)
    return { dry: dry.body.response, done: await api.post(path, body) }
  }
  const atOctober = async (location: number) =>
    (await api.get(`/campaign_datapoint/?indicator__in=${missed}&campaign__in=${october}&location_id__in=${location}`)).body.objects[0]?.value

  // One set: dated values (a week's, a day's) and a campaign value, and a campaign indicator's value in a month without a campaign.
  const set = {
    orgUnit: 'VD11',
    dataValues: [
      { dataElement: 'POLIO', period: '2016W40', value: '4' },
      { dataElement: 'POLIO', period: '20161015', value: '2' },
      { dataElement: 'MISSED', period: '201610', value: '321' },
      { dataElement: 'MISSED', period: '201608', value: '5' },
    ],
  }
  const { dry, done } = await dryThenReal('/api/dataValueSets', set)
  t.match(dry, { importCount: { imported: 2, updated: 1, ignored: 1 } }, 'a dry run counts the dated values too')
  t.equal(done.status, 200)
  t.same(done.body.response.importCount, { imported: 2, updated: 1, ignored: 1, deleted: 0 })
  t.same(
    done.body.response.conflicts,
    [{ object: '201608', value: 'no campaign starts in period 201608', indexes: [3] }],
    'a campaign indicator’s value needs a campaign',
  )
  t.equal(await dated(ashford, '2016-10-03'), 4, 'a week’s value on its Monday')
  t.equal(await dated(ashford, '2016-10-15'), 2, 'a day’s value on its day')
  t.equal(await atOctober(ashford), 321, 'the campaign value beside them')
  const documents = done.body.response.document_ids as number[]
  t.equal(documents.length, 2, 'values at a campaign and by date: a document each')
  t.equal(done.body.response.document_id, documents[0])
  const types = await Promise.all(documents.map(async (id) => (await api.get(`/document/${id}/`)).body.file_type))
  t.same(types, ['campaign', 'date'], 'an upload of each kind, with its report, history and revert')
  const history = await api.get(`/datapoint_history/?document_id=${documents[1]}&limit=10`)
  t.equal(history.body.objects.length, 2, 'the dated values’ history names their document')

  // Out on their days, with the campaign's month beside them; CREATE leaves a stored dated value alone.
  const out = await api.get('/api/dataValueSets?dataElement=POLIO&dataElement=MISSED&orgUnit=VD11&period=201610')
  t.same(
    out.body.dataValues.map((v: { dataElement: string; period: string; value: string }) => `${v.dataElement} ${v.period} ${v.value}`).sort(),
    ['MISSED 201610 321', 'POLIO 20161001 2', 'POLIO 20161003 4', 'POLIO 20161015 2'],
    'the month’s dated values each on its day, the campaign’s by its month',
  )
  const created = await api.post('/api/dataValueSets?importStrategy=CREATE', {
    dataValues: [
      { dataElement: 'POLIO', period: '20161015', orgUnit: 'VD11', value: '9' },
      { dataElement: 'POLIO', period: '20161016', orgUnit: 'VD11', value: '1' },
    ],
  })
  t.match(created.body.response.importCount, { imported: 1, updated: 0, ignored: 1 })
  t.equal(await dated(ashford, '2016-10-15'), 2, 'CREATE: the stored dated value unchanged')

  // DELETE: the values a set names go, the province's total with them; a value not stored is ignored.
  const provinceBefore = (await api.get(`/campaign_datapoint/?indicator__in=${missed}&campaign__in=${october}&location_id__in=${northmarch}`)).body.objects[0]
    .value
  const brindleBefore = await atOctober(brindle)
  const doomed = {
    dataValues: [
      { dataElement: 'MISSED', period: '201610', orgUnit: 'VD12', value: '' },
      { dataElement: 'POLIO', period: '20161015', orgUnit: 'VD11', value: '' },
      { dataElement: 'POLIO', period: '20161020', orgUnit: 'VD11', value: '' },
      { dataElement: 'NOT_MAPPED', period: '201610', orgUnit: 'VD11', value: '' },
    ],
  }
  const { dry: dryDelete, done: deleted } = await dryThenReal('/api/dataValueSets?importStrategy=DELETE', doomed)
  t.match(dryDelete.importCount, { deleted: 2, ignored: 2 }, 'a dry DELETE counts')
  t.equal(deleted.status, 200)
  t.same(deleted.body.response.importCount, { imported: 0, updated: 0, deleted: 2, ignored: 2 })
  t.same(
    deleted.body.response.conflicts,
    [{ object: 'NOT_MAPPED', value: 'dataElement NOT_MAPPED is not mapped to an indicator: map the code, then import again', indexes: [3] }],
    'an unmapped code named; a value not stored ignored without a conflict, as DHIS2 does',
  )
  t.equal(await atOctober(brindle), undefined, 'Brindle’s value gone')
  t.equal(await dated(ashford, '2016-10-15'), undefined, 'the dated value gone')
  const province = (await api.get(`/campaign_datapoint/?indicator__in=${missed}&campaign__in=${october}&location_id__in=${northmarch}`)).body.objects[0].value
  t.equal(province, provinceBefore - brindleBefore, 'the province’s total recomputed without it')
  const { rows: removed } = await sql<{ change: string; value_before: number; via: string; user_id: number }>`
    select change, value_before, via, user_id from datapoint_history where change = 'delete' and location_id = ${brindle} and indicator_id = ${missed}`.execute(
    db,
  )
  t.match(removed, [{ change: 'delete', value_before: brindleBefore, via: 'job' }], 'its history keeps the value deleted and how')

  // A provincial officer of Eastvale deletes nothing in Northmarch: per value, named.
  const officer = (await api.post('/user/', { username: 'eastvale' })).body
  await api.post('/location_responsibility/', { user_id: officer.id, top_lvl_location_id: await idOf('location', 'location_code', 'VD2') })
  const key = (await api.post('/api_key/', { user_id: officer.id })).body.key
  const hers = await api.post(
    '/api/dataValueSets?importStrategy=DELETE',
    { dataValues: [{ dataElement: 'MISSED', period: '201610', orgUnit: 'VD11', value: '' }] },
    { authorization: `ApiToken ${key}` },
  )
  t.match(hers.body.response, {
    importCount: { deleted: 0, ignored: 1 },
    conflicts: [{ object: 'VD11', value: 'orgUnit VD11 is outside the locations you are responsible for', indexes: [0] }],
  })
  t.equal(await atOctober(ashford), 321, 'Ashford’s value kept')
})
