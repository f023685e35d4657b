// The bad-input corpus (SECURITY.md): hundreds of hostile or broken requests across every
// route family. Each one must get a 4xx whose message names the problem, never a 5xx or a stack
// trace, and must leave every table's row count as it was.
import ExcelJS from 'exceljs'
import t from 'tap'
import { admin, alice, build, rowCounts } from './helper.js'
import { client } from './api.js'
import { smallWorld } from './fixtures.js'
import { makeZip } from './zip.js'
import { byName } from '../resources/registry.js'
import { resources } from '../resources/index.js'
import type { ColumnMeta } from '../schemas/columns.js'

interface Case {
  name: string
  method?: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE'
  url: string
  body?: string | Buffer
  headers?: Record<string, string>
  /** The exact status, when the contract fixes it; otherwise any 4xx. */
  status?: number
  /** What the message must say (the problem, named). */
  message: RegExp
}

const JSON_TYPE = { 'content-type': 'application/json' }
const json = (value: unknown) => JSON.stringify(value)
const base64 = (bytes: Buffer | string) => Buffer.from(bytes).toString('base64')
const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/** A value of the wrong type for a column, with the reason the API must give. */
function wrongValues(meta: ColumnMeta): Array<[unknown, RegExp]> {
  switch (meta.kind) {
    case 'integer':
    case 'related':
      return [
        ['abc', /must be an integer/],
        [1.5, /must be an integer/],
        [1e20, /must be a 32-bit integer/],
        [{ id: 1 }, /must be an integer/],
      ]
    case 'float':
      return [
        ['NaN', /must be a finite number/],
        ['Infinity', /must be a finite number/],
        [[1], /must be a finite number/],
      ]
    case 'boolean':
      return [
        ['maybe', /must be a boolean/],
        [2, /must be a boolean/],
      ]
    case 'date':
      return [
        ['2016-02-30', /must be a date YYYY-MM-DD/],
        [20160101, /must be a date YYYY-MM-DD/],
      ]
    case 'datetime':
      return [['yesterday', /must be an ISO 8601 date-time/]]
    case 'json':
      return [['{not json', /invalid JSON/]]
    case 'string':
      return [
        [{ nested: 'object' }, /must be a string/],
        ...(meta.maxLength ? [['x'.repeat(meta.maxLength + 1), new RegExp(`must be at most ${meta.maxLength} characters`)] as [unknown, RegExp]] : []),
        ...(meta.enum ? [['zz', /must be one of/] as [unknown, RegExp]] : []),
      ]
  }
  return []
}

async function xlsx(rows: unknown[][], formula?: string): Promise<Buffer> {
  const workbook = new ExcelJS.Workbook()
  const sheet = workbook.addWorksheet('data')
  for (const row of rows) sheet.addRow(row)
  if (formula) sheet.getCell('C2').value = { formula } as ExcelJS.CellFormulaValue
  return Buffer.from(await workbook.xlsx.writeBuffer())
}

