// The web app's pure modules in node, without a browser: number, period and time formatting, what a
// chart reads and how its values are indexed and drawn, the hash routes, the query builder, the
// upload template.
import t from 'tap'
import { query } from '../web/api.js'
import { useLanguage } from '../web/i18n.js'
import {
  chartData,
  chartOption,
  drawsStatuses,
  chartRead,
  chartSpec,
  coverageWords,
  isMap,
  isTable,
  isTimeChart,
  quantileClasses,
  rootsFallback,
  tableRows,
  topSlices,
  valueAt,
} from '../web/chart-data.js'
import { fileNameOf, fold, formatPeriod, formatTime, formatValue } from '../web/format.js'
import { parseRoute, routeHash } from '../web/route.js'
import { csvCells, csvFileName, peoplesCsv } from '../web/csv-download.js'
import { boundsById, statusClass, statusFill, statusLegend } from '../web/status.js'
import { chartSubtitle, drawnOnly } from '../web/chart-parts.js'
import { chartTypes, defineChartType } from '../web/charts/registry.js'
import { typeChoices } from '../web/views/chart-builder.js'
import { matchLocations } from '../web/views/location-search.js'
import { csvCell, percentOf, STEP_NAMES, templateCsv } from '../web/views/upload.js'

const catalog = {
  campaigns: [
    { id: 7, name: 'June', start_date: '2016-06-01' },
    { id: 3, name: 'March', start_date: '2016-03-01' },
  ],
  indicators: [
    { id: 1, short_name: 'Missed', data_format: 'int', resource_name: 'campaign' },
    { id: 2, short_name: 'Percent missed', data_format: 'pct', resource_name: 'campaign' },
    { id: 9, short_name: 'Cases', data_format: 'date_int', resource_name: 'date' },
  ],
  locations: [
    { id: 10, name: 'North', location_code: 'N' },
    { id: 11, name: 'South', location_code: 'S' },
  ],
  roots: [{ id: 10, name: 'North' }],
  locationName: new Map([
    [10, 'North'],
    [11, 'South'],
  ]),
  indicatorName: new Map([
    [1, 'Missed'],
    [2, 'Percent missed'],
  ]),
  indicatorFormat: new Map([
    [1, 'int'],
    [2, 'pct'],
  ]),
}

t.test('numbers, periods and times as people read them', async (t) => {
  t.equal(formatValue(0.043795620437956206, 'pct'), '4.38 %')
  t.equal(formatValue(1, 'pct'), '100 %')
  t.equal(formatValue(0.5, 'pct'), '50 %')
  t.equal(formatValue(12345, 'int'), '12,345')
  t.equal(formatValue(1234.5678), '1,235')
  t.equal(formatValue(0.123456), '0.123')
  t.equal(formatValue(1, 'bool'), 'Yes')
  t.equal(formatValue(0, 'bool'), 'No')
  t.equal(formatValue(1 / 3, 'bool'), '33.3 % yes', 'a province of three districts, one of which said yes')
  t.equal(formatValue(null, 'int'), '–')
  t.equal(formatPeriod('20161'), '2016 Q1')
  t.equal(formatPeriod('20164', 'quarter'), '2016 Q4')
  t.equal(formatPeriod('201603'), 'Mar 2016')
  t.equal(formatPeriod(2016, 'year'), '2016')
  t.equal(formatPeriod(1, 'all_time'), 'All time')
  t.equal(formatTime('2026-11-29T03:54:00.189000', 'UTC'), 'Nov 29, 2026, 3:54 AM UTC', 'a seed timestamp is UTC')
  t.equal(formatTime('2026-11-29T03:54:00.189000', 'Asia/Kolkata'), 'Nov 29, 2026, 9:24 AM GMT+5:30', 'shown in the reader’s zone, named')
  t.equal(formatTime(null), '–')
  t.equal(fileNameOf('tally.csv-1795897058'), 'tally.csv', 'the server’s uniqueness suffix is not the file’s name')
  t.equal(fileNameOf('tally.csv-1795897058-2'), 'tally.csv')
  t.equal(fileNameOf('report-2016.csv'), 'report-2016.csv')
})

