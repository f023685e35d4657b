// Two different values for one cell inside one upload: reported with their rows and values, and the
// document's conflict policy decides what is written (docs/decisions.md, "Conflicts inside one upload").
import t from 'tap'
import { build } from './helper.js'
import { client } from './api.js'
import { smallWorld } from './fixtures.js'

type Api = ReturnType<typeof client>

/** The small world with a second indicator m, every code of the files below mapped. */
async function mappedWorld(api: Api) {
  const world = await smallWorld(api.post)
  const second = (await api.post('/indicator/', { name: 'm', short_name: 'm', data_format: 'int' })).body.id as number
  for (const [content_type, code, id] of [
    ['location', 'G1', world.location],
    ['campaign', 'C', world.campaign],
    ['indicator', 'n', world.indicator],
    ['indicator', 'm', second],
    ['indicator', 'n again', world.indicator],
  ] as const) {
    await api.post('/source_object_map/', { content_type, source_object_code: code, master_object_id: id })
  }
  return { ...world, second }
}

async function ingest(api: Api, csv: string, conflict?: string, file_type = 'campaign') {
  const doc = await api.post('/document/', {
    docfile: Buffer.from(csv).toString('base64'),
    doc_title: 'recount.csv',
    file_type,
    ...(conflict ? { conflict } : {}),
  })
  if (doc.status !== 201) throw new Error(doc.text)
  const run = await api.get(`/transform_upload/?document_id=${doc.body.id}`)
  if (run.status !== 200) throw new Error(run.text)
  return { document: doc.body, stats: run.body.objects[0].ingest_stats }
}

// Rows 0 and 2 share a key and disagree on n (5 and 7); they agree on m (written as 3 and 3.0).
const TWICE = ['campaign,geocode,n,m', 'C,G1,5,3', 'C,G2,1,1', 'C,G1,7,3.0'].join('\n')

async function cellValue(api: Api, indicator: number, location: number, campaign: number) {
  const res = await api.get(`/campaign_datapoint/?indicator__in=${indicator}&campaign__in=${campaign}&location_id__in=${location}`)
  return res.body.objects.length ? (res.body.objects[0].value as number) : undefined
}

for (const [policy, expected] of [
  [undefined, 7],
  ['last', 7],
  ['first', 5],
  ['reject', undefined],
] as const) {
  t.test(`a cell given twice in a file is reported; under ${policy ?? 'the default'} n reads ${expected}`, async (t) => {
    const { app } = await build(t)
    const api = client(app)
    const world = await mappedWorld(api)
    const { document, stats } = await ingest(api, TWICE, policy)
    t.equal(document.conflict, policy ?? 'last', 'the policy is kept on the document')
    t.same(
      stats.duplicates,
      { count: 1, items: [{ key: 'G1C', row_numbers: [0, 2], column: 'n', values: [5, 7], row_count: 2, location_code: 'G1', campaign_code: 'C' }] },
      'the disagreement, with both rows and values',
    )
    t.match(stats.submissions, { created: 2, duplicate_keys: 1 })
    t.equal(await cellValue(api, world.indicator, world.location, world.campaign), expected)
    t.equal(await cellValue(api, world.second, world.location, world.campaign), 3, 'the cell both rows agree on is written')
  })
}

t.test('a cell repeated on many lines lists its first 20 rows and values, and counts them all', async (t) => {
  const { app } = await build(t)
  const api = client(app)
  await mappedWorld(api)
  const values = Array.from({ length: 250 }, (_, i) => i % 7)
  const { stats } = await ingest(api, ['campaign,geocode,n', ...values.map((value) => `C,G1,${value}`)].join('\n'), 'reject')
  t.same(stats.duplicates, {
    count: 1,
    items: [
      {
        key: 'G1C',
        row_numbers: values.slice(0, 20).map((_, i) => i),
        column: 'n',
        values: values.slice(0, 20),
        row_count: 250,
        location_code: 'G1',
        campaign_code: 'C',
      },
    ],
  })
})

