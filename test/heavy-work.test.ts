// Limits a user cannot step around: charts per dashboard (on write and on export), the widths one
// dashboard is drawn at per window, the work one user may have queued; and uploads that arrive in a
// spool file, stored byte for byte, the spool emptied after the answer.
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { sql } from 'kysely'
import { loadDemoData } from '../lib/engine/demo.js'
import { admin, build } from './helper.js'

async function demo(t: Parameters<typeof build>[0], config: Parameters<typeof build>[1] = {}) {
  const harness = await build(t, config)
  await loadDemoData(harness.db)
  const call = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: unknown, headers: Record<string, string> = admin) =>
    harness.app.inject({ method, url: `/api/v1${url}`, headers, ...(payload === undefined ? {} : { payload: payload as object }) })
  const dashboardId = (await call('GET', '/dashboard/?limit=1')).json().objects[0].id as number
  const chartIds = ((await call('GET', '/custom_chart/?limit=0')).json().objects as Array<{ id: number }>).map((c) => c.id)
  return { ...harness, call, dashboardId, chartIds }
}

t.test('a dashboard holds at most MAX_CHARTS_PER_DASHBOARD charts; an export of one saved around the API is refused', async (t) => {
  const { call, chartIds, db } = await demo(t, { MAX_CHARTS_PER_DASHBOARD: 4 })
  const rows = (n: number) => Array.from({ length: n }, (_, i) => ({ charts: [chartIds[i % chartIds.length]] }))
  t.equal((await call('POST', '/dashboard/', { title: 'Four', rows: rows(4) })).statusCode, 201, 'at the limit')
  const over = await call('POST', '/dashboard/', { title: 'Five', rows: rows(5) })
  t.equal(over.statusCode, 400)
  t.match(over.json(), { code: 'VALIDATION_ERROR', message: /5 charts: a dashboard holds at most 4 \(MAX_CHARTS_PER_DASHBOARD\)/ })
  const four = (await call('GET', '/dashboard/?title=Four')).json().objects[0].id
  t.equal((await call('PATCH', `/dashboard/${four}/`, { rows: rows(6) })).statusCode, 400, 'a change past it too')
  await sql`update custom_dashboard set rows = ${JSON.stringify(rows(6))}::jsonb where id = ${four}`.execute(db)
  const drawn = await call('GET', `/export_file/?dashboard_id=${four}&type=svg`)
  t.equal(drawn.statusCode, 422)
  t.match(drawn.json(), { code: 'TOO_MANY_CHARTS', message: /holds 6 charts; an export draws at most 4/ })
})

t.test('one dashboard is drawn at EXPORT_WIDTHS_PER_DASHBOARD widths per window, per user and per link', async (t) => {
  const { call, dashboardId } = await demo(t, { EXPORT_WIDTHS_PER_DASHBOARD: 2 })
  const svg = (width: number, url = `/export_file/?dashboard_id=${dashboardId}&`) =>
    call('GET', `${url}type=svg&width=${width}`, undefined, { ...admin, 'cache-control': 'no-cache' })
  t.equal((await svg(400)).statusCode, 200)
  t.equal((await svg(500)).statusCode, 200)
  const third = await svg(600)
  t.equal(third.statusCode, 429, 'a third width is refused')
  t.match(third.json(), { code: 'TOO_MANY_WIDTHS', details: { limit: 2, widths: [400, 500] } })
  t.ok(Number(third.headers['retry-after']) > 0, 'with Retry-After')
  t.equal((await svg(400)).statusCode, 200, 'a width drawn in the window is drawn again')
  const { token } = (await call('POST', '/dashboard_share/', { dashboard_id: dashboardId })).json()
  const shared = (width: number) => call('GET', `/shared/${token}/export_file/?type=svg&width=${width}`, undefined, {})
  t.equal((await shared(700)).statusCode, 200, "a link's budget is its own")
  t.equal((await shared(800)).statusCode, 200)
  t.equal((await shared(900)).statusCode, 429, 'and bounded the same way')
})

t.test('past WORK_QUEUE_PER_USER, a user’s exports are refused with 429 and Retry-After, not queued', async (t) => {
  const { call, dashboardId } = await demo(t, { WORK_QUEUE_PER_USER: 1 })
  const answers = await Promise.all([801, 802, 803].map((width) => call('GET', `/export_file/?dashboard_id=${dashboardId}&type=png&width=${width}`)))
  const statuses = answers.map((a) => a.statusCode).sort()
  t.ok(statuses.includes(200) && statuses.includes(429), `one drawn, the others refused: ${statuses}`)
  const refused = answers.find((a) => a.statusCode === 429)!
  t.match(refused.json(), { code: 'TOO_MUCH_WORK', message: /WORK_QUEUE_PER_USER/ })
  t.equal(refused.headers['retry-after'], '2')
})

t.test('an upload is stored byte for byte from its spool file, which is gone after the answer', async (t) => {
  const { call, app } = await demo(t)
  const dataDir = app.config.DATA_DIR
  const spoolFiles = () => {
    try {
      // This process's folder: others' are theirs (a test process shares DATA_DIR with the others).
      const root = join(dataDir, 'uploads-tmp')
      const mine = readdirSync(root).filter((name) => name.startsWith(`${process.pid}-`))
      return mine.flatMap((name) => readdirSync(join(root, name))).length
    } catch {
      return 0
    }
  }
  // Over two of base64's 1 MiB decoding windows, with line breaks as a mail client writes them.
  const lines = ['geocode,campaign,missed']
  for (let i = 0, size = 0; size < 2_500_000; i++) size += lines[lines.push(`L${i % 7},C${i % 3},${i}`) - 1].length + 2
  const csv = Buffer.from(`${lines.join('\r\n')}\r\n`)
  const base64 = csv.toString('base64').replace(/.{76}/g, '$&\n')
  const sent = await call('POST', '/document/', { docfile: base64, doc_title: 'wide.csv', file_type: 'campaign' })
  t.equal(sent.statusCode, 201, sent.body.slice(0, 200))
  t.ok(readFileSync(join(dataDir, sent.json().docfile)).equals(csv), 'the stored file is the decoded one')
  const boundary = 'b0undary'
  const multipart = Buffer.concat([
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file_type"\r\n\r\ncampaign\r\n--${boundary}\r\nContent-Disposition: form-data; name="docfile"; filename="m.csv"\r\n\r\n`,
    ),
    csv,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ])
  const part = await app.inject({
    method: 'POST',
    url: '/api/v1/document/',
    headers: { ...admin, 'content-type': `multipart/form-data; boundary=${boundary}` },
    payload: multipart,
  })
  t.equal(part.statusCode, 201, part.body.slice(0, 200))
  t.ok(readFileSync(join(dataDir, part.json().docfile)).equals(csv), 'a file part is stored as sent')
  const bad = await call('POST', '/document/', {
    docfile: Buffer.from('geocode,campaign,x\nA,B,=1+1\n').toString('base64'),
    doc_title: 'f.csv',
    file_type: 'campaign',
  })
  t.equal(bad.json().code, 'FORMULA_CELL', 'a refused file…')
  t.equal(spoolFiles(), 0, '…and the accepted ones leave nothing in the spool')
})