t.test('a chart’s read: chart_json as an object or the original’s string, campaigns or dates, a view', async (t) => {
  const saved = { type: 'ColumnChart', indicator_ids: [1], campaign_ids: [3], location_ids: [10], location_depth: 1, groupByTime: 'campaign' }
  t.same(chartSpec(JSON.stringify(saved)), saved, 'the original front-end saved a JSON string')
  t.same(chartSpec(saved), saved)
  t.same(chartSpec('not json'), {})
  t.notOk(isTimeChart(saved), 'groupByTime "campaign" reads campaigns')
  t.ok(isTimeChart({ ...saved, groupByTime: 'quarter' }), 'a date bucket reads dates')
  t.ok(isTimeChart({ start_date: '2016-01-01' }), 'no campaigns, dates: over dates')
  t.equal(
    chartRead(saved, {}).path,
    '/campaign_datapoint/?indicator__in=1&campaign__in=3&location_id=10&location_depth=1&chart_type=ColumnChart&with_coverage=1&limit=0',
  )
  t.equal(
    chartRead({ ...saved, groupByTime: 'all_time', start_date: '2016-01-01' }, {}).path,
    '/date_datapoint/?indicator__in=1&location_id=10&location_depth=1&start_date=2016-01-01&group_by_time=all_time&limit=0',
  )
  t.equal(
    chartRead(saved, { campaignId: 7, locationId: 11 }).path,
    '/campaign_datapoint/?indicator__in=1&campaign__in=7&location_id=11&location_depth=1&chart_type=ColumnChart&with_coverage=1&limit=0',
    'the view wins',
  )
  t.equal(chartRead({ ...saved, location_ids: [10, 11] }, {}).path.includes('location_id__in=10%2C11'), true, 'several locations: a list')
  // A date range narrows: a chart over time to the days in both ranges, a chart of campaigns to those starting in it.
  const monthly = { ...saved, groupByTime: 'month', campaign_ids: [], start_date: '2016-01-01', end_date: '2016-12-31' }
  t.match(
    chartRead(monthly, { startDate: '2016-03-01', endDate: '2017-06-30' }).path,
    /start_date=2016-03-01&end_date=2016-12-31&/,
    'the later start, the earlier end',
  )
  const campaigns = [
    { id: 3, start_date: '2016-03-01' },
    { id: 8, start_date: '2016-09-01' },
  ]
  t.match(
    chartRead({ ...saved, campaign_ids: [3, 8] }, { startDate: '2016-06-01' }, { campaigns }).path,
    /campaign__in=8&/,
    'the campaigns starting in the range',
  )
  t.match(
    chartRead({ ...saved, campaign_ids: [3] }, { startDate: '2016-06-01' }, { campaigns }).path,
    /indicator__in=1&start_date=2016-06-01&location_id/,
    'none of its own in the range: the campaigns of the range',
  )
  t.equal(
    chartRead({ ...monthly, pinned: true }, { startDate: '2016-03-01', locationId: 11 }).path,
    chartRead(monthly, {}).path,
    'a pinned chart keeps its own',
  )
  t.equal(rootsFallback(saved, catalog), undefined, 'a visible location: as saved')
  const hidden = rootsFallback({ ...saved, location_ids: [1] }, catalog)
  t.same(
    [hidden?.location_ids, hidden?.location_depth, hidden?.type],
    [[10], 1, 'ColumnChart'],
    'a location outside hers: her roots, at its depth, the rest as saved',
  )
})

t.test('a chart’s values: indexed by key, campaigns in time order, options with readable numbers', async (t) => {
  const read = chartRead({ indicator_ids: [1, 2], campaign_ids: [3, 7], location_ids: [10] }, {})
  const rows = [
    { indicator_id: 1, location_id: 10, campaign_id: 7, value: 1200 },
    { indicator_id: 1, location_id: 10, campaign_id: 3, value: 900 },
    { indicator_id: 2, location_id: 10, campaign_id: 3, value: 0.25 },
    { indicator_id: 1, location_id: 11, campaign_id: 3, value: 100 },
  ]
  const spec = { type: 'StackedPercentColumnChart', indicator_ids: [1, 2] }
  const data = chartData(spec, read, rows, catalog)
  t.same(
    data.keys.map((k) => k.label),
    ['March', 'June'],
    'campaigns by start date',
  )
  t.equal(valueAt(data, 1, 10, 7), 1200)
  t.equal(valueAt(data, 2, 10, 7), null, 'no value: null')
  t.equal(data.index.size, rows.length, 'one entry per value: lookups by key, not a scan')

  const lines: string[][] = []
  const option = chartOption({ ...spec, groupBy: 'location', indicator_ids: [1] }, data, catalog, { tooltip: (l: string[]) => (lines.push(l), '') })
  const [north, south] = option.series
  t.same([north.stack, north.data[0] + south.data[0]], ['share', 1], 'stacked percent: the shares of a category sum to one')
  t.equal(north.data[0], 0.9)
  option.tooltip.formatter([{ name: 'March', seriesIndex: 0, dataIndex: 0, value: 0.9, seriesName: 'North' }])
  t.same(lines.at(-1), ['March', 'North: 90 % (900)'], 'its tooltip: the share and the value')

  const map = chartOption({ type: 'ChoroplethMap', indicator_ids: [2] }, { ...data, keys: [{ id: 3, label: 'March' }] }, catalog, {
    mapName: 'm',
    tooltip: (l: string[]) => l.join(' / '),
  })
  t.same(map.visualMap.text, ['25 %', '25 %'], 'the map legend: numbers in the indicator’s format')
  t.equal(map.tooltip.formatter({ name: 'North', value: 0.25 }), 'North / Percent missed: 25 %', 'the map tooltip: the name, then the value')
  const pie = chartOption({ type: 'PieChart', indicator_ids: [1] }, { ...data, keys: [{ id: 3, label: 'March' }] }, catalog, {})
  t.equal(
    pie.series[0].label.formatter({ name: 'North', value: 12345 }),
    'North\n12,345',
    'pie labels with thousands separators, the value on a line of its own',
  )
  t.equal(
    chartOption({ type: 'PieChart', indicator_ids: [1] }, data, catalog, { narrow: true }).series[0].label.show,
    false,
    'narrow: a legend instead of labels',
  )
})

