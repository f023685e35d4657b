// A chart's PDF says what its card on the screen says: for every chart type, each label the card shows
// (its drawing's words and numbers, a table's cells, the status legend) is read back from the PDF as a
// person reads it: the page rendered by poppler (`pdftoppm`) and read by Tesseract's OCR. A label
// Tesseract cannot read (a single digit, a label drawn at an angle) is found in the PDF's text where
// the page has ink (`pdftotext -bbox`): in the PDF and drawn, not white on white. A map keeps the
// screen's aspect; PDFs on A4 and US Letter paper open without a warning.
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { PNG } from 'pngjs'
import t from 'tap'
import { chartsDrawn, noChromium, signIn, watchedPage, webApp } from './browser.js'
import { api } from './processes.js'

const run = promisify(execFile)
const TOOLS = ['pdftoppm', 'pdftotext', 'pdfinfo', 'tesseract']
const missingTool = await Promise.all(
  TOOLS.map((tool) =>
    run('sh', ['-c', `command -v ${tool}`]).then(
      () => undefined,
      () => tool,
    ),
  ),
).then((found) => found.find(Boolean))
const skip = noChromium || (missingTool && `${missingTool} is not installed (Debian: poppler-utils, tesseract-ocr)`)

/** Every chart type, each as a chart of the demo's first campaign (or its 2016 cases, by month). */
const TYPES = [
  'ColumnChart',
  'BarChart',
  'StackedPercentColumnChart',
  'LineChart',
  'PieChart',
  'ChoroplethMap',
  'MapChart',
  'BubbleMap',
  'TableChart',
  'RawData',
]
/** The resolution pages are read at: enough for 9-point text. */
const DPI = 200

