// The upload template (upload_template, lib/ingest/template.ts): filled in as the app writes it and
// uploaded, nothing waits for mapping and every value is saved, on a catalog built through the API;
// a restricted user's rows are her part; calculated indicators are left out; formula-like codes are
// neutralised in a form the upload maps. And the report: every skipped line and refused cell, by line.
import t from 'tap'
import { build, alice } from './helper.js'
import { client } from './api.js'
import { created, upload, world } from './world.js'
import { templateCsv, templateFileName } from '../web/views/upload.js'
import { useLanguage } from '../web/i18n.js'

/** The template's CSV with every indicator cell filled: 1, 2, 3… */
function filled(template: { header: string[]; rows: string[][] }) {
  let value = 0
  return templateCsv({ ...template, rows: template.rows.map((row) => [...row, ...template.header.slice(row.length).map(() => String(++value))]) })
}

t.test('a filled template is saved whole, with nothing to map', async (t) => {
  const { app, db, aliceId } = await build(t)
  const api = client(app)
  const w = await world(api)
  const ratio = await created(api.post('/indicator/', { name: 'ratio', short_name: 'ratio', data_format: 'pct' }))
  await created(api.post('/calculated_indicator_component/', { indicator_id: ratio, indicator_component_id: w.n, calculation: 'NUMERATOR' }))
  const risky = await created(api.post('/indicator/', { name: 'risky', short_name: '=risky', data_format: 'int' }))
  // A code that waits unmapped under an indicator's name is mapped to it; one mapped elsewhere is not taken.
  await created(api.post('/source_object_map/', { content_type: 'indicator', source_object_code: 'LPD' }))

  const answer = await api.get(`/upload_template/?campaign_id=${w.C}`)
  t.equal(answer.status, 200, answer.text)
  const template = answer.body.objects[0]
  t.same(
    template.header,
    ['geocode', 'location_name', 'campaign', "'=risky", 'LPD', 'n'],
    "the location's name beside its code; each indicator under a code mapped to it; the formula-like name quoted",
  )
  t.same(template.calculated, [{ id: ratio, short_name: 'ratio' }], 'the calculated indicator is left out and named')
  t.same(
    template.rows,
    [
      ['a1', 'a1', 'C'],
      ['b1', 'b1', 'C'],
    ],
    'a row per lowest location',
  )
  t.ok(template.indicators.find((i: { id: number }) => i.id === risky))

  const csv = filled(template)
  t.notOk(/(^|,)=/m.test(csv), 'no cell of the CSV starts a formula')
  const { id, run } = await upload(api, 'template.csv', 'campaign', csv)
  t.equal(run.status, 200, run.text)
  const stats = run.body.objects[0].ingest_stats
  t.match(stats.unmapped, { indicator: { count: 0 }, location: { count: 0 }, campaign: { count: 0 } }, 'nothing waits for mapping')
  t.equal(stats.datapoints.inserted + stats.datapoints.updated + stats.datapoints.unchanged, 6, 'every value saved')
  t.same((await api.get(`/source_object_map/?document_id=${id}&is_mapped=0`)).body.objects, [])
  const listed = async (documentId: number) => {
    const answer = await api.get(`/document/?id=${documentId}&fields=id,processed`)
    t.equal(answer.status, 200, answer.text)
    return answer.body.objects?.[0]
  }
  t.same(await listed(id), { id, processed: true }, 'the document list says its file was read')
  const waiting = await created(api.post('/document/', { docfile: Buffer.from(csv).toString('base64'), doc_title: 'not read yet.csv', file_type: 'campaign' }))
  t.same(await listed(waiting), { id: waiting, processed: false }, 'and of a file not read yet, that it was not')

  const mappings = async () => (await db.selectFrom('source_object_map').select('id').execute()).length
  const mapped = await mappings()
  const again = await api.get(`/upload_template/?campaign_id=${w.C}`)
  t.same(again.body, (await api.get(`/upload_template/?campaign_id=${w.C}`)).body, 'the same answer every time: a read like any other')
  t.same(again.body.objects[0].header, template.header, 'the same template the next time')
  t.equal(await mappings(), mapped, 'with nothing more mapped')

  // Alice, restricted to province A: her rows only, and no other subtree.
  t.equal((await api.post('/location_responsibility/', { user_id: aliceId, top_lvl_location_id: w.A })).status, 201)
  const hers = await api.get('/upload_template/', alice)
  t.equal(hers.status, 200, hers.text)
  t.same(hers.body.objects[0].rows, [['a1', 'a1', 'C']], 'a restricted user: her districts')
  // Another's document: she learns that its file was read, not its ingest stats.
  const othersAnswer = await api.get(`/document/?id=${id}`, alice)
  t.equal(othersAnswer.status, 200, othersAnswer.text)
  const others = othersAnswer.body.objects[0]
  t.match(others, { id, processed: true }, 'a restricted user: whether another’s file was read')
  t.notOk(others.ingest_stats, 'but not its ingest stats')
  t.equal((await api.get(`/upload_template/?location_id=${w.B}`, alice)).status, 403, 'another subtree is refused')
  t.equal((await api.get('/upload_template/?file_type=other')).status, 400, 'a bad file type is a 400')
  const nowhere = await api.get('/upload_template/?location_id=999999')
  t.equal(nowhere.status, 404, 'a location that does not exist is a 404, not an empty template')
  t.equal(nowhere.body.code, 'NOT_FOUND')
  const dates = (await api.get('/upload_template/?file_type=date&data_date=2016-03-15')).body.objects[0]
  t.same(dates.header, ['geocode', 'location_name', 'data_date', 'unique_key', 'cases'])
  t.same(dates.rows[0], ['a1', 'a1', '2016-03-15', 'a1-2016-03-15'])
})