t.test('hash routes with the view, and the query builder', async (t) => {
  t.same(parseRoute('#/dashboard/5?campaign=3&location=12'), { path: '#/dashboard/5', parts: ['dashboard', '5'], params: { campaign: '3', location: '12' } })
  t.same(parseRoute(''), { path: '#/', parts: [], params: {} })
  t.equal(routeHash('#/dashboard/5', { campaign: 3, location: null, other: '' }), '#/dashboard/5?campaign=3')
  t.equal(routeHash('#/dashboard/5'), '#/dashboard/5')
  t.equal(query({ a: [1, 2], b: '', c: undefined, d: 'x y' }), '?a=1%2C2&d=x%20y')
})

t.test('the upload template: the header and rows the API gives, empty cells to fill, no formula', async (t) => {
  const template = {
    header: ['geocode', 'campaign', 'Missed', '=cmd', '@x'],
    rows: [
      ['N', 'March'],
      ['-1', 'a,"b"'],
    ],
  }
  t.equal(templateCsv(template), `geocode,campaign,Missed,'=cmd,'@x\r\nN,March,,,\r\n'-1,"a,""b""",,,\r\n`)
  t.equal(csvCell('+1'), "'+1", 'a cell a spreadsheet would run gets a leading quote')
  t.equal(csvCell("'=x"), "'=x", 'one already neutralised stays as it is')
})

t.test("an upload's progress moves forward through its stages, each an equal share", async (t) => {
  const at = (progress: Record<string, unknown>, state = 'active') => percentOf({ state, progress })
  t.equal(at({ stage: 'rows parsed', done: 100, total: 100, step: 1, steps: 5 }), 20, 'the first of five stages done')
  t.equal(at({ stage: 'submissions written', done: 0, total: 80, step: 2, steps: 5 }), 20, 'the next one starting: not back to 0')
  t.equal(at({ stage: 'submissions written', done: 40, total: 80, step: 2, steps: 5 }), 30)
  t.equal(at({ stage: 'datapoints written', done: 10, total: 10, step: 5, steps: 5 }), 99, 'below 100 until the job ends')
  t.equal(at({ stage: 'datapoints written', done: 10, total: 10, step: 5, steps: 5 }, 'completed'), 100)
  t.equal(at({ stage: 'values reverted', done: 1, total: 4 }), 25, 'a report without its place: through its stage')
  t.equal(percentOf(null), 0)
})

t.test('the location search: names starting with the text first, accents and case aside, bounded', async (t) => {
  const index = ['Veridia', 'Veridia › Eastvale', 'Veridia › Eastvale › Mbéré', 'Veridia › Northmarch › Ashford', 'Veridia › Southreach › East Harrow'].map(
    (lineage, id) => ({
      id,
      lineage,
      key: fold(lineage.split(' › ').at(-1)!),
    }),
  )
  t.same(
    matchLocations(index, 'east').map((m) => m.lineage),
    ['Veridia › Eastvale', 'Veridia › Southreach › East Harrow'],
    'starting with "east", by lineage',
  )
  t.same(
    matchLocations(index, 'MBERE').map((m) => m.lineage),
    ['Veridia › Eastvale › Mbéré'],
    'accents and case aside',
  )
  t.same(
    matchLocations(index, 'ford').map((m) => m.lineage),
    ['Veridia › Northmarch › Ashford'],
    'within a name too',
  )
  t.equal(matchLocations(index, '', 2).length, 2, 'at most the limit')
  const numbered = ['L1 › L10 › L980', 'L1 › L98', 'L1 › L10 › L9801'].map((lineage, id) => ({ id, lineage, key: fold(lineage.split(' › ').at(-1)!) }))
  t.same(
    matchLocations(numbered, 'L98').map((m) => m.lineage),
    ['L1 › L98', 'L1 › L10 › L980', 'L1 › L10 › L9801'],
    'the closest name first, whatever its lineage',
  )
})

t.test('country scale: a pie’s top slices and "Other", quantile classes, tables sorted with nulls last', async (t) => {
  const provinces = Array.from({ length: 100 }, (_, i) => ({ name: `P${i}`, value: i }))
  const slices = topSlices(provinces)
  t.equal(slices.length, 11, 'ten slices and one "Other": at most 12')
  t.same(
    slices.slice(0, 2),
    [
      { name: 'P99', value: 99 },
      { name: 'P98', value: 98 },
    ],
    'the largest first',
  )
  t.same(slices.at(-1), { name: 'Other (90)', value: (89 * 90) / 2 }, 'Other: the sum of the rest, their number named')
  t.same(topSlices(provinces.slice(0, 11)).length, 11, 'eleven slices drawn as they are: "Other" would hold one')

  const classes = quantileClasses(Array.from({ length: 100 }, (_, i) => i))
  t.equal(classes.length, 5)
  t.same([classes[0].min, classes.at(-1)!.max], [0, 99], 'from the least to the most')
  t.same(quantileClasses([1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2]), [{ min: 1, max: 2 }], 'equal values make one class, not five empty ones')

  const data = chartData(
    {},
    { over: 'campaigns', path: '/campaign_datapoint/?limit=0', where: {} },
    [
      { indicator_id: 1, location_id: 10, campaign_id: 3, value: 5 },
      { indicator_id: 1, location_id: 11, campaign_id: 3, value: null },
      { indicator_id: 1, location_id: 11, campaign_id: 7, value: 9 },
      { indicator_id: 1, location_id: 10, campaign_id: 7, value: 1 },
    ],
    catalog,
  )
  const order = (column: number, descending: boolean) =>
    tableRows(data, [1], catalog, { column, descending }).map(
      (r: { location: string; key: { label: string }; values: unknown[] }) => `${r.location} ${r.key.label} ${r.values[0]}`,
    )
  t.same(order(2, true), ['South June 9', 'North March 5', 'North June 1', 'South March null'], 'by value, largest first, no value last')
  t.same(order(2, false), ['North June 1', 'North March 5', 'South June 9', 'South March null'], 'smallest first, no value still last')
  t.same(order(0, true), ['South March null', 'South June 9', 'North March 5', 'North June 1'], 'by location, then campaigns in time order')
  t.equal(data.csv, '/campaign_datapoint/?format=csv&shape=wide', 'the CSV of every row: the read without its limit, wide')
})

