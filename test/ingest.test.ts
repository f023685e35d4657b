// acceptance.md B 43–55 and E 72–90: upload, transform, refresh master, mappings and document results.
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { parse } from 'csv-parse/sync'
import t from 'tap'
import { sql } from 'kysely'
import { admin, build, engine, eventually, heldOpen } from './helper.js'
import { client } from './api.js'
import { halfWayUpload, hMap, hMeta, smallWorld } from './fixtures.js'
import { uploadFile } from './fixtures/upload-files.js'
import { world } from './world.js'
import { enterCampaignValue } from '../lib/engine/data-entry.js'

type Api = ReturnType<typeof client>

function uploader(api: Api) {
  /** POSTs `bytes` as a document titled `name`; without bytes, the upload file of that name (fixtures/upload-files.ts). */
  const upload = async (name: string, fileType = 'campaign', extra: Record<string, unknown> = {}, bytes?: Buffer) =>
    api.post('/document/', { docfile: (bytes ?? (await uploadFile(name))).toString('base64'), doc_title: name, file_type: fileType, ...extra })
  const ingest = async (name: string, fileType = 'campaign', extra: Record<string, unknown> = {}, bytes?: Buffer) => {
    const doc = await upload(name, fileType, extra, bytes)
    if (doc.status !== 201) throw new Error(`upload ${name}: ${doc.status} ${doc.text}`)
    const run = await api.get(`/transform_upload/?document_id=${doc.body.id}`)
    if (run.status !== 200) throw new Error(`transform ${name}: ${run.status} ${run.text}`)
    return { id: doc.body.id as number, stats: run.body.objects[0].ingest_stats, run }
  }
  const dwc = async (i: number, l: number, c: number) => {
    const res = await api.get(`/campaign_datapoint/?indicator__in=${i}&campaign__in=${c}&location_id__in=${l}`)
    if (res.status !== 200) throw new Error(`dwc: ${res.status} ${res.text}`)
    return res.body.objects.length ? (res.body.objects[0].value as number) : undefined
  }
  return { upload, ingest, dwc }
}

// acceptance.md 43
t.test('a document upload stores the file and answers the document', async (t) => {
  const { app, db } = await build(t)
  const api = client(app)
  await hMap(db, api.post)
  const { upload, ingest, dwc } = uploader(api)
  const report = await uploadFile('round-report.csv')
  const doc = await upload('round-report.csv')
  t.equal(doc.status, 201)
  t.match(doc.body.doc_title, /^round-report\.csv-\d+$/)
  t.match(doc.body, { file_type: 'campaign', date_order: 'MDY', ingest_stats: null })
  t.equal(doc.body.file_header.length, 16)
  t.same(doc.body.file_header.slice(0, 3), ['campaign', 'province', 'province_code'])
  t.notOk(doc.text.includes(report.toString('base64').slice(0, 40)), 'no base64 echoed')
  t.equal(doc.headers.location, `/api/v1/document/${doc.body.id}/`)
  await ingest('round-report.xlsx')
  t.ok(Math.abs((await dwc(164, 12907, 99))! - 0.0734) < 1e-9, 'the XLSX gives the CSV value')
  const form = new FormData()
  form.append('file_type', 'campaign')
  form.append('docfile', new Blob([new Uint8Array(report)]), 'round-report.csv')
  const request = new Request('http://x/', { method: 'POST', body: form })
  const multipart = await app.inject({
    method: 'POST',
    url: '/api/v1/document/',
    headers: { ...admin, 'content-type': request.headers.get('content-type')! },
    payload: Buffer.from(await request.arrayBuffer()),
  })
  t.equal(multipart.statusCode, 201, multipart.body)
  t.match(JSON.parse(multipart.body).doc_title, /^round-report\.csv-\d+/)
  const dataUrl = await api.post('/document/', {
    docfile: `data:text/csv;base64,${report.toString('base64')}`,
    doc_title: 'x.csv',
    file_type: 'campaign',
  })
  t.equal(dataUrl.status, 201)
  const empty = await upload('empty.csv')
  t.match(empty.body, { statusCode: 422, code: 'EMPTY_FILE', message: 'file is empty please check the upload and try again' })
  t.equal((await upload('empty.xlsx')).body.code, 'EMPTY_FILE')
  t.equal((await api.post('/document/', { docfile: 'YQ==', file_type: 'campaign' })).body.message, 'Missing required field doc_title')
  t.equal((await upload('x.txt', 'campaign', {}, Buffer.from('a,b'))).body.code, 'UNSUPPORTED_FILE_TYPE')
  t.equal((await upload('x.xls', 'campaign', {}, Buffer.from('a,b'))).body.code, 'UNSUPPORTED_FILE_TYPE')
  const junk = await upload('x.xlsx', 'campaign', {}, Buffer.from('not a zip at all, just junk'))
  t.match(junk.body, { statusCode: 422, code: 'UNREADABLE_FILE', message: 'There was an error with your file. Please check the upload and try again' })
  t.equal((await api.post('/document/', { docfile: '!!!', doc_title: 'a.csv', file_type: 'campaign' })).body.code, 'UNREADABLE_FILE')
  t.equal((await upload('round-report.csv', 'nope')).body.code, 'VALIDATION_ERROR')
  const missing = await upload('round-report-no-campaign.csv')
  t.match(missing.body, { statusCode: 422, code: 'MISSING_COLUMN', message: 'campaign is a required column.' })
  const before = (await api.get('/document/')).body.meta.total_count
  t.equal((await upload('round-report.csv')).status, 201)
  t.equal((await api.get('/document/')).body.meta.total_count, before + 1)
  const titles = (await api.get('/document/?limit=0')).body.objects.map((d: { doc_title: string }) => d.doc_title)
  t.equal(new Set(titles).size, titles.length, 'every title is unique even within one second')
  t.equal((await api.patch(`/document/${doc.body.id}/`, { file_type: 'date' })).body.message, 'file_type: cannot be changed after upload')
  t.equal((await api.patch(`/document/${doc.body.id}/`, { date_order: 'DMY' })).body.date_order, 'DMY')
})

