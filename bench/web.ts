// `npm run bench:web` (PostgreSQL, Chromium): the web app at country scale, on the data bench:reads
// builds (10,000 locations: a country, 100 provinces, 9,899 districts; 1,000,000 campaign values).
// A dashboard of four charts like a programme's: a column chart and a pie of the 100 provinces, a
// column chart of the country over 5 campaigns, a table of the 9,899 districts. Measured in the page
// (performance marks from navigation), BENCH_RUNS times (default 5), median and range: the first and
// the last chart drawn; the data browser's first page; a location found by typing three letters; the
// upload page's list of 1,000 codes to map. Checked on the way (the run exits 1 if one fails): the district table sorted and its
// CSV equal to the API's, the pie at most 12 slices, no two labels of the 100-province column chart
// overlapping, axe-core at 1280 and 375 px. Debian's Chromium through playwright-core, as the tests.
// BENCH_DATABASE_URL names the server (default postgres://postgres@127.0.0.1:5432/postgres); a
// scratch database is created and dropped (BENCH_KEEP=1 keeps it).
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { chromium, type Page } from 'playwright-core'
import { axeViolations, CHROMIUM } from '../test/chromium.js'
import { ADMIN_URL, doing, onStop, scratchDatabase, scratchDir, startServer, stop } from './lib.js'
import { seedReadsThroughServer } from './read-statements.js'

const KEY = 'd'.repeat(40)
const PASSWORD = 'bench-password-1'
const runs = Number(process.env.BENCH_RUNS ?? 5)
const port = 4011
const base = `http://127.0.0.1:${port}`

/** The API with the admin key: the parsed body, or an Error naming the status. */
async function call(path: string, init: RequestInit = {}) {
  const res = await fetch(`${base}/api/v1${path}`, {
    ...init,
    headers: { authorization: `ApiKey admin:${KEY}`, 'content-type': 'application/json', ...init.headers },
  })
  if (res.status >= 400) throw new Error(`${init.method ?? 'GET'} ${path}: ${res.status} ${await res.text()}`)
  return res.headers.get('content-type')?.includes('json') ? res.json() : res.text()
}

/** What a check found wrong: the run exits 1 when any did. */
const failures: string[] = []
const check = (ok: boolean, what: string) => ok || failures.push(what)

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]
const figure = (values: number[]) => `${Math.round(median(values))} ms (${Math.round(Math.min(...values))}–${Math.round(Math.max(...values))})`

/** The four charts: provinces as columns and as a pie, the country over five campaigns, the districts as a table. */
async function dashboard() {
  const provinces = { indicator_ids: [1], campaign_ids: [1], location_ids: [1], location_depth: 1 }
  const charts = [
    ['bench-provinces', 'Provinces', { type: 'ColumnChart', ...provinces }],
    ['bench-provinces-pie', 'Provinces, shares', { type: 'PieChart', ...provinces }],
    [
      'bench-campaigns',
      'The country over five campaigns',
      { type: 'ColumnChart', indicator_ids: [1], campaign_ids: [1, 2, 3, 4, 5], location_ids: [1], location_depth: 0 },
    ],
    ['bench-districts', 'Districts', { type: 'TableChart', indicator_ids: [1, 2], campaign_ids: [1], location_ids: [1], location_depth: 2 }],
  ] as const
  for (const [uuid, title, chart_json] of charts) await call('/custom_chart/', { method: 'POST', body: JSON.stringify({ uuid, title, chart_json }) })
  const rows = [
    { layout: 2, charts: ['bench-provinces', 'bench-provinces-pie'] },
    { layout: 2, charts: ['bench-campaigns', 'bench-districts'] },
  ]
  return (await call('/dashboard/', { method: 'POST', body: JSON.stringify({ title: 'Country scale', rows }) })).id as number
}

/** From navigation to the first and the last of `count` charts drawn, read from the page's marks. */
async function dashboardTimes(page: Page, id: number, count: number) {
  await page.goto(`${base}/app/#/`)
  await page.getByRole('heading', { name: 'Dashboards' }).waitFor()
  await page.goto(`${base}/app/#/dashboard/${id}`)
  await page.reload()
  await page.waitForFunction((n) => document.querySelectorAll('figure.chart[data-drawn="true"]').length === n, count, { timeout: 60_000 })
  const marks = await page.evaluate(() => performance.getEntriesByType('mark').map((m) => m.startTime))
  return { first: Math.min(...marks), last: Math.max(...marks) }
}