t.test('the upload page names every kind of background job, and no other', async (t) => {
  const { backgroundJobs } = await import('../resources/jobs.js')
  t.same(Object.keys(STEP_NAMES).sort(), backgroundJobs.map((job) => job.kind).sort())
})

t.test('statuses: the legend of an indicator’s bounds, the read that asks for them, bars and regions in their colours', async (t) => {
  const bounds = boundsById([
    { id: 1, good_bound: 90, bad_bound: 70, bound_json: [] },
    { id: 2, good_bound: null, bad_bound: null, bound_json: [{ bound_name: 'Low', mn_val: 0, mx_val: 50 }] },
    { id: 3, good_bound: 5, bad_bound: null, bound_json: [] },
  ])
  t.same([...bounds.keys()], [1, 2], 'a good bound alone says no direction: no status')
  t.same(
    statusLegend(bounds.get(1), 'int').map((i: { label: string }) => i.label),
    ['good: 90 or more', 'ok: between 70 and 90', 'bad: 70 or less'],
  )
  t.same(
    statusLegend(bounds.get(2), 'pct').map((i: { label: string; className: string }) => [i.label, i.className]),
    [['Low: from 0 % to 5,000 %', 'status-range-0']],
  )
  t.equal(statusClass('bad', bounds.get(1)), 'status-bad')
  t.equal(statusClass(null, bounds.get(1)), '')
  t.equal(statusFill('Low', bounds.get(2)), '#7b3294', 'a range of its own: never the bars’ blue')
  const withBounds = { ...catalog, indicatorBounds: bounds }
  const column = { type: 'ColumnChart', indicator_ids: [1], campaign_ids: [3], location_ids: [10, 11] }
  const read = chartRead(column, {}, withBounds)
  t.match(read.path, /with_status=1/, 'an indicator with bounds is read with its statuses')
  t.notMatch(chartRead({ ...column, indicator_ids: [9] }, {}, withBounds).path, /with_status/, 'one without is not')
  const data = chartData(
    column,
    read,
    [
      { indicator_id: 1, location_id: 10, campaign_id: 3, value: 95, status: 'good' },
      { indicator_id: 1, location_id: 11, campaign_id: 3, value: 60, status: 'bad' },
    ],
    withBounds,
  )
  const bars = chartOption(column, data, withBounds).series[0].data
  t.same(
    bars.map((b: { itemStyle: { color: string } }) => b.itemStyle.color),
    ['#1a9641', '#d7191c'],
    'each bar in its status’s colour',
  )
  t.same(
    tableRows(data, [1], withBounds).map((r: { statuses: string[] }) => r.statuses[0]),
    ['good', 'bad'],
  )
  const map = chartOption({ ...column, type: 'ChoroplethMap' }, data, withBounds, { mapName: 'm' })
  t.ok(
    chartOption({ ...column, type: 'ChoroplethMap' }, data, withBounds, { mapName: 'm', narrow: true }).series[0].label.show,
    'two regions on a phone: named on the map',
  )
  t.equal(map.visualMap, undefined, 'a map by status has no scale of its own')
  t.same(
    map.series[0].data.map((d: { itemStyle: { areaColor: string } }) => d.itemStyle.areaColor),
    ['#1a9641', '#d7191c'],
  )
  // A legend only where its colours are drawn: one series of bars, a map, a table; not two series,
  // each in a colour of its own, nor a pie.
  const statusLegendOf = (option: { graphic: Array<{ style?: { text?: string } }> }) =>
    option.graphic.filter((g) => /good: 90 or more/.test(g.style?.text ?? '')).length
  t.ok(drawsStatuses(column, data, withBounds) && statusLegendOf(chartOption(column, data, withBounds)) === 1, 'one series in status colours: the legend')
  t.ok(drawsStatuses({ ...column, type: 'TableChart' }, data, withBounds), 'a table: the legend')
  const two = { ...column, indicator_ids: [1, 9] }
  const twoData = chartData(two, chartRead(two, {}, withBounds), [...data.points, { indicator_id: 9, location_id: 10, campaign_id: 3, value: 4 }], withBounds)
  t.notOk(drawsStatuses(two, twoData, withBounds), 'two series, a colour each: no status legend on the card')
  t.equal(statusLegendOf(chartOption(two, twoData, withBounds)), 0, 'nor in a file')
  t.notOk(drawsStatuses({ ...column, type: 'PieChart' }, data, withBounds), 'a pie: none')
})

