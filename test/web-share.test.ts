// Share, export and filters in Chromium against the real server (either engine): the dashboard's
// Export saves a PDF; a date range narrows the line chart and its export; its owner makes a read-only link, which a fresh browser without any cookie opens and draws with
// the API's numbers (axe clean at 1280 and 375 px); a revoked link says so at once.
import { readFileSync } from 'node:fs'
import t from 'tap'
import { chartsDrawn, figure, noChromium, numbersOf, pickLocation, signIn, tableValues, violationsAtBothWidths, watchedPage, webApp } from './browser.js'

/** Waits (5 s at most) until `probe` gives `expected`. */
async function expectEventually<T>(probe: () => Promise<T>, expected: T) {
  for (const started = Date.now(); Date.now() - started < 5000; await new Promise((resolve) => setTimeout(resolve, 50))) {
    if (JSON.stringify(await probe()) === JSON.stringify(expected)) return
  }
}

t.test('export and share a dashboard in Chromium', { skip: noChromium }, async (t) => {
  const app = await webApp(t)
  const { server, password, browser, indicator, location, march, apiValues } = app
  const dashboardId = app.dashboard.get('Campaign overview')!
  const byProvince = await apiValues(indicator.get('Children missed')!, march, `location_id=${location.get('Veridia')}&location_depth=1`)

  const { page, problems } = await watchedPage(browser)
  await signIn(page, server.url, 'admin', password)
  await page.goto(`${server.url}/app/#/dashboard/${dashboardId}?campaign=${march}`)
  await chartsDrawn(page, 5)

  // Export: the dashboard's PDF, saved by the browser. Drawing it takes seconds (held here until the
  // page is looked at): meanwhile its link says it is being prepared.
  await page.getByText('Export', { exact: true }).first().click()
  let release = () => {}
  const held = new Promise<void>((resolve) => {
    release = resolve
  })
  await page.route('**/api/v1/export_file/**', async (route) => {
    await held
    await route.continue()
  })
  const downloading = page.waitForEvent('download', { timeout: 90_000 })
  await page.getByRole('link', { name: 'PDF, A4' }).first().click()
  const busy = page.locator('.title-bar details.export a[aria-busy="true"]')
  await busy.waitFor({ timeout: 5000 }).catch(() => {})
  t.equal((await busy.count()) ? await busy.textContent() : null, 'Preparing the PDF…', 'while the PDF is drawn, its link says so (aria-busy)')
  release()
  const download = await downloading
  await page.unroute('**/api/v1/export_file/**')
  await busy.waitFor({ state: 'detached' })
  t.equal(await page.locator('.title-bar details.export a').first().textContent(), 'PDF, A4', 'downloaded: the link as it was')
  t.equal(download.suggestedFilename(), 'Campaign overview.pdf')
  t.equal(
    readFileSync((await download.path())!)
      .subarray(0, 5)
      .toString(),
    '%PDF-',
    'a PDF',
  )
  const chartExport = figure(page, 'ColumnChart').locator('details.export')
  await chartExport.locator('summary').click()
  t.match(
    await chartExport.getByRole('link', { name: 'SVG' }).getAttribute('href'),
    new RegExp(`^/api/v1/export_file/\\?chart_id=\\d+&type=svg&campaign=${march}$`),
    "a chart's own export",
  )
  t.ok(await chartExport.getByRole('link', { name: 'CSV with names' }).count(), 'and its CSV with names')

  // Filters: a date range narrows the line chart's months, in the page and in its export; a picked
  // location is a drill-down; both kept in the address.
  await page.getByLabel('From', { exact: true }).fill('2016-03-01')
  await page.getByLabel('To', { exact: true }).fill('2016-05-31')
  await page.waitForURL(/start_date=2016-03-01&end_date=2016-05-31/)
  const line = figure(page, 'LineChart')
  await line
    .locator('tbody th', { hasText: 'Ashford' })
    .or(line.locator('tbody td', { hasText: 'May 2016' }))
    .first()
    .waitFor({ state: 'attached' })
  const periods = async () => (await numbersOf(line)).map((row) => row[1])
  await expectEventually(periods, ['Mar 2016', 'Apr 2016', 'May 2016'])
  t.same(await periods(), ['Mar 2016', 'Apr 2016', 'May 2016'], "the line chart's months: March to May")
  t.match(
    await page.locator('.title-bar details.export a', { hasText: 'PDF, A4' }).getAttribute('href'),
    /start_date=2016-03-01&end_date=2016-05-31/,
    'and its export',
  )
  await pickLocation(page, 'Location', 'Eastvale')
  await page.waitForURL(new RegExp(`location=${location.get('Eastvale')}`))
  await expectEventually(async () => Object.keys(tableValues(await numbersOf(figure(page, 'ColumnChart')))), ['Dunmore', 'Eastwick', 'Fallow'])
  t.same(Object.keys(tableValues(await numbersOf(figure(page, 'ColumnChart')))), ['Dunmore', 'Eastwick', 'Fallow'], "a picked location: Eastvale's districts")
  t.match(page.url(), /start_date=2016-03-01/, 'the dates kept')
  await page.goto(`${server.url}/app/#/dashboard/${dashboardId}?campaign=${march}`)
  await chartsDrawn(page, 5)

  // Share: a link for the whole dashboard, asked for a label first, shown once.
  await page.getByText('Share this dashboard', { exact: true }).click()
  await page.getByRole('button', { name: 'Create a link for the whole dashboard' }).click()
  t.match(await page.locator('.share-panel [role="alert"]').textContent(), /Give the link a label/, 'no link without a label')
  await page.getByLabel('Label (who or what it is for)').fill('Ministry review')
  await page.getByRole('button', { name: 'Create a link for the whole dashboard' }).click()
  const url = await page.locator('.share-url').inputValue()
  t.match(url, new RegExp(`^${server.url}/app/#/shared/[\\w-]{43}\\?campaign=${march}$`), 'the link opens at the view it was made from')
  t.equal(
    await page.locator('.share-made').textContent(),
    `The link “Ministry review”, its address ending …${url.replace(/\?.*$/, '').slice(-4)}, as the list below names it.`,
    'the box says which link it holds, by its label and the end the list shows',
  )
  // A second link of the same view: the two read apart by their labels and the ends of their addresses.
  await page.getByLabel('Label (who or what it is for)').fill('Partner NGO')
  await page.getByRole('button', { name: 'Create a link for the whole dashboard' }).click()
  const links = page.getByRole('list', { name: 'Links to this dashboard' }).getByRole('listitem')
  await links.nth(1).waitFor()
  const ministry = links.filter({ hasText: 'Ministry review' })
  t.match(await ministry.textContent(), new RegExp(`^Ministry review · …${url.replace(/\?.*$/, '').slice(-4)} · Made `), 'its label, then how its address ends')
  // Revoking asks which one, by its label and address: dismissed, nothing is revoked.
  const asked: string[] = []
  page.once('dialog', (dialog) => {
    asked.push(dialog.message())
    void dialog.dismiss()
  })
  await links
    .filter({ hasText: 'Partner NGO' })
    .getByRole('button', { name: /^Revoke/ })
    .click()
  t.match(asked[0] ?? '', /^Revoke the link “Partner NGO” \(address ending …[\w-]{4}\)\?/, 'the question names the link')
  t.equal(await links.count(), 2, 'dismissed: both links stay')
  page.once('dialog', (dialog) => void dialog.accept())
  await links
    .filter({ hasText: 'Partner NGO' })
    .getByRole('button', { name: /^Revoke/ })
    .click()
  await expectEventually(() => links.count(), 1)
  t.match(await links.first().textContent(), /^Ministry review/, 'the one asked for is revoked, the other kept')
  t.equal(await page.locator('.share-url').count(), 0, 'the address just made, revoked: no longer offered to copy')
  // A drill-down since: the address just made (for the whole dashboard) is no longer offered, and Create follows the view.
  await page.getByLabel('Label (who or what it is for)').fill('Field team')
  await page.getByRole('button', { name: 'Create a link for the whole dashboard' }).click()
  await page.locator('.share-url').waitFor()
  const columnNumbers = figure(page, 'ColumnChart').locator('details.numbers')
  if (!(await columnNumbers.evaluate((details: HTMLDetailsElement) => details.open))) await columnNumbers.locator('summary').click()
  await columnNumbers.getByRole('button', { name: 'Northmarch' }).click()
  await page.getByRole('button', { name: 'Create a link for Northmarch' }).waitFor()
  t.equal(await page.locator('.share-url').count(), 0, 'after a drill-down: the link made for the view left is no longer offered')

  // A fresh browser: no cookie, no session.
  const stranger = await watchedPage(browser)
  await stranger.page.goto(url)
  await chartsDrawn(stranger.page, 5)
  t.equal(await stranger.page.locator('h1').textContent(), 'Campaign overview')
  t.same(await stranger.page.context().cookies(), [], 'no cookie at all')
  t.same(tableValues(await numbersOf(figure(stranger.page, 'ColumnChart'))), byProvince, 'the column chart with the API’s numbers')
  t.equal(await figure(stranger.page, 'ChoroplethMap').getAttribute('data-polygons'), '3', 'the map drew its shapes')
  t.match(
    await stranger.page.locator('details.export a', { hasText: 'PDF, A4' }).first().getAttribute('href'),
    new RegExp(`^/api/v1/shared/[\\w-]{43}/export_file/\\?type=pdf&campaign=${march}$`),
  )
  // Every file the page offers comes through the link: the API's own routes would ask the stranger to sign in.
  const offered = await stranger.page.locator('#content a[href^="/api/"]').evaluateAll((links) => links.map((a) => a.getAttribute('href')!))
  t.ok(offered.length > 0, 'files offered')
  t.same(
    offered.filter((href) => !href.startsWith('/api/v1/shared/')),
    [],
    'each through the link (no "CSV of every row" from the API itself)',
  )
  t.same(await violationsAtBothWidths(stranger.page), [], 'axe: no violation at 1280 and 375 px')
  // A drill-down works through the link as well.
  await figure(stranger.page, 'ColumnChart').locator('details.numbers').getByRole('button', { name: 'Eastvale' }).click()
  await stranger.page.waitForURL(/location=/)
  await figure(stranger.page, 'ColumnChart').locator('tbody th', { hasText: 'Dunmore' }).waitFor({ state: 'attached', timeout: 5000 })
  t.ok(Object.keys(tableValues(await numbersOf(figure(stranger.page, 'ColumnChart')))).includes('Dunmore'), "Eastvale's districts")
  t.same(stranger.problems, [], 'no script error and no CSP refusal')

  // Revoked by its owner: the link says so at once.
  page.once('dialog', (dialog) => void dialog.accept())
  await links
    .filter({ hasText: 'Ministry review' })
    .getByRole('button', { name: /^Revoke/ })
    .click()
  await links.filter({ hasText: 'Ministry review' }).waitFor({ state: 'detached' })
  await stranger.page.reload()
  await stranger.page.getByRole('alert').waitFor()
  t.match(await stranger.page.getByRole('alert').textContent(), /does not exist, has expired or was revoked/)
  t.same(problems, [], 'no script error and no CSP refusal')

  // A link that ends on a day ends at the end of that day where its maker is (Bogotá: UTC−5).
  const west = await watchedPage(browser, undefined, 'America/Bogota')
  await signIn(west.page, server.url, 'admin', password)
  await west.page.goto(`${server.url}/app/#/dashboard/${dashboardId}`)
  await west.page.getByText('Share this dashboard', { exact: true }).click()
  await west.page.getByLabel('Label (who or what it is for)').fill('Until mid-January')
  await west.page.getByLabel('Ends on (optional)').fill('2027-01-15')
  await west.page.getByRole('button', { name: 'Create a link for the whole dashboard' }).click()
  const listed = west.page.getByRole('list', { name: 'Links to this dashboard' }).getByRole('listitem')
  const untilMidJanuary = listed.filter({ hasText: 'Until mid-January' })
  await untilMidJanuary.waitFor()
  t.match(await untilMidJanuary.textContent(), /· ends Jan 15, 2027, 11:59 PM GMT-5 Revoke$/, 'it ends at 11:59 PM where she is, words and button apart')
  const kept = (await app.read(`/dashboard_share/?dashboard_id=${dashboardId}`)).objects.find((link) => link.expires_at)!
  t.match(String(kept.expires_at), /^2027-01-16T04:59:59(\.0+)?$/, `kept in UTC: the next day at 04:59:59 (${kept.expires_at})`)
  t.same(west.problems, [], 'no script error and no CSP refusal')
})
