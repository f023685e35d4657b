// The web app's dashboard page in Chromium against the real server (either engine): every chart drawn
// with the API's numbers (from one data request), tooltips that read as people read (and that the page's CSP lets
// through), drill-down and the campaign picker kept in the address (reload, back, a copied link),
// focus on the heading after navigation, axe at 1280 and 375 px. With WEB_APP_SCREENSHOTS=docs/web-app
// it writes the screenshots the docs show.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import {
  chartsDrawn,
  figure,
  noChromium,
  screenshotsDir,
  numbersOf,
  axeViolations,
  settledValues,
  signIn,
  tableValues,
  tooltipAt,
  violationsAtBothWidths,
  watchedPage,
  webApp,
} from './browser.js'
import { api } from './processes.js'

t.test('the dashboard page in Chromium', { skip: noChromium }, async (t) => {
  const app = await webApp(t)
  const { server, password, browser, indicator, campaign, location, march, apiValues } = app
  const dashboardId = app.dashboard.get('Campaign overview')!
  const shots = screenshotsDir(t)
  const missed = indicator.get('Children missed')!
  // A campaign without a value anywhere: the dashboard's campaign picker leaves it out.
  const types = (await app.read('/campaign_type/')).objects
  await api(server, '/campaign/', {
    method: 'POST',
    body: JSON.stringify({ name: 'December 2016 - NID - no data', campaign_type_id: types[0].id, start_date: '2016-12-01', end_date: '2016-12-05' }),
  })
  const byProvince = await apiValues(missed, march, `location_id=${location.get('Veridia')}&location_depth=1`)

  // How fast is bench:web's to measure (timing belongs to bench/): here the times are only reported.
  await t.test('every chart drawn, with the API’s numbers', async (t) => {
    const { page, problems } = await watchedPage(browser)
    await signIn(page, server.url, 'admin', password)
    const drawnWithin = async () => {
      await page.goto(`${server.url}/app/#/dashboard/${dashboardId}?campaign=${march}`)
      await page.reload()
      await chartsDrawn(page, 5)
      return page.evaluate(() => Math.max(...performance.getEntriesByType('mark').map((m) => m.startTime)))
    }
    const first = await drawnWithin()
    const again = await drawnWithin()
    t.comment(`five charts drawn ${Math.round(first)} ms after navigation (first load), ${Math.round(again)} ms (reload)`)
    for (const type of ['ColumnChart', 'PieChart', 'ChoroplethMap', 'LineChart']) {
      t.ok((await figure(page, type).locator('svg path').count()) > 2, `${type}: an SVG with content`)
    }
    t.equal(await figure(page, 'ChoroplethMap').getAttribute('data-polygons'), '3', 'the map drew the three provinces’ polygons')
    t.same(tableValues(await numbersOf(figure(page, 'ColumnChart'))), byProvince, 'the column chart’s numbers are the API’s')
    const labels = await figure(page, 'ColumnChart').locator('svg text').allTextContents()
    t.ok(
      Object.values(byProvince).every((value) => labels.includes(String(value))),
      'and its labels',
    )
    const districts = await apiValues(missed, march, `location_id=${location.get('Veridia')}&location_depth=2`)
    t.same(tableValues(await numbersOf(figure(page, 'TableChart')), 3), districts, 'the table chart shows the API’s district values')
    t.equal(Object.keys(districts).length, 9)
    // One data request draws the dashboard: no chart reads its own rows.
    const reads: string[] = []
    page.on('request', (request) => {
      const path = new URL(request.url()).pathname
      if (/^\/api\/v1\/(campaign_datapoint|date_datapoint|dashboard\/\d+\/data)\//.test(path)) reads.push(path)
    })
    await page.reload()
    await chartsDrawn(page, 5)
    t.same(reads, [`/api/v1/dashboard/${dashboardId}/data/`], 'the five charts drawn from one data request')
    t.same(tableValues(await numbersOf(figure(page, 'ColumnChart'))), byProvince, 'with the API’s numbers')
    const toggles = await page.locator('figure.chart details.numbers summary').evaluateAll((items) => items.map((s) => s.getAttribute('aria-label')))
    t.equal(new Set(toggles).size, 4, `each "Numbers" toggle has a name of its own: ${toggles.join('; ')}`)
    t.same(problems, [], 'no script error and no CSP refusal')
  })

  await t.test('traffic lights: map regions and table cells coloured by the status the API reads for each value', async (t) => {
    const { page, problems } = await watchedPage(browser)
    await signIn(page, server.url, 'admin', password)
    await page.goto(`${server.url}/app/#/dashboard/${dashboardId}?campaign=${march}`)
    await chartsDrawn(page, 5)
    const percentMissed = indicator.get('Percent missed')!
    const statusOf = async (selection: string) => {
      const rows = (await app.read(`/campaign_datapoint/?indicator__in=${percentMissed}&campaign__in=${march}&${selection}&with_status=1`)).objects
      return new Map(rows.map((r) => [r.location_id as number, r.status as string]))
    }
    const provinces = await statusOf(`location_id=${location.get('Veridia')}&location_depth=1`)
    t.same([...provinces.values()].sort(), ['bad', 'good', 'ok'], 'the demo’s provinces: one good, one ok, one bad')
    // The map: each province's region filled with its status's colour.
    const FILL: Record<string, string> = { good: '#1a9641', ok: '#e0a800', bad: '#d7191c' }
    const fills = await figure(page, 'ChoroplethMap')
      .locator('svg path')
      .evaluateAll((paths) => paths.map((p) => p.getAttribute('fill')))
    for (const status of ['good', 'ok', 'bad']) t.ok(fills.includes(FILL[status]), `a region in ${status}’s colour`)
    // The districts' table: each Percent missed cell's background is its status's tint.
    const TINT: Record<string, string> = { good: 'rgb(217, 240, 211)', ok: 'rgb(255, 243, 191)', bad: 'rgb(249, 211, 208)' }
    const districts = await statusOf(`location_id=${location.get('Veridia')}&location_depth=2`)
    const names = new Map((await app.read('/location/?limit=0')).objects.map((l) => [l.name as string, l.id as number]))
    const table = figure(page, 'TableChart')
    const cells = await table
      .locator('tbody tr')
      .evaluateAll((rows) =>
        rows.map((row) => [row.querySelector('th')!.textContent!.trim(), getComputedStyle(row.children[4]).backgroundColor, row.children[4].textContent]),
      )
    t.equal(cells.length, 9)
    // Under each province's value, how many of its districts it sums.
    await numbersOf(figure(page, 'ColumnChart'))
    t.same(await figure(page, 'ColumnChart').locator('td .coverage').allTextContents(), ['3 of 3 districts', '3 of 3 districts', '3 of 3 districts'])
    for (const [name, background, text] of cells) {
      const status = districts.get(names.get(name!)!)!
      t.equal(background, TINT[status], `${name}: ${status}, and its cell says so in colour`)
      t.match(text, new RegExp(`\\(${status}\\)$`), 'and in words for a screen reader')
    }
    t.same(problems, [])
  })

  await t.test('numbers as people read them: tooltips, the map legend, pie labels, months; no CSP refusal after hovering every chart', async (t) => {
    const { page, problems, consoleErrors } = await watchedPage(browser)
    await signIn(page, server.url, 'admin', password)
    await page.goto(`${server.url}/app/#/dashboard/${dashboardId}?campaign=${march}`)
    await chartsDrawn(page, 5)
    const percent = (
      await app.read(`/campaign_datapoint/?indicator__in=${indicator.get('Percent missed')}&campaign__in=${march}&location_id=${location.get('Eastvale')}`)
    ).objects[0].value as number
    const eastvale = `${Number((100 * percent).toPrecision(3))} %`
    t.equal(eastvale, '4.38 %', 'the demo’s Eastvale: 4.38 % missed')
    // Hovering Eastvale's name on the map is hovering Eastvale's region.
    const mapTip = await tooltipAt(page, 'ChoroplethMap', 'svg text:text-is("Eastvale")')
    t.equal(
      mapTip,
      `Eastvale / Percent missed: ${eastvale} / Reported: 3 of 3 districts`,
      'the map’s tooltip: the name, the value as a percent, its districts reported',
    )
    t.same(
      await figure(page, 'ChoroplethMap').locator('.status-legend li').allTextContents(),
      ['good: 3 % or less', 'ok: between 3 % and 4 %', 'bad: 4 % or more'],
      'its legend: the statuses of Percent missed (lower is better), with their limits as percents',
    )
    const columnTip = await tooltipAt(page, 'ColumnChart', 'svg path[fill="#0b5cad"]', 1)
    t.equal(columnTip, `Eastvale / Children missed: ${byProvince.Eastvale} (3 of 3 districts)`, 'a column’s tooltip: the value and how many districts it sums')
    t.equal(
      await figure(page, 'ColumnChart')
        .locator('.drawing')
        .evaluate((drawing) => [...drawing.querySelectorAll('div')].map((d) => (d as HTMLElement).style.cursor).find(Boolean)),
      'pointer',
      'a hand over a province’s column: a click drills down to its districts',
    )
    t.match(
      await tooltipAt(page, 'PieChart', 'svg path[fill]:not([fill="none"])', 0),
      /^\w+ \/ Children vaccinated: \d{1,3},\d{3} \/ Share: [\d.]+ %$/,
      'a slice’s tooltip: grouped thousands, its share',
    )
    const pieLines = () => figure(page, 'PieChart').locator('svg text').allTextContents()
    t.ok(
      (await pieLines()).some((line) => /^\d,\d{3}$/.test(line)),
      'pie labels with thousands separators',
    )
    // No label's line drawn over another's (a name and its value, or two slices' labels).
    // (Inline: a named function in the page's code would carry tsx's __name, unknown there.)
    const labelBoxes = await figure(page, 'PieChart').evaluate((figure) =>
      [...figure.querySelectorAll('svg text')].map((text) => {
        const { left, right, top, bottom } = text.getBoundingClientRect()
        return { text: text.textContent, left, right, top, bottom }
      }),
    )
    const overlaps = labelBoxes.flatMap((a, i) =>
      labelBoxes
        .slice(i + 1)
        .filter((b) => Math.min(a.right, b.right) - Math.max(a.left, b.left) > 0.5 && Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 0.5)
        .map((b) => `${a.text} × ${b.text}`),
    )
    t.same(overlaps, [], 'no pie label over another')
    // A card narrow enough for its pie labels to wrap (two cards a row at 1,080 px): each number stays whole.
    await page.setViewportSize({ width: 1080, height: 900 })
    await page.waitForFunction(() => document.querySelector('figure.chart[data-type="PieChart"] svg')!.getBoundingClientRect().width < 500, null, {
      timeout: 5000,
    })
    const broken = async () => (await pieLines()).filter((line) => /\d/.test(line) && !/^\d{1,3}(,\d{3})*$/.test(line))
    // Given the moment the drawing takes to lay its labels out again (drawn on the next frames).
    await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))))
    for (const started = Date.now(); Date.now() - started < 3000 && (await broken()).length; ) await page.evaluate(() => new Promise(requestAnimationFrame))
    t.same(await broken(), [], `at 1,080 px each pie label's number whole, on its own line (${(await pieLines()).join(' | ')})`)
    await page.setViewportSize({ width: 1280, height: 900 })
    t.match(await figure(page, 'LineChart').locator('svg').textContent(), /Jan 2016.*Mar 2016/s, 'months by name')
    t.match(await tooltipAt(page, 'LineChart', '.drawing'), /^\w{3} 2016 \/ Polio cases: \d/, 'a line’s tooltip: the month by name')
    t.same(problems, [], 'no script error and no CSP refusal after hovering every chart')
    t.same(consoleErrors, [], 'nothing in the console')
  })

  await t.test('the view in the address: drill-down and campaign survive a reload, back and forward, and a copied link', async (t) => {
    const { page, problems } = await watchedPage(browser)
    await signIn(page, server.url, 'admin', password)
    await page.goto(`${server.url}/app/#/dashboard/${dashboardId}?campaign=${march}`)
    await chartsDrawn(page, 5)
    t.equal(await page.evaluate(() => document.activeElement?.textContent), 'Campaign overview', 'focus on the page’s heading after navigation')
    // The Export menu opens over the page: the title bar's heading and buttons, and what follows, stay where they were.
    const placed = () =>
      page.evaluate(() =>
        [...document.querySelectorAll('.title-bar h1, .title-bar .actions > *, .title-bar + *')].map((e) => {
          const box = e.getBoundingClientRect()
          return [e.tagName, Math.round(box.x), Math.round(box.y), Math.round(box.width), Math.round(box.height)].join(' ')
        }),
      )
    const closed = await placed()
    await page.locator('.title-bar details.export summary').click()
    await page.locator('.title-bar details.export').getByRole('link', { name: 'PDF, A4' }).waitFor()
    t.same(await placed(), closed, 'the Export menu open: nothing in the title bar moved')
    // A menu closes as menus do: a press elsewhere, or Escape (left open, it covered the campaign picker on a phone).
    const exportMenu = page.locator('.title-bar details.export')
    await page.locator('.title-bar h1').click()
    t.equal(await exportMenu.evaluate((d) => (d as HTMLDetailsElement).open), false, 'a click elsewhere closes the Export menu')
    await exportMenu.locator('summary').click()
    await exportMenu.getByRole('link', { name: 'PDF, A4' }).focus()
    await page.keyboard.press('Escape')
    t.equal(await exportMenu.evaluate((d) => (d as HTMLDetailsElement).open), false, 'Escape closes it')
    t.ok(await exportMenu.locator('summary').evaluate((s) => s === document.activeElement), 'and gives the focus back to its button')
    const picker = await page
      .getByLabel('Campaign')
      .locator('optgroup')
      .evaluateAll((groups) => groups.map((g) => [g.getAttribute('label'), [...g.querySelectorAll('option')].map((o) => o.textContent)]))
    t.same(
      picker,
      [
        ['National Immunization Days (NID)', ['October 2016 - NID - bOPV', 'March 2016 - NID - OPV']],
        ['Sub-National Immunization Days (SNID)', ['June 2016 - SNID - OPV']],
      ],
      'the campaign picker: the campaigns with values (not December, which has none), by type, latest first',
    )
    t.same(tableValues(await numbersOf(figure(page, 'ColumnChart'))), byProvince, 'the provinces, the numbers open')
    await figure(page, 'ColumnChart').getByRole('button', { name: 'Northmarch' }).click()
    await page.getByRole('navigation', { name: 'Drill-down' }).getByRole('button', { name: 'Northmarch' }).waitFor()
    await chartsDrawn(page, 5)
    const northmarch = await apiValues(missed, march, `location_id=${location.get('Northmarch')}&location_depth=1`)
    t.same(Object.keys(northmarch).sort(), ['Ashford', 'Brindle', 'Coldwater'])
    t.same(await settledValues(figure(page, 'ColumnChart'), northmarch), northmarch, 'drilled down: Northmarch’s districts, the API’s values')
    // The districts are the tree's lowest level: no drill-down below them, in the numbers or on the chart.
    t.equal(await figure(page, 'ColumnChart').locator('tbody th button').count(), 0, 'the districts’ names in the numbers are not drill-down buttons')
    const drilledAt = page.url()
    const bar = figure(page, 'ColumnChart').locator('svg path[fill="#0b5cad"]').first()
    await bar.scrollIntoViewIfNeeded()
    const barBox = (await bar.boundingBox())!
    await page.mouse.click(barBox.x + barBox.width / 2, barBox.y + barBox.height / 2)
    const nothingBelow = figure(page, 'ColumnChart').locator('.nothing-below')
    await nothingBelow
      .filter({ hasText: 'has no locations below it' })
      .waitFor({ timeout: 5000 })
      .catch(() => {})
    t.match(
      (await nothingBelow.count()) ? await nothingBelow.textContent() : '',
      /^(Ashford|Brindle|Coldwater) has no locations below it: there is nothing further to drill down to\.$/,
      'a district clicked on the chart: the card says there is nothing below it',
    )
    t.equal(page.url(), drilledAt, 'and the view stays')
    const june = campaign.get('June 2016 - SNID - OPV')!
    await page.getByLabel('Campaign').selectOption(String(june))
    await chartsDrawn(page, 5)
    const juneValues = await apiValues(missed, june, `location_id=${location.get('Northmarch')}&location_depth=1`)
    t.notSame(juneValues, northmarch, 'another campaign, other values')
    t.same(await settledValues(figure(page, 'ColumnChart'), juneValues), juneValues, 'the campaign picker: June’s values')
    const address = page.url()
    t.match(
      address,
      new RegExp(`#/dashboard/${dashboardId}\\?campaign=${june}&location=${location.get('Northmarch')}$`),
      'campaign and location in the address',
    )

    await page.reload()
    await chartsDrawn(page, 5)
    t.same(await settledValues(figure(page, 'ColumnChart'), juneValues), juneValues, 'after a reload: the same view')
    t.equal(await page.getByLabel('Campaign').inputValue(), String(june), 'the campaign still picked')
    await page.goBack()
    await chartsDrawn(page, 5)
    t.same(await settledValues(figure(page, 'ColumnChart'), northmarch), northmarch, 'back: March again, still in Northmarch')
    await page.goBack()
    await chartsDrawn(page, 5)
    t.same(await settledValues(figure(page, 'ColumnChart'), byProvince), byProvince, 'back again: the provinces')
    await page.goForward()
    await page.goForward()
    await chartsDrawn(page, 5)
    t.same(await settledValues(figure(page, 'ColumnChart'), juneValues), juneValues, 'forward twice: June in Northmarch')

    const other = await watchedPage(browser)
    await signIn(other.page, server.url, 'admin', password)
    await other.page.goto(address)
    await chartsDrawn(other.page, 5)
    t.same(await settledValues(figure(other.page, 'ColumnChart'), juneValues), juneValues, 'the copied link in another browser: the same view')
    t.same([...problems, ...other.problems], [])
  })

  await t.test('a table of 27 rows: a page at a time with the total, sorted by any column, the CSV of every row', async (t) => {
    const campaigns = [...campaign.values()]
    const chart = {
      type: 'TableChart',
      indicator_ids: [missed],
      campaign_ids: campaigns,
      location_ids: [location.get('Veridia')],
      location_depth: 2,
    }
    await api(server, '/custom_chart/', {
      method: 'POST',
      body: JSON.stringify({ uuid: 'all-districts', title: 'Every district, every campaign', chart_json: chart }),
    })
    const board = await (
      await api(server, '/dashboard/', { method: 'POST', body: JSON.stringify({ title: 'Districts', rows: [{ layout: 1, charts: ['all-districts'] }] }) })
    ).json()
    const { page, problems } = await watchedPage(browser)
    await signIn(page, server.url, 'admin', password)
    await page.goto(`${server.url}/app/#/dashboard/${board.id}?campaign=each`)
    await chartsDrawn(page, 1)
    const table = figure(page, 'TableChart')
    t.equal(await table.locator('tbody tr').count(), 25, 'one page of 25 rows in the page')
    t.equal(await table.locator('.table-pages p').textContent(), 'Rows 1–25 of 27', 'and the total')
    await table.getByRole('button', { name: 'Next rows of Every district, every campaign' }).click()
    t.equal(await table.locator('tbody tr').count(), 2, 'the next page: the last two')

    const rows = (
      await app.read(`/campaign_datapoint/?indicator__in=${missed}&campaign__in=${campaigns}&location_id=${location.get('Veridia')}&location_depth=2&limit=0`)
    ).objects
    const values = rows.map((r) => r.value as number).sort((a, b) => b - a)
    await table.getByRole('button', { name: 'Children missed', exact: true }).click()
    t.equal(await table.locator('th[aria-sort]').getAttribute('aria-sort'), 'descending', 'sorted by the values, largest first')
    // The data browser's headers, the same: buttons that submit nothing (a table inside a form stays put).
    t.same([...new Set(await table.locator('th button.sort').evaluateAll((buttons) => buttons.map((b) => b.getAttribute('type'))))], ['button'])
    t.same(
      await table.locator('tbody tr td.number').allTextContents(),
      values.slice(0, 25).map((v) => v.toLocaleString('en')),
      'the largest 25, in order, from the first page',
    )
    await table.getByRole('button', { name: 'Children missed', exact: true }).click()
    t.equal(await table.locator('tbody tr td.number').first().textContent(), values.at(-1)!.toLocaleString('en'), 'ascending: the smallest first')
    await table.getByRole('button', { name: 'Location', exact: true }).click()
    t.equal(await table.locator('tbody tr th').first().textContent(), 'Ashford', 'by location name')

    const link = table.getByRole('link', { name: 'CSV of every row' })
    const [download] = await Promise.all([page.waitForEvent('download'), link.click()])
    const csv = readFileSync((await download.path())!, 'utf8')
    const fromApi = await (
      await api(
        server,
        `/campaign_datapoint/?indicator__in=${missed}&campaign__in=${campaigns.join('%2C')}&location_id=${location.get('Veridia')}&location_depth=2&format=csv&shape=wide`,
      )
    ).text()
    t.equal(csv, fromApi, 'the CSV of every row: the API’s wide CSV of the chart’s read')
    t.equal(csv.trim().split('\r\n').length, 28, 'a header and the 27 rows')
    t.match(
      download.suggestedFilename(),
      /^children-missed_[a-z0-9-]+_[a-z0-9-]+_1-more_veridia\.csv$/,
      'named after what it holds: indicator, campaigns, place',
    )
    t.same(problems, [])
  })

  await t.test('axe clean at 1280 and 375 px; at 375 px nothing is wider than the screen', async (t) => {
    const { page, problems } = await watchedPage(browser)
    await signIn(page, server.url, 'admin', password)
    t.same(await violationsAtBothWidths(page), [], 'the dashboards list')
    await page.goto(`${server.url}/app/#/dashboard/${dashboardId}`)
    await chartsDrawn(page, 5)
    await page.screenshot({ path: join(shots, 'dashboard.png'), fullPage: true })
    t.same(await axeViolations(page), [], 'the dashboard at 1280 px')
    await page.setViewportSize({ width: 375, height: 800 })
    // The charts redraw as their boxes shrink (a resize observer): given a moment to.
    await page.waitForFunction(() => document.documentElement.scrollWidth <= 375, null, { timeout: 3000 }).catch(() => {})
    const wide = await page.evaluate(() =>
      [...document.querySelectorAll('body *')]
        .filter((e) => e.getBoundingClientRect().right > 376)
        .map((e) => `${e.tagName}.${e.className}`)
        .slice(0, 5),
    )
    t.ok((await page.evaluate(() => document.documentElement.scrollWidth)) <= 375, `at 375 px nothing is wider than the screen ${wide.join(', ')}`)
    t.ok((await figure(page, 'ColumnChart').locator('svg').boundingBox())!.width <= 375, 'the charts fit')
    t.notMatch(await figure(page, 'PieChart').locator('svg').textContent(), /…/, 'no pie label cut short')
    // A compact header on a phone: every section still in sight, in a band that leaves the page its room.
    const header = await page.locator('.app-header').evaluate((h) => ({
      height: Math.round(h.getBoundingClientRect().height),
      linksInView: [...h.querySelectorAll('nav a')].every(
        (a) => a.getBoundingClientRect().right <= 375 && a.getBoundingClientRect().bottom <= h.getBoundingClientRect().bottom,
      ),
    }))
    t.ok(header.height <= 120, `at 375 px the header is compact (${header.height} px)`)
    t.ok(header.linksInView, 'with every section’s link in sight')
    await page.screenshot({ path: join(shots, 'dashboard-375.png'), fullPage: true })
    t.same(await axeViolations(page), [], 'the dashboard at 375 px')
    t.same(problems, [])
  })

  await t.test('a dashboard opens on the latest campaign with values where its reader looks, unless its address names one', async (t) => {
    /** A campaign of the second type made through the API, with one value in Glimmer: its id, and the value's answer. */
    const campaignWithAValue = async (name: string, start_date: string, indicator_id: number | undefined, value: number) => {
      const made = (await (
        await api(server, '/campaign/', { method: 'POST', body: JSON.stringify({ name, campaign_type_id: types[1].id, start_date, end_date: start_date }) })
      ).json()) as { id: number }
      const body = JSON.stringify({ indicator_id, location_id: location.get('Glimmer'), campaign_id: made.id, value })
      return [made.id, await api(server, '/campaign_datapoint/', { method: 'POST', body })] as const
    }
    // A campaign later than the demo's, with a value in Southreach only: the whole country has data
    // there, Northmarch has none.
    const [november, glimmer] = await campaignWithAValue('November 2016 - SNID - Southreach', '2016-11-01', missed, 7)
    t.equal(glimmer.status, 201, 'a November value in Glimmer')
    // Later still, a survey holding only an indicator none of the dashboard's charts shows: not opened on.
    const [, access] = await campaignWithAValue('January 2017 - access survey', '2017-01-10', indicator.get('Access challenged'), 1)
    t.equal(access.status, 201, 'a January survey value in Glimmer, of an indicator the dashboard does not show')
    const october = campaign.get('October 2016 - NID - bOPV')!
    await api(server, '/user/', { method: 'POST', body: JSON.stringify({ username: 'northmarch-lead', password: 'north-march-lead-1' }) })
    const lead = (await app.read('/user/?username=northmarch-lead')).objects[0].id
    await api(server, '/location_responsibility/', { method: 'POST', body: JSON.stringify({ user_id: lead, top_lvl_location_id: location.get('Northmarch') }) })

    const { page, problems } = await watchedPage(browser)
    await signIn(page, server.url, 'admin', password)
    await page.goto(`${server.url}/app/#/dashboard/${dashboardId}`)
    await chartsDrawn(page, 5)
    t.equal(
      await page.getByLabel('Campaign').inputValue(),
      String(november),
      'the whole country: November, the latest campaign with a value the dashboard shows',
    )
    t.equal(
      await figure(page, 'ColumnChart').locator('.subtitle').textContent(),
      'November 2016 - SNID - Southreach · Provinces of Veridia',
      'the charts drawn for it, not for the March they were saved with',
    )
    t.match(page.url(), new RegExp(`#/dashboard/${dashboardId}\\?campaign=${november}$`), 'the campaign written into the address, to copy')
    await page.getByLabel('Campaign').selectOption({ label: 'As each chart says' })
    await page.waitForURL(/campaign=each/)
    await figure(page, 'ColumnChart').locator('.subtitle', { hasText: 'March 2016' }).waitFor()
    await page.reload()
    await chartsDrawn(page, 5)
    t.equal(
      await figure(page, 'ColumnChart').locator('.subtitle').textContent(),
      'March 2016 - NID - OPV · Provinces of Veridia',
      'as each chart says, through a reload',
    )
    t.equal(await page.getByLabel('Campaign').inputValue(), 'each')

    const hers = await watchedPage(browser)
    await signIn(hers.page, server.url, 'northmarch-lead', 'north-march-lead-1')
    await hers.page.goto(`${server.url}/app/#/dashboard/${dashboardId}`)
    await chartsDrawn(hers.page, 5)
    t.equal(await hers.page.getByLabel('Campaign').inputValue(), String(october), 'Northmarch’s lead: October, the latest with values in her province')
    t.equal(await figure(hers.page, 'ColumnChart').locator('.subtitle').textContent(), 'October 2016 - NID - bOPV · Districts of Northmarch')
    t.same([...problems, ...hers.problems], [])
  })

  await t.test('a chart that keeps its own campaign says so on the chart', async (t) => {
    // A chart that keeps its own campaign (March), beside one that follows the dashboard's.
    await api(server, '/custom_chart/', {
      method: 'POST',
      body: JSON.stringify({
        uuid: 'march-kept',
        title: 'March, kept',
        chart_json: {
          type: 'TableChart',
          indicator_ids: [missed],
          campaign_ids: [march],
          location_ids: [location.get('Veridia')],
          location_depth: 1,
          pinned: true,
        },
      }),
    })
    const board = await (
      await api(server, '/dashboard/', {
        method: 'POST',
        body: JSON.stringify({ title: 'Kept and followed', rows: [{ charts: ['march-kept', 'demo-missed-by-province'] }] }),
      })
    ).json()
    const june = campaign.get('June 2016 - SNID - OPV')!
    const { page, problems } = await watchedPage(browser)
    await signIn(page, server.url, 'admin', password)
    await page.goto(`${server.url}/app/#/dashboard/${board.id}?campaign=${june}`)
    await chartsDrawn(page, 2)
    const kept = page.locator('figure.chart', { has: page.locator('figcaption', { hasText: 'March, kept' }) })
    t.equal(await kept.locator('.subtitle').textContent(), 'March 2016 - NID - OPV · Provinces of Veridia', 'the chart that keeps its campaign: March')
    t.match(
      await kept
        .locator('.kept-campaign')
        .textContent({ timeout: 5000 })
        .catch(() => ''),
      /keeps its own campaign/,
      'and says so on the chart',
    )
    t.equal(
      await figure(page, 'ColumnChart').locator('.subtitle').textContent(),
      'June 2016 - SNID - OPV · Provinces of Veridia',
      'the other follows the dashboard',
    )
    t.equal(await figure(page, 'ColumnChart').locator('.kept-campaign').count(), 0, 'and says nothing of the kind')
    t.same(problems, [])
  })
})
