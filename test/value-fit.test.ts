// Values fit their indicator (lib/engine/value-fit.ts): a yes/no of 2, a negative count, a value beyond
// ±1e15 and a campaign's value of a dated indicator are refused with a reason, at data entry (400,
// nothing written) and in uploads (a rejected cell each, the rest of the row kept).
import t from 'tap'
import { build } from './helper.js'
import { client } from './api.js'
import { smallWorld } from './fixtures.js'

async function world(t: Parameters<typeof build>[0]) {
  const { app, db } = await build(t)
  const api = client(app)
  const { location, campaign, indicator: count } = await smallWorld(api.post)
  const yesNo = (await api.post('/indicator/', { name: 'yes/no', short_name: 'yn', data_format: 'bool' })).body.id
  const share = (await api.post('/indicator/', { name: 'share', short_name: 'share', data_format: 'pct' })).body.id
  const dated = (await api.post('/indicator/', { name: 'cases', short_name: 'cases', data_format: 'int', resource_name: 'date' })).body.id
  return { api, db, location, campaign, count, yesNo, share, dated }
}

t.test('data entry refuses a value its indicator cannot hold, and writes nothing', async (t) => {
  const { api, db, location, campaign, count, yesNo, share, dated } = await world(t)
  const entry = (indicator_id: number, value: number) => api.post('/campaign_datapoint/', { indicator_id, location_id: location, campaign_id: campaign, value })
  for (const [indicator, value, reason] of [
    [yesNo, 2, /value: 2 for indicator \d+: a yes\/no indicator takes 0 \(no\) or 1 \(yes\)/],
    [count, -5, /a count is not negative/],
    [count, 1e308, /beyond ±1e\+15: a total over the locations would lose it/],
    [share, -2e15, /beyond ±1e\+15/],
    [dated, 3, /takes values by date, not by campaign/],
  ] as const) {
    const res = await entry(indicator, value)
    t.equal(res.status, 400, `${value} refused`)
    t.match(res.body, { code: 'VALIDATION_ERROR', message: reason })
  }
  t.equal((await db.selectFrom('datapoint').select('id').execute()).length, 0, 'nothing written')

  // What fits is written; a change that does not fit is refused and leaves the value as it was.
  t.equal((await entry(yesNo, 1)).status, 201)
  t.equal((await entry(share, -0.25)).status, 201, 'a percentage may be negative (a change)')
  const created = await entry(count, 40)
  t.equal(created.status, 201)
  const refused = await api.patch(`/campaign_datapoint/${created.body.id}/`, { value: -1 })
  t.equal(refused.status, 400)
  t.match(refused.body.message, /a count is not negative/)
  t.equal((await api.get(`/campaign_datapoint/${created.body.id}/`)).body.value, 40, 'the value kept')

  // By date: a yes/no of 2 is refused there too; a dated value of a dated indicator is written.
  const byDate = (indicator_id: number, value: number) => api.post('/date_datapoint/', { indicator_id, location_id: location, data_date: '2016-03-01', value })
  t.equal((await byDate(yesNo, 2)).status, 400)
  t.equal((await byDate(dated, 3)).status, 201)
})

t.test('an upload rejects each cell its indicator cannot hold, with the reason, and keeps the rest', async (t) => {
  const { api, db, location, campaign, count, yesNo, dated } = await world(t)
  for (const [content_type, code, id] of [
    ['location', 'G1', location],
    ['campaign', 'C', campaign],
    ['indicator', 'n', count],
    ['indicator', 'yn', yesNo],
    ['indicator', 'cases', dated],
  ] as const) {
    t.equal((await api.post('/source_object_map/', { content_type, source_object_code: code, master_object_id: id })).status, 201)
  }
  // Two files (two rows of one key in one file would make the later one win whole).
  const upload = async (lines: string) => {
    const csv = Buffer.from(`campaign,geocode,n,yn,cases\n${lines}\n`)
    const doc = (await api.post('/document/', { docfile: csv.toString('base64'), doc_title: 'odd.csv', file_type: 'campaign' })).body.id
    const run = await api.get(`/transform_upload/?document_id=${doc}`)
    t.equal(run.status, 200, run.text)
    const rejected = run.body.objects[0].ingest_stats.rejected_cells
    return rejected.items.map((c: { row_number: number; column: string; reason: string }) => [c.row_number, c.column, c.reason])
  }
  t.match(await upload('C,G1,-3,2,4'), [
    [0, 'n', /a count is not negative/],
    [0, 'yn', /0 \(no\) or 1 \(yes\)/],
    [0, 'cases', /by date, not by campaign/],
  ])
  t.match(await upload('C,G1,1e308,1,'), [[0, 'n', /beyond ±1e\+15/]])
  const kept = await db.selectFrom('datapoint').select(['indicator_id', 'value']).execute()
  t.same(kept, [{ indicator_id: yesNo, value: 1 }], 'the cell that fits is kept')
})
