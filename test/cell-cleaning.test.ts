// Cell cleaning (lib/ingest/clean.ts, ingestion §5.1): English and French numbers, percents and
// yes/no; a comma that could be a thousands separator is read as one; anything else is rejected. And
// an upload reads a French file's cells.
import t from 'tap'
import { cleanValue } from '../lib/ingest/clean.js'
import { build } from './helper.js'
import { client } from './api.js'
import { upload, world } from './world.js'

t.test('cells as English and French write them', async (t) => {
  const cases: Array<[string, number | 'reject']> = [
    ['1,000', 1000],
    ['1,000.5', 1000.5],
    ['82.67%', 0.8267],
    ['Yes', 1],
    ['no', 0],
    // French: spaces between thousands (plain, no-break, narrow no-break), a decimal comma.
    ['1 234', 1234],
    ['1\u00a0234,5', 1234.5],
    ['12\u202f345\u202f678', 12345678],
    ['4,38', 4.38],
    ['-0,5', -0.5],
    ['4,38 %', 0.0438],
    ['4,38\u00a0%', 0.0438],
    ['Oui', 1],
    ['NON', 0],
    ['vrai', 1],
    ['faux', 0],
    // A comma and three digits is a thousands separator, whoever wrote it.
    ['1,500', 1500],
    ['1 23', 'reject'],
    ['1,2,3', 'reject'],
    ['12 34,5', 'reject'],
    ['peut-être', 'reject'],
  ]
  for (const [cell, value] of cases) {
    const cleaned = cleanValue(cell)
    if (typeof value === 'number' && typeof cleaned === 'number') t.ok(Math.abs(cleaned - value) < 1e-12, `${JSON.stringify(cell)} → ${cleaned}`)
    else t.equal(cleaned, value, `${JSON.stringify(cell)} → ${cleaned}`)
  }
})

t.test('an upload of a French file: its spaced thousands read as one number', async (t) => {
  const { app } = await build(t)
  const api = client(app)
  const w = await world(api)
  const { run } = await upload(api, 'fr.csv', 'campaign', 'campaign,geocode,n\nC,a1,"1 234"\nC,b1,"2\u00a0500"\n')
  t.equal(run.status, 200, run.text)
  const values = (await api.get(`/campaign_datapoint/?indicator__in=${w.n}&campaign__in=${w.C}&location_id__in=${w.a1},${w.b1}`)).body.objects
  t.same(Object.fromEntries(values.map((v: { location_id: number; value: number }) => [v.location_id, v.value])), { [w.a1]: 1234, [w.b1]: 2500 })
})
