// Export: the demo dashboard as PDF (a page per row, its title and the column chart's values as the
// API reads them in its text), PNG at the asked width, JPEG and SVG; a restricted user's file holds
// only her part; the original front-end's `path=` form for this app's routes only; kept in the read
// cache and honest on change.
import { PNG } from 'pngjs'
import t from 'tap'
import { DATA_CHANNEL } from '../lib/data/notified-cache.js'
import { extractText, getDocumentProxy } from 'unpdf'
import { loadDemoData } from '../lib/engine/demo.js'
import { admin, alice, build } from './helper.js'

async function demo(t: Parameters<typeof build>[0]) {
  const harness = await build(t)
  await loadDemoData(harness.db)
  // The demo's change notifications handled by this app's caches before anything is read and kept:
  // on PostgreSQL they arrive on their own connection, and a late one would drop a file kept since.
  await harness.database.confirmHeard(DATA_CHANNEL, 5_000)
  const get = (url: string, headers: Record<string, string> = admin) => harness.app.inject({ method: 'GET', url: `/api/v1${url}`, headers })
  const ids = async (path: string, field: string) =>
    new Map(((await get(path)).json().objects as Array<Record<string, unknown>>).map((o) => [o[field] as string, o.id as number]))
  const [indicator, campaign, location, dashboard] = await Promise.all([
    ids('/indicator/?limit=0', 'short_name'),
    ids('/campaign/?limit=0', 'name'),
    ids('/location/?limit=0', 'name'),
    ids('/dashboard/?limit=0', 'title'),
  ])
  const first = (await get('/campaign/?limit=1&order_by=start_date')).json().objects[0].id as number
  /** The column chart's values by province name, as the API reads them and the app writes them. */
  const missedByProvince = async (headers = admin) => {
    const rows = (
      await get(
        `/campaign_datapoint/?indicator__in=${indicator.get('Children missed')}&campaign__in=${first}&location_id=${location.get('Veridia')}&location_depth=1`,
        headers,
      )
    ).json().objects as Array<{ location_id: number; value: number }>
    const names = new Map([...location].map(([name, id]) => [id, name]))
    return Object.fromEntries(rows.map((r) => [names.get(r.location_id)!, r.value.toLocaleString('en')]))
  }
  return { ...harness, get, indicator, campaign, location, dashboardId: dashboard.get('Campaign overview')!, missedByProvince }
}

const pdfText = async (bytes: Buffer) => {
  const document = await getDocumentProxy(new Uint8Array(bytes))
  const { totalPages, text } = await extractText(document, { mergePages: true })
  return { pages: totalPages, text: text as string }
}

