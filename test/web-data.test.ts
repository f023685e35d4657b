// The data browser in Chromium against the real server (either engine): the API's values in its
// table, a line per location and campaign with every indicator chosen, sorted by a column, a CSV
// download with names beside the ids, named after what it holds, its percents and yes/no as people
// read them, a followed-up value marked with its comment, dates and campaigns holding different indicators, an empty selection said in words, the
// selection folded on a phone and a wide table's scroll cue, axe at 1280 and 375 px.
import { readFileSync } from 'node:fs'
import t from 'tap'
import { axeViolations, checkOnly, noChromium, signIn, violationsAtBothWidths, watchedPage, webApp } from './browser.js'
import { api } from './processes.js'

t.test('the data browser in Chromium', { skip: noChromium }, async (t) => {
  const { server, password, browser, read, indicator, location, march, apiValues, dashboard } = await webApp(t)
  // Ashford's missed children of March are followed up: the table marks that value.
  const [ashfordMissed] = (
    await read(`/campaign_datapoint/?indicator__in=${indicator.get('Children missed')}&campaign__in=${march}&location_id__in=${location.get('Ashford')}`)
  ).objects
  const followUp = await api(server, '/datapoint_followup/', {
    method: 'POST',
    body: JSON.stringify({ datapoint_id: ashfordMissed.id, comment: 'Check the tally sheet.' }),
  })
  t.equal(followUp.status, 201, 'a value followed up')
  const { page, problems, consoleErrors } = await watchedPage(browser)
  await signIn(page, server.url, 'admin', password)
  await page.getByRole('link', { name: 'Data', exact: true }).click()
  await checkOnly(page, 'Indicators', 'Children missed')
  await checkOnly(page, 'Campaigns', 'March 2016 - NID - OPV')
  // Before any click, the rows are in the order of their names (the provinces' ids are not).
  await page.getByRole('combobox', { name: /^Depth/ }).selectOption('1')
  await page.getByText('Rows 1–3 of 3').waitFor()
  const places = () => page.locator('section[aria-label="Values"] tbody th').allTextContents()
  t.same(await places(), ['Eastvale', 'Northmarch', 'Southreach'], 'the provinces by name')
  t.equal(await page.getByRole('columnheader', { name: 'Location' }).getAttribute('aria-sort'), 'ascending', 'and the header says so')
  await page.getByRole('combobox', { name: /^Depth/ }).selectOption('2')
  await page.getByText('Rows 1–9 of 9').waitFor()
  await page.waitForFunction(() => document.querySelector('section[aria-label="Values"] tbody th')?.textContent === 'Ashford')
  // Each cell's own text, without a flag's mark and words.
  const tableRows = () =>
    page.locator('section[aria-label="Values"] tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.children].map((c) => c.childNodes[0]?.textContent ?? '')))
  const rows = await tableRows()
  const districts = await apiValues(indicator.get('Children missed')!, march, `location_id=${location.get('Veridia')}&location_depth=2`)
  t.same(Object.fromEntries(rows.map((r) => [r[0], r[2]])), districts, 'a known demo value per district, as the API has it')
  t.match(rows[0], ['Ashford', 'March 2016 - NID - OPV', districts.Ashford])
  const flagged = page.locator('section[aria-label="Values"] tbody tr', { hasText: 'Ashford' }).locator('td.number').first()
  await flagged.locator('.value-flag').waitFor()
  t.equal(
    await flagged.locator('.value-flag').getAttribute('title'),
    'To follow up: Check the tally sheet.',
    'the followed-up value marked, its comment in words',
  )
  t.equal(await flagged.locator('.visually-hidden').textContent(), 'To follow up: Check the tally sheet.', 'and for a screen reader')
  t.equal(await page.locator('section[aria-label="Values"] .value-flag').count(), 1, 'no other value marked')
  // Sorted by a column: a value column's first click puts the largest first, a second the smallest.
  const number = (text: string) => Number(text.replace(/[^0-9.]/g, ''))
  const values = Object.values(districts).map((v) => number(String(v)))
  await page.getByRole('button', { name: 'Children missed' }).click()
  t.equal(await page.getByRole('columnheader', { name: 'Children missed' }).getAttribute('aria-sort'), 'descending')
  t.equal(number((await tableRows())[0][2]), Math.max(...values), 'the largest first')
  await page.getByRole('button', { name: 'Children missed' }).click()
  t.equal(number((await tableRows())[0][2]), Math.min(...values), 'then the smallest')
  await page.getByRole('button', { name: 'Location' }).click()
  t.equal((await tableRows())[0][0], 'Ashford', 'by location, A to Z')

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
  t.equal(download.suggestedFilename(), 'children-missed_march-2016-nid-opv_veridia.csv', 'named after what it holds')

  // Three indicators: each is a column, on every page; the download writes percents and yes/no as people read them.
  await page.getByRole('group', { name: 'Indicators' }).getByLabel('Percent missed', { exact: true }).check()
  await page.getByRole('group', { name: 'Indicators' }).getByLabel('Access challenged', { exact: true }).check()
  await page.getByRole('columnheader', { name: 'Access challenged' }).waitFor()
  await page.getByText('Rows 1–9 of 9').waitFor()
  const three = await tableRows()
  t.ok(
    three.every((r) => r.length === 5 && /%$/.test(r[3]) && /^(Yes|No)$/.test(r[4])),
    'every line holds every indicator chosen: a count, a percent and yes or no',
  )
  const wideLink = page.getByRole('link', { name: /^Download .*\.csv$/ })
  const [wide] = await Promise.all([page.waitForEvent('download'), wideLink.click()])
  t.equal(wide.suggestedFilename(), 'children-missed_percent-missed_1-more_march-2016-nid-opv_veridia.csv')
  const [wideHeader, ...wideLines] = readFileSync((await wide.path())!, 'utf8')
    .trim()
    .split('\r\n')
  t.equal(wideHeader, 'location_id,location,campaign_id,campaign,Children missed,Percent missed,Access challenged')
  const ashford = wideLines.find((l) => l.includes(',Ashford,'))!.split(',')
  const shownAshford = three.find((r) => r[0] === 'Ashford')!
  t.equal(ashford[5], shownAshford[3], `the percent as the table shows it (${ashford[5]}), not a fraction`)
  t.match(ashford[6], /^(Yes|No)$/, 'yes or no in words')
  const apiWide = await (await api(server, (await wideLink.getAttribute('href'))!.replace('/api/v1', ''))).text()
  t.match(
    apiWide.split('\r\n').find((l) => l.includes(',Ashford,')),
    /,0\.\d+,[01]$/,
    'the API’s own CSV (the link’s address) stays machine-readable',
  )
  // The same selection as a DHIS2 data value set: the values entered, in DHIS2's columns, ready to import there.
  const [dhis2] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download as a DHIS2 data value set' }).click()])
  const [dhis2Header, ...dhis2Lines] = readFileSync((await dhis2.path())!, 'utf8')
    .trim()
    .split('\n')
  t.equal(dhis2Header, 'dataelement,period,orgunit,categoryoptioncombo,attributeoptioncombo,value', 'DHIS2’s columns')
  t.ok(
    dhis2Lines.some((line) => /^Children missed,201603,VD11,,,\d+$/.test(line)),
    'Ashford’s children missed in March, by the indicator’s short name and the month its campaign starts',
  )
  t.notOk(
    dhis2Lines.some((line) => /,VD1,|,VD,/.test(line)),
    'values entered only: no province’s or country’s total',
  )
  t.same(await violationsAtBothWidths(page), [], 'axe: the data browser at 1280 and 375 px')

  // On a phone, the selection starts folded: the values are on the first screen; a wide table says it scrolls.
  const phone = await watchedPage(browser, { width: 375, height: 740 })
  await signIn(phone.page, server.url, 'admin', password)
  // Reached as a person reaches it, by its link (a goto right after signing in once ended elsewhere).
  await phone.page.getByRole('link', { name: 'Data', exact: true }).click()
  const rowsShown = await phone.page
    .getByText(/^Rows 1–/)
    .waitFor()
    .then(() => '')
    .catch(async () => `not shown; the page at ${phone.page.url()} says: ${(await phone.page.locator('main').textContent())?.slice(0, 300)}`)
  t.equal(rowsShown, '', 'the values of the default selection, on a phone')
  t.equal(await phone.page.locator('details.selection').getAttribute('open'), null, 'the selection folded')
  t.same(await axeViolations(phone.page), [], 'axe: the folded selection at 375 px')
  const top = await phone.page.getByRole('region', { name: 'Values of the selection' }).evaluate((e) => e.getBoundingClientRect().top)
  t.ok(top < 740, `the values start on the first screen (${Math.round(top)} px down)`)
  await phone.page.getByText('Selection (1 indicator)').click()
  t.ok(await phone.page.getByRole('group', { name: 'Indicators' }).isVisible(), 'unfolded on demand')
  await phone.page.goto(`${server.url}/app/#/dashboard/${dashboard.get('Campaign overview')}`)
  const table = phone.page.locator('figure.chart[data-type="TableChart"]')
  await table.locator('table').waitFor()
  // One campaign's table leaves out the column repeating it (the subtitle names it): the traffic lights fit.
  t.match(await table.locator('figcaption .subtitle').textContent(), /^October 2016/, 'the subtitle names the campaign')
  t.notOk(await table.locator('thead th', { hasText: 'Campaign' }).isVisible(), 'no campaign column on a phone')
  const fits = await table.locator('.table-scroll').evaluate((e) => e.scrollWidth <= e.clientWidth)
  t.ok(fits, 'the traffic-light table fits a phone')
  const lightRight = await table
    .locator('tbody tr')
    .first()
    .locator('td')
    .last()
    .evaluate((c) => c.getBoundingClientRect().right)
  t.ok(lightRight <= 375, `its traffic light is on the screen (right edge ${Math.round(lightRight)} px)`)
  t.notOk(await table.getByText('More columns: scroll the table sideways →').isVisible(), 'and no scroll cue')
  t.same(phone.problems, [])

  // Dates hold other indicators than campaigns: switching picks one that has dated values.
  await page.getByRole('combobox', { name: /^Values over/ }).selectOption('dates')
  const ticked = await page
    .getByRole('group', { name: 'Indicators' })
    .getByRole('checkbox', { checked: true })
    .evaluateAll((boxes) => boxes.map((b) => b.parentElement?.textContent?.trim()))
  t.same(ticked, ['Polio cases'], 'switching to dates ticks a dated indicator instead of the campaign one')
  await page.getByRole('combobox', { name: /^Depth/ }).selectOption('0')
  await page.getByRole('combobox', { name: /^Group by time/ }).selectOption('quarter')
  await page.getByText('Rows 1–4 of 4').waitFor()
  const quarters = (await read(`/date_datapoint/?indicator__in=${indicator.get('Polio cases')}&group_by_time=quarter&location_id=${location.get('Veridia')}`))
    .objects
  const shown = await page.locator('section[aria-label="Values"] tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent)))
  t.same(
    shown.map((r) => [r[0], r[1], r[2]]),
    quarters.map((q) => ['Veridia', `${String(q.time_grouping).slice(0, 4)} Q${String(q.time_grouping).slice(4)}`, String(q.value)]),
    'four quarters of cases as the API sums them, written "2016 Q1"',
  )
  t.equal(shown[0][1], '2016 Q1')
  // Dated values as a DHIS2 data value set too: each on its day.
  const [datedSet] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download as a DHIS2 data value set' }).click()])
  const datedLines = readFileSync((await datedSet.path())!, 'utf8')
    .trim()
    .split('\n')
    .slice(1)
  t.ok(
    datedLines.some((line) => /^Polio cases,20160201,VD11,,,1$/.test(line)),
    'Ashford’s polio cases of 1 February 2016 under their day',
  )
  const demo = JSON.parse(readFileSync('lib/engine/veridia.json', 'utf8')) as { datedValues: Array<{ values: Record<string, number> }> }
  t.equal(
    datedLines.length,
    demo.datedValues.reduce((n, d) => n + Object.keys(d.values).length, 0),
    'every dated value the demo entered',
  )
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