// acceptance.md 43.7
t.test('uploads over MAX_UPLOAD_BYTES are refused', async (t) => {
  const { app } = await build(t, { MAX_UPLOAD_BYTES: 1024 })
  const report = await uploadFile('round-report.csv')
  t.ok(report.length > 1024, 'the file is over the limit')
  const res = await uploader(client(app)).upload('round-report.csv')
  t.equal(res.status, 413)
  t.equal(res.body.message, 'File is too large (limit 1024 bytes)')
})

// acceptance.md 44
t.test('transform_upload turns a campaign file into submissions, datapoints and computed values', async (t) => {
  const { app, db } = await build(t)
  const api = client(app)
  await hMap(db, api.post)
  const { ingest, dwc } = uploader(api)
  // 20 districts, one of them mapped; 16 columns, of which 14 are indicator codes (2 mapped).
  const { id, stats, run } = await ingest('round-report.csv')
  t.equal(run.body.objects.length, 1)
  t.equal(run.body.objects[0].id, id)
  t.match(stats, {
    submissions: { file_rows: 20, created: 20, duplicate_keys: 0 },
    codes: { new: { indicator: 12, location: 19, campaign: 0 }, linked: 35 },
    unmapped: { indicator: { count: 12 }, location: { count: 19 }, campaign: { count: 0 } },
    rows: { processed: 1, missing_location: 19, missing_campaign: 0, missing_date: 0 },
    doc_datapoints: 1,
    datapoints: { inserted: 1 },
    rejected_cells: { count: 0 },
    campaigns_recomputed: [99],
    computed_rows: 1,
  })
  t.ok(Math.abs((await dwc(164, 12907, 99))! - 0.0734) < 1e-9)
  const results = await api.get(`/campaign_doc_result/?document_id=${id}`)
  t.same(
    results.body.objects.map((o: Record<string, unknown>) => ({ ...o, id: undefined })),
    [
      {
        id: undefined,
        indicator__id: 164,
        indicator__short_name: 'Missed, other reasons',
        location_id: 12907,
        location__name: 'Lorvania',
        campaign_id: 99,
        campaign__name: 'November 2013 round',
        value: 0.0734,
      },
    ],
  )
  const staged = (await api.get(`/doc_datapoint/?document_id=${id}`)).body.objects
  t.equal(staged.length, 1)
  t.equal(staged[0].column_name, 'Missed - other reasons')
  const submissions = await api.get(`/source_submission/?document_id=${id}`)
  t.equal(submissions.body.meta.total_count, 20)
  t.same(
    submissions.body.objects.map((s: { row_number: number }) => s.row_number),
    Array.from({ length: 20 }, (_, i) => i),
  )
  t.equal(Object.keys(submissions.body.objects[0].submission_json).length, 16)
  t.equal(submissions.body.objects[0].submission_json['Missed by survey'], null)
  const statuses = submissions.body.objects.map((s: { process_status: string }) => s.process_status)
  t.equal(statuses.filter((s: string) => s === 'PROCESSED').length, 1)
  t.equal(statuses.filter((s: string) => s === 'MISSING_LOCATION').length, 19)
  t.equal((await api.get(`/source_submission/${submissions.body.objects[0].id}/`)).body.id, submissions.body.objects[0].id)
  t.equal((await api.get('/source_submission/')).body.message, 'Missing required parameter document_id')
  // 93. the raw file back
  const raw = await api.get(`/source_submission/?document_id=${id}&format=csv`)
  t.equal(raw.headers['content-type'], 'text/csv; charset=utf-8')
  const parsed = parse(raw.text) as string[][]
  const original = parse(await uploadFile('round-report.csv'), { record_delimiter: ['\r\n', '\n', '\r'], relax_column_count: true }) as string[][]
  t.same(
    parsed[0],
    original[0].map((h) => h.trim()),
    'the 16 original column names, in file order',
  )
  t.equal(parsed.length, 21)
  t.same(
    parsed.slice(1),
    original.slice(1).map((row) => row.map((c) => c.trim())),
    'each line has the original cells',
  )
  // 50. idempotency
  const again = (await api.get(`/transform_upload/?document_id=${id}`)).body.objects[0].ingest_stats
  t.match(again, {
    submissions: { created: 0, existing: 20 },
    codes: { new: { indicator: 0, location: 0, campaign: 0 } },
    datapoints: { inserted: 0, updated: 0, unchanged: 1 },
  })
  t.equal((await api.get(`/source_submission/?document_id=${id}`)).body.meta.total_count, 20)
  // 52. agg_refresh
  const agg = await api.get('/agg_refresh/?campaign_id=99')
  t.match(agg.body.objects[0], { id: 99, agg_stats: { raw: 1, aggregated: 0, computed: 1 } })
  // 55. queue_process
  t.equal((await api.get(`/queue_process/?document_id=${id}`)).status, 200)
  const queued = (await api.get(`/source_submission/?document_id=${id}&limit=0`)).body.objects
  t.ok(queued.every((s: { process_status: string }) => s.process_status === 'TO_PROCESS'))
  t.equal((await api.get('/queue_process/')).body.message, 'Missing required parameter document_id')
  // 76. refresh keeps submissions
  await api.get(`/refresh_master/?document_id=${id}`)
  await api.get(`/refresh_master/?document_id=${id}`)
  const refreshed = (await api.get(`/source_submission/?document_id=${id}&limit=0`)).body.objects
  t.equal(refreshed.length, 20)
  t.same(
    refreshed.map((s: { process_status: string }) => s.process_status),
    statuses,
    'the refresh gives the stored submissions their statuses again',
  )
})

