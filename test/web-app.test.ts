// The web app at /app/ in a real browser (Debian's Chromium driven by playwright-core) against the real
// server (`node cli/start.mjs` with demo data, on either engine): sign-in, the demo dashboard drawn and
// timed, drill-down and the campaign picker, editing and the chart builder, the data browser and its
// CSV, an upload with its progress, administration, a restricted user, cross-site requests, axe-core
// on every page, 375 px. With WEB_APP_SCREENSHOTS=docs/web-app it writes the screenshots the docs show
// (into a temporary directory otherwise, so that a test run leaves the checkout as it was).
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import t from 'tap'
import type { Locator, Page } from 'playwright-core'
import { launch, noChromium, seriousViolations, signIn, watchedPage } from './browser.js'
import { api, cli, postgresDatabase, ROOT, startServer, until200 } from './processes.js'

const skip = noChromium
const SHOTS = process.env.WEB_APP_SCREENSHOTS ? resolve(ROOT, process.env.WEB_APP_SCREENSHOTS) : undefined

/** A chart's figure on the page, by its type. */
const figure = (page: Page, type: string) => page.locator(`figure.chart[data-type="${type}"]`)

/** The rows of a chart's table view (opened if it is folded), as cell texts. */
async function numbersOf(chart: Locator): Promise<string[][]> {
  const details = chart.locator('details')
  if ((await details.count()) && !(await details.getAttribute('open'))) await details.locator('summary').click()
  return chart.locator('tbody tr').evaluateAll((rows) => rows.map((row) => [...row.children].map((cell) => (cell.textContent ?? '').trim())))
}

/** A chart's table values once they equal `expected` (a chart redraws after a change), or as they are after 5 s. */
async function settledValues(chart: Locator, expected: Record<string, string>, column = 2) {
  let values: Record<string, string> = {}
  for (const started = Date.now(); Date.now() - started < 5000; await new Promise((resolve) => setTimeout(resolve, 50))) {
    values = Object.fromEntries((await numbersOf(chart)).map((r) => [r[0], r[column]]))
    if (JSON.stringify(values) === JSON.stringify(expected)) break
  }
  return values
}

/** Checks one box of a group and unchecks the others. */
async function checkOnly(page: Page, group: string, label: string) {
  const boxes = page.getByRole('group', { name: group })
  await boxes.getByLabel(label, { exact: true }).check()
  for (const box of await boxes.getByRole('checkbox').all()) {
    if ((await box.evaluate((input) => input.parentElement?.textContent?.trim())) !== label) await box.uncheck()
  }
}

/** A demo-sized campaign file in the demo's codes: one row per district code given. */
const campaignFile = (dir: string, name: string, column: string, values: Record<string, number>) => {
  const path = join(dir, name)
  writeFileSync(
    path,
    `geocode,campaign,${column}\n${Object.entries(values)
      .map(([code, v]) => `${code},March 2016 - NID - OPV,${v}`)
      .join('\n')}\n`,
  )
  return path
}