/** Pairs of text boxes that overlap in an SVG (labels ECharts drew on top of each other). */
const overlappingLabels = (page: Page, selector: string) =>
  page.locator(selector).evaluate((svg) => {
    const boxes = [...svg.querySelectorAll('text')]
      .filter((t) => t.textContent?.trim() && getComputedStyle(t).opacity !== '0')
      .map((t) => t.getBoundingClientRect())
    let pairs = 0
    for (let i = 0; i < boxes.length; i++) {
      for (let j = i + 1; j < boxes.length; j++) {
        const [a, b] = [boxes[i], boxes[j]]
        if (a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1) pairs++
      }
    }
    return { labels: boxes.length, pairs }
  })

const scratch = await scratchDatabase(ADMIN_URL, 'rhizome_web')
const dataDir = scratchDir('rhizome-bench-web-')
const server = await startServer(['dist/server.js'], { DATABASE_URL: scratch.url, DATA_DIR: dataDir, ADMIN_API_KEY: KEY, DEMO_DATA: '0' }, port)
doing('starting Chromium')
// Playwright's own SIGINT handler would close the browser and exit before bench/scratch.ts has dropped
// the database: a stop closes the browser there instead.
const browser = await chromium.launch({
  executablePath: CHROMIUM,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'],
  handleSIGINT: false,
  handleSIGTERM: false,
  handleSIGHUP: false,
})
onStop(() => browser.close())
try {
  doing('seeding the data of bench:reads')
  await seedReadsThroughServer(scratch.url, port, { authorization: `ApiKey admin:${KEY}` })
  const admin = (await call('/user/?username=admin')).objects[0]
  await call(`/user/${admin.id}/`, { method: 'PATCH', body: JSON.stringify({ password: PASSWORD }) })
  const boardId = await dashboard()

  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true })
  const page = await context.newPage()
  const problems: string[] = []
  page.on('pageerror', (e) => problems.push(e.message))
  page.on('console', (m) => m.type() === 'error' && problems.push(m.text()))
  await page.goto(`${base}/app/`)
  await page.getByLabel('Username').fill('admin')
  await page.getByLabel('Password').fill(PASSWORD)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByRole('button', { name: 'Sign out' }).waitFor()

  doing(`timing the dashboard, ${runs} run(s)`)
  await dashboardTimes(page, boardId, 4) // a first load, not counted: the browser's cache of the modules
  const times = []
  for (let run = 0; run < runs; run++) times.push(await dashboardTimes(page, boardId, 4))
  console.log(`four-chart dashboard: first chart ${figure(times.map((t) => t.first))}, last chart ${figure(times.map((t) => t.last))} after navigation`)

  doing('checking the charts: sort, CSV, pie, labels, axe')
  const districts = page.locator('figure.chart[data-type="TableChart"]')
  console.log(`district table: ${await districts.locator('tbody tr').count()} rows in the page; ${await districts.locator('.table-pages p').textContent()}`)
  const sorting = Date.now()
  await districts.getByRole('button', { name: 'i1', exact: true }).click()
  await districts.locator('th[aria-sort="descending"]').waitFor()
  const sortMs = Date.now() - sorting
  // The dashboard opens on the latest campaign with values (its address says which): the API is asked for that one.
  const shownCampaign = new URLSearchParams(new URL(page.url()).hash.split('?')[1]).get('campaign')
  const largest = (await call(`/campaign_datapoint/?indicator__in=1&campaign__in=${shownCampaign}&location_id=1&location_depth=2&limit=1&order_by=-value`))
    .objects[0].value
  const shownFirst = await districts.locator('tbody tr td.number').first().textContent()
  check(shownFirst === largest.toLocaleString('en'), 'the sorted district table does not start with the largest value')
  console.log(
    `sorted by i1 in ${sortMs} ms (click to sorted page, through the protocol): first ${shownFirst}, the API's largest ${largest.toLocaleString('en')}`,
  )
  const href = (await districts.getByRole('link', { name: 'CSV of every row' }).getAttribute('href'))!
  const csvFromPage = await page.evaluate((url) => fetch(url).then((r) => r.text()), href)
  const csvFromApi = await call(`/campaign_datapoint/?indicator__in=1%2C2&campaign__in=${shownCampaign}&location_id=1&location_depth=2&format=csv&shape=wide`)
  // The page's CSV also carries each value's status (the chart reads them): its other columns are the API's.
  const columnsOf = (csv: string, names: string[]) => {
    const [header, ...lines] = csv
      .trim()
      .split('\r\n')
      .map((line) => line.split(','))
    const at = names.map((name) => header.indexOf(name))
    return lines.map((cells) => at.map((i) => cells[i]).join(',')).join('\n')
  }
  const apiColumns = csvFromApi.split('\r\n')[0].split(',')
  const same = columnsOf(csvFromPage, apiColumns) === columnsOf(csvFromApi, apiColumns)
  check(same, 'the district CSV’s values differ from the API’s')
  console.log(`district CSV: ${csvFromPage.trim().split('\r\n').length - 1} rows, its ${apiColumns.join(', ')} equal to the API's: ${same}`)

  const pieSlices = await page.locator('figure.chart[data-type="PieChart"] svg text').allTextContents()
  check(pieSlices.length <= 12, `the province pie has ${pieSlices.length} slices`)
  console.log(`province pie: ${pieSlices.length} labels (${pieSlices.filter((t) => t.startsWith('Other')).join(', ')})`)
  const columns = await overlappingLabels(page, 'figure.chart[data-type="ColumnChart"] >> nth=0 >> svg')
  check(columns.pairs === 0, `${columns.pairs} overlapping labels on the province column chart`)
  console.log(`100-province column chart: ${columns.labels} labels shown, ${columns.pairs} overlapping pairs`)
  const axe = await axeViolations(page)
  await page.setViewportSize({ width: 375, height: 800 })
  await page.waitForTimeout(500)
  const axeNarrow = await axeViolations(page)
  const wide = await page.evaluate(() => document.documentElement.scrollWidth)
  check(axe.length + axeNarrow.length === 0 && wide <= 375, 'axe violations or overflow on the dashboard')
  console.log(
    `axe on the dashboard: ${axe.length} at 1280 px, ${axeNarrow.length} at 375 px; widest at 375 px: ${wide} px ${[...axe, ...axeNarrow].join('; ')}`,
  )
  await page.setViewportSize({ width: 1280, height: 900 })

  doing(`timing the data browser and the location search, ${runs} run(s)`)
  const browserTimes = []
  const searchTimes = []
  for (let run = 0; run < runs; run++) {
    await page.goto(`${base}/app/#/`)
    await page.getByRole('heading', { name: 'Dashboards' }).waitFor()
    const started = await page.evaluate(() => performance.now())
    await page.goto(`${base}/app/#/data`)
    await page.getByText(/^Rows 1–50 of /).waitFor({ timeout: 60_000 })
    browserTimes.push((await page.evaluate(() => performance.now())) - started)
    const search = page.getByRole('combobox', { name: 'Location' })
    await search.click()
    const typed = Date.now()
    await page.keyboard.type('L98')
    await page.getByRole('option', { name: /› L98$/ }).waitFor()
    searchTimes.push(Date.now() - typed)
  }
  console.log(`data browser, first page: ${figure(browserTimes)} after navigation`)
  console.log(`location search, 3 letters typed to the match listed (through the protocol): ${figure(searchTimes)}`)

  doing('uploading 1,000 unknown codes')
  const file = join(dataDir, 'unknown-codes.csv')
  writeFileSync(file, `geocode,campaign,i1\n${Array.from({ length: 1000 }, (_, i) => `X${i},C1,${i}`).join('\n')}\n`)
  await page.goto(`${base}/app/#/upload`)
  await page.getByLabel('File (CSV or XLSX)').setInputFiles(file)
  const uploading = Date.now()
  await page.getByRole('button', { name: 'Upload' }).click()
  await page.getByRole('heading', { name: 'Codes to map' }).waitFor({ timeout: 120_000 })
  await page.waitForFunction(() => document.querySelectorAll('.mapping .location-search').length >= 1000)
  const codes = await page.locator('.mapping .location-search').count()
  console.log(
    `upload of 1,000 unknown codes: the mapping list (${codes} location codes) shown ${Date.now() - uploading} ms after the click, the transform job included`,
  )
  console.log(problems.length ? `console: ${problems.join('; ')}` : 'console: no error')
  check(problems.length === 0, 'errors in the console')
  check(median(times.map((t) => t.last)) <= 1000, 'the dashboard took more than 1 s')
  check(median(searchTimes) <= 200, 'the location search took more than 200 ms')
} finally {
  await browser.close()
  await stop(server)
  await scratch.close()
}
if (failures.length) {
  console.error(`FAILED: ${failures.join('; ')}`)
  process.exit(1)
}