// acceptance.md 46, 75, 74
t.test('zero values and percentages are kept; of two rows for one key the last wins', async (t) => {
  const { app, db } = await build(t)
  const api = client(app)
  await hMap(db, api.post)
  const { ingest, dwc } = uploader(api)
  await ingest('zero-values.csv')
  t.equal(await dwc(164, 12907, 99), 0, 'zero is a value')
  await ingest('percent-values.csv')
  t.ok(Math.abs((await dwc(164, 12907, 99))! - 0.735) < 1e-9, '73.5% is 0.735')
  t.ok(Math.abs((await dwc(12911, 12907, 99))! - 0.0418) < 1e-9)
  // Three rows of one key: 0.0734, 0.512, 0.338. The last is neither the first nor the largest.
  const dupes = await ingest('repeated-key.csv')
  t.match(dupes.stats, { submissions: { created: 1, duplicate_keys: 2 } })
  t.ok(Math.abs((await dwc(164, 12907, 99))! - 0.338) < 1e-9)
  await ingest('repeated-key-crlf.csv')
  t.ok(Math.abs((await dwc(164, 12907, 99))! - 0.338) < 1e-9)
})

// acceptance.md 47
t.test('transform_upload refuses a missing or unprocessable document with 4xx', async (t) => {
  const { app } = await build(t)
  const api = client(app)
  t.equal((await api.get('/transform_upload/')).body.message, 'Missing required parameter document_id')
  t.match((await api.get('/transform_upload/?document_id=999999')).body, { statusCode: 404, message: 'No document object found for id : 999999' })
  t.equal((await api.get('/transform_upload/?document_id=abc')).body.code, 'INVALID_VALUE')
  t.equal((await api.get('/agg_refresh/')).body.message, 'Missing required parameter campaign_id')
  t.equal((await api.get('/agg_refresh/?campaign_id=-1343040302345')).body.message, 'No campaign object found for id : -1343040302345')
  t.equal((await api.get('/refresh_master/')).body.message, 'Missing required parameter document_id')
})

// acceptance.md 48
t.test('a re-uploaded campaign file wins over the older one, and ids stay', async (t) => {
  const { app, db } = await build(t)
  const api = client(app)
  await hMap(db, api.post)
  const { ingest } = uploader(api)
  await ingest('round-report.csv')
  const before = (await api.get('/campaign_datapoint/?indicator__in=164&campaign__in=99&location_id__in=12907')).body.objects[0]
  const second = await ingest('round-report-revised.csv')
  t.match(second.stats.datapoints, { updated: 1 })
  const rows = await db.selectFrom('datapoint').selectAll().where('unique_index', '=', '12907_164_99').execute()
  t.equal(rows.length, 1)
  t.equal(rows[0].value, 0.85)
  const after = (await api.get('/campaign_datapoint/?indicator__in=164&campaign__in=99&location_id__in=12907')).body.objects[0]
  t.equal(after.value, 0.85)
  t.equal(after.id, before.id, 'same campaign_datapoint id')
})

// acceptance.md 89
t.test('a data entry wins over uploads until a newer upload', async (t) => {
  const { app, db } = await build(t)
  const api = client(app)
  await hMap(db, api.post)
  const { ingest } = uploader(api)
  const a = await ingest('round-report.csv')
  const row = (await api.get('/campaign_datapoint/?indicator__in=164&campaign__in=99&location_id__in=12907')).body.objects[0]
  t.ok(Math.abs(row.value - 0.0734) < 1e-9)
  t.equal((await api.patch(`/campaign_datapoint/${row.id}/`, { value: 0.5 })).body.value, 0.5)
  const refresh = await api.get(`/refresh_master/?document_id=${a.id}`)
  t.equal(refresh.status, 200, refresh.text)
  t.match(refresh.body.objects[0].ingest_stats.datapoints, { superseded: 1 })
  t.equal((await api.get(`/campaign_datapoint/${row.id}/`)).body.value, 0.5, 'the older upload does not overwrite the entry')
  await ingest('round-report-revised.csv')
  const after = await api.get(`/campaign_datapoint/${row.id}/`)
  t.equal(after.body.value, 0.85, 'a newer upload wins over the entry, with the same id')
})