t.test("an upload's report lists each skipped line and refused cell with its line", async (t) => {
  const { app } = await build(t)
  const api = client(app)
  await world(api)
  const csv = 'geocode,campaign,n\na1,C,abc\nzz9,C,4\na1,C,5\nb1,C,6\n'
  const { run } = await upload(api, 'report.csv', 'campaign', csv)
  t.equal(run.status, 200, run.text)
  const stats = run.body.objects[0].ingest_stats
  t.same(stats.skipped_rows, { count: 1, items: [{ row_number: 1, reason: 'missing_location', location_code: 'zz9', campaign_code: 'C' }] })
  t.match(stats.duplicates.items, [{ location_code: 'a1', campaign_code: 'C', column: 'n', row_numbers: [0, 2] }], 'the key in its parts')
  const refresh = await api.get(`/refresh_master/?document_id=${run.body.objects[0].id}`)
  t.same(
    refresh.body.objects[0].ingest_stats.skipped_rows.items.map((r: { row_number: number }) => r.row_number),
    [1],
    'after a refresh too',
  )
})

t.test('a restricted user’s template maps no location: a code another upload waits on is not hers to take', async (t) => {
  const { app, db, aliceId } = await build(t)
  const api = client(app)
  const w = await world(api)
  // An upload by the admin names a place nobody knows yet: its code waits for mapping.
  const { run } = await upload(api, 'new-place.csv', 'campaign', 'geocode,campaign,n\nZZNEW,C,777\n')
  t.same(run.body.objects[0].ingest_stats.unmapped.location.items, ['ZZNEW'])
  t.equal((await api.post('/location_responsibility/', { user_id: aliceId, top_lvl_location_id: w.A })).status, 201)
  // Alice makes a location of that code in her part, then asks for her template.
  const type = (await db.selectFrom('location').select('location_type_id').where('id', '=', w.a1).executeTakeFirstOrThrow()).location_type_id
  const hamlet = await created(api.post('/location/', { name: 'hamlet', location_code: 'ZZNEW', location_type_id: type, parent_location_id: w.A }, alice))
  const hers = await api.get('/upload_template/', alice)
  t.equal(hers.status, 200, hers.text)
  t.same(hers.body.objects[0].without_code.locations, [{ id: hamlet, name: 'hamlet' }], 'her new place is listed as without a code')
  const waiting = await db.selectFrom('source_object_map').select('master_object_id').where('source_object_code', '=', 'ZZNEW').executeTakeFirstOrThrow()
  t.equal(waiting.master_object_id, -1, 'the waiting code still waits')
})

t.test('the rows follow the tree: each district under its province, siblings by name', async (t) => {
  const { app } = await build(t)
  const api = client(app)
  const w = await world(api)
  const district = (await api.get(`/location/${w.a1}/`)).body.location_type_id
  // A district named after every other, added to the first province, and one named first to the second.
  for (const [name, parent] of [
    ['zz', w.A],
    ['a0', w.B],
  ] as const) {
    await created(api.post('/location/', { name, location_code: name, location_type_id: district, parent_location_id: parent }))
  }
  const template = (await api.get(`/upload_template/?campaign_id=${w.C}`)).body.objects[0]
  t.same(
    template.rows.map((row: string[]) => row[0]),
    ['a1', 'zz', 'a0', 'b1'],
    'province A’s districts, then province B’s',
  )
})

t.test("the template's file name says its campaign or day", async (t) => {
  t.equal(
    templateFileName({ file_type: 'campaign', campaign: { name: 'October 2016 - NID - bOPV' }, data_date: null }),
    'campaign-template October 2016 - NID - bOPV.csv',
  )
  t.equal(
    templateFileName({ file_type: 'campaign', campaign: { name: 'Round 2: a/b' }, data_date: null }),
    'campaign-template Round 2- a-b.csv',
    'no path in it',
  )
  t.equal(templateFileName({ file_type: 'date', campaign: null, data_date: '2016-03-15' }), 'date-template 2016-03-15.csv')
  t.equal(templateFileName({ file_type: 'campaign', campaign: null, data_date: null }), 'campaign-template.csv', 'no campaign yet')
  // In French, the file's name too.
  t.teardown(useLanguage(() => 'fr'))
  t.equal(
    templateFileName({ file_type: 'campaign', campaign: { name: 'October 2016 - NID - bOPV' }, data_date: null }),
    'modèle-campagne October 2016 - NID - bOPV.csv',
  )
  t.equal(templateFileName({ file_type: 'date', campaign: null, data_date: '2016-03-15' }), 'modèle-date 2016-03-15.csv')
})