t.test('coverage in words: the children by their type, incomplete below the threshold', async (t) => {
  const types = { childTypeOf: (id: number) => (id === 1 ? 'District' : id === 2 ? 'Health facility' : undefined) }
  t.equal(coverageWords({ reported: 7, expected: 9, below_threshold: true }, 1, types), '7 of 9 districts, incomplete')
  t.equal(coverageWords({ reported: 1, expected: 1 }, 1, types), '1 of 1 district')
  t.equal(coverageWords({ reported: 2, expected: 3 }, 2, types), '2 of 3 health facilities')
  t.equal(coverageWords(null, 1, types), '')
  // In French, the type's French plural after the count, as French says it.
  const speakEnglishAgain = useLanguage(() => 'fr')
  t.teardown(speakEnglishAgain)
  t.equal(coverageWords({ reported: 3, expected: 3 }, 1, types), '3 districts sur 3')
  t.equal(coverageWords({ reported: 1, expected: 1 }, 1, types), '1 district sur 1')
  t.equal(coverageWords({ reported: 2, expected: 5 }, 3, { childTypeOf: () => 'Canal' }), '2 canaux sur 5')
  t.equal(coverageWords({ reported: 2, expected: 5 }, 3, { childTypeOf: () => 'Pays' }), '2 pays sur 5')
  t.equal(coverageWords({ reported: 2, expected: 5 }, 3, { childTypeOf: () => 'Aire de santé' }), '2 aires de santé sur 5')
  speakEnglishAgain()
  const column = { type: 'ColumnChart', indicator_ids: [1], campaign_ids: [3], location_ids: [10, 11] }
  t.match(chartRead(column, {}, { ...catalog, indicatorBounds: new Map() }).path, /with_coverage=1/, 'a campaign read asks for coverage')
})

t.test('class indicators on a map: read with their labels, shown by label in tables and tooltips', async (t) => {
  const classes = { ...catalog, indicatorFormat: new Map([[5, 'class']]), indicatorName: new Map([[5, 'LQAS']]), indicatorBounds: new Map() }
  const chart = { type: 'ChoroplethMap', indicator_ids: [5], campaign_ids: [3], location_ids: [10, 11] }
  const read = chartRead(chart, {}, classes)
  t.match(read.path, /with_labels=1/)
  const data = chartData(
    chart,
    read,
    [
      { indicator_id: 5, location_id: 10, campaign_id: 3, value: 1, label: 'pass' },
      { indicator_id: 5, location_id: 11, campaign_id: 3, value: 0, label: null },
    ],
    classes,
  )
  t.same(
    tableRows(data, [5], classes).map((r: { shown: string[] }) => r.shown[0]),
    ['pass', '0'],
    'the label where there is one, else the value',
  )
  const option = chartOption(chart, data, classes, { mapName: 'm' })
  t.equal(option.tooltip.formatter({ name: 'North', value: 1 }), 'North\nLQAS: pass')
})

t.test('a chart of class indicators counts each class per location: stacked shares, a pie of classes, a table of counts', async (t) => {
  const classes = {
    ...catalog,
    indicatorFormat: new Map([[5, 'class']]),
    indicatorName: new Map([[5, 'LQAS']]),
    indicatorBounds: new Map(),
  }
  const chart = { type: 'ColumnChart', indicator_ids: [5], campaign_ids: [3], location_ids: [10, 11] }
  const read = chartRead(chart, {}, classes)
  t.equal(read.over, 'classes')
  t.equal(read.path, '/campaign_datapoint/?indicator__in=5&campaign__in=3&location_id__in=10%2C11&count_classes=1&limit=0')
  t.equal(chartRead({ ...chart, type: 'ChoroplethMap' }, {}, classes).over, 'campaigns', 'a map shows each location’s own class')
  const data = chartData(
    chart,
    read,
    [
      { indicator_id: 5, location_id: 10, campaign_id: 3, value: 0, label: 'fail', count: 2 },
      { indicator_id: 5, location_id: 10, campaign_id: 3, value: 1, label: 'pass', count: 7 },
      { indicator_id: 5, location_id: 11, campaign_id: 3, value: 1, label: 'pass', count: 4 },
    ],
    classes,
  )
  t.same(
    data.keys.map((k: { label: string }) => k.label),
    ['fail', 'pass'],
  )
  t.match(data.csv, /format=csv/)
  t.notMatch(data.csv, /shape=wide/, 'class counts export as the long CSV')
  const option = chartOption(chart, data, classes)
  t.same(
    option.series.map((s: { name: string; stack: string; data: Array<number | null> }) => [s.name, s.stack, s.data]),
    [
      ['fail', 'share', [2 / 9, null]],
      ['pass', 'share', [7 / 9, 1]],
    ],
    'a stacked share of each class per location',
  )
  const pie = chartOption({ ...chart, type: 'PieChart' }, data, classes)
  t.same(pie.series[0].data, [
    { name: 'fail', value: 2 },
    { name: 'pass', value: 11 },
  ])
  t.same(
    tableRows(data, [5], classes).map((r: { key: { label: string }; shown: string[] }) => `${r.key.label} ${r.shown[0]}`),
    ['fail 2', 'pass 7', 'fail –', 'pass 4'],
  )
})