t.test('the web app in Chromium', { skip }, async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'rhizome-web-'))
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }))
  // PostgreSQL: a database of its own, the demo loaded by the CLI (the server loads it only when embedded).
  const database = await postgresDatabase(t)
  const server = await startServer(t, { DATA_DIR: dataDir, DATABASE_URL: database ?? '' })
  await until200(server, '/health/ready')
  if (database) t.equal((await cli(['demo'], { DATABASE_URL: database, DATA_DIR: dataDir })).code, 0, 'demo data loaded')
  const password = readFileSync(join(dataDir, 'admin-password'), 'utf8').trim()
  const read = async (path: string) => (await (await api(server, path)).json()) as { objects: Array<Record<string, unknown>> }
  const idsByName = async (path: string, field: string) => new Map((await read(path)).objects.map((o) => [o[field] as string, o.id as number]))
  const indicator = await idsByName('/indicator/', 'short_name')
  const campaign = await idsByName('/campaign/', 'name')
  const location = await idsByName('/location/', 'name')
  const march = campaign.get('March 2016 - NID - OPV')!
  const dashboardId = (await idsByName('/dashboard/', 'title')).get('Campaign overview')!
  /** The API's value per location name for one indicator and campaign under a location selection. */
  const apiValues = async (indicatorId: number, campaignId: number, selection: string) => {
    const names = new Map([...location].map(([name, id]) => [id, name]))
    const rows = (await read(`/campaign_datapoint/?indicator__in=${indicatorId}&campaign__in=${campaignId}&${selection}`)).objects
    return Object.fromEntries(rows.map((r) => [names.get(r.location_id as number), (r.value as number).toLocaleString('en')]))
  }
  const tableValues = (rows: string[][], column = 2) => Object.fromEntries(rows.map((r) => [r[0], r[column]]))
  const shots = SHOTS ?? mkdtempSync(join(tmpdir(), 'rhizome-shots-'))
  if (SHOTS) mkdirSync(SHOTS, { recursive: true })
  else t.teardown(() => rmSync(shots, { recursive: true, force: true }))
  const browser = await launch(t)

  await t.test('sign-in: a wrong password says so and opens no session; the right one shows the dashboards', async (t) => {
    const { page, problems, consoleErrors } = await watchedPage(browser)
    const loaded = await page.goto(`${server.url}/app/`)
    t.match(loaded?.headers()['content-security-policy'], /script-src 'self'; style-src 'self'/, 'a CSP without unsafe-inline')
    await page.getByRole('heading', { name: 'Sign in' }).waitFor()
    t.same(consoleErrors, [], 'asking who is signed in before anyone is logs no error (204, not 401)')
    await page.getByLabel('Username').fill('admin')
    await page.getByLabel('Password').fill('not the password')
    await page.getByRole('button', { name: 'Sign in' }).click()
    t.equal(await page.getByRole('alert').textContent(), 'Wrong username or password')
    t.notOk(
      (await page.context().cookies()).some((c) => c.name === 'rhizome_session'),
      'no session',
    )
    t.same(await seriousViolations(page), [], 'axe: the sign-in page')

    await page.getByLabel('Password').fill(password)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByRole('link', { name: 'Campaign overview' }).waitFor()
    t.ok(await page.getByRole('heading', { name: 'Dashboards' }).isVisible(), 'the dashboards list, with the demo dashboard')
    const [cookie] = (await page.context().cookies()).filter((c) => c.name === 'rhizome_session')
    t.match(cookie, { httpOnly: true, sameSite: 'Lax', secure: false })
    t.same(await seriousViolations(page), [], 'axe: the dashboards list')
    await page.reload()
    await page.getByRole('link', { name: 'Campaign overview' }).waitFor()
    t.pass('the session survives a reload')

    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.getByRole('heading', { name: 'Sign in' }).waitFor()
    const withOldCookie = await fetch(`${server.url}/api/v1/campaign/`, { headers: { cookie: `rhizome_session=${cookie.value}` } })
    t.equal(withOldCookie.status, 401, 'the API refuses the cookie after sign-out')
    t.same(problems, [], 'no script error and no CSP violation in the console')
  })

  await t.test('the demo dashboard: every chart drawn within 1 s, the API numbers in its tables, drill-down, the campaign picker, the map', async (t) => {
    const { page, problems } = await watchedPage(browser)
    await signIn(page, server.url, 'admin', password)
    const drawnWithin = async () => {
      await page.goto(`${server.url}/app/#/dashboard/${dashboardId}`)
      await page.reload()
      await page.waitForFunction(() => document.querySelectorAll('figure.chart[data-drawn="true"]').length === 5)
      return page.evaluate(() => Math.max(...performance.getEntriesByType('mark').map((m) => m.startTime)))
    }
    const first = await drawnWithin()
    const again = await drawnWithin()
    t.comment(`five charts drawn ${Math.round(first)} ms after navigation (first load), ${Math.round(again)} ms (reload)`)
    t.ok(again < 1000, `every chart drawn within 1 s of navigation (${Math.round(again)} ms)`)

    for (const type of ['ColumnChart', 'PieChart', 'ChoroplethMap', 'LineChart']) {
      t.ok((await figure(page, type).locator('svg path').count()) > 2, `${type}: an SVG with content`)
    }
    t.equal(await figure(page, 'ChoroplethMap').getAttribute('data-polygons'), '3', 'the map drew the three provinces’ polygons')
    t.match(await figure(page, 'ChoroplethMap').locator('svg').textContent(), /Northmarch.*Eastvale.*Southreach/s, 'their names on the map')

    const missed = indicator.get('Children missed')!
    const byProvince = await apiValues(missed, march, `location_id=${location.get('Veridia')}&location_depth=1`)
    t.same(tableValues(await numbersOf(figure(page, 'ColumnChart'))), byProvince, 'the column chart’s numbers are the API’s')
    t.match(await figure(page, 'ColumnChart').locator('svg').textContent(), new RegExp(Object.values(byProvince).join('.*'), 's'), 'and its labels')
    const districts = await apiValues(missed, march, `location_id=${location.get('Veridia')}&location_depth=2`)
    t.same(tableValues(await numbersOf(figure(page, 'TableChart')), 3), districts, 'the table chart shows the API’s district values')
    t.equal(Object.keys(districts).length, 9)

    await page.screenshot({ path: join(shots, 'dashboard.png'), fullPage: true })
    t.same(await seriousViolations(page), [], 'axe: the dashboard')

    // Drill down from the column chart's numbers into Northmarch: its districts.
    await figure(page, 'ColumnChart').getByRole('button', { name: 'Northmarch' }).click()
    await page.getByRole('navigation', { name: 'Location' }).getByRole('button', { name: 'Northmarch' }).waitFor()
    await page.waitForFunction(() => document.querySelectorAll('figure.chart[data-drawn="true"]').length === 5)
    const northmarch = await apiValues(missed, march, `location_id=${location.get('Northmarch')}&location_depth=1`)
    t.same(Object.keys(northmarch).sort(), ['Ashford', 'Brindle', 'Coldwater'])
    t.same(await settledValues(figure(page, 'ColumnChart'), northmarch), northmarch, 'drilled down: Northmarch’s districts, the API’s values')

    const june = campaign.get('June 2016 - SNID - OPV')!
    await page.getByLabel('Campaign').selectOption(String(june))
    await page.waitForFunction(() => document.querySelectorAll('figure.chart[data-drawn="true"]').length === 5)
    const juneValues = await apiValues(missed, june, `location_id=${location.get('Northmarch')}&location_depth=1`)
    t.notSame(juneValues, northmarch, 'another campaign, other values')
    t.same(await settledValues(figure(page, 'ColumnChart'), juneValues), juneValues, 'the campaign picker: June’s values')
    t.match((await numbersOf(figure(page, 'ColumnChart')))[0][1], 'June 2016 - SNID - OPV')

    await page.setViewportSize({ width: 375, height: 800 })
    await page.getByLabel('Campaign').selectOption('')
    await page.getByRole('navigation', { name: 'Location' }).getByRole('button', { name: "Each chart's locations" }).click()
    await page.waitForFunction(() => document.querySelectorAll('figure.chart[data-drawn="true"]').length === 5)
    t.same(await settledValues(figure(page, 'ColumnChart'), byProvince), byProvince, 'back at the provinces')
    t.ok((await page.evaluate(() => document.documentElement.scrollWidth)) <= 375, 'at 375 px nothing is wider than the screen')
    t.ok((await figure(page, 'ColumnChart').locator('svg').boundingBox())!.width <= 375, 'the charts fit')
    await page.screenshot({ path: join(shots, 'dashboard-375.png'), fullPage: true })
    t.same(await seriousViolations(page), [], 'axe: the dashboard at 375 px')
    t.same(problems, [], 'no script error and no CSP violation')
  })

  await t.test('a new dashboard, a chart built for it, reordered and removed, saved through the API', async (t) => {
    const { page, problems } = await watchedPage(browser)
    await signIn(page, server.url, 'admin', password)
    await page.getByLabel('New dashboard title').fill('Field review')
    await page.getByRole('button', { name: 'Create dashboard' }).click()
    await page.getByRole('heading', { name: 'Edit dashboard' }).waitFor()
    await page.getByLabel('Add a saved chart').selectOption({ label: 'Children vaccinated, share by province' })
    await page.getByRole('button', { name: 'Add chart' }).click()
    await page.getByRole('button', { name: 'Save dashboard' }).click()
    await page.getByRole('heading', { name: 'Field review' }).waitFor()

    await page.getByRole('link', { name: 'Edit dashboard' }).click()
    await page.getByRole('link', { name: 'Build a new chart' }).click()
    await page.getByRole('heading', { name: 'New chart' }).waitFor()
    t.same(await seriousViolations(page), [], 'axe: the chart builder')
    await page.getByLabel('Title').fill('Vaccinated by district, bars')
    await page.getByLabel('Chart type').selectOption('BarChart')
    await checkOnly(page, 'Indicators', 'Children vaccinated')
    await page.getByRole('group', { name: 'Campaigns' }).getByLabel('October 2016 - NID - bOPV').uncheck()
    await page.getByRole('group', { name: 'Campaigns' }).getByLabel('March 2016 - NID - OPV').check()
    await page.getByRole('combobox', { name: /^Location/ }).selectOption({ label: 'Northmarch' })
    await page.getByRole('combobox', { name: /^Depth/ }).selectOption('1')
    const preview = page.getByRole('region', { name: 'Preview' }).locator('figure.chart[data-drawn="true"]')
    await preview.waitFor()
    const vaccinated = await apiValues(indicator.get('Children vaccinated')!, march, `location_id=${location.get('Northmarch')}&location_depth=1`)
    t.same(await settledValues(preview, vaccinated), vaccinated, 'the preview draws the API’s values')
    await page.getByRole('button', { name: 'Save chart' }).click()
    await page.getByRole('heading', { name: 'Field review' }).waitFor()
    await page.waitForFunction(() => document.querySelectorAll('figure.chart[data-drawn="true"]').length === 2)
    t.same(tableValues(await numbersOf(figure(page, 'BarChart'))), vaccinated, 'the new chart on the dashboard')

    const saved = (await read('/custom_chart/?title=Vaccinated by district, bars')).objects[0]
    t.match(saved.chart_json, {
      type: 'BarChart',
      indicator_ids: [indicator.get('Children vaccinated')],
      campaign_ids: [march],
      location_ids: [location.get('Northmarch')],
      location_depth: 1,
      groupBy: 'indicator',
    })
    const boardId = (await idsByName('/dashboard/', 'title')).get('Field review')!
    const uuids = async () =>
      ((await (await api(server, `/dashboard/${boardId}/`)).json()).rows as Array<{ charts: Array<{ uuid: string }> }>).flatMap((r) =>
        r.charts.map((c) => c.uuid),
      )
    t.same(await uuids(), ['demo-vaccinated-share', saved.uuid], 'saved in the order added')

    await page.getByRole('link', { name: 'Edit dashboard' }).click()
    await page.getByRole('button', { name: 'Move Vaccinated by district, bars up' }).click()
    await page.getByRole('button', { name: 'Save dashboard' }).click()
    await page.getByRole('heading', { name: 'Field review' }).waitFor()
    t.same(await uuids(), [saved.uuid, 'demo-vaccinated-share'], 'reordered')
    await page.getByRole('link', { name: 'Edit dashboard' }).click()
    t.same(await seriousViolations(page), [], 'axe: the dashboard editor')
    await page.getByRole('button', { name: 'Remove Children vaccinated, share by province' }).click()
    await page.getByRole('button', { name: 'Save dashboard' }).click()
    await page.getByRole('heading', { name: 'Field review' }).waitFor()
    t.same(await uuids(), [saved.uuid], 'removed')
    t.same(problems, [])
  })

  await t.test('the data browser shows the API’s values, and its CSV download is the API’s CSV', async (t) => {
    const { page, problems } = await watchedPage(browser)
    await signIn(page, server.url, 'admin', password)
    await page.getByRole('link', { name: 'Data' }).click()
    await checkOnly(page, 'Indicators', 'Children missed')
    await page.getByRole('group', { name: 'Campaigns' }).getByLabel('October 2016 - NID - bOPV').uncheck()
    await page.getByRole('group', { name: 'Campaigns' }).getByLabel('March 2016 - NID - OPV').check()
    await page.getByRole('combobox', { name: /^Depth/ }).selectOption('2')
    await page.getByText('Values 1–9 of 9').waitFor()
    await page.waitForFunction(() => document.querySelector('section[aria-label="Values"] tbody td')?.textContent === 'Ashford')
    const rows = await page.locator('section[aria-label="Values"] tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent)))
    const districts = await apiValues(indicator.get('Children missed')!, march, `location_id=${location.get('Veridia')}&location_depth=2`)
    t.same(Object.fromEntries(rows.map((r) => [r[0], r[3]])), districts, 'a known demo value per district, as the API has it')
    t.match(rows[0], ['Ashford', 'March 2016 - NID - OPV', 'Children missed', districts.Ashford])

    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download CSV' }).click()])
    const downloaded = readFileSync((await download.path())!, 'utf8')
    const fromApi = await (
      await api(
        server,
        `/campaign_datapoint/?format=csv&campaign__in=${march}&location_depth=2&location_id=${location.get('Veridia')}&indicator__in=${indicator.get('Children missed')}&limit=0`,
      )
    ).text()
    t.equal(downloaded, fromApi, 'the download is byte for byte the API’s CSV of the selection')
    t.equal(downloaded.trim().split('\n').length, 10, 'a header and the nine districts')
    t.same(await seriousViolations(page), [], 'axe: the data browser')

    // Dates instead of campaigns: the monthly polio cases of the whole country, as the API sums them.
    await page.getByRole('combobox', { name: /^Values over/ }).selectOption('dates')
    await checkOnly(page, 'Indicators', 'Polio cases')
    await page.getByRole('combobox', { name: /^Depth/ }).selectOption('0')
    await page.getByRole('combobox', { name: /^Group by time/ }).selectOption('month')
    await page.getByText('Values 1–12 of 12').waitFor()
    const monthly = (await read(`/date_datapoint/?indicator__in=${indicator.get('Polio cases')}&group_by_time=month&location_id=${location.get('Veridia')}`))
      .objects
    const shown = await page.locator('section[aria-label="Values"] tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent)))
    t.same(
      shown.map((r) => [r[0], r[1], r[3]]),
      monthly.map((m) => ['Veridia', m.time_grouping, String(m.value)]),
      'twelve months of cases, as the API groups them',
    )
    t.same(problems, [])
  })

  await t.test('an upload: progress to 100 %, the summary, its code mapped here, the new values in a chart', async (t) => {
    const { page, problems } = await watchedPage(browser)
    await signIn(page, server.url, 'admin', password)
    await page.getByRole('link', { name: 'Upload' }).click()
    const codes = ['VD11', 'VD12', 'VD13', 'VD21', 'VD22', 'VD23', 'VD31', 'VD32', 'VD33']
    const file = campaignFile(dataDir, 'field-counts.csv', 'Missed (field count)', Object.fromEntries(codes.map((code, i) => [code, 200 + i])))
    await page.getByLabel('File (CSV or XLSX)').setInputFiles(file)
    await page.getByLabel('Document type').selectOption('campaign')
    await page.getByRole('button', { name: 'Upload' }).click()
    await page.getByRole('heading', { name: 'Codes to map' }).waitFor()
    t.equal(await page.locator('.percent').textContent(), '100 %', 'the transform’s progress reached 100 %')
    t.equal(await page.locator('progress').getAttribute('value'), '100')
    t.equal(await page.getByRole('heading', { name: 'Summary' }).isVisible(), true, 'the summary')
    t.same(await seriousViolations(page), [], 'axe: the upload page with its summary and mapping')

    await page.getByLabel('indicator “Missed (field count)”').selectOption({ label: 'Children missed' })
    await page.getByRole('button', { name: 'Apply mappings' }).click()
    await page.getByText('Applying mappings').waitFor()
    await page.locator('.summary dd').first().waitFor()
    await page.waitForFunction(
      () => document.querySelector('.percent')?.textContent === '100 %' && document.querySelector('progress')?.getAttribute('value') === '100',
    )
    const summary = Object.fromEntries(
      await page.locator('.summary dl div').evaluateAll((items) => items.map((i) => [i.querySelector('dt')!.textContent, i.querySelector('dd')!.textContent])),
    )
    t.match(summary, { 'Rows processed': '9', 'Values updated': '9', 'Campaigns recomputed': '1' }, 'the ingest summary')
    t.match(await page.getByRole('region', { name: 'Jobs' }).textContent(), /refresh_master.*completed/s, 'the jobs list shows the step')
    await page.screenshot({ path: join(shots, 'upload.png'), fullPage: true })

    await page.goto(`${server.url}/app/#/dashboard/${dashboardId}`)
    await page.waitForFunction(() => document.querySelectorAll('figure.chart[data-drawn="true"]').length === 5)
    const sums = {
      Northmarch: (200 + 201 + 202).toLocaleString('en'),
      Eastvale: (203 + 204 + 205).toLocaleString('en'),
      Southreach: (206 + 207 + 208).toLocaleString('en'),
    }
    t.same(await settledValues(figure(page, 'ColumnChart'), sums), sums, 'the uploaded values, summed by province, in the chart')
    t.same(problems, [])
  })

  await t.test('administration, then a restricted user sees only her province and her upload writes nothing outside it', async (t) => {
    const { page, problems } = await watchedPage(browser)
    await signIn(page, server.url, 'admin', password)
    await page.getByRole('link', { name: 'Administration' }).click()
    await page.getByLabel('New username').fill('fieldworker')
    await page.getByLabel('Initial password').fill('north-march-2016')
    await page.getByRole('button', { name: 'Create user' }).click()
    await page.getByRole('status').getByText('User created').waitFor()
    await page.getByLabel('Location responsibility of fieldworker').selectOption({ label: 'Northmarch' })
    await page.getByRole('button', { name: 'Save responsibility of fieldworker' }).click()
    await page.getByRole('status').getByText('Responsibility saved for fieldworker').waitFor()
    const fieldworker = (await idsByName('/user/', 'username')).get('fieldworker')!
    t.match((await read(`/location_responsibility/?user_id=${fieldworker}`)).objects, [{ top_lvl_location_id: location.get('Northmarch') }])
    await page.getByLabel('Key for').selectOption({ label: 'fieldworker' })
    await page.getByRole('button', { name: 'Create key' }).click()
    const key = (await page.locator('code.new-key').textContent())!
    const keyWorks = async () => (await fetch(`${server.url}/api/v1/session/`, { headers: { authorization: `ApiKey ${key}` } })).status
    t.equal(await keyWorks(), 200, 'the key shown once works')
    const keyId = (await read(`/api_key/?user_id=${fieldworker}`)).objects[0].id
    await page.getByRole('button', { name: `Revoke key ${keyId}` }).click()
    await page.getByRole('status').getByText(`Key ${keyId} revoked`).waitFor()
    t.equal(await keyWorks(), 401, 'revoked')
    t.same(await seriousViolations(page), [], 'axe: administration')
    await page.getByRole('button', { name: 'Sign out' }).click()

    await signIn(page, server.url, 'fieldworker', 'north-march-2016')
    t.notOk(await page.getByRole('link', { name: 'Administration' }).count(), 'no administration for her')
    await page.goto(`${server.url}/app/#/dashboard/${dashboardId}`)
    await page.waitForFunction(() => document.querySelectorAll('figure.chart[data-drawn="true"]').length === 5)
    t.same(Object.keys(tableValues(await numbersOf(figure(page, 'ColumnChart')))), ['Northmarch'], 'the column chart: her province only')
    t.same(Object.keys(tableValues(await numbersOf(figure(page, 'TableChart')))).sort(), ['Ashford', 'Brindle', 'Coldwater'], 'the table: her districts only')
    t.equal(await figure(page, 'ChoroplethMap').getAttribute('data-polygons'), '1', 'the map: her province’s polygon only')
    await page.getByRole('link', { name: 'Data' }).click()
    await page.getByRole('heading', { name: 'Data' }).waitFor()
    t.same(
      (
        await page
          .getByRole('combobox', { name: /^Location/ })
          .locator('option')
          .allTextContents()
      ).map((s) => s.trim()),
      ['Northmarch', 'Ashford', 'Brindle', 'Coldwater'],
      'the data browser offers her locations only',
    )

    await page.getByRole('link', { name: 'Upload' }).click()
    const file = campaignFile(dataDir, 'her-counts.csv', 'Missed (field count)', { VD11: 500, VD21: 600 })
    await page.getByLabel('File (CSV or XLSX)').setInputFiles(file)
    await page.getByRole('button', { name: 'Upload' }).click()
    await page.getByRole('heading', { name: 'Summary' }).waitFor()
    const summary = Object.fromEntries(
      await page.locator('.summary dl div').evaluateAll((items) => items.map((i) => [i.querySelector('dt')!.textContent, i.querySelector('dd')!.textContent])),
    )
    t.match(summary, { 'Rows processed': '1', 'Rows outside your locations': '1', 'Values updated': '1' }, 'one row hers, one refused')
    const after = await apiValues(indicator.get('Children missed')!, march, `location_id__in=${location.get('Ashford')},${location.get('Dunmore')}`)
    t.same(after, { Ashford: '500', Dunmore: '203' }, 'Ashford written; Dunmore, outside her province, as it was')
    t.same(problems, [])
  })

  await t.test('cross-site: a form POST with the cookie and a link to a pipeline step are refused', async (t) => {
    const { page } = await watchedPage(browser)
    await signIn(page, server.url, 'admin', password)
    const attacker = createServer((_request, response) => {
      response.setHeader('content-type', 'text/html')
      response.end(`<form method="post" action="${server.url}/api/v1/dashboard/"><input name="title" value="Forged"><button>Post</button></form>
        <a href="${server.url}/api/v1/agg_refresh/?campaign_id=${march}">Run</a>`)
    })
    await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve))
    t.teardown(() => attacker.close())
    // localhost and 127.0.0.1 are different sites to the browser.
    await page.goto(`http://localhost:${(attacker.address() as AddressInfo).port}/`)
    const [posted] = await Promise.all([page.waitForResponse(`${server.url}/api/v1/dashboard/`), page.getByRole('button', { name: 'Post' }).click()])
    t.ok([401, 403].includes(posted.status()), `the forged POST refused (${posted.status()})`)
    t.equal((await read('/dashboard/?title=Forged')).objects.length, 0, 'nothing written')
    await page.goto(`http://localhost:${(attacker.address() as AddressInfo).port}/`)
    const [ran] = await Promise.all([page.waitForResponse((r) => r.url().includes('/agg_refresh/')), page.getByRole('link', { name: 'Run' }).click()])
    t.equal(ran.status(), 403, 'a cross-site link to a pipeline step, cookie sent (Lax), refused')
    t.match(await ran.json(), { code: 'CROSS_SITE_REFUSED' })
  })
})