t.test('two columns of one row for one indicator: reject writes neither and says so', async (t) => {
  const { app } = await build(t)
  const api = client(app)
  const world = await mappedWorld(api)
  const { stats } = await ingest(api, ['campaign,geocode,n,n again', 'C,G1,5,6'].join('\n'), 'reject')
  t.equal(stats.conflicts.count, 1)
  t.equal(stats.conflicts.items[0].kept, null, 'no cell kept')
  t.same(
    stats.conflicts.items[0].dropped.map((d: { value: number }) => d.value),
    [5, 6],
  )
  t.equal(await cellValue(api, world.indicator, world.location, world.campaign), undefined)
  t.match(stats.datapoints, { inserted: 0 })
  const agreeing = await ingest(api, ['campaign,geocode,n,n again', 'C,G1,5,5'].join('\n'), 'reject')
  t.equal(agreeing.stats.conflicts.items[0].kept.column, 'n again', 'equal values are no disagreement: the later column is kept')
  t.equal(await cellValue(api, world.indicator, world.location, world.campaign), 5)
})

t.test('more keys written twice than the report lists: all counted, the first 100 in key order with their cells', async (t) => {
  const { app } = await build(t)
  const api = client(app)
  const world = await mappedWorld(api)
  // A date file: 150 days at G1, each row's n and n again (one indicator) with different values.
  const days = Array.from({ length: 150 }, (_, i) => new Date(Date.UTC(2016, 0, 1 + i)).toISOString().slice(0, 10))
  const csv = ['geocode,unique_key,data_date,n,n again', ...days.map((day, i) => `G1,r${i},${day},${i},${i + 1000}`)].join('\n')
  const { stats } = await ingest(api, csv, 'reject', 'date')
  t.equal(stats.conflicts.count, 150)
  t.equal(stats.conflicts.items.length, 100)
  const keys = days.map((day) => `${world.location}_${world.indicator}_${day}`).sort()
  t.same(
    stats.conflicts.items.map((c: { unique_index: string }) => c.unique_index),
    keys.slice(0, 100),
  )
  const i = days.indexOf(keys[0].split('_')[2])
  t.same(stats.conflicts.items[0], {
    unique_index: keys[0],
    kept: null,
    dropped: [
      { row_number: i, column: 'n', value: i },
      { row_number: i, column: 'n again', value: i + 1000 },
    ],
    dropped_count: 2,
  })
  t.match(stats.datapoints, { inserted: 0 })
})

t.test('a key written by thousands of rows: the first 100 cells dropped are listed, all counted', async (t) => {
  const { app } = await build(t)
  const api = client(app)
  await mappedWorld(api)
  // 3,000 row keys (unique_key), one location and campaign: 3,000 cells for one datapoint key.
  const rows = Array.from({ length: 3000 }, (_, i) => `k${i},G1,C,${i}`)
  const { conflicts } = (await ingest(api, `unique_key,geocode,campaign,n\n${rows.join('\n')}\n`)).stats
  t.equal(conflicts.count, 1)
  t.equal(conflicts.items[0].dropped_count, 2999, 'every dropped cell counted')
  t.equal(conflicts.items[0].dropped.length, 100, 'the first 100 listed: the report stays the size of what a person reads')
  t.same(conflicts.items[0].kept, { row_number: 2999, column: 'n' }, 'the last row kept')
})

t.test('a refresh under first keeps the earlier of two rows mapped to one cell', async (t) => {
  const { app } = await build(t)
  const api = client(app)
  const world = await mappedWorld(api)
  await api.post('/source_object_map/', { content_type: 'location', source_object_code: 'G1b', master_object_id: world.location })
  const { stats } = await ingest(api, ['campaign,geocode,n', 'C,G1,5', 'C,G1b,8'].join('\n'), 'first')
  t.same(stats.duplicates, { count: 0, items: [] }, 'different row keys: not a duplicate row')
  t.equal(stats.conflicts.items[0].kept.row_number, 0)
  t.equal(await cellValue(api, world.indicator, world.location, world.campaign), 5)
})

t.test('an unknown conflict policy is refused with a 400 naming it, and nothing is stored', async (t) => {
  const { app, db } = await build(t)
  const api = client(app)
  const res = await api.post('/document/', { docfile: Buffer.from(TWICE).toString('base64'), doc_title: 'x.csv', file_type: 'campaign', conflict: 'newest' })
  t.equal(res.status, 400)
  t.match(res.body.message, /^conflict: must be one of last, first, reject/)
  t.equal((await db.selectFrom('source_doc').select('id').where('doc_title', 'like', 'x.csv%').execute()).length, 0)
  const patched = await api.patch('/document/1/', { conflict: 'sometimes' })
  t.ok([400, 404].includes(patched.status), `a bad policy in a PATCH is a 4xx (${patched.status})`)
})