t.test('series that read: coloured by what varies, counts and percents on their own axes, legends never paged on two lines', async (t) => {
  const three = {
    ...catalog,
    campaignName: new Map([
      [3, 'March'],
      [7, 'June'],
    ]),
    indicatorName: new Map([
      [1, 'Missed'],
      [2, 'Percent missed'],
      [4, 'Vaccinated'],
    ]),
    indicatorFormat: new Map([
      [1, 'int'],
      [2, 'pct'],
      [4, 'int'],
    ]),
    locationName: new Map([
      [10, 'North'],
      [11, 'South'],
      [12, 'East'],
    ]),
  }
  const column = { type: 'ColumnChart', indicator_ids: [1, 4, 2], campaign_ids: [3], location_ids: [10, 11, 12] }
  const rows = [10, 11, 12].flatMap((l) => [
    { indicator_id: 1, location_id: l, campaign_id: 3, value: 100 * l },
    { indicator_id: 4, location_id: l, campaign_id: 3, value: 1000 * l },
    { indicator_id: 2, location_id: l, campaign_id: 3, value: 0.01 * (l - 9) },
  ])
  const data = chartData(column, chartRead(column, {}, three), rows, three)
  const option = chartOption(column, data, three, { framed: true })
  const colours = option.series.map((s: { color: string }) => s.color)
  t.equal(new Set(colours).size, 3, 'three indicators: three colours')
  t.same(
    option.series.map((s: { yAxisIndex?: number }) => s.yAxisIndex ?? 0),
    [0, 0, 1],
    'the percent on the second axis',
  )
  t.equal(option.yAxis.length, 2)
  t.equal(option.yAxis[1].axisLabel.formatter(0.02), '2 %', 'which reads percents')
  t.equal(option.yAxis[0].minInterval, 1, 'counts step by whole numbers')
  t.equal(option.legend.type, 'plain', 'a legend of three is never paged')
  // Grouped by location, the indicators would be the categories of one axis, the percent flat at 0
  // beside the counts: with counts and percents together, the locations stay the categories.
  const grouped = chartOption({ ...column, groupBy: 'location' }, data, three, { framed: true })
  t.same(
    [grouped.xAxis.data, grouped.series.map((s: { yAxisIndex?: number }) => s.yAxisIndex ?? 0)],
    [
      ['North', 'South', 'East'],
      [0, 0, 1],
    ],
    'grouped by location, counts and a percent: the percent keeps an axis of its own',
  )
  const counts = { ...column, groupBy: 'location', indicator_ids: [1, 4] }
  t.same(
    chartOption(counts, chartData(counts, chartRead(counts, {}, three), rows, three), three).xAxis.data,
    ['Missed', 'Vaccinated'],
    'counts alone: the indicators as categories',
  )

  // One indicator over two campaigns and three locations: a series per location, each its own colour.
  const overTime = { type: 'ColumnChart', indicator_ids: [1], campaign_ids: [3, 7], location_ids: [10, 11, 12] }
  const timed = chartData(
    overTime,
    chartRead(overTime, {}, three),
    [3, 7].flatMap((c) => [10, 11, 12].map((l) => ({ indicator_id: 1, location_id: l, campaign_id: c, value: l + c }))),
    three,
  )
  const byLocation = chartOption(overTime, timed, three, { framed: true }).series
  t.same(
    byLocation.map((s: { name: string }) => s.name),
    ['North', 'South', 'East'],
  )
  t.equal(new Set(byLocation.map((s: { color: string }) => s.color)).size, 3, 'the locations vary: a colour per location')

  // Twelve series: every one named on the legend's two lines, none paged, where a wide drawing has room;
  // in a card's half of a screen their three lines would squeeze the plot, so the legend scrolls.
  const many = { ...overTime, groupBy: 'location', indicator_ids: [1, 4, 2, 1] }
  t.not(chartOption(many, timed, three, { framed: true, width: 1200 }).legend.type, 'scroll', 'twelve on two lines of a wide drawing: plain')
  t.equal(chartOption(many, timed, three, { framed: true, width: 500 }).legend.type, 'scroll', 'on three lines of a half-width card: one line, scrolled')
})