/** Words compared as OCR gives them back: lower case, no spaces, the characters it confuses made one. */
const comparable = (text: string) =>
  text
    .toLowerCase()
    .normalize('NFKC')
    .replace(/[\s\u00a0\u202f]+/g, '')
    .replace(/[·•:;.,'’"]/g, '')
    .replace(/[o]/g, '0')
    .replace(/[il|]/g, '1')

/** The page of a PDF as pixels (`pdftoppm`), with what it printed on stderr. */
async function rendered(pdf: string, dpi = DPI) {
  const { stderr } = await run('pdftoppm', ['-r', String(dpi), '-png', '-singlefile', pdf, pdf.replace(/\.pdf$/, '')])
  return { png: PNG.sync.read(readFileSync(pdf.replace(/\.pdf$/, '.png'))), stderr }
}

/** The words of the PDF's text with their boxes, in points (`pdftotext -bbox`). */
async function wordBoxes(pdf: string) {
  const { stdout } = await run('pdftotext', ['-bbox', pdf, '-'])
  return [...stdout.matchAll(/<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)<\/word>/g)].map((m) => ({
    box: m.slice(1, 5).map(Number),
    word: m[5].replace(/&amp;/g, '&').replace(/&lt;/g, '<').replace(/&gt;/g, '>'),
  }))
}

/** Whether the page has dark ink inside a box given in points: text drawn so that a person sees it. */
function inked(png: PNG, [x0, y0, x1, y1]: number[]) {
  const scale = DPI / 72
  let dark = 0
  for (let y = Math.floor(y0 * scale); y < Math.ceil(y1 * scale); y++)
    for (let x = Math.floor(x0 * scale); x < Math.ceil(x1 * scale); x++) {
      const i = (y * png.width + x) * 4
      if (png.data[i] + png.data[i + 1] + png.data[i + 2] < 3 * 140) dark++
    }
  return dark >= 4
}

/**
 * The page's words as Tesseract reads them (sparse text: labels scattered over a drawing), twice: as
 * printed, and with only its dark ink kept (a label over a coloured region, which the colour hides
 * from OCR, as a person reads it against the region).
 */
async function readByOcr(png: PNG, base: string) {
  const ink = new PNG({ width: png.width, height: png.height })
  for (let i = 0; i < png.data.length; i += 4) {
    const dark = 0.299 * png.data[i] + 0.587 * png.data[i + 1] + 0.114 * png.data[i + 2] < 60
    ink.data.fill(dark ? 0 : 255, i, i + 3)
    ink.data[i + 3] = 255
  }
  writeFileSync(`${base}-ink.png`, PNG.sync.write(ink))
  const [asPrinted, inked] = await Promise.all(
    [`${base}.png`, `${base}-ink.png`].map((file) => run('tesseract', [file, '-', '--psm', '11']).then(({ stdout }) => stdout)),
  )
  return `${asPrinted}\n${inked}`
}

/** The lowest row of a picture with dark ink (text, axis lines): where what is drawn ends. */
function lowestInkRow(png: PNG) {
  for (let y = png.height - 1; y >= 0; y--)
    for (let x = 0; x < png.width; x++) {
      const i = (y * png.width + x) * 4
      if (png.data[i] + png.data[i + 1] + png.data[i + 2] < 3 * 200) return y
    }
  return 0
}

/** The box of a picture's coloured area (a map's regions): the rows and columns where it is mostly drawn. */
function colouredBox(png: PNG) {
  const saturated = (x: number, y: number) => {
    const i = (y * png.width + x) * 4
    const [r, g, b] = [png.data[i], png.data[i + 1], png.data[i + 2]]
    return Math.max(r, g, b) - Math.min(r, g, b) > 60
  }
  const rows = Array.from({ length: png.height }, (_, y) => Array.from({ length: png.width }, (_, x) => saturated(x, y)).filter(Boolean).length)
  const columns = Array.from({ length: png.width }, (_, x) => Array.from({ length: png.height }, (_, y) => saturated(x, y)).filter(Boolean).length)
  // A legend's swatches are small beside the regions: a row or column counts at a third of the widest.
  const span = (counts: number[]) => {
    const least = Math.max(...counts) / 3
    const drawn = counts.flatMap((count, i) => (count >= least ? [i] : []))
    return drawn[drawn.length - 1] - drawn[0] + 1
  }
  return { width: span(columns), height: span(rows) }
}

t.test('every chart type’s PDF shows the labels of its card on the screen', { skip }, async (t) => {
  const { server, password, browser, indicator, campaign, location } = await webApp(t)
  const dir = mkdtempSync(join(tmpdir(), 'rhizome-print-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const country = location.get('Veridia')!
  const first = [...campaign.values()][0]
  const chartIds = new Map<string, number>()
  for (const type of TYPES) {
    const map = ['ChoroplethMap', 'MapChart', 'BubbleMap'].includes(type)
    const json = {
      type,
      indicator_ids: map || type === 'PieChart' ? [indicator.get('Percent missed')!] : [indicator.get('Children missed')!, indicator.get('Percent missed')!],
      campaign_ids: [first],
      location_ids: [country],
      location_depth: 1,
      groupByTime: 'campaign',
      ...(map || type === 'PieChart' ? {} : { groupBy: 'indicator' }),
    }
    if (type === 'PieChart') json.indicator_ids = [indicator.get('Children vaccinated')!]
    // Shares of one whole: two counts of a like size, each segment tall enough for its label.
    if (type === 'StackedPercentColumnChart') json.indicator_ids = [indicator.get('Children vaccinated')!, indicator.get('Children targeted')!]
    const res = await api(server, '/custom_chart/', {
      method: 'POST',
      body: JSON.stringify({ uuid: `print-${type}`, title: `Print ${type}`, chart_json: JSON.stringify(json) }),
    })
    t.equal(res.status, 201, `${type} saved`)
    chartIds.set(type, (await res.json()).id)
  }
  // A wide map: Northmarch's three districts lie side by side.
  const wideMap = await api(server, '/custom_chart/', {
    method: 'POST',
    body: JSON.stringify({
      uuid: 'print-wide-map',
      title: 'Print wide map',
      chart_json: {
        type: 'ChoroplethMap',
        indicator_ids: [indicator.get('Percent missed')],
        campaign_ids: [first],
        location_ids: [location.get('Northmarch')],
        location_depth: 1,
      },
    }),
  })
  t.equal(wideMap.status, 201, 'a wide map saved')
  const wideMapId = (await wideMap.json()).id
  const board = await api(server, '/dashboard/', {
    method: 'POST',
    body: JSON.stringify({
      title: 'Print',
      rows: [...TYPES.map((type) => ({ layout: 1, charts: [`print-${type}`] })), { layout: 1, charts: ['print-wide-map'] }],
    }),
  })
  const boardId = (await board.json()).id

  // A card as wide as a chart on an A4 page or narrower: the screen shows no label the page has no room for.
  const { page, problems } = await watchedPage(browser, { width: 820, height: 900 })
  await signIn(page, server.url, 'admin', password)
  await page.goto(`${server.url}/app/#/dashboard/${boardId}?campaign=each`)
  await chartsDrawn(page, TYPES.length + 1)

  for (const type of TYPES) {
    const card = page.locator(`figure.chart[data-type="${type}"]`).first()
    // What the card shows: its drawing's texts and how each is turned, or a table's cells; its status legend.
    // Inline, without named helpers: the page runs this function's source as it is.
    const labels = await card.evaluate((figure) =>
      [
        // What is drawn and visible (ECharts keeps its emphasis labels in the drawing, transparent).
        ...[...figure.querySelectorAll('.drawing svg text')]
          .filter((text) => text.checkVisibility({ opacityProperty: true, visibilityProperty: true }) && !text.closest('[opacity="0"], [fill-opacity="0"]'))
          .map((text) => ({
            text: text.textContent?.trim() ?? '',
            turned: /rotate|matrix\((?!1 0 0 1 )/.test(text.getAttribute('transform') ?? ''),
          })),
        ...[...figure.querySelectorAll('table th, table td')]
          .filter((cell) => cell.checkVisibility())
          .map((cell) => {
            const copy = cell.cloneNode(true) as Element
            for (const extra of copy.querySelectorAll('.coverage, .visually-hidden, button')) extra.remove()
            return { text: copy.textContent?.trim() ?? '', turned: false }
          }),
        ...[...figure.querySelectorAll('.status-legend li')].map((item) => ({ text: item.textContent?.trim() ?? '', turned: false })),
      ].filter((label) => label.text),
    )
    t.ok(labels.length >= 3, `${type}: the card shows ${labels.length} labels`)

    const res = await api(server, `/export_file/?chart_id=${chartIds.get(type)}&type=pdf`)
    t.equal(res.status, 200, `${type}: a PDF`)
    const pdf = join(dir, `${type}.pdf`)
    writeFileSync(pdf, Buffer.from(await res.arrayBuffer()))
    const { png, stderr } = await rendered(pdf)
    t.equal(stderr, '', `${type}: poppler reads the PDF without a warning`)
    const ocr = await readByOcr(png, pdf.replace(/\.pdf$/, ''))
    const read = comparable(ocr)
    const boxes = await wordBoxes(pdf)
    const unread: string[] = []
    const unseen: string[] = []
    for (const { text, turned } of labels) {
      if (!turned && text.length > 2 && read.includes(comparable(text))) continue
      // Not read by OCR: each of its words must be in the PDF's text, where the page has ink.
      const words = text.split(/\s+/)
      const drawn = words.every((word) => boxes.some((b) => b.word === word && inked(png, b.box)))
      if (!drawn) unseen.push(text)
      else if (!turned && text.length > 2) unread.push(text)
    }
    t.same(unseen, [], `${type}: every label of the card is drawn in the PDF`)
    t.same(unread, [], `${type}: and read back from the printed page`)
  }

  // The map as on the screen: its regions' box has the card's aspect, within 2 %; a wide map too
  // (drawn past both sides of its box, its outer districts were cut).
  const wide = await api(server, `/export_file/?chart_id=${wideMapId}&type=pdf`)
  writeFileSync(join(dir, 'wide-map.pdf'), Buffer.from(await wide.arrayBuffer()))
  for (const [title, file] of [
    ['Print ChoroplethMap', 'ChoroplethMap.pdf'],
    ['Print wide map', 'wide-map.pdf'],
  ]) {
    const card = page.locator('figure.chart', { has: page.locator('figcaption', { hasText: title }) })
    const screen = colouredBox(PNG.sync.read(await card.locator('.drawing').screenshot()))
    const printed = colouredBox((await rendered(join(dir, file))).png)
    const [onScreen, onPaper] = [screen.width / screen.height, printed.width / printed.height]
    t.ok(Math.abs(onPaper / onScreen - 1) <= 0.02, `${title}: the map's aspect ${onPaper.toFixed(3)} on paper, ${onScreen.toFixed(3)} on the screen`)
  }
  t.same(problems, [], 'no script error on the page')
})

t.test('a PDF on A4 or US Letter paper', { skip }, async (t) => {
  const { server } = await webApp(t)
  const dir = mkdtempSync(join(tmpdir(), 'rhizome-print-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const dashboard = (await (await api(server, '/dashboard/?limit=1')).json()).objects[0].id
  for (const [page, size] of [
    ['a4', /841\.89 x 595\.28 pts \(A4\)/],
    ['letter', /792 x 612 pts \(letter\)/],
  ] as const) {
    const res = await api(server, `/export_file/?dashboard_id=${dashboard}&type=pdf&page=${page}`)
    t.equal(res.status, 200, page)
    const pdf = join(dir, `${page}.pdf`)
    writeFileSync(pdf, Buffer.from(await res.arrayBuffer()))
    const { stdout, stderr } = await run('pdfinfo', [pdf])
    t.match(stdout, size, `${page}: its paper, landscape`)
    t.equal(stderr, '', `${page}: no warning`)
    // Two charts a row: the pie beside the columns has less room, and its labels stay whole words.
    const words = (await run('pdftotext', ['-layout', pdf, '-'])).stdout.split(/\s+/)
    const pieces = ['Northmarch', 'Southreach', 'Eastvale'].flatMap((name) =>
      words.filter((w) => w !== name && ((w.length >= 3 && name.startsWith(w)) || (w.length >= 2 && name.endsWith(w)))),
    )
    t.same(pieces, [], `${page}: no province's name broken into pieces`)
    // The line of polio cases, half a page wide: every month the screen names is on the page (turned
    // 30°, every other one overlapped its neighbour and was left out).
    const months = (await run('pdftotext', ['-layout', pdf, '-'])).stdout.split('\n').flatMap((line) => /^\s*([A-Z][a-z]{2} 2016)\s*$/.exec(line)?.[1] ?? [])
    t.same(
      months,
      ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'].map((m) => `${m} 2016`),
      `${page}: the line's twelve months, each on the page`,
    )
    const { png, stderr: warnings } = await rendered(pdf, 50)
    t.equal(warnings, '', `${page}: rendered without a warning`)
    // The first row's charts fill their page: the last ink (the columns' axis labels) near the margin.
    const lowestInk = lowestInkRow(png) / png.height
    t.ok(lowestInk > 0.8, `${page}: the first page's charts reach ${Math.round(lowestInk * 100)} % of its height (no third left empty)`)
  }
  const wrong = await api(server, `/export_file/?dashboard_id=${dashboard}&type=pdf&page=a3`)
  t.equal(wrong.status, 400)
  t.match((await wrong.json()).message, /page.*a4 or letter/)
})
