// The data browser in Chromium against the real server (either engine): the API's values in its
// table, a CSV download with names beside the ids and named as its link says, dates and campaigns
// holding different indicators, an empty selection said in words, axe at 1280 and 375 px.
import { readFileSync } from 'node:fs'
import t from 'tap'
import { checkOnly, noChromium, signIn, violationsAtBothWidths, watchedPage, webApp } from './browser.js'
import { api } from './processes.js'

t.test('the data browser in Chromium', { skip: noChromium }, async (t) => {
  const { server, password, browser, read, indicator, location, march, apiValues } = await webApp(t)
  const { page, problems, consoleErrors } = await watchedPage(browser)
  await signIn(page, server.url, 'admin', password)
  await page.getByRole('link', { name: 'Data' }).click()
  await checkOnly(page, 'Indicators', 'Children missed')
  await checkOnly(page, 'Campaigns', 'March 2016 - NID - OPV')
  await page.getByRole('combobox', { name: /^Depth/ }).selectOption('2')
  await page.getByText('Values 1–9 of 9').waitFor()
  await page.waitForFunction(() => document.querySelector('section[aria-label="Values"] tbody td')?.textContent === 'Ashford')
  const rows = await page.locator('section[aria-label="Values"] tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent)))
  const districts = await apiValues(indicator.get('Children missed')!, march, `location_id=${location.get('Veridia')}&location_depth=2`)
  t.same(Object.fromEntries(rows.map((r) => [r[0], r[3]])), districts, 'a known demo value per district, as the API has it')
  t.match(rows[0], ['Ashford', 'March 2016 - NID - OPV', 'Children missed', districts.Ashford])

  const link = page.getByRole('link', { name: /^Download .*\.csv$/ })
  const [download] = await Promise.all([page.waitForEvent('download'), link.click()])
  t.equal(
    download.suggestedFilename(),
    (await link.textContent())!.replace('Download ', ''),
    `saved under the name its link says (${download.suggestedFilename()})`,
  )
  const downloaded = readFileSync((await download.path())!, 'utf8')
  const [header, ...lines] = downloaded.trim().split('\r\n')
  t.equal(header, 'location_id,location,campaign_id,campaign,Children missed', 'names beside the ids: location, campaign, and the indicator as its column')
  t.equal(lines.length, 9, 'the nine districts')
  t.match(
    lines.find((l) => l.includes(',Ashford,')),
    new RegExp(`^${location.get('Ashford')},Ashford,${march},March 2016 - NID - OPV,${districts.Ashford}$`),
  )
  const fromApi = await (
    await api(
      server,
      `/campaign_datapoint/?indicator__in=${indicator.get('Children missed')}&campaign__in=${march}&location_id=${location.get('Veridia')}&location_depth=2&format=csv&shape=wide`,
    )
  ).text()
  t.equal(downloaded, fromApi, 'byte for byte the API’s wide CSV of the selection')
  t.same(await violationsAtBothWidths(page), [], 'axe: the data browser at 1280 and 375 px')

  // Dates hold other indicators than campaigns: switching picks one that has dated values.
  await page.getByRole('combobox', { name: /^Values over/ }).selectOption('dates')
  const ticked = await page
    .getByRole('group', { name: 'Indicators' })
    .getByRole('checkbox', { checked: true })
    .evaluateAll((boxes) => boxes.map((b) => b.parentElement?.textContent?.trim()))
  t.same(ticked, ['Polio cases'], 'switching to dates ticks a dated indicator instead of the campaign one')
  await page.getByRole('combobox', { name: /^Depth/ }).selectOption('0')
  await page.getByRole('combobox', { name: /^Group by time/ }).selectOption('quarter')
  await page.getByText('Values 1–4 of 4').waitFor()
  const quarters = (await read(`/date_datapoint/?indicator__in=${indicator.get('Polio cases')}&group_by_time=quarter&location_id=${location.get('Veridia')}`))
    .objects
  const shown = await page.locator('section[aria-label="Values"] tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent)))
  t.same(
    shown.map((r) => [r[0], r[1], r[3]]),
    quarters.map((q) => ['Veridia', `${String(q.time_grouping).slice(0, 4)} Q${String(q.time_grouping).slice(4)}`, String(q.value)]),
    'four quarters of cases as the API sums them, written "2016 Q1"',
  )
  t.equal(shown[0][1], '2016 Q1')
  // A campaign indicator read over dates has no values: the page says why.
  await page.getByRole('group', { name: 'Indicators' }).getByLabel('Children missed', { exact: true }).check()
  await page.getByRole('group', { name: 'Indicators' }).getByLabel('Polio cases', { exact: true }).uncheck()
  await page.getByText('No values').waitFor()
  await page.getByText('Some of the indicators chosen hold campaign values: read them over campaigns.').waitFor()
  t.pass('no values, and why')
  await page.getByRole('group', { name: 'Indicators' }).getByLabel('Children missed', { exact: true }).uncheck()
  await page.getByText('Choose at least one indicator.').waitFor()
  t.same(consoleErrors, [], 'no request refused on the way')
  t.same(problems, [])
})
