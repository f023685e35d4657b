// Share and export in Chromium against the real server (either engine): the dashboard's Export saves a
// PDF; its owner makes a read-only link, which a fresh browser without any cookie opens and draws with
// the API's numbers (axe clean at 1280 and 375 px); a revoked link says so at once.
import { readFileSync } from 'node:fs'
import t from 'tap'
import { chartsDrawn, figure, noChromium, numbersOf, signIn, tableValues, violationsAtBothWidths, watchedPage, webApp } from './browser.js'

t.test('export and share a dashboard in Chromium', { skip: noChromium }, async (t) => {
  const app = await webApp(t)
  const { server, password, browser, indicator, location, march, apiValues } = app
  const dashboardId = app.dashboard.get('Campaign overview')!
  const byProvince = await apiValues(indicator.get('Children missed')!, march, `location_id=${location.get('Veridia')}&location_depth=1`)

  const { page, problems } = await watchedPage(browser)
  await signIn(page, server.url, 'admin', password)
  await page.goto(`${server.url}/app/#/dashboard/${dashboardId}`)
  await chartsDrawn(page, 5)

  // Export: the dashboard's PDF, saved by the browser.
  await page.getByText('Export', { exact: true }).first().click()
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'PDF' }).first().click()])
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
    /^\/api\/v1\/export_file\/\?chart_id=\d+&type=svg$/,
    "a chart's own export",
  )
  t.ok(await chartExport.getByRole('link', { name: 'CSV with names' }).count(), 'and its CSV with names')

  // Share: a link for the whole dashboard, shown once.
  await page.getByText('Share', { exact: true }).click()
  await page.getByRole('button', { name: 'Create a link for the whole dashboard' }).click()
  const url = await page.locator('.share-url').inputValue()
  t.match(url, new RegExp(`^${server.url}/app/#/shared/[\\w-]{43}$`))
  await page
    .getByRole('list', { name: 'Links to this dashboard' })
    .getByRole('button', { name: /^Revoke/ })
    .waitFor()

  // A fresh browser: no cookie, no session.
  const stranger = await watchedPage(browser)
  await stranger.page.goto(url)
  await chartsDrawn(stranger.page, 5)
  t.equal(await stranger.page.locator('h1').textContent(), 'Campaign overview')
  t.same(await stranger.page.context().cookies(), [], 'no cookie at all')
  t.same(tableValues(await numbersOf(figure(stranger.page, 'ColumnChart'))), byProvince, 'the column chart with the API’s numbers')
  t.equal(await figure(stranger.page, 'ChoroplethMap').getAttribute('data-polygons'), '3', 'the map drew its shapes')
  t.match(
    await stranger.page.locator('details.export a', { hasText: 'PDF' }).first().getAttribute('href'),
    /^\/api\/v1\/shared\/[\w-]{43}\/export_file\/\?type=pdf$/,
  )
  t.same(await violationsAtBothWidths(stranger.page), [], 'axe: no violation at 1280 and 375 px')
  // A drill-down works through the link as well.
  await figure(stranger.page, 'ColumnChart').locator('details.numbers').getByRole('button', { name: 'Eastvale' }).click()
  await stranger.page.waitForURL(/location=/)
  await figure(stranger.page, 'ColumnChart').locator('tbody th', { hasText: 'Dunmore' }).waitFor({ state: 'attached', timeout: 5000 })
  t.ok(Object.keys(tableValues(await numbersOf(figure(stranger.page, 'ColumnChart')))).includes('Dunmore'), "Eastvale's districts")
  t.same(stranger.problems, [], 'no script error and no CSP refusal')

  // Revoked by its owner: the link says so at once.
  await page
    .getByRole('list', { name: 'Links to this dashboard' })
    .getByRole('button', { name: /^Revoke/ })
    .click()
  await page.getByRole('list', { name: 'Links to this dashboard' }).waitFor({ state: 'detached' })
  await stranger.page.reload()
  await stranger.page.getByRole('alert').waitFor()
  t.match(await stranger.page.getByRole('alert').textContent(), /does not exist, has expired or was revoked/)
  t.same(problems, [], 'no script error and no CSP refusal')
})