t.test('the demo dashboard as PDF, PNG, JPEG and SVG', async (t) => {
  const { get, dashboardId, missedByProvince } = await demo(t)
  const values = await missedByProvince()
  t.equal(Object.keys(values).length, 3, 'three provinces')

  const pdf = await get(`/export_file/?dashboard_id=${dashboardId}&type=pdf`)
  t.equal(pdf.statusCode, 200, pdf.body.slice(0, 200))
  t.equal(pdf.headers['content-type'], 'application/pdf')
  t.match(pdf.headers['content-disposition'], /attachment; filename="Campaign overview\.pdf"/)
  t.equal(pdf.rawPayload.subarray(0, 5).toString(), '%PDF-')
  const { pages, text } = await pdfText(pdf.rawPayload)
  t.equal(pages, 3, 'a page per row of charts')
  t.match(text, 'Campaign overview')
  t.match(text, 'Missed children')
  for (const [province, value] of Object.entries(values)) {
    t.match(text, province)
    t.match(text, value, `${province}'s value ${value} in the PDF`)
  }
  t.match(text, 'Districts: targeted, missed, percent missed', 'the table chart is drawn too')
  t.match(text, /Made \w{3} \d{1,2}, \d{4}, \d{1,2}:\d{2}\s[AP]M UTC/, 'the date it was made, in UTC by default')
  // In the reader's zone when the request names it (the app sends the browser's): Bogotá is UTC−5.
  const bogota = await get(`/export_file/?dashboard_id=${dashboardId}&type=svg&tz=America/Bogota`)
  t.equal(bogota.statusCode, 200)
  t.match(bogota.body, /Made \w{3} \d{1,2}, \d{4}, \d{1,2}:\d{2}\s[AP]M GMT-5/, "the time it was made in the reader's zone, named")
  const nowhere = await get(`/export_file/?dashboard_id=${dashboardId}&type=svg&tz=Mars/Olympus`)
  t.equal(nowhere.statusCode, 400, 'a zone that does not exist')
  t.match(JSON.parse(nowhere.body).message, /tz.*Mars\/Olympus.*time zone/)

  const png = await get(`/export_file/?dashboard_id=${dashboardId}&type=png&width=900`)
  t.equal(png.statusCode, 200)
  t.equal(png.headers['content-type'], 'image/png')
  const image = PNG.sync.read(png.rawPayload)
  t.equal(image.width, 900, 'the PNG decodes at the asked width')
  t.ok(image.height > 3 * 360, 'every row drawn')

  const jpeg = await get(`/export_file/?dashboard_id=${dashboardId}&type=jpeg&width=640`)
  t.equal(jpeg.statusCode, 200)
  t.equal(jpeg.headers['content-type'], 'image/jpeg')
  t.same([...jpeg.rawPayload.subarray(0, 3)], [0xff, 0xd8, 0xff], 'a JPEG')

  const svg = await get(`/export_file/?dashboard_id=${dashboardId}&type=svg`)
  t.equal(svg.statusCode, 200)
  t.equal(svg.headers['content-type'], 'image/svg+xml')
  for (const value of Object.values(values)) t.match(svg.body, `>${value}<`, `the SVG holds ${value}`)
  t.match(svg.body, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" width="1200"/)
})

t.test('a chart alone, and the view: a campaign and a drill-down', async (t) => {
  const { get, dashboardId, location } = await demo(t)
  const charts = (await get('/custom_chart/?limit=0')).json().objects as Array<{ id: number; title: string }>
  const column = charts.find((c) => c.title === 'Missed children')!
  const svg = await get(`/export_file/?chart_id=${column.id}&type=svg`)
  t.equal(svg.statusCode, 200)
  t.equal(svg.body.split('>Missed children</text>').length - 1, 1, 'its title once: the file’s, not again above the drawing')
  t.notMatch(svg.body, 'Polio cases', 'only that chart')
  t.match(svg.body, 'Campaign: ', 'a chart of campaigns names its campaign')
  const line = await get(`/export_file/?chart_id=${charts.find((c) => c.title.startsWith('Polio cases'))!.id}&type=svg`)
  t.equal(line.statusCode, 200)
  t.notMatch(line.body, 'Campaign:', 'a chart over dates names no campaign')

  // A drill-down into Northmarch: the column chart shows its districts.
  const drilled = await get(`/export_file/?chart_id=${column.id}&type=svg&location=${location.get('Northmarch')}`)
  t.match(drilled.body, 'Ashford')
  t.notMatch(drilled.body, 'Eastvale')
  const viaPath = await get(`/export_file/?type=svg&path=${encodeURIComponent(`/app/#/dashboard/${dashboardId}?location=${location.get('Northmarch')}`)}`)
  t.equal(viaPath.statusCode, 200, "the original's path= form, a route of this app")
  t.match(viaPath.body, 'Ashford')
})

t.test('a date range narrows the line chart, in the dashboard data and in the export', async (t) => {
  const { get, dashboardId } = await demo(t)
  const months = (svg: string) => [...svg.matchAll(/>(\w{3} 2016)</g)].map((m) => m[1])
  const whole = await get(`/export_file/?dashboard_id=${dashboardId}&type=svg`)
  t.equal(months(whole.body).length, 12, 'twelve months')
  const narrowed = await get(`/export_file/?dashboard_id=${dashboardId}&type=svg&start_date=2016-03-01&end_date=2016-05-31`)
  t.equal(narrowed.statusCode, 200)
  t.same(months(narrowed.body), ['Mar 2016', 'Apr 2016', 'May 2016'], 'March to May')
  t.match(narrowed.body, 'Dates: from 2016-03-01 to 2016-05-31')
  const data = (await get(`/dashboard/${dashboardId}/data/?start_date=2016-03-01&end_date=2016-05-31`)).json()
  const line = Object.values(data.charts as Record<string, { uuid: string; objects: Array<{ time_grouping: string }> }>).find(
    (c) => c.uuid === 'demo-polio-cases',
  )!
  t.same(line.objects.map((o) => o.time_grouping).sort(), ['201603', '201604', '201605'], "the data's months")
  const viaPath = await get(`/export_file/?type=svg&path=${encodeURIComponent(`#/dashboard/${dashboardId}?start_date=2016-03-01&end_date=2016-05-31`)}`)
  t.same(months(viaPath.body), ['Mar 2016', 'Apr 2016', 'May 2016'], 'the range in a path')
  t.equal((await get(`/export_file/?dashboard_id=${dashboardId}&start_date=2016-13-01`)).statusCode, 400, 'an impossible day')
})

t.test('an export in French: its words, numbers and dates', async (t) => {
  const { get, dashboardId } = await demo(t)
  const pdf = await get(`/export_file/?dashboard_id=${dashboardId}&type=pdf&lang=fr`)
  t.equal(pdf.statusCode, 200)
  const { text } = await pdfText(pdf.rawPayload)
  t.match(text, 'Campagne : March 2016 - NID - OPV')
  t.match(text, 'Fait le')
  t.match(text, '4,38 %', "Eastwick's percent missed, as French writes it")
  t.notMatch(text, '4.38 %')
  const svg = (await get(`/export_file/?dashboard_id=${dashboardId}&type=svg&lang=fr`)).body
  t.match(svg, '>mars 2016<', 'months in French')
  t.match(svg, 'Lieu', "the table's heading")
  const english = (await get(`/export_file/?dashboard_id=${dashboardId}&type=svg`)).body
  t.match(english, '>Mar 2016<', 'English by default, each kept apart')
  t.equal((await get(`/export_file/?dashboard_id=${dashboardId}&lang=xx`)).statusCode, 400, 'a language the app does not speak')
})

t.test("a restricted user's export holds only her part", async (t) => {
  const { get, db, aliceId, dashboardId, location, missedByProvince } = await demo(t)
  await db
    .insertInto('location_permission')
    .values({ user_id: aliceId, top_lvl_location_id: location.get('Northmarch')! })
    .execute()
  const hers = await missedByProvince(alice)
  t.same(Object.keys(hers), ['Northmarch'], 'the API reads her the one province')
  // The demo's province charts read at the reader's own location: hers are her districts.
  const districts = (
    await db.selectFrom('location').select('name').where('parent_location_id', '=', location.get('Northmarch')!).orderBy('name').execute()
  ).map((l) => l.name)
  for (const type of ['svg', 'pdf']) {
    const res = await get(`/export_file/?dashboard_id=${dashboardId}&type=${type}`, alice)
    t.equal(res.statusCode, 200)
    const text = type === 'pdf' ? (await pdfText(res.rawPayload)).text : res.body
    t.match(text, 'Northmarch')
    // Her file says where it is about: her province, not "as each chart sets" (the charts are set on the country).
    t.match(text, /Locations: Northmarch\b/, `${type}: its locations named, hers`)
    t.notMatch(text, 'as each chart sets', `${type}: no vague locations line`)
    for (const district of districts) t.match(text, district, `${type}: her district ${district}`)
    for (const other of ['Eastvale', 'Southreach', 'Dunmore', 'Glimmer']) t.notMatch(text, other, `${type}: nothing of ${other}`)
  }
})

t.test('bad exports are 4xx naming the problem', async (t) => {
  const harness = await demo(t)
  const { get, dashboardId } = harness
  const cases: Array<[string, number, RegExp]> = [
    ['type=svg&path=http://example.com/x', 400, /path must be a dashboard of this app/],
    ['type=pdf&path=/etc/passwd', 400, /path must be a dashboard of this app/],
    ['type=pdf&path=//evil.example/app/#/dashboard/1', 400, /path must be a dashboard of this app/],
    [`type=gif&dashboard_id=${dashboardId}`, 400, /type/],
    [`type=png&dashboard_id=${dashboardId}&width=99999`, 400, /width/],
    ['type=pdf', 400, /dashboard_id, chart_id or path/],
    [`type=pdf&dashboard_id=${dashboardId}&chart_id=1`, 400, /not dashboard_id and chart_id/],
    ['type=pdf&dashboard_id=999999', 404, /999999/],
    ['type=pdf&chart_id=abc', 400, /chart_id/],
  ]
  for (const [query, status, message] of cases) {
    const res = await get(`/export_file/?${query}`)
    t.equal(res.statusCode, status, query)
    t.match(res.json().message, message, query)
  }
  t.equal((await get(`/export_file/?dashboard_id=${dashboardId}`, {})).statusCode, 401, 'credentials required')
  // A dashboard of many rows asked wide: a picture too large to hold is refused, naming a width that fits.
  const charts = (await get('/custom_chart/?limit=0')).json().objects as Array<{ id: number }>
  const rows = Array.from({ length: 50 }, () => ({ charts: charts.slice(0, 1).map((c) => c.id) }))
  const tall = await harness.app.inject({ method: 'POST', url: '/api/v1/dashboard/', headers: admin, payload: { title: 'Tall', rows } })
  const tooLarge = await get(`/export_file/?dashboard_id=${tall.json().id}&type=png&width=4000`)
  t.equal(tooLarge.statusCode, 400)
  t.match(tooLarge.json(), { code: 'EXPORT_TOO_LARGE', message: /too large: ask a width of at most \d+, or a PDF/ })
})

t.test('kept in the read cache and honest on change', async (t) => {
  const { app, get, dashboardId, indicator, location } = await demo(t)
  const first = (await get('/campaign/?limit=1&order_by=start_date')).json().objects[0].id as number
  const url = `/export_file/?dashboard_id=${dashboardId}&type=svg`
  const before = await get(url)
  const again = await get(url)
  t.equal(again.headers.etag, before.headers.etag, 'the same bytes from memory')
  t.equal((await get(url, { ...admin, 'if-none-match': before.headers.etag as string })).statusCode, 304)
  // A new value for Northmarch's Ashford: the province's sum changes, and so does the file.
  const ashford = (
    await get(`/campaign_datapoint/?indicator__in=${indicator.get('Children missed')}&campaign__in=${first}&location_id__in=${location.get('Ashford')}`)
  ).json().objects[0]
  const entry = await app.inject({ method: 'PATCH', url: `/api/v1/campaign_datapoint/${ashford.id}/`, headers: admin, payload: { value: 1_000_000 } })
  t.equal(entry.statusCode, 200, entry.body)
  const after = await get(url)
  t.not(after.headers.etag, before.headers.etag, 'a change drops the kept file')
  t.match(after.body, /1,0\d\d,\d\d\d/, 'the new sum drawn')
})

t.test('an exported table tints each value by its status, in the colours of the status legend', async (t) => {
  const { get, db, indicator, location } = await demo(t)
  const chartId = async (title: string) => (await db.selectFrom('custom_chart').select('id').where('title', '=', title).executeTakeFirstOrThrow()).id
  const table = (await get(`/export_file/?chart_id=${await chartId('Districts: targeted, missed, percent missed')}&type=svg`)).body
  const tints = [...table.matchAll(/<rect [^>]*fill="(#[0-9a-fA-F]{6})" fill-opacity="0.22"/g)].map((m) => m[1].toLowerCase())
  const first = (await get('/campaign/?limit=1&order_by=start_date')).json().objects[0].id as number
  const statuses = (
    await get(
      `/campaign_datapoint/?indicator__in=${indicator.get('Percent missed')}&campaign__in=${first}&location_id=${location.get('Veridia')}&location_depth=2&with_status=1`,
    )
  ).json().objects as Array<{ status: string | null }>
  t.equal(tints.length, statuses.filter((s) => s.status).length, 'a tinted cell for each value with a status')
  // The map's export draws the status legend: every tint is one of its swatches' colours.
  const map = (await get(`/export_file/?chart_id=${await chartId('Percent missed, on the map')}&type=svg`)).body
  const swatches = new Set<string>()
  let fill = ''
  for (const [, tag, attributes, text] of map.matchAll(/<(path|rect|text)\b([^>]*)>([^<]*)/g)) {
    if (tag !== 'text') fill = /fill="(#[0-9a-fA-F]{6})"/.exec(attributes)?.[1]?.toLowerCase() ?? fill
    else if (/^(good|ok|bad): /.test(text.trim())) swatches.add(fill)
  }
  t.equal(swatches.size, 3, 'the legend has good, ok and bad')
  t.same(
    tints.filter((tint) => !swatches.has(tint)),
    [],
    'every tint is a legend colour',
  )
  t.ok(new Set(tints).size >= 2, 'and the statuses are told apart')
})