// acceptance.md 51, 53
t.test("refresh_master applies new mappings; source_object_map lists a document's codes", async (t) => {
  const { app, db, adminId } = await build(t)
  const api = client(app)
  await hMeta(db)
  const { ingest, dwc } = uploader(api)
  const { id, stats } = await ingest('round-report.csv')
  t.match(stats.rows, { missing_campaign: 20 })
  t.equal(await dwc(164, 12907, 99), undefined)
  const unmapped = (await api.get(`/source_object_map/?document_id=${id}&is_mapped=0&limit=0`)).body.objects
  const code = (text: string) => unmapped.find((m: { source_object_code: string }) => m.source_object_code === text)
  const location = await api.patch(`/source_object_map/${code('LV-01-01').id}/`, { master_object_id: 12907 })
  t.match(location.body, { master_object_id: 12907, master_object_name: 'Lorvania', mapped_by_id: adminId })
  await api.patch(`/source_object_map/${code('Spring 2016 national round').id}/`, { master_object_id: 99 })
  const indicator = await api.patch(`/source_object_map/${code('Missed - other reasons').id}/`, {
    source_object_code: 'Missed - other reasons',
    master_object_id: 164,
    content_type: 'indicator',
    mapped_by_id: adminId,
  })
  t.match(indicator.body, { master_object_id: 164, master_object_name: 'Missed, other reasons' })
  t.equal((await api.patch('/source_object_map/999999/', { master_object_id: 1 })).status, 404)
  const bad = await api.patch(`/source_object_map/${code('Missed - other reasons').id}/`, { master_object_id: 999999 })
  t.equal(bad.body.message, 'master_object_id: no indicator with id 999999')
  const refreshed = await api.get(`/refresh_master/?document_id=${id}`)
  t.equal(refreshed.body.objects[0].id, id)
  t.ok(Math.abs((await dwc(164, 12907, 99))! - 0.0734) < 1e-9)
  t.equal((await api.get(`/source_object_map/?document_id=${id}&is_mapped=1`)).body.objects.length, 3)
  t.equal((await api.get('/source_object_map/')).body.message, 'Missing required parameter document_id')
  t.equal((await api.get('/source_object_map/?document_id=999999')).body.objects.length, 0)
  // The legacy urlencoded POST with id remaps, and -1 unmaps.
  const form = { ...admin, 'content-type': 'application/x-www-form-urlencoded' }
  const campaignCode = code('Spring 2016 national round').id
  t.match((await api.post('/source_object_map/', `id=${campaignCode}&master_object_id=99`, form)).body, {
    master_object_id: 99,
    master_object_name: 'November 2013 round',
  })
  t.match((await api.post('/source_object_map/', `id=${campaignCode}&master_object_id=-1`, form)).body, { master_object_id: -1, master_object_name: null })
})

// acceptance.md 77, 78
t.test('the newest document wins, and a remapped code moves its data', async (t) => {
  const { app, db } = await build(t)
  const api = client(app)
  await hMap(db, api.post)
  const { ingest, upload, dwc } = uploader(api)
  const csv = (value: number) => Buffer.from(`campaign,geocode,Missed - other reasons\r\nSpring 2016 national round,LV-01-01,${value}\r\n`)
  const a = await upload('a.csv', 'campaign', {}, csv(10))
  const b = await upload('b.csv', 'campaign', {}, csv(20))
  await api.get(`/transform_upload/?document_id=${a.body.id}`)
  await api.get(`/transform_upload/?document_id=${b.body.id}`)
  t.equal(await dwc(164, 12907, 99), 20)
  const again = await api.get(`/refresh_master/?document_id=${a.body.id}`)
  t.equal(again.body.objects[0].ingest_stats.datapoints.superseded, 1)
  t.equal(await dwc(164, 12907, 99), 20)
  t.equal((await db.selectFrom('datapoint').select('id').execute()).length, 1)
  // Remap the header to another indicator: the data moves.
  const map = (await api.get(`/source_object_map/?document_id=${b.body.id}&source_object_code=Missed - other reasons`)).body.objects[0]
  await api.patch(`/source_object_map/${map.id}/`, { master_object_id: 22 })
  const moved = (await api.get(`/refresh_master/?document_id=${b.body.id}`)).body.objects[0].ingest_stats
  t.match(moved.datapoints, { inserted: 1, deleted: 1 })
  t.equal(await dwc(22, 12907, 99), 20)
  t.ok([undefined, 10].includes(await dwc(164, 12907, 99)), "B's old key is gone")
  void ingest
})

// acceptance.md 80, 84
t.test('rejected cells are reported, and other documents keep their values', async (t) => {
  const { app, db } = await build(t)
  const api = client(app)
  await hMap(db, api.post)
  await api.post('/source_object_map/', { content_type: 'indicator', source_object_code: 'Missed - not visited', master_object_id: 22 })
  const { ingest, dwc } = uploader(api)
  await ingest('round-report.csv')
  t.ok(Math.abs((await dwc(22, 12907, 99))! - 0.0734) < 1e-9)
  const single = await ingest('one-bad-cell.csv')
  t.ok(Math.abs((await dwc(164, 12907, 99))! - 0.0291) < 1e-9)
  t.match(single.stats.rejected_cells, {
    count: 1,
    items: [{ row_number: 0, column: 'Missed - not visited', value: 'not counted', reason: 'not a number' }],
  })
  t.ok(Math.abs((await dwc(22, 12907, 99))! - 0.0734) < 1e-9, 'still held by the first document')
})