t.test('bad-input corpus: a 4xx naming the problem, no 5xx, no stack trace, nothing written', async (t) => {
  const { app, db } = await build(t, { MAX_UPLOAD_BYTES: 2_000_000, XLSX_MAX_UNCOMPRESSED_BYTES: 1_000_000, AUTH_FAILURE_MAX: 10_000 })
  const api = client(app)
  const world = await smallWorld(api.post)
  const ids: Record<string, number> = {
    campaign: world.campaign,
    indicator: world.indicator,
    location: world.location,
    campaign_type: (await api.get('/campaign_type/')).body.objects[0].id,
    location_type: (await api.get('/location_type/')).body.objects[0].id,
    indicator_tag: (await api.post('/indicator_tag/', { tag_name: 'Polio' })).body.id,
    custom_chart: (await api.post('/custom_chart/', { uuid: 'c-1', title: 'c', chart_json: { type: 'table' } })).body.id,
    group: (await api.post('/group/', { name: 'g' })).body.id,
    doc_detail_type: (await api.post('/doc_detail_type/', { name: 'd' })).body.id,
  }
  ids.dashboard = (await api.post('/dashboard/', { title: 'd', description: '', layout: 0, rows: [] })).body.id
  for (const [name, id] of Object.entries(ids)) t.ok(Number.isInteger(id), `fixture ${name} exists`)

  const cases: Case[] = []
  const add = (c: Case) => cases.push(c)
  const writable = [
    'campaign_type',
    'campaign',
    'indicator',
    'indicator_tag',
    'location_type',
    'location',
    'custom_chart',
    'dashboard',
    'group',
    'doc_detail_type',
    'source_object_map',
    'document',
    'campaign_datapoint',
    'date_datapoint',
    'user',
  ]

  // Malformed and truncated JSON, on every writable resource.
  for (const resource of writable) {
    for (const body of ['{', '{"name": "x"', '{"name": }', "{'name': 'x'}", '{"a":1}}', '\u0000{}']) {
      add({
        name: `${resource}: malformed JSON ${json(body)}`,
        method: 'POST',
        url: `/api/v1/${resource}/`,
        body,
        headers: JSON_TYPE,
        status: 400,
        message: /not valid JSON/,
      })
    }
  }
  for (const resource of ['campaign', 'indicator', 'location']) {
    for (const body of ['{"name":', '[', 'nul']) {
      add({
        name: `PATCH ${resource}: truncated JSON`,
        method: 'PATCH',
        url: `/api/v1/${resource}/${ids[resource]}/`,
        body,
        headers: JSON_TYPE,
        status: 400,
        message: /not valid JSON/,
      })
    }
  }
  // JSON that is not an object.
  for (const resource of ['campaign_type', 'campaign', 'indicator', 'location']) {
    for (const body of ['[1]', '"x"', '42', 'true']) {
      add({
        name: `${resource}: body ${body}`,
        method: 'POST',
        url: `/api/v1/${resource}/`,
        body,
        headers: JSON_TYPE,
        status: 400,
        message: /body: must be a JSON object/,
      })
    }
  }

  // Wrong types in every writable field of every model resource with a row to PATCH.
  for (const [resourceName, id] of Object.entries(ids)) {
    const resource = byName.get(resourceName)!
    for (const [field, meta] of Object.entries(resource.columns)) {
      if (meta.readonly || (resource.writable && !resource.writable.includes(field))) continue
      for (const [value, reason] of wrongValues(meta)) {
        add({
          name: `${resourceName}.${field} = ${json(value).slice(0, 30)}`,
          method: 'PATCH',
          url: `/api/v1/${resourceName}/${id}/`,
          body: json({ [field]: value }),
          headers: JSON_TYPE,
          status: 400,
          message: new RegExp(`^${field}: ${reason.source}`),
        })
      }
      if (!meta.nullable) {
        add({
          name: `${resourceName}.${field} = null`,
          method: 'PATCH',
          url: `/api/v1/${resourceName}/${id}/`,
          body: json({ [field]: null }),
          headers: JSON_TYPE,
          status: 400,
          message: new RegExp(`^${field} may not be null`),
        })
      }
    }
    add({
      name: `${resourceName}: unknown field`,
      method: 'PATCH',
      url: `/api/v1/${resourceName}/${id}/`,
      body: json({ no_such_field: 1 }),
      headers: JSON_TYPE,
      status: 400,
      message: /Unknown field no_such_field/,
    })
    // Unknown filters and lookups, SQL in keys.
    add({ name: `${resourceName}: unknown filter`, url: `/api/v1/${resourceName}/?no_such_field=1`, status: 400, message: /'no_such_field'/ })
    add({ name: `${resourceName}: unknown lookup`, url: `/api/v1/${resourceName}/?id__regex=1`, status: 400, message: /'id__regex'/ })
    add({
      name: `${resourceName}: SQL in a filter key`,
      url: `/api/v1/${resourceName}/?${encodeURIComponent('id; drop table campaign;--')}=1`,
      status: 400,
      message: /drop table campaign/,
    })
    add({
      name: `${resourceName}: SQL in a value`,
      url: `/api/v1/${resourceName}/?id=${encodeURIComponent('1 or 1=1')}`,
      status: 400,
      message: /Invalid value for id/,
    })
    add({ name: `${resourceName}: SQL in the pk`, url: `/api/v1/${resourceName}/${encodeURIComponent("1' or '1'='1")}/`, status: 400, message: /Invalid id/ })
    add({
      name: `${resourceName}: traversal in the pk`,
      url: `/api/v1/${resourceName}/..%2F..%2Fetc%2Fpasswd/`,
      status: 400,
      message: /Invalid id : \.\.\/\.\.\/etc\/passwd/,
    })
    add({ name: `${resourceName}: NaN pk`, url: `/api/v1/${resourceName}/NaN/`, status: 400, message: /Invalid id : NaN/ })
    add({ name: `${resourceName}: huge pk`, url: `/api/v1/${resourceName}/99999999999999999999/`, status: 404, message: /No .* object found/ })
    add({ name: `${resourceName}: NaN filter`, url: `/api/v1/${resourceName}/?id=NaN`, status: 400, message: /Invalid value for id: "NaN"/ })
    add({
      name: `${resourceName}: Infinity filter`,
      url: `/api/v1/${resourceName}/?id__gt=Infinity`,
      status: 400,
      message: /Invalid value for id__gt: "Infinity"/,
    })
    add({
      name: `${resourceName}: order_by injection`,
      url: `/api/v1/${resourceName}/?order_by=${encodeURIComponent('id; drop table campaign')}`,
      status: 400,
      message: /Cannot order by 'id; drop table campaign'/,
    })
    add({ name: `${resourceName}: PUT`, method: 'PUT', url: `/api/v1/${resourceName}/${id}/`, body: '{}', headers: JSON_TYPE, status: 405, message: /PUT/ })
  }

  // List parameters.
  for (const [query, reason] of [
    ['limit=-1', /Invalid value for limit/],
    ['limit=1e999', /Invalid value for limit/],
    ['offset=NaN', /Invalid value for offset/],
    ['offset=1.5', /Invalid value for offset/],
    ['offset=99999999999999999999', /Invalid value for offset: "99999999999999999999" \(expected a non-negative integer up to 9007199254740991\)/],
    ['format=xml', /Invalid value for format/],
    ['order_by=nope', /Cannot order by 'nope'/],
    ['limit=1&limit=2', /Parameter limit is given more than once/],
    ['format=json&format=csv', /Parameter format is given more than once/],
    ['offset=0&offset=5', /Parameter offset is given more than once/],
    ['name=%ff', /not valid percent-encoded UTF-8 near "%ff"/],
    ['%c3%28=1', /not valid percent-encoded UTF-8/],
    ['name=%', /not valid percent-encoded UTF-8/],
    ['id__in=1,two', /Invalid value for id__in/],
    ['start_date__gte=2016-13-01', /Invalid value for start_date__gte/],
    ['created_at__lt=soon', /Invalid value for created_at__lt/],
    ['campaign_type__nope=1', /campaign_type__nope/],
    ['campaign_type__name__regex=x', /campaign_type__name__regex/],
  ] as const) {
    add({ name: `campaign list: ${query}`, url: `/api/v1/campaign/?${query}`, status: 400, message: reason })
  }

  // Datapoint reads.
  add({ name: 'campaign_datapoint without parameters', url: '/api/v1/campaign_datapoint/', status: 400, message: /Missing required parameter indicator__in/ })
  add({
    name: 'campaign_datapoint campaign__in=NaN',
    url: '/api/v1/campaign_datapoint/?campaign__in=NaN&indicator__in=1',
    status: 400,
    message: /campaign__in/,
  })
  add({
    name: 'campaign_datapoint SQL in indicator__in',
    url: `/api/v1/campaign_datapoint/?campaign__in=1&indicator__in=${encodeURIComponent('1) or (1=1')}`,
    status: 400,
    message: /indicator__in/,
  })
  add({
    name: 'campaign_datapoint location_depth=abc',
    url: `/api/v1/campaign_datapoint/?campaign__in=1&indicator__in=1&location_id=${world.location}&location_depth=abc`,
    status: 400,
    message: /location_depth/,
  })
  add({ name: 'date_datapoint group_by_time=week', url: '/api/v1/date_datapoint/?indicator__in=1&group_by_time=week', status: 400, message: /group_by_time/ })
  add({ name: 'date_datapoint start_date=garbage', url: '/api/v1/date_datapoint/?indicator__in=1&start_date=garbage', status: 400, message: /start_date/ })
  add({ name: 'wide shape without csv', url: `/api/v1/campaign_datapoint/?campaign__in=1&indicator__in=1&shape=wide`, status: 400, message: /shape/ })

  // Empty and gigantic bodies, content types and encodings.
  add({ name: 'empty body', method: 'POST', url: '/api/v1/campaign_type/', body: '', headers: JSON_TYPE, status: 400, message: /Missing required field name/ })
  add({ name: 'whitespace body', method: 'POST', url: '/api/v1/campaign/', body: '   \n', headers: JSON_TYPE, status: 400, message: /Missing required field/ })
  add({
    name: '11 MB of JSON',
    method: 'POST',
    url: '/api/v1/campaign_type/',
    body: json({ name: 'x'.repeat(11 * 1024 * 1024) }),
    headers: JSON_TYPE,
    status: 413,
    message: /too large/,
  })
  for (const type of ['text/plain', 'application/xml', 'text/csv', 'application/octet-stream', 'image/png', 'application/jsonx']) {
    add({
      name: `content type ${type}`,
      method: 'POST',
      url: '/api/v1/campaign_type/',
      body: json({ name: 'x' }),
      headers: { 'content-type': type },
      status: 415,
      message: new RegExp(`Unsupported Media Type: ${escapeRegExp(type)}`),
    })
  }
  for (const encoding of ['gzip', 'br', 'deflate']) {
    add({
      name: `content encoding ${encoding}`,
      method: 'POST',
      url: '/api/v1/campaign_type/',
      body: json({ name: 'x' }),
      headers: { ...JSON_TYPE, 'content-encoding': encoding },
      status: 415,
      message: new RegExp(`Content-Encoding: ${encoding}`),
    })
  }
  add({
    name: 'multipart without a boundary',
    method: 'POST',
    url: '/api/v1/document/',
    body: 'x',
    headers: { 'content-type': 'multipart/form-data' },
    status: 400,
    message: /Boundary not found/,
  })
  add({
    name: 'multipart cut short',
    method: 'POST',
    url: '/api/v1/document/',
    body: '--b\r\nContent-Disposition: form-data; name="doc_title"\r\n\r\nx.csv',
    headers: { 'content-type': 'multipart/form-data; boundary=b' },
    message: /multipart|Missing required field/,
  })
  add({
    name: 'invalid UTF-8 in JSON',
    method: 'POST',
    url: '/api/v1/campaign_type/',
    body: Buffer.from([0x7b, 0x22, 0x6e, 0x61, 0x6d, 0x65, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]),
    headers: JSON_TYPE,
    status: 400,
    message: /not valid UTF-8/,
  })
  add({
    name: 'overlong UTF-8 in JSON',
    method: 'POST',
    url: '/api/v1/campaign_type/',
    body: Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xc0, 0xaf]), Buffer.from('"}')]),
    headers: JSON_TYPE,
    status: 400,
    message: /not valid UTF-8/,
  })
  add({
    name: 'invalid UTF-8 in a form body',
    method: 'POST',
    url: '/api/v1/campaign_type/',
    body: 'name=%ff%fe',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    status: 400,
    message: /Form body is not valid percent-encoded UTF-8/,
  })
  add({
    name: 'repeated form field',
    method: 'POST',
    url: '/api/v1/campaign_type/',
    body: 'name=a&name=b',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    status: 400,
    message: /name: must be a single value/,
  })
  add({
    name: 'NUL in a string',
    method: 'POST',
    url: '/api/v1/campaign_type/',
    body: json({ name: 'a\u0000b' }),
    headers: JSON_TYPE,
    status: 400,
    message: /name: must not contain NUL/,
  })
  add({
    name: 'huge number as a foreign key',
    method: 'POST',
    url: '/api/v1/campaign/',
    body: '{"name":"c","campaign_type_id":1e400,"start_date":"2016-01-01","end_date":"2016-01-02"}',
    headers: JSON_TYPE,
    status: 400,
    message: /campaign_type_id: must be an integer/,
  })
  add({
    name: 'a foreign key that does not exist',
    method: 'POST',
    url: '/api/v1/campaign/',
    body: json({ name: 'c', campaign_type_id: 999999, start_date: '2016-01-01', end_date: '2016-01-02' }),
    headers: JSON_TYPE,
    status: 400,
    message: /campaign_type_id/,
  })
  add({
    name: 'a location as its own parent',
    method: 'PATCH',
    url: `/api/v1/location/${world.location}/`,
    body: json({ parent_location_id: world.location }),
    headers: JSON_TYPE,
    status: 400,
    message: /cycle|own|parent/i,
  })
  add({ name: 'list DELETE', method: 'DELETE', url: '/api/v1/campaign/', status: 400, message: /Must Delete by ID only/ })
  add({ name: 'DELETE ?id=abc', method: 'DELETE', url: '/api/v1/campaign/?id=abc', status: 400, message: /Invalid id/ })
  add({ name: 'DELETE cascade=maybe', method: 'DELETE', url: `/api/v1/campaign_type/?id=${ids.campaign_type}&cascade=maybe`, status: 400, message: /cascade/ })
  add({
    name: 'DELETE with conflicting ids',
    method: 'DELETE',
    url: `/api/v1/campaign/?id=${world.campaign}&id=${world.campaign + 1}`,
    status: 400,
    message: /Parameter id is given more than once/,
  })
  add({ name: 'a non-superuser DELETE', method: 'DELETE', url: `/api/v1/campaign/${world.campaign}/`, headers: alice, status: 403, message: /superuser/i })

  // Authentication junk.
  for (const authorization of [
    'ApiKey',
    'ApiKey admin',
    'Basic YWRtaW46YWRtaW4=',
    `Bearer ${'f'.repeat(10_000)}`,
    "ApiKey admin:' or '1'='1",
    'Bearer a b',
    `ApiKey ../../etc/passwd:${'a'.repeat(40)}`,
  ]) {
    add({
      name: `authorization ${authorization.slice(0, 30)}`,
      url: '/api/v1/campaign/',
      headers: { authorization },
      status: 401,
      message: /Authentication required|Invalid API key|HTTP Basic is taken on DHIS2's paths only/,
    })
  }
  // HTTP Basic where it is taken (DHIS2's paths): a wrong pair, a pair without its colon, not base64.
  for (const authorization of ['Basic YWRtaW46YWRtaW4=', 'Basic YWRtaW4=', 'Basic !!!']) {
    add({
      name: `DHIS2 path, authorization ${authorization}`,
      url: '/api/dataValueSets?dataElement=x&orgUnit=y&period=2016',
      headers: { authorization },
      status: 401,
      message: /Wrong username or password|Authentication required/,
    })
  }

  // Uploads: the file is checked before anything is stored.
  const upload = (name: string, title: string, bytes: Buffer | string, message: RegExp, status = 422, fileType = 'campaign') =>
    add({
      name: `upload: ${name}`,
      method: 'POST',
      url: '/api/v1/document/',
      body: json({ doc_title: title, file_type: fileType, docfile: base64(bytes) }),
      headers: JSON_TYPE,
      status,
      message,
    })
  const junk = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919 + 13) % 256))
  upload('empty CSV', 'a.csv', '', /file is empty/)
  upload('only blank lines', 'a.csv', '\n\n\r\n', /file is empty/)
  upload('header only', 'a.csv', 'geocode,campaign,n\n', /file is empty/)
  // Its first byte is a CR: an empty first line, then bytes that are no UTF-8.
  upload('binary junk as CSV', 'a.csv', junk, /Line 2 of the file is not valid UTF-8/, 400)
  upload('binary junk as XLSX', 'a.xlsx', junk, /There was an error with your file/)
  upload('a zip that is not a workbook', 'a.xlsx', makeZip([{ name: 'hello.txt', data: Buffer.from('hi') }]), /There was an error with your file/)
  upload('zip bomb', 'bomb.xlsx', makeZip([{ name: 'xl/worksheets/sheet1.xml', data: Buffer.alloc(20_000_000) }]), /expands to more than 1000000 bytes/)
  upload(
    'zip bomb with a lying header',
    'bomb.xlsx',
    makeZip([{ name: 'xl/worksheets/sheet1.xml', data: Buffer.alloc(5_000_000), declaredSize: 1000 }]),
    /There was an error with your file/,
  )
  upload(
    'many small bombs',
    'bomb.xlsx',
    makeZip(Array.from({ length: 40 }, (_, i) => ({ name: `x${i}.xml`, data: Buffer.alloc(100_000) }))),
    /expands to more than 1000000 bytes/,
  )
  upload('wrong headers', 'a.csv', 'where,when,n\nG,C,1\n', /geocode, campaign are required columns/)
  upload('date file without its columns', 'a.csv', 'geocode,n\nG,1\n', /data_date, unique_key are required columns/, 422, 'date')
  upload('formula cell', 'a.csv', "geocode,campaign,n\nG1,C,=cmd|' /C calc'!A0\n", /Row 2, column n: "=cmd\|' \/C calc'!A0" is a formula/)
  upload('formula cell, quoted and padded', 'a.csv', 'geocode,campaign,n\nG1,C,1\nG2,C," =HYPERLINK(""http://x"")"\n', /Row 3, column n: .* is a formula/)
  upload('1,000,000-column line', 'a.csv', `geocode,campaign,${','.repeat(1_000_000)}\nG,C\n`, /The file has \d{7} columns; at most 2000/)
  upload(
    'XLSX formula without a saved value',
    'a.xlsx',
    await xlsx(
      [
        ['geocode', 'campaign', 'n'],
        ['G', 'C', null],
      ],
      'A2*2',
    ),
    /Row 2, column n: a formula without a saved value/,
  )
  upload(
    'XLSX without the role columns',
    'a.xlsx',
    await xlsx([
      ['where', 'n'],
      ['G', 1],
    ]),
    /geocode, campaign are required columns/,
  )
  upload('unsupported extension', 'a.exe', 'MZ', /Unsupported file type "exe"/)
  upload('no extension', 'data', 'geocode,campaign\nG,C\n', /Unsupported file type ""/)
  upload('path traversal in the title', '../../etc/passwd.csv', 'geocode,campaign\nG,C\n', /doc_title: must be a file name without path separators/, 400)
  upload('backslash traversal in the title', '..\\..\\boot.csv', 'geocode,campaign\nG,C\n', /doc_title: must be a file name/, 400)
  upload('control characters in the title', 'a\nb.csv', 'geocode,campaign\nG,C\n', /doc_title: must be a file name/, 400)
  for (const [field, value] of [
    ['doc_title', { a: 1 }],
    ['file_type', ['campaign']],
    ['date_order', 1],
  ] as const)
    add({
      name: `upload: ${field} not a string`,
      method: 'POST',
      url: '/api/v1/document/',
      body: json({ doc_title: 'a.csv', file_type: 'campaign', docfile: base64('geocode,campaign\nG,C\n'), [field]: value }),
      headers: JSON_TYPE,
      status: 400,
      message: new RegExp(`${field}: must be a string`),
    })
  upload('file too large', 'big.csv', 'x'.repeat(2_100_000), /too large \(limit 2000000 bytes\)/, 413)
  upload('unknown file type', 'a.csv', 'geocode,campaign\nG,C\n', /file_type: must be one of campaign, date/, 400, 'weekly')
  add({
    name: 'upload: docfile not base64',
    method: 'POST',
    url: '/api/v1/document/',
    body: json({ doc_title: 'a.csv', file_type: 'campaign', docfile: '%%%not base64%%%' }),
    headers: JSON_TYPE,
    status: 422,
    message: /There was an error with your file/,
  })
  add({
    name: 'upload: docfile a number',
    method: 'POST',
    url: '/api/v1/document/',
    body: json({ doc_title: 'a.csv', file_type: 'campaign', docfile: 42 }),
    headers: JSON_TYPE,
    status: 400,
    message: /docfile: must be base64 text or a file part/,
  })
  add({
    name: 'upload: no docfile',
    method: 'POST',
    url: '/api/v1/document/',
    body: json({ doc_title: 'a.csv', file_type: 'campaign' }),
    headers: JSON_TYPE,
    status: 400,
    message: /Missing required field docfile/,
  })
  add({ name: 'transform_upload: document_id=abc', url: '/api/v1/transform_upload/?document_id=abc', status: 400, message: /document_id/ })
  add({ name: 'transform_upload: no document_id', url: '/api/v1/transform_upload/', status: 400, message: /document_id/ })
  add({ name: 'transform_upload: unknown document', url: '/api/v1/transform_upload/?document_id=999999', status: 404, message: /999999/ })
  add({
    name: 'agg_refresh: SQL in campaign_id',
    url: `/api/v1/agg_refresh/?campaign_id=${encodeURIComponent('1;drop table datapoint')}`,
    status: 400,
    message: /campaign_id/,
  })
  add({ name: 'POST to an action', method: 'POST', url: '/api/v1/transform_upload/', body: '{}', headers: JSON_TYPE, status: 405, message: /POST/ })

  // Detection.
  const detect = (name: string, body: string | Buffer, message: RegExp, status = 400, headers: Record<string, string> = JSON_TYPE, url = '/detect') =>
    add({ name: `detect: ${name}`, method: 'POST', url, body, headers, status, message })
  detect('no text', '{}', /text/)
  detect('text a number', '{"text": 5}', /text/)
  detect('text null', '{"text": null}', /text/)
  detect('text an array', '{"text": ["a"]}', /text/)
  detect('text an object', '{"text": {"a": 1}}', /text/)
  detect('truncated JSON', '{"text": "abc', /not valid JSON/)
  detect('not an object', '["text"]', /object|text/)
  detect('invalid UTF-8', Buffer.concat([Buffer.from('{"text":"'), Buffer.from([0xff]), Buffer.from('"}')]), /not valid UTF-8/)
  detect('text/plain', 'hello', /Unsupported Media Type: text\/plain/, 415, { 'content-type': 'text/plain' })
  detect('form body', 'text=hello', /Unsupported Media Type|text/, 415, { 'content-type': 'application/x-www-form-urlencoded' })
  detect('text over the maximum', json({ text: 'a'.repeat(10_001) }), /10000/, 413)
  detect('body over the route limit', json({ text: 'a'.repeat(300_000) }), /too large/, 413)
  detect('batch: texts missing', '{}', /texts/, 400, JSON_TYPE, '/detect/batch')
  detect('batch: texts a string', '{"texts": "a"}', /texts: must be an array/, 400, JSON_TYPE, '/detect/batch')
  detect('batch: a number among texts', '{"texts": ["a", 1]}', /texts\/1/, 400, JSON_TYPE, '/detect/batch')
  detect('batch: too many texts', json({ texts: Array.from({ length: 257 }, () => 'a') }), /at most 256/, 413, JSON_TYPE, '/detect/batch')

  t.ok(cases.length >= 200, `${cases.length} cases`)
  const stackTrace = /\n\s+at |node_modules|\.ts:\d+|\.js:\d+/
  let before = await rowCounts(db)
  for (const c of cases) {
    const res = await app.inject({ method: c.method ?? 'GET', url: c.url, headers: { ...admin, ...c.headers }, payload: c.body })
    let body: { message?: unknown; code?: unknown } = {}
    try {
      body = JSON.parse(res.body)
    } catch {
      // asserted below
    }
    const ok =
      res.statusCode >= 400 &&
      res.statusCode < 500 &&
      (c.status === undefined || res.statusCode === c.status) &&
      typeof body.message === 'string' &&
      c.message.test(body.message) &&
      typeof body.code === 'string' &&
      !stackTrace.test(res.body)
    t.ok(ok, c.name, ok ? {} : { status: res.statusCode, expected: c.status, body: res.body.slice(0, 300), pattern: String(c.message) })
    const after = await rowCounts(db)
    t.same(after, before, `${c.name}: nothing written`)
    before = after
  }
})

