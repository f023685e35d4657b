// Every chart type the original front-end saved, with every groupBy and groupByTime it could save
// (its builder definitions and mock dashboards: unicef/rhizome, webapp/src/components/d3chart/utils/
// builderDefinitions.js and webapp/src/utilities/test/mockData.js), saved as that front-end saved
// chart_json (a JSON string), drawn in Chromium on the demo data: each draws, its numbers are the
// API's, and nothing reaches the console.
import t from 'tap'
import { formatPeriod, formatValue } from '../web/format.js'
import { noChromium, signIn, watchedPage, webApp } from './browser.js'
import { api } from './processes.js'

const GROUPED_TYPES = ['ColumnChart', 'BarChart', 'LineChart', 'StackedPercentColumnChart', 'RawData']
const SINGLE_TYPES = ['TableChart', 'PieChart', 'ChoroplethMap', 'MapChart', 'BubbleMap']
const TIME_GROUPINGS = ['campaign', 'quarter', 'year', 'all_time']

t.test('every chart type and grouping of the original front-end draws the API’s numbers', { skip: noChromium }, async (t) => {
  const { server, password, browser, read, indicator, campaign, location } = await webApp(t)
  const country = location.get('Veridia')!
  const campaignIds = [...campaign.values()]
  const campaignIndicators = [indicator.get('Children missed')!, indicator.get('Children vaccinated')!]
  const dateIndicators = [indicator.get('Polio cases')!]
  const formats = new Map((await read('/indicator/?limit=0')).objects.map((i) => [i.id as number, i.data_format as string]))
  const indicatorNames = new Map([...indicator].map(([name, id]) => [id, name]))
  const locationNames = new Map([...location].map(([name, id]) => [id, name]))
  const campaignNames = new Map([...campaign].map(([name, id]) => [id, name]))

  /** A chart_json as the original saved it: campaigns and dates always, groupBy and groupByTime when chosen. */
  const chartJson = (type: string, groupByTime: string, groupBy?: string, depth: number | null = 1) => ({
    type,
    indicator_ids: groupByTime === 'campaign' ? campaignIndicators : dateIndicators,
    campaign_ids: groupByTime === 'campaign' ? campaignIds : [campaignIds[0]],
    location_ids: [country],
    ...(depth === null ? {} : { location_depth: depth }),
    start_date: '2016-01-01',
    end_date: '2016-12-31',
    groupByTime,
    ...(groupBy ? { groupBy } : {}),
  })
  const combinations = [
    ...GROUPED_TYPES.flatMap((type) => ['indicator', 'location'].flatMap((groupBy) => TIME_GROUPINGS.map((time) => chartJson(type, time, groupBy)))),
    ...SINGLE_TYPES.map((type) => chartJson(type, 'campaign')),
    // As the mock dashboards have them: a bubble map of all time, a yearly stacked percent profile of the country itself.
    chartJson('BubbleMap', 'all_time'),
    chartJson('StackedPercentColumnChart', 'year', 'indicator', null),
  ]
  const uuids: string[] = []
  for (const [n, json] of combinations.entries()) {
    const uuid = `original-${n}`
    const title = `${json.type}, ${json.groupBy ?? 'no groupBy'}, ${json.groupByTime}${'location_depth' in json ? '' : ', no depth'}`
    const res = await api(server, '/custom_chart/', { method: 'POST', body: JSON.stringify({ uuid, title, chart_json: JSON.stringify(json) }) })
    t.equal(res.status, 201, `saved: ${title}`)
    uuids.push(uuid)
  }
  const board = await api(server, '/dashboard/', {
    method: 'POST',
    body: JSON.stringify({ title: 'The original’s charts', rows: [{ layout: 1, charts: uuids }] }),
  })
  const boardId = (await board.json()).id

  /** The API's values of a chart as "location | period or campaign | indicator → value" lines, formatted as the app writes them. */
  const apiLines = async (json: ReturnType<typeof chartJson>) => {
    const where = `location_id=${country}&location_depth=${'location_depth' in json ? json.location_depth : 0}`
    const overTime = json.groupByTime !== 'campaign'
    const rows = overTime
      ? (
          await read(
            `/date_datapoint/?indicator__in=${json.indicator_ids}&${where}&start_date=2016-01-01&end_date=2016-12-31&group_by_time=${json.groupByTime}&limit=0`,
          )
        ).objects
      : (await read(`/campaign_datapoint/?indicator__in=${json.indicator_ids}&campaign__in=${json.campaign_ids}&${where}&limit=0`)).objects
    return rows
      .filter((r) => r.value !== null)
      .map((r) => {
        const key = overTime ? formatPeriod(r.time_grouping as string, json.groupByTime) : campaignNames.get(r.campaign_id as number)
        return `${locationNames.get(r.location_id as number)} | ${key} | ${indicatorNames.get(r.indicator_id as number)} → ${formatValue(r.value as number, formats.get(r.indicator_id as number))}`
      })
      .sort()
  }

  const { page, problems, consoleErrors } = await watchedPage(browser)
  await signIn(page, server.url, 'admin', password)
  await page.goto(`${server.url}/app/#/dashboard/${boardId}?campaign=each`)
  await page.waitForFunction((n) => document.querySelectorAll('figure.chart[data-drawn="true"]').length === n, combinations.length, { timeout: 30_000 })
  const charts = page.locator('figure.chart')
  t.equal(await charts.count(), combinations.length, `${combinations.length} charts drawn`)
  for (const [n, json] of combinations.entries()) {
    const chart = charts.nth(n)
    const title = (await chart.locator('figcaption').textContent())!
    const details = chart.locator('details.numbers')
    if (await details.count()) await details.locator('summary').click()
    // The table view: a line per location and period or campaign, a column per indicator.
    const shown = await chart.locator('table').evaluate((table) => {
      const names = [...table.querySelectorAll('thead th')].slice(2).map((th) => th.textContent)
      return [...table.querySelectorAll('tbody tr')].flatMap((tr) => {
        // Each cell's value, without its coverage line and what only a screen reader hears (inline: the
        // page runs this function's source, without the names a bundler's helpers would give).
        const [where, when, ...values] = [...tr.children].map((cell) => {
          const copy = cell.cloneNode(true) as Element
          for (const extra of copy.querySelectorAll('.coverage, .visually-hidden')) extra.remove()
          return copy.textContent?.trim()
        })
        return values.flatMap((value, i) => (value === '–' ? [] : [`${where} | ${when} | ${names[i]} → ${value}`]))
      })
    })
    const expected = await apiLines(json)
    t.ok(expected.length > 0, `${title}: the demo has values for it`)
    t.same(shown.sort(), expected, `${title}: the API’s numbers`)
    t.equal(await chart.locator('.error').count(), 0, `${title}: no error`)
    if (!['TableChart', 'RawData'].includes(json.type)) {
      t.ok((await chart.locator('svg path').count()) > 1, `${title}: drawn`)
      // Hovered, so that its tooltip is drawn too (a CSP refusal would reach the console): first at
      // 70 % of the width and half the height, inside the plot, then at the middle of each drawn shape
      // (a bar, a point) until one shows a tooltip.
      const drawing = chart.locator('.drawing')
      const box = (await drawing.boundingBox())!
      const tip = chart.locator('.chart-tip').filter({ visible: true })
      const shown = () =>
        tip.waitFor({ timeout: 400 }).then(
          () => true,
          () => false,
        )
      await drawing.hover({ position: { x: box.width * 0.7, y: box.height * 0.5 } })
      if (!json.type.endsWith('Map') && !(await shown())) {
        for (const shape of (await chart.locator('svg path').all()).slice(0, 60)) {
          const b = await shape.boundingBox()
          if (!b || b.width < 2 || b.height < 2 || b.width > box.width / 2) continue
          await page.mouse.move(b.x + b.width / 2, b.y + b.height / 2)
          if (await shown()) break
        }
      }
      if (!json.type.endsWith('Map')) t.ok(await tip.count(), `${title}: its tooltip shows on hover`)
    }
  }
  t.same(consoleErrors, [], 'no console error')
  t.same(problems, [], 'no script error, no CSP refusal, every chart hovered')
})