// acceptance.md 72, 79, 83, 85
t.test('larger and odd files transform as the originals did', async (t) => {
  const { app, db } = await build(t)
  const api = client(app)
  const type = (await api.post('/location_type/', { name: 'test', admin_level: 0 })).body.id
  await api.post('/location/', { name: 'Somalia', location_code: 'SOM', location_type_id: type })
  void db
  const { ingest } = uploader(api)
  const wide = await ingest('wide-survey.csv')
  t.equal(wide.stats.submissions.created, 10)
  const guids = (await api.get(`/source_submission/?document_id=${wide.id}`)).body.objects.map((s: { instance_guid: string }) => s.instance_guid)
  t.ok(guids.includes('71survey-round'), 'a key is the geocode and the campaign run together')
  const access = await ingest('access-by-province.csv')
  t.equal(access.stats.submissions.created, 64)
  t.equal(access.stats.doc_datapoints, 0)
  t.equal(access.stats.datapoints.inserted, 0)
  const checklist = await ingest('checklist.csv')
  t.match(checklist.stats.submissions, { created: 16, duplicate_keys: 1 })
  t.equal(
    (await api.get(`/source_object_map/?document_id=${checklist.id}&source_object_code=Vaccinators trained_812`)).body.objects.length,
    1,
    'the padded header is registered trimmed',
  )
  const again = await ingest('checklist-again.csv')
  t.equal(again.stats.submissions.created, 16)
  const sandbox = await ingest('checklist.xlsx')
  t.equal(sandbox.stats.submissions.created, 10)
  const header = (await api.get(`/document/${sandbox.id}/`)).body.file_header
  t.equal(header[0], 'campaign', 'no index column')
})

// acceptance.md 86
t.test('every CSV dialect gives the same result', async (t) => {
  const { app, db } = await build(t)
  const api = client(app)
  await hMap(db, api.post)
  const { ingest, dwc } = uploader(api)
  const original = (await uploadFile('repeated-key.csv')).toString('utf8')
  const lines = original.split(/\r\n|\r|\n/).filter((l) => l.length)
  const variants: Record<string, string> = {
    bom: `\ufeff${lines.join('\n')}`,
    crlf: lines.join('\r\n'),
    lf: lines.join('\n'),
    quoted: [`${lines[0]},note`, ...lines.slice(1).map((l) => `${l},"a, b\nc"`)].join('\n'),
  }
  for (const [name, text] of Object.entries(variants)) {
    const result = await ingest(`${name}.csv`, 'campaign', {}, Buffer.from(text))
    t.equal(result.stats.submissions.created, 1, name)
    t.ok(Math.abs((await dwc(164, 12907, 99))! - 0.338) < 1e-9, name)
    if (name === 'quoted') {
      const sub = (await api.get(`/source_submission/?document_id=${result.id}`)).body.objects[0]
      t.equal(sub.submission_json.note, 'a, b\nc', 'the quoted cell is kept intact')
    }
  }
})

// acceptance.md 88
t.test('an unparseable date rejects its row', async (t) => {
  const { app } = await build(t)
  const api = client(app)
  const csv = 'unique_key,geocode,data_date,cases\n1,X,2015-01-01,1\n2,X,31-31-15,1\n3,X,1-8-15,1\n'
  const { ingest } = uploader(api)
  const result = await ingest('d.csv', 'date', {}, Buffer.from(csv))
  t.equal(result.stats.submissions.created, 2)
  t.match(result.stats.submissions.rejected_rows, { count: 1, items: [{ row_number: 1, column: 'data_date', value: '31-31-15', reason: 'unparseable date' }] })
  const dates = (await api.get(`/source_submission/?document_id=${result.id}`)).body.objects.map((s: { data_date: string }) => s.data_date)
  t.same(dates, ['2015-01-01', '2015-01-08'], 'month-first by default')
})

// acceptance.md 45, 49, 87
t.test('date files: month-first reading, re-uploads, and day-first with date_order', async (t) => {
  const { app, db } = await build(t)
  const api = client(app)
  await hMap(db, api.post)
  // 24 cases: five at LV-03-02, mapped here, and one at H-MAP's LV-01-01, both to the country.
  await api.post('/source_object_map/', { content_type: 'location', source_object_code: 'LV-03-02', master_object_id: 12907 })
  await api.post('/source_object_map/', { content_type: 'indicator', source_object_code: 'cases', master_object_id: 55 })
  const { ingest } = uploader(api)
  const first = await ingest('cases-by-date.csv', 'date')
  t.match(first.stats, { submissions: { created: 24 }, rows: { processed: 6, missing_location: 18 }, datapoints: { inserted: 6 }, campaigns_recomputed: [] })
  const dates = async () =>
    await db
      .selectFrom('datapoint')
      .select(['data_date', 'value'])
      .where('indicator_id', '=', 55)
      .where('location_id', '=', 12907)
      .orderBy('data_date')
      .execute()
  // Month-first: 4-6-15, 2-1-15, 9-8-15 and 5-1-15 read as 6 April, 1 February, 8 September and 1 May;
  // 16-05-14 and 21-07-15 have no 16th or 21st month and read day-first.
  t.same(
    (await dates()).map((r) => r.data_date),
    ['2014-05-16', '2015-02-01', '2015-04-06', '2015-05-01', '2015-07-21', '2015-09-08'],
  )
  t.equal((await dates()).filter((r) => r.data_date === '2015-07-21').length, 1)
  const held = (await api.get(`/date_doc_result/?document_id=${first.id}`)).body.objects
  t.same(
    held.map((o: { data_date: string }) => o.data_date).sort(),
    (await dates()).map((r) => r.data_date),
  )
  t.match(held[0], { indicator__id: 55, location_id: 12907, location__name: 'Lorvania' })
  // 49. the re-upload changes a cell at an unmapped geocode only: still 6, summing to 6. Its six
  // values are those stored: unchanged (D26; the scenario's `updated: 6` counted the rewrite of each
  // key's source that D26 makes free).
  const second = await ingest('cases-by-date-revised.csv', 'date')
  t.match(second.stats.datapoints, { updated: 0, unchanged: 6, inserted: 0 })
  const after = await dates()
  t.equal(after.length, 6)
  t.equal(
    after.reduce((sum, r) => sum + (r.value ?? 0), 0),
    6,
  )
  // 87. day-first: 24 distinct dates, 12 in 2014, 9 in 2015 and 3 in 2016; `4-6-15` is 4 June 2015.
  const dmy = await ingest('cases-by-date.csv', 'date', { date_order: 'DMY' })
  const submissions = (await api.get(`/source_submission/?document_id=${dmy.id}&limit=0`)).body.objects as Array<{
    data_date: string
    submission_json: Record<string, string>
  }>
  const years = submissions.reduce<Record<string, number>>(
    (acc, s) => Object.assign(acc, { [s.data_date.slice(0, 4)]: (acc[s.data_date.slice(0, 4)] ?? 0) + 1 }),
    {},
  )
  t.same(years, { 2014: 12, 2015: 9, 2016: 3 })
  t.equal(new Set(submissions.map((s) => s.data_date)).size, 24)
  t.equal(submissions.find((s) => s.submission_json.data_date === '4-6-15')!.data_date, '2015-06-04')
  const mdy = (await api.get(`/source_submission/?document_id=${first.id}&limit=0`)).body.objects as typeof submissions
  t.equal(mdy.find((s) => s.submission_json.data_date === '4-6-15')!.data_date, '2015-04-06')
})