t.test('a chart says where and when: its subtitle, and what a pie or a map given more draws', async (t) => {
  const named = {
    ...catalog,
    campaignName: new Map([
      [3, 'March'],
      [7, 'June'],
    ]),
    locations: [
      { id: 1, name: 'Veridia', location_type_id: 1 },
      { id: 10, name: 'North', location_type_id: 2, parent_location_id: 1 },
      { id: 11, name: 'South', location_type_id: 2, parent_location_id: 1 },
    ],
    types: [
      { id: 1, name: 'Country' },
      { id: 2, name: 'Province' },
    ],
    locationName: new Map([
      [1, 'Veridia'],
      [10, 'North'],
      [11, 'South'],
    ]),
  }
  const chart = { type: 'ColumnChart', indicator_ids: [1], campaign_ids: [3], location_ids: [1], location_depth: 1 }
  const rows = [10, 11].map((l) => ({ indicator_id: 1, location_id: l, campaign_id: 3, value: l }))
  const data = chartData(chart, chartRead(chart, {}, named), rows, named)
  t.equal(chartSubtitle(chart, data, named), 'March · Provinces of Veridia')
  const drilled = chartData(chart, chartRead(chart, { locationId: 10 }, named), [], named)
  t.equal(chartSubtitle(chart, { ...drilled, locationIds: [] }, named), 'Below North', 'a drill-down changes it')
  // A place with nothing below it is read as itself: named alone, not as the provinces of a province.
  const itself = chartData(chart, chartRead(chart, { locationId: 10 }, named), [{ indicator_id: 1, location_id: 10, campaign_id: 3, value: 4 }], named)
  t.equal(chartSubtitle(chart, itself, named), 'March · North', 'a place without children: its own name')
  const two = { ...chart, type: 'PieChart', indicator_ids: [1, 2], campaign_ids: [3, 7] }
  const both = chartData(two, chartRead(two, {}, named), [...rows, ...rows.map((r) => ({ ...r, campaign_id: 7 }))], named)
  t.equal(drawnOnly(two, both, named), 'Draws Missed for June only: a pie shows one indicator and one campaign.')
  t.equal(chartSubtitle(two, both, named), 'June · Provinces of Veridia', 'the one campaign it draws')
  t.equal(drawnOnly(chart, data, named), '', 'a column chart draws all it is given')
  // Read below the country by a reader who sees North alone: her part, by name, never "Location 1".
  const hers = {
    ...named,
    locations: [...named.locations, { id: 20, name: 'Ashby', location_type_id: 3, parent_location_id: 10 }],
    types: [...named.types, { id: 3, name: 'District' }],
    roots: [{ id: 10, name: 'North' }],
    locationName: new Map([
      [10, 'North'],
      [20, 'Ashby'],
    ]),
  }
  const provinces = chartData(chart, chartRead(chart, {}, hers), rows.slice(0, 1), hers)
  t.equal(chartSubtitle(chart, provinces, hers), 'March · North', 'the provinces of the country: hers alone, by name')
  const deeper = { ...chart, location_depth: 2 }
  const districts = chartData(deeper, chartRead(deeper, {}, hers), [{ indicator_id: 1, location_id: 20, campaign_id: 3, value: 5 }], hers)
  t.equal(chartSubtitle(deeper, districts, hers), 'March · Districts of North', 'its districts: the districts of her part')
  // A file has nothing around the drawing: the subtitle is drawn into it, above the grid.
  const drawn = chartOption(chart, data, named)
  t.equal(drawn.graphic[0].style.text, 'March · Provinces of Veridia')
  t.ok(drawn.grid.top > chartOption(chart, data, named, { framed: true }).grid.top, 'the grid below it')
})

t.test('campaign indicators grouped by time: the campaigns of each bucket, counts summed, percents averaged', async (t) => {
  const timed = {
    ...catalog,
    campaigns: [
      { id: 3, name: 'March', start_date: '2016-03-01' },
      { id: 7, name: 'June', start_date: '2016-06-01' },
      { id: 8, name: 'January', start_date: '2017-01-10' },
    ],
  }
  const chart = {
    type: 'ColumnChart',
    indicator_ids: [1, 2],
    location_ids: [10],
    location_depth: 0,
    start_date: '2016-01-01',
    end_date: '2017-12-31',
    groupByTime: 'year',
  }
  const read = chartRead(chart, {}, timed)
  t.match(read.path, /^\/campaign_datapoint\/\?indicator__in=1%2C2&start_date=2016-01-01&end_date=2017-12-31&location_id=10/, 'read from the campaigns')
  const rows = [
    { indicator_id: 1, location_id: 10, campaign_id: 3, value: 5 },
    { indicator_id: 1, location_id: 10, campaign_id: 7, value: 7 },
    { indicator_id: 1, location_id: 10, campaign_id: 8, value: 2 },
    { indicator_id: 2, location_id: 10, campaign_id: 3, value: 0.02 },
    { indicator_id: 2, location_id: 10, campaign_id: 7, value: 0.04 },
  ]
  const data = chartData(chart, read, rows, timed)
  t.same(
    data.keys.map((k: { label: string }) => k.label),
    ['2016', '2017'],
  )
  t.equal(valueAt(data, 1, 10, '2016'), 12, 'the counts of 2016 summed')
  t.equal(valueAt(data, 2, 10, '2016'), 0.03, 'its percents averaged')
  t.equal(valueAt(data, 1, 10, '2017'), 2)
  const quarters = chartData({ ...chart, groupByTime: 'quarter' }, chartRead({ ...chart, groupByTime: 'quarter' }, {}, timed), rows, timed)
  t.same(
    quarters.keys.map((k: { label: string }) => k.label),
    ['2016 Q1', '2016 Q2', '2017 Q1'],
  )
  t.notMatch(chartRead({ ...chart, indicator_ids: [9] }, {}, timed).path, /campaign_datapoint/, 'date indicators stay date reads')
})