t.test('a NUL character (%00) in any query value is 400 naming the parameter, on every resource and filter; at sign-in too', async (t) => {
  const { app, db } = await build(t)
  const before = await rowCounts(db)
  let walked = 0
  for (const resource of resources) {
    const names = new Set([...resource.filtering, ...resource.filtering.map((f) => `${f}__in`), ...resource.GET_params_required, 'location_id', 'format'])
    for (const name of names) {
      // A non-model resource has no detail (404 before any parameter is read).
      const urls = [`/api/v1/${resource.name}/?${name}=a%00b`, ...(resource.kind === 'model' ? [`/api/v1/${resource.name}/1/?${name}=%00`] : [])]
      for (const url of urls) {
        const res = await app.inject({ url, headers: admin })
        const ok = res.statusCode === 400 && res.json().code === 'INVALID_CHARACTER' && res.json().message.includes(`Parameter ${name} `)
        if (!ok) t.fail(`${url}: ${res.statusCode} ${res.body.slice(0, 200)}`)
        walked++
      }
    }
  }
  t.ok(walked > 400, `${walked} requests, each 400 INVALID_CHARACTER naming its parameter`)
  t.equal((await app.inject({ url: '/api/v1/location/?na%00me=x', headers: admin })).statusCode, 400, 'in a parameter name too')
  const signIn = await app.inject({ method: 'POST', url: '/api/v1/session/', payload: { username: 'ad\u0000min', password: 'whatever it is' } })
  t.equal(signIn.statusCode, 400)
  t.equal(signIn.json().code, 'INVALID_USERNAME')
  const jsonField = await app.inject({ method: 'POST', url: '/api/v1/dashboard/', headers: admin, payload: { title: 'x', rows: [{ note: 'a\u0000' }] } })
  t.equal(jsonField.statusCode, 400, 'in a JSON field, which jsonb refuses too')
  t.match(jsonField.json().message, /rows: must not contain NUL/)
  t.same(await rowCounts(db), before, 'nothing written')
})