// acceptance.md 90
t.test('deleting a document counts its dependents, cascades, recomputes, and protects the Data Entry document', async (t) => {
  const { app, db } = await build(t)
  const api = client(app)
  await hMap(db, api.post)
  const { ingest, dwc } = uploader(api)
  const { id } = await ingest('round-report.csv')
  const docfile = (await api.get(`/document/${id}/`)).body.docfile
  const blocked = await api.delete(`/document/${id}/`)
  t.equal(blocked.status, 409)
  t.same(blocked.body.details.dependents, { source_submission: 20, doc_object_map: 35, doc_datapoint: 1, datapoint: 1 })
  t.equal((await api.delete(`/document/${id}/?cascade=true`)).status, 204)
  t.equal((await db.selectFrom('source_submission').select('id').where('document_id', '=', id).execute()).length, 0)
  t.equal((await db.selectFrom('datapoint').select('id').execute()).length, 0)
  t.equal(await dwc(164, 12907, 99), undefined, 'campaign 99 was recomputed')
  t.notOk(existsSync(join(app.config.DATA_DIR, docfile)), 'the stored file is removed')
  const protectedDoc = await api.delete('/document/1/')
  t.match(protectedDoc.body, { statusCode: 409, code: 'PROTECTED', message: 'The Data Entry document cannot be deleted' })
})

// acceptance.md 82
t.test('duplicate headers are numbered, and the rightmost mapped column wins', async (t) => {
  const { app, db } = await build(t)
  const api = client(app)
  await hMap(db, api.post)
  const { ingest, dwc } = uploader(api)
  // The kept (last) row holds 0.338 under the header and 0.29 under its repeat.
  const { id } = await ingest('repeated-header.csv')
  t.equal((await api.get(`/document/${id}/`)).body.file_header[3], 'Missed - other reasons.1')
  t.ok(close(await dwc(164, 12907, 99), 0.338))
  // The transform registered the numbered header, unmapped: map it.
  const code = (await api.get(`/source_object_map/?document_id=${id}&source_object_code=Missed - other reasons.1`)).body.objects[0]
  t.equal(code.master_object_id, -1)
  await api.patch(`/source_object_map/${code.id}/`, { master_object_id: 164 })
  const refreshed = (await api.get(`/refresh_master/?document_id=${id}`)).body.objects[0].ingest_stats
  t.ok(close(await dwc(164, 12907, 99), 0.29))
  t.equal(refreshed.conflicts.count, 1)
  t.equal(refreshed.conflicts.items[0].unique_index, '12907_164_99')
})

function close(a: number | undefined, b: number) {
  return a !== undefined && Math.abs(a - b) < 1e-9
}

