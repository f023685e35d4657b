// Charts that say what they show, in Chromium against the real server (either engine), at 1280 and
// 375 px: a column chart of three indicators draws three colours told apart and the percent on an
// axis of its own, with a legend that is not paged; a pie given two indicators says what it draws (the
// builder keeps one); a hovered "bad" region keeps the legend's "bad" colour, in the page and in the
// SVG and PNG exports; every chart says where and when in a subtitle; a share link opens at the view
// it was made from. Writes the screenshots of a share and an export.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { PNG } from 'pngjs'
import type { Page } from 'playwright-core'
import {
  chartsDrawn,
  figure,
  legendColours,
  noChromium,
  numbersOf,
  pickLocation,
  screenshotsDir,
  signIn,
  tableValues,
  violationsAtBothWidths,
  watchedPage,
  webApp,
} from './browser.js'
import { api } from './processes.js'

const rgbOf = (hex: string) => [1, 3, 5].map((i) => Number.parseInt(hex.slice(i, i + 2), 16))
/** How far apart two colours are (RGB, 0–441): under ~60, people take them for one. */
const distance = (a: string, b: string) => Math.hypot(...rgbOf(a).map((v, i) => v - rgbOf(b)[i]))

/** The fills a chart's drawing paints (bars, slices, regions, legend icons), grey, white and none aside. */
async function paintedFills(page: Page, type: string) {
  const fills = await figure(page, type)
    .locator('.drawing svg path')
    .evaluateAll((paths) => paths.map((p) => p.getAttribute('fill') ?? ''))
  return [...new Set(fills.filter((f) => /^#[0-9a-f]{6}$/i.test(f) && !/^#(fff|ffffff|e8e8e8|ccc|cccccc)$/i.test(f)).map((f) => f.toLowerCase()))]
}

/** The texts an SVG export holds, in order, each with the fill of the shape drawn just before it. */
function svgTextsAfterShapes(svg: string) {
  const items: Array<{ text: string; fill: string }> = []
  let fill = ''
  for (const [, tag, attributes, body] of svg.matchAll(/<(path|rect|text)\b([^>]*)>([^<]*)/g)) {
    if (tag === 'text') items.push({ text: body.trim(), fill })
    else fill = /fill="(#[0-9a-fA-F]{6})"/.exec(attributes)?.[1]?.toLowerCase() ?? fill
  }
  return items
}

t.test('charts that say what they show, in Chromium', { skip: noChromium }, async (t) => {
  const app = await webApp(t)
  const { server, password, browser, indicator, campaign, location, march, apiValues, read } = app
  const shots = screenshotsDir(t)
  const october = campaign.get('October 2016 - NID - bOPV')!
  const demoId = app.dashboard.get('Campaign overview')!
  const post = async (path: string, body: unknown) => {
    const res = await api(server, path, { method: 'POST', body: JSON.stringify(body) })
    if (res.status !== 201) throw new Error(`${path}: ${res.status} ${await res.text()}`)
    return (await res.json()) as { id: number; uuid: string }
  }
  const byProvince = { campaign_ids: [march], location_ids: [location.get('Veridia')], location_depth: 1 }
  const ids = (...names: string[]) => names.map((name) => indicator.get(name)!)
  await post('/custom_chart/', {
    uuid: 'three-indicators',
    title: 'Three indicators by province',
    chart_json: { type: 'ColumnChart', indicator_ids: ids('Children missed', 'Children vaccinated', 'Percent missed'), ...byProvince },
  })
  await post('/custom_chart/', {
    uuid: 'two-indicator-pie',
    title: 'A pie of two',
    chart_json: { type: 'PieChart', indicator_ids: ids('Children missed', 'Children vaccinated'), ...byProvince },
  })
  const board = await post('/dashboard/', {
    title: 'Series that read',
    rows: [{ charts: ['three-indicators', 'two-indicator-pie'] }, { charts: ['demo-missed-map'] }],
  })
  const missedMap = ((await read('/custom_chart/?uuid=demo-missed-map')).objects[0] as { id: number }).id
  // The provinces whose Percent missed is bad in March, as the API says.
  const statuses = (
    await read(
      `/campaign_datapoint/?indicator__in=${indicator.get('Percent missed')}&campaign__in=${march}&location_id=${location.get('Veridia')}&location_depth=1&with_status=1`,
    )
  ).objects.map((o) => o.status as string)
  const bad = statuses.filter((s) => s === 'bad').length
  t.ok(bad > 0, 'the demo has a bad province in March')

  for (const width of [1280, 375]) {
    await t.test(`at ${width} px: three colours and a percent axis, a pie that says what it draws, a hovered bad region in the legend's bad`, async (t) => {
      const { page, problems } = await watchedPage(browser, { width, height: 900 })
      await signIn(page, server.url, 'admin', password)
      await page.goto(`${server.url}/app/#/dashboard/${board.id}?campaign=${march}`)
      await chartsDrawn(page, 3)

      const column = figure(page, 'ColumnChart')
      const fills = await paintedFills(page, 'ColumnChart')
      t.equal(fills.length, 3, `three colours: ${fills.join(', ')}`)
      for (const [i, a] of fills.entries()) for (const b of fills.slice(i + 1)) t.ok(distance(a, b) > 80, `${a} and ${b} told apart`)
      const texts = await column
        .locator('.drawing svg text')
        .evaluateAll((nodes) => nodes.map((n) => ({ text: n.textContent ?? '', x: n.getBoundingClientRect().x - n.closest('svg')!.getBoundingClientRect().x })))
      const svgWidth = (await column.locator('.drawing svg').boundingBox())!.width
      t.ok(
        texts.some((x) => /^\d+ %$/.test(x.text) && x.x > svgWidth * 0.75),
        'a second axis, at the right, in percents',
      )
      t.ok(
        texts.some((x) => /^\d{1,3}(,\d{3})+$/.test(x.text) && x.x < svgWidth * 0.25),
        'the counts on the first, at the left',
      )
      t.notOk(
        texts.some((x) => /^\d+\/\d+$/.test(x.text)),
        'a legend of three is not paged',
      )
      for (const name of ['Children missed', 'Children vaccinated', 'Percent missed'])
        t.ok(
          texts.some((x) => x.text === name),
          `the legend names ${name}`,
        )
      t.equal(await column.locator('.subtitle').textContent(), 'March 2016 - NID - OPV · Provinces of Veridia', 'where and when, under the title')

      t.equal(
        await figure(page, 'PieChart').locator('.drawn-only').textContent(),
        'Draws Children missed for March 2016 - NID - OPV only: a pie shows one indicator and one campaign.',
        'the pie of two indicators says what it draws',
      )

      // The map: the legend's "bad" colour is the bad regions' colour, hovered or not.
      const map = figure(page, 'ChoroplethMap')
      const legend = await legendColours(map)
      const regions = map.locator(`.drawing svg path[fill="${legend.bad}"]`)
      t.equal(await regions.count(), bad, `the ${bad} bad province(s) in the legend's bad (${legend.bad})`)
      const region = await regions.first().elementHandle()
      await region!.scrollIntoViewIfNeeded()
      const box = (await region!.boundingBox())!
      await page.mouse.move(1, 1)
      await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2)
      await map.locator('.chart-tip').filter({ visible: true }).waitFor({ timeout: 3000 })
      t.equal(await region!.getAttribute('stroke-width'), '2', 'hovered: outlined')
      t.equal((await region!.getAttribute('fill'))?.toLowerCase(), legend.bad, "and still the legend's bad colour")
      t.same(await violationsAtBothWidths(page), [], 'axe: no violation at 1280 and 375 px')
      t.same(problems, [], 'no script error and no CSP refusal')
      await page.context().close()
    })
  }

  // Many series and long category names: a column chart of the nine districts as series, one of two
  // indicators over the nine districts, one of three indicators by province, and a line over the
  // three campaigns (long names) by province.
  const districts = { campaign_ids: [march], location_ids: [location.get('Veridia')], location_depth: 2 }
  const counts = ids('Children missed', 'Children vaccinated', 'Access challenged')
  const many = [
    { uuid: 'nine-series', title: 'Nine districts as series', chart_json: { type: 'ColumnChart', groupBy: 'location', indicator_ids: counts, ...districts } },
    { uuid: 'two-by-nine', title: 'Two indicators by district', chart_json: { type: 'ColumnChart', indicator_ids: counts.slice(0, 2), ...districts } },
    { uuid: 'nine-slices', title: 'Nine districts as slices', chart_json: { type: 'PieChart', indicator_ids: counts.slice(0, 1), ...districts } },
    { uuid: 'three-by-three', title: 'Provinces as series', chart_json: { type: 'ColumnChart', groupBy: 'location', indicator_ids: counts, ...byProvince } },
    {
      uuid: 'campaign-line',
      title: 'Missed over the campaigns',
      chart_json: {
        type: 'LineChart',
        indicator_ids: counts.slice(0, 1),
        campaign_ids: [...campaign.values()],
        location_ids: [location.get('Veridia')],
        location_depth: 1,
      },
    },
  ]
  for (const chart of many) await post('/custom_chart/', chart)
  const manyBoard = await post('/dashboard/', {
    title: 'Many series',
    rows: [{ charts: ['nine-series', 'two-by-nine'] }, { charts: ['three-by-three', 'campaign-line'] }, { charts: ['nine-slices'] }],
  })
  /**
   * The texts a chart's drawing shows: where each is in the drawing (the part its clip leaves: a
   * scrolling legend clips the names beyond its pager), and whether it is turned.
   */
  const drawnTexts = (page: Page, title: string) =>
    page
      .locator('figure.chart', { has: page.locator('figcaption', { hasText: title }) })
      .locator('.drawing svg text')
      .evaluateAll((nodes) =>
        nodes
          .map((n) => {
            const whole = n.getBoundingClientRect()
            const clipped = n.closest('[clip-path]')
            const clipId = /url\(["']?#([^"')]+)/.exec(clipped?.getAttribute('clip-path') ?? '')?.[1]
            const clip = clipId ? document.getElementById(clipId)?.firstElementChild?.getBoundingClientRect() : undefined
            const left = clip ? Math.max(whole.left, clip.left) : whole.left
            const top = clip ? Math.max(whole.top, clip.top) : whole.top
            const right = clip ? Math.min(whole.right, clip.right) : whole.right
            const bottom = clip ? Math.min(whole.bottom, clip.bottom) : whole.bottom
            const box = { left, top, width: Math.max(0, right - left), height: Math.max(0, bottom - top) }
            const svg = n.closest('svg')!.getBoundingClientRect()
            const matrix = /matrix\(([^)]+)\)/
              .exec(n.getAttribute('transform') ?? '')?.[1]
              .split(/[ ,]+/)
              .map(Number)
            return {
              text: n.textContent ?? '',
              left: box.left - svg.left,
              top: box.top - svg.top,
              width: box.width,
              height: box.height,
              turned: Boolean(matrix && Math.abs(matrix[1]) > 0.01),
              svgHeight: svg.height,
              svgWidth: svg.width,
            }
          })
          .filter((box) => box.width > 0 && box.text.trim() !== ''),
      )
  for (const width of [1280, 375]) {
    await t.test(`at ${width} px, many series: no text over another, every category named, a legend of nine leaving the plot its room`, async (t) => {
      const { page, problems } = await watchedPage(browser, { width, height: 900 })
      await signIn(page, server.url, 'admin', password)
      // As each chart says: the line keeps its three campaigns.
      await page.goto(`${server.url}/app/#/dashboard/${manyBoard.id}?campaign=each`)
      await chartsDrawn(page, 5)
      for (const { title } of many) {
        const texts = (await drawnTexts(page, title)).filter((box) => !box.turned)
        const over = texts.flatMap((a, i) =>
          texts
            .slice(i + 1)
            .filter(
              (b) =>
                Math.min(a.left + a.width, b.left + b.width) - Math.max(a.left, b.left) > 1 &&
                Math.min(a.top + a.height, b.top + b.height) - Math.max(a.top, b.top) > 1,
            )
            .map((b) => `“${a.text}” and “${b.text}”`),
        )
        t.same(over, [], `${title}: no text drawn over another`)
      }
      const line = (await drawnTexts(page, 'Missed over the campaigns')).map((box) => box.text)
      for (const name of campaign.keys()) t.ok(line.includes(name), `the line names ${name}`)
      // A legend of nine takes two lines at most (the plain legend took three on a phone), and the plot,
      // which the value axis's labels (numbers in the drawing's left quarter) span, keeps a third of the drawing.
      const nine = await drawnTexts(page, 'Nine districts as series')
      const legendLines = new Set(nine.filter((box) => location.has(box.text)).map((box) => Math.round(box.top)))
      t.ok(legendLines.size <= 2, `nine series: a legend of ${legendLines.size} line(s)`)
      const axis = nine.filter((box) => /^[\d,]+$/.test(box.text) && box.left < 0.25 * box.svgWidth)
      const span = Math.max(...axis.map((box) => box.top)) - Math.min(...axis.map((box) => box.top))
      t.ok(span >= axis[0].svgHeight / 3, `nine series: the plot keeps ${Math.round(span)} of ${Math.round(axis[0].svgHeight)} px`)
      // A pie of nine names each slice in the drawing, by a label or a legend line, none behind a pager.
      const slices = await drawnTexts(page, 'Nine districts as slices')
      const districtNames = [...location.keys()].filter((name) => slices.some((box) => box.text.startsWith(name)))
      t.equal(districtNames.length, 9, `a pie of nine: each district named (${districtNames.join(', ')})`)
      t.notOk(
        slices.some((box) => /^\d+\/\d+$/.test(box.text)),
        'a pie of nine: no pager',
      )
      const outside = slices.filter((box) => box.left < 0 || box.top < 0 || box.left + box.width > box.svgWidth + 1 || box.top + box.height > box.svgHeight + 1)
      t.same(
        outside.map((box) => box.text),
        [],
        'a pie of nine: every name inside the drawing',
      )
      t.same(problems, [], 'no script error and no CSP refusal')
      await page.context().close()
    })
  }

  await t.test("exports: the map's legend drawn in, its bad swatch the bad regions' colour, in SVG and PNG", async (t) => {
    const svg = await (await api(server, `/export_file/?chart_id=${missedMap}&type=svg`)).text()
    const items = svgTextsAfterShapes(svg)
    const badItem = items.find((item) => item.text.startsWith('bad: '))
    t.ok(badItem, 'the status legend is in the file')
    t.equal(badItem?.text, 'bad: 4 % or more')
    t.ok(
      items.some((item) => item.text === 'March 2016 - NID - OPV · Provinces of Veridia'),
      'and the subtitle: where and when',
    )
    const regionFills = [...svg.matchAll(/<path [^>]*fill="(#[0-9a-fA-F]{6})"/g)].map((m) => m[1].toLowerCase())
    // The bad regions and the swatch: one more than the bad provinces.
    t.equal(regionFills.filter((f) => f === badItem?.fill).length, bad + 1, "the bad regions in the swatch's colour")
    const png = PNG.sync.read(Buffer.from(await (await api(server, `/export_file/?chart_id=${missedMap}&type=png&width=800`)).arrayBuffer()))
    const [r, g, b] = rgbOf(badItem!.fill)
    let painted = 0
    for (let i = 0; i < png.data.length; i += 4) if (png.data[i] === r && png.data[i + 1] === g && png.data[i + 2] === b) painted++
    t.ok(painted > 2000, `the PNG paints ${painted} pixels in the legend's bad (a region, not only the swatch)`)
  })

  await t.test('a share link made at October and Eastvale opens at October and Eastvale; screenshots of a share and an export', async (t) => {
    const { page, problems } = await watchedPage(browser)
    await signIn(page, server.url, 'admin', password)
    await page.goto(`${server.url}/app/#/dashboard/${demoId}?campaign=${october}`)
    await chartsDrawn(page, 5)
    await pickLocation(page, 'Location', 'Eastvale')
    await page.waitForURL(new RegExp(`location=${location.get('Eastvale')}`))
    const column = figure(page, 'ColumnChart')
    await column.locator('.subtitle', { hasText: 'Eastvale' }).waitFor()
    t.equal(await column.locator('.subtitle').textContent(), 'October 2016 - NID - bOPV · Districts of Eastvale', 'a drill-down changes the subtitle')
    await page.getByText('Share this dashboard', { exact: true }).click()
    await page.getByLabel('Label (who or what it is for)').fill('Eastvale team')
    await page.getByRole('button', { name: 'Create a link for Eastvale' }).click()
    const url = await page.locator('.share-url').inputValue()
    t.match(url, new RegExp(`#/shared/[\\w-]{43}\\?campaign=${october}&location=${location.get('Eastvale')}$`), 'the address holds the view')
    t.match(
      await page.getByRole('list', { name: 'Links to this dashboard' }).textContent(),
      /Eastvale only · opens on October 2016 - NID - bOPV ·/,
      'the link listed with what it is limited to (the place), and the view it opens on (a campaign its reader may change)',
    )

    // Opened with the view the API keeps (the token alone), as someone who cut the address short would.
    const stranger = await watchedPage(browser)
    await stranger.page.goto(url.replace(/\?.*$/, ''))
    await chartsDrawn(stranger.page, 5)
    t.equal(await stranger.page.getByLabel('Campaign').inputValue(), String(october), 'October picked')
    const choices = async (page: Page) =>
      page
        .getByLabel('Campaign')
        .locator('option')
        .evaluateAll((options) => options.map((o) => o.textContent))
    const signedIn = await watchedPage(browser)
    await signIn(signedIn.page, server.url, 'admin', password)
    await signedIn.page.goto(`${server.url}/app/#/dashboard/${demoId}?campaign=${october}`)
    await signedIn.page.getByLabel('Campaign').locator('option').nth(2).waitFor({ state: 'attached' })
    t.same(await choices(stranger.page), await choices(signedIn.page), 'the shared link offers the campaigns in the dashboard’s order')
    await signedIn.page.context().close()
    const shared = figure(stranger.page, 'ColumnChart')
    t.equal(await shared.locator('.subtitle').textContent(), 'October 2016 - NID - bOPV · Districts of Eastvale', 'at Eastvale')
    const expected = await apiValues(indicator.get('Children missed')!, october, `location_id=${location.get('Eastvale')}&location_depth=1`)
    t.same(tableValues(await numbersOf(shared)), expected, "October's values of Eastvale's districts")
    t.same(
      await stranger.page.getByRole('navigation', { name: 'Drill-down' }).getByRole('button').allTextContents(),
      ['Eastvale'],
      "a link for Eastvale: its breadcrumb starts there, never offering each chart's own locations (outside the link)",
    )
    await stranger.page.locator('h1').scrollIntoViewIfNeeded()
    await stranger.page.screenshot({ path: join(shots, 'share.png'), fullPage: true })
    t.same(stranger.problems, [], 'no script error and no CSP refusal')

    // The export of the same view, as the dashboard's Export gives it.
    const png = await api(server, `/export_file/?dashboard_id=${demoId}&type=png&width=1200&campaign=${october}&location=${location.get('Eastvale')}`)
    t.equal(png.status, 200)
    writeFileSync(join(shots, 'export.png'), Buffer.from(await png.arrayBuffer()))
    t.same(problems, [], 'no script error and no CSP refusal')
  })

  await t.test('the builder: type names in words, a pie keeps one indicator and says why', async (t) => {
    const { page, problems } = await watchedPage(browser)
    await signIn(page, server.url, 'admin', password)
    await page.goto(`${server.url}/app/#/chart/new/${board.id}`)
    const type = page.getByLabel('Chart type')
    await type.waitFor()
    t.same((await type.locator('option').allTextContents()).slice(0, 2), ['Columns', 'Columns stacked to 100 %'], 'types named in words')
    await type.selectOption('PieChart')
    t.match(await page.locator('#type-takes').textContent(), /one indicator and one campaign/)
    const indicators = page.getByRole('group', { name: 'Indicators' })
    await indicators.getByLabel('Children vaccinated', { exact: true }).check()
    await indicators.getByLabel('Children missed', { exact: true }).check()
    const checked = await indicators.getByRole('checkbox', { checked: true }).count()
    t.equal(checked, 1, 'a second indicator replaces the first')
    t.same(problems, [])
  })
})