t.test("csv-download: the API's CSV with percents and yes/no for people, every other cell as written; a name after what it holds", async (t) => {
  const people = {
    indicators: [
      { id: 1, short_name: 'Missed', data_format: 'int' },
      { id: 2, short_name: 'Percent, missed', data_format: 'pct' },
      { id: 3, short_name: 'Access', data_format: 'bool' },
    ],
    indicatorName: new Map([
      [1, 'Missed'],
      [2, 'Percent, missed'],
      [3, 'Access'],
    ]),
    campaignName: new Map([[7, 'March 2016 - NID']]),
    locationName: new Map([[9, 'Ébène']]),
  }
  t.same(
    csvCells('a,"b, ""c""",\r\n1,"x\ny",2\r\n'),
    [
      ['a', '"b, ""c"""', ''],
      ['1', '"x\ny"', '2'],
    ],
    'quoted commas, quotes and line breaks; the last line break opens no line',
  )
  const wide = 'location_id,location,Missed,"Percent, missed",Access\r\n9,"Ébène, north",12,0.043799999999999999,1\r\n9,x,,,0\r\n'
  t.equal(
    peoplesCsv(wide, people),
    'location_id,location,Missed,"Percent, missed",Access\r\n9,"Ébène, north",12,4.38 %,Yes\r\n9,x,,,No\r\n',
    'the wide CSV: a percent column as a percent, yes/no in words, counts and empty cells as written',
  )
  t.equal(peoplesCsv('indicator_id,value\n2,0.5\n1,0.5\n', people), 'indicator_id,value\n2,50 %\n1,0.5\n', "the long CSV: by the line's indicator")
  t.equal(
    csvFileName('/campaign_datapoint/?indicator__in=1,2,3&campaign__in=7&location_id=9&format=csv', people),
    'missed_percent-missed_1-more_march-2016-nid_ebene.csv',
  )
  t.equal(csvFileName('/date_datapoint/?format=csv', people), 'date_datapoint.csv', 'a read that says nothing: its resource')
})

t.test('a chart type is one entry: a toy type added in memory is offered by the builder, read and drawn by its entry', async (t) => {
  const saved = [
    'ColumnChart',
    'StackedPercentColumnChart',
    'BarChart',
    'LineChart',
    'PieChart',
    'TableChart',
    'RawData',
    'ChoroplethMap',
    'MapChart',
    'BubbleMap',
  ]
  t.same(
    chartTypes().map((type) => type.type),
    saved,
    "every type the original front-end saved, in the builder's order",
  )
  const remove = defineChartType({
    type: 'ToyChart',
    family: 'series',
    label: () => 'Toy',
    reads: { chart_type: 'ToyChart' },
    option: (_chart, data, parts) => ({ toy: data.points.length, indicators: parts.indicatorIds }),
  })
  t.teardown(remove)
  t.same(typeChoices().at(-1), { value: 'ToyChart', label: 'Toy' }, 'the builder offers it')
  const toy = { type: 'ToyChart', indicator_ids: [1], campaign_ids: [3], location_ids: [10] }
  const read = chartRead(toy, {})
  t.match(read.path, /[?&]chart_type=ToyChart(&|$)/, 'its read carries what the entry adds')
  const data = chartData(toy, read, [{ indicator_id: 1, location_id: 10, campaign_id: 3, value: 5 }], catalog)
  t.same(chartOption(toy, data, catalog, { framed: true }), { toy: 1, indicators: [1] }, 'drawn by its own option')
  t.notOk(isMap(toy) || isTable(toy), 'a series is neither a map nor a table')
  remove()
  t.notOk(
    typeChoices().some((choice) => choice.value === 'ToyChart'),
    'taken out, it is offered no more',
  )
})

t.test("a dashboard's view and charts, read alike by the app and the server's exports (web/dashboard.js)", async (t) => {
  const { chartRowsOf, chartsOf, viewQuery } = await import('../web/dashboard.js')
  const server = await import('../lib/export/view.js')
  const dashboard = {
    rows: [
      { charts: [{ id: 1, uuid: 'a', chart_json: {} }, 'unexpanded-uuid'] },
      { charts: ['gone'] },
      null,
      { charts: [{ id: 2, uuid: 'b', chart_json: '{}' }] },
    ],
  }
  t.same(
    chartRowsOf(dashboard).map((row) => row.map((c) => c.id)),
    [[1], [2]],
    'expanded charts in order; a uuid the API could not expand and a row left empty are left out',
  )
  t.same(server.chartsOf(dashboard), chartsOf(dashboard), 'the server reads the same charts')
  const view = { campaignId: 3, locationId: null, startDate: '2016-01-01', endDate: undefined }
  t.equal(viewQuery(view), '?campaign=3&start_date=2016-01-01', 'a view as a query: empty parts left out')
  const asked = Object.entries(server.apiView(view)).filter(([, value]) => value !== undefined)
  t.equal(`?${new URLSearchParams(asked.map(([name, value]) => [name, String(value)]))}`, viewQuery(view), 'the server reads the same view')
})

t.test('data entry says what waits and what was not saved as sentences apart', async (t) => {
  const { sendingWords } = await import('../web/views/data-entry.js')
  t.equal(sendingWords(0, 0), 'Every value is sent')
  t.equal(sendingWords(1, 0), '1 value waits to be sent')
  t.equal(sendingWords(1, 2), '1 value waits to be sent. 2 values were not saved: their cells say why')
})

t.test('an unusual value is said to be saved only once this page saved it', async (t) => {
  const { stateWords } = await import('../web/views/data-entry-cell.js')
  const why = 'much lower than usual'
  t.equal(stateWords(undefined, 'int', why), 'Unusual: much lower than usual. Check it, and correct it if it is a mistake.', 'read as the page opened')
  t.equal(
    stateWords({ state: 'saved' }, 'int', why),
    'Saved, but unusual: much lower than usual. Check it, and correct it if it is a mistake.',
    'saved from the page',
  )
  t.equal(stateWords(undefined, 'int', undefined), '', 'nothing to say of a usual value read')
})