t.test('bulk writes run with cached plans: foreign-key checks are not re-planned per row', async (t) => {
  // The pool plans reads for their parameters (force_custom_plan on PostgreSQL), which a bulk insert
  // would pay in every row's foreign-key checks (bench/README.md, "Ingestion"). A statement trigger
  // records the setting in force while transform_upload writes datapoints.
  const { app, db } = await build(t)
  const api = client(app)
  const doc = await halfWayUpload(api.post)
  await sql.raw(`create table plan_mode_seen (mode text)`).execute(db)
  await sql
    .raw(`create function record_plan_mode() returns trigger language plpgsql as $$
    begin insert into plan_mode_seen values (current_setting('plan_cache_mode')); return null; end $$`)
    .execute(db)
  await sql.raw(`create trigger record_plan_mode before insert on datapoint for each statement execute function record_plan_mode()`).execute(db)
  t.teardown(async () => {
    await sql.raw('drop trigger if exists record_plan_mode on datapoint').execute(db)
    await sql.raw('drop function if exists record_plan_mode()').execute(db)
    await sql.raw('drop table if exists plan_mode_seen').execute(db)
  })
  const run = await api.get(`/transform_upload/?document_id=${doc}`)
  t.equal(run.status, 200, run.text)
  t.match(run.body.objects[0].ingest_stats.datapoints, { inserted: 1 })
  const seen = (await sql<{ mode: string }>`select mode from plan_mode_seen`.execute(db)).rows.map((r) => r.mode)
  t.ok(seen.length > 0, 'the datapoint insert ran')
  t.same([...new Set(seen)], ['auto'], 'plans are cached inside the pipeline transaction')
  const outside = await sql<{ mode: string }>`select current_setting('plan_cache_mode') as mode`.execute(app.db.db)
  t.equal(outside.rows[0].mode, engine === 'postgres' ? 'force_custom_plan' : 'auto', 'reads outside it keep their setting')
})

t.test(
  'a first upload racing a data entry of one of its keys: the entry waits it out, then wins (PostgreSQL)',
  { skip: engine === 'pglite' && 'PGlite runs one connection: no concurrent transactions' },
  async (t) => {
    // A first upload inserts its keys without the upsert's conflict handling (lib/ingest/refresh.ts,
    // insertFreshKeys). A key that a concurrent transaction writes after the upload counted its keys must
    // still end as ingestion §5.5 says: here a data entry, newer than the document, keeps its value.
    const { app, db } = await build(t)
    const api = client(app)
    const doc = await halfWayUpload(api.post)
    const ids = await db.selectFrom('source_object_map').select(['content_type', 'master_object_id']).execute()
    const id = (type: string) => ids.find((r) => r.content_type === type)!.master_object_id
    const entry = { indicator_id: id('indicator'), location_id: id('location'), campaign_id: id('campaign'), value: 42 }
    let writerPid = 0
    const writer = await heldOpen(db, async (trx) => {
      writerPid = (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx)).rows[0].pid
      await enterCampaignValue(trx, entry)
    })
    const run = api.get(`/transform_upload/?document_id=${doc}`)
    // Committed only once the upload waits on the entry's key, i.e. after it counted its keys as new.
    // (Only backends this writer blocks: other tests share the server.)
    const waitingOnLock = () =>
      sql<{ n: number }>`select count(*)::int as n from pg_stat_activity where ${writerPid} = any(pg_blocking_pids(pid))`.execute(db).then((r) => r.rows[0].n)
    t.equal(await eventually(waitingOnLock, (n) => n > 0, 20_000), 1, 'the upload waits for the uncommitted entry of its key')
    await writer.commit()
    const done = await run
    t.equal(done.status, 200, done.text)
    t.match(done.body.objects[0].ingest_stats.datapoints, { inserted: 0, updated: 0 })
    const rows = await db
      .selectFrom('datapoint')
      .select(['value'])
      .where('unique_index', '=', `${entry.location_id}_${entry.indicator_id}_${entry.campaign_id}`)
      .execute()
    t.same(rows, [{ value: 42 }], 'the newer entry is kept, once')
  },
)

t.test('staged cells keep odd column names and values exactly', async (t) => {
  // Submissions and staged cells are written in COPY's text format (lib/data/copy.ts): quotes,
  // backslashes, commas, braces, tabs, line breaks and NULL-like text (COPY's own `\\N` among them) in
  // a column name or a code, and small, large and negative values, must arrive as they were.
  const { app, db } = await build(t)
  const api = client(app)
  const { location, campaign, indicator } = await smallWorld(api.post)
  const names = ['a "quoted", {braced} \\ name', 'NULL', '\\N', 'tab\there', 'line\nbreak', 'carriage\rreturn']
  const geocode = 'G "0" \\ é\t✓'
  const indicators = [indicator]
  // Percentages: a value of any sign fits them (a count is not negative: lib/engine/value-fit.ts).
  for (const name of names.slice(1)) indicators.push((await api.post('/indicator/', { name, short_name: name, data_format: 'pct' })).body.id)
  for (const [content_type, code, id] of [
    ['location', geocode, location],
    ['campaign', 'C', campaign],
    ...names.map((name, k) => ['indicator', name, indicators[k]] as const),
  ] as const) {
    t.equal((await api.post('/source_object_map/', { content_type, source_object_code: code, master_object_id: id })).status, 201)
  }
  const header = ['campaign', 'geocode', ...names].map((h) => `"${h.replaceAll('"', '""')}"`).join(',')
  const values = [7, 12345678901, 1e-300, -2.5e14, 0.1, -0.000001]
  const csv = Buffer.from(`${header}\nC,"${geocode.replaceAll('"', '""')}",${values.join(',')}\n`)
  const doc = (await api.post('/document/', { docfile: csv.toString('base64'), doc_title: 'odd.csv', file_type: 'campaign' })).body.id
  const run = await api.get(`/transform_upload/?document_id=${doc}`)
  t.equal(run.status, 200, run.text)
  const staged = await db.selectFrom('doc_datapoint').select(['column_name', 'indicator_id', 'value']).where('document_id', '=', doc).orderBy('id').execute()
  t.same(
    staged,
    names.map((column_name, k) => ({ column_name, indicator_id: indicators[k], value: values[k] })),
  )
  // The submission keeps the row as read, its codes and cells included (copied too).
  const submission = await db
    .selectFrom('source_submission')
    .select(['location_code', 'submission_json'])
    .where('document_id', '=', doc)
    .executeTakeFirstOrThrow()
  t.equal(submission.location_code, geocode)
  const cells = submission.submission_json as Record<string, unknown>
  t.same(Object.keys(cells).sort(), ['campaign', 'geocode', ...names].sort(), 'every column, by its name')
  t.equal(cells.geocode, geocode)
})

t.test('a re-upload recomputes only the campaigns whose values it changes', async (t) => {
  const { app, db } = await build(t)
  const api = client(app)
  const w = await world(api)
  const { ingest } = uploader(api)
  const sumAtRoot = async () =>
    (await api.get(`/campaign_datapoint/?indicator__in=${w.n}&campaign__in=${w.C}&location_id=${w.R}`)).body.objects[0]?.value as number
  const rootBefore = await sumAtRoot()
  t.equal(rootBefore, 15, "R sums a1's 10 and B's own 5 (b1's 20 is below B)")
  const derivedBefore = await db.selectFrom('agg_datapoint').select(['id', 'value']).where('campaign_id', '=', w.C).orderBy('id').execute()

  // The same values again, from a newer document: it holds them from now on, by claim (§5.5, D26),
  // without a write; counted unchanged.
  const rowsBefore = await db.selectFrom('datapoint').select(['id', 'source_submission_id', 'created_at']).orderBy('id').execute()
  const same = await ingest('again.csv', 'campaign', {}, Buffer.from('campaign,geocode,n\nC,a1,10\nC,b1,20\n'))
  t.match(same.stats.datapoints, { updated: 0, unchanged: 2, inserted: 0 }, 'no value changed')
  t.same(same.stats.campaigns_recomputed, [], 'no value changed: nothing to recompute')
  t.same(await db.selectFrom('datapoint').select(['id', 'source_submission_id', 'created_at']).orderBy('id').execute(), rowsBefore, 'no row written')
  t.same(
    (await db.selectFrom('document_takeover').select('document_id').execute()).map((r) => r.document_id),
    [same.id],
    'the newer document holds them by claim',
  )
  t.same(
    await db.selectFrom('agg_datapoint').select(['id', 'value']).where('campaign_id', '=', w.C).orderBy('id').execute(),
    derivedBefore,
    'the derived rows as they were',
  )

  // One value changed: its campaign is recomputed, and the sum follows.
  const changed = await ingest('recount.csv', 'campaign', {}, Buffer.from('campaign,geocode,n\nC,a1,15\nC,b1,20\n'))
  t.same(changed.stats.campaigns_recomputed, [w.C])
  t.equal(await sumAtRoot(), rootBefore + 5, 'a1 counts 15 instead of 10')
})

t.test('a CSV that is not UTF-8 is refused by its line, unless the upload names its encoding', async (t) => {
  const { app } = await build(t)
  const api = client(app)
  // "Bénin" and "Côte" in Windows-1252: é and ô are single bytes, which UTF-8 never has alone.
  const latin = Buffer.from('geocode,campaign,note\nG1,C,plain\nG2,C,B\xe9nin\nG3,C,C\xf4te\n', 'latin1')
  const post = (fields: Record<string, string>) =>
    api.post('/document/', { doc_title: 'latin.csv', file_type: 'campaign', docfile: latin.toString('base64'), ...fields })
  const before = (await api.get('/document/?limit=0')).body.meta.total_count
  const refused = await post({})
  t.equal(refused.status, 400)
  t.match(refused.body, { code: 'INVALID_UTF8', message: /^Line 3 of the file is not valid UTF-8/, details: { line: 3 } })
  t.equal((await api.get('/document/?limit=0')).body.meta.total_count, before, 'nothing stored')
  t.match((await post({ encoding: 'ebcdic' })).body, { code: 'VALIDATION_ERROR', message: /encoding: must be one of utf-8, windows-1252/ })

  const named = await post({ encoding: 'windows-1252' })
  t.equal(named.status, 201, named.text)
  const run = await api.get(`/transform_upload/?document_id=${named.body.id}`)
  t.equal(run.status, 200, run.text)
  const notes = (await api.get(`/source_submission/?document_id=${named.body.id}&limit=0`)).body.objects.map(
    (s: { submission_json: { note: string } }) => s.submission_json.note,
  )
  t.same(notes.sort(), ['Bénin', 'Côte', 'plain'], 'read as Windows-1252 and stored as UTF-8')

  // A line feed inside a long file: the line is counted across the reading's chunks.
  const long = Buffer.concat([Buffer.from(`geocode,campaign\n${'G,C\n'.repeat(300_000)}`), Buffer.from('G,\xff\n', 'latin1')])
  const far = await api.post('/document/', { doc_title: 'long.csv', file_type: 'campaign', docfile: long.toString('base64') })
  t.match(far.body, { code: 'INVALID_UTF8', details: { line: 300_002 } }, 'the line after 1.2 MB of good lines')
  const cr = Buffer.concat([Buffer.from(`geocode,campaign\r${'G,C\r'.repeat(300_000)}`), Buffer.from('G,\xff\r', 'latin1')])
  const crOnly = await api.post('/document/', { doc_title: 'cr.csv', file_type: 'campaign', docfile: cr.toString('base64') })
  t.match(crOnly.body, { code: 'INVALID_UTF8', details: { line: 300_002 } }, 'lines that end in CR alone are counted too')
})
