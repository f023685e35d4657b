// Charts in the original front-end's `chart_json` shape ({type, indicator_ids, campaign_ids,
// location_ids, location_depth, start_date, end_date, groupBy, groupByTime, indicator_colors}), saved
// as an object or as the JSON string that front-end saved: what to read for one, the values read, and
// the ECharts option that draws them. Pure functions: no DOM, no fetch (tested in node).
import { query } from './api.js'
import { formatPeriod, formatValue } from './format.js'
import { statusFill } from './status.js'
import { language, t, tn } from './i18n.js'

/** Every chart type the original front-end saved. */
export const CHART_TYPES = [
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
/**
 * The API's date buckets (groupByTime), as a picker names them; `campaign` reads campaigns instead.
 * @type {Array<[string, () => string]>}
 */
export const DATE_GROUPINGS = [
  ['month', () => t('Month')],
  ['quarter', () => t('Quarter')],
  ['year', () => t('Year')],
  ['all_time', () => t('All time')],
]
const DATE_BUCKETS = new Set(DATE_GROUPINGS.map(([bucket]) => bucket))
const PALETTE = ['#0b5cad', '#d7301f', '#2a9d8f', '#b86e00', '#6a4c93', '#52796f']
/** Slices a pie draws at most: the largest, then one "Other" for the rest. */
const PIE_SLICES = 10
/** Categories a column or bar chart shows at once; more scroll (ECharts' dataZoom). */
const VISIBLE_CATEGORIES = 30
/** Locations from which a map colours by quantiles (five classes, each named in the legend). */
const QUANTILE_FROM = 10

/**
 * A pie's slices: the `top` largest values, then "Other (n)" holding the sum of the n others, so that
 * a pie of a hundred provinces stays readable.
 * @param {Array<{ name: string, value: number | null }>} slices
 */
export function topSlices(slices, top = PIE_SLICES) {
  const ordered = slices.filter((s) => s.value !== null).sort((a, b) => b.value - a.value)
  if (ordered.length <= top + 1) return slices
  const rest = ordered.slice(top)
  return [...ordered.slice(0, top), { name: t('Other ({n})', { n: rest.length }), value: rest.reduce((sum, s) => sum + s.value, 0) }]
}

/**
 * Quantile classes of values: up to `classes` pieces [min, max], each holding about as many values,
 * for a map legend that names its numbers.
 * @param {number[]} values
 */
export function quantileClasses(values, classes = 5) {
  const sorted = [...values].sort((a, b) => a - b)
  const bounds = [
    ...new Set(Array.from({ length: classes + 1 }, (_, i) => sorted[Math.min(sorted.length - 1, Math.round((i * (sorted.length - 1)) / classes))])),
  ]
  return bounds.slice(0, -1).map((min, i) => ({ min, max: bounds[i + 1] }))
}

/**
 * A saved chart_json as an object (the original front-end saved it as a JSON string).
 * @param {unknown} chartJson
 * @returns {Record<string, any>}
 */
export function chartSpec(chartJson) {
  if (typeof chartJson === 'string') {
    try {
      return chartSpec(JSON.parse(chartJson))
    } catch {
      return {}
    }
  }
  return chartJson && typeof chartJson === 'object' ? /** @type {Record<string, any>} */ (chartJson) : {}
}

/** Charts over dates (the date_datapoint read) rather than campaigns. */
export const isTimeChart = (chart) =>
  DATE_BUCKETS.has(chart.groupByTime) || (!chart.groupByTime && !chart.campaign_ids?.length && Boolean(chart.start_date || chart.end_date))
export const isMap = (chart) => chart.type === 'ChoroplethMap' || chart.type === 'MapChart' || chart.type === 'BubbleMap'
export const isTable = (chart) => chart.type === 'TableChart' || chart.type === 'RawData'

/**
 * The chart as a restricted user gets it when its locations are above what she may see: read at her
 * own roots; undefined when she sees its locations.
 * @param {Record<string, any>} chart
 * @param {{ locationName: Map<number, string>, roots: Array<{ id: number }> }} catalog
 * @returns {Record<string, any> | undefined}
 */
export function rootsFallback(chart, catalog) {
  const hidden = (chart.location_ids ?? []).some((id) => !catalog.locationName.has(id))
  if (!hidden || catalog.roots.length === 0) return undefined
  return { ...chart, location_ids: catalog.roots.map((r) => r.id), location_depth: 0 }
}

/** The location parameters of a chart's read under a view (a drill-down replaces the chart's own). */
function locationParams(chart, view) {
  if (view.locationId != null) return { location_id: view.locationId, location_depth: chart.location_depth ?? 0 }
  const ids = chart.location_ids ?? []
  if (ids.length > 1) return { location_id__in: ids }
  if (ids.length === 1) return { location_id: ids[0], location_depth: chart.location_depth ?? 0 }
  return {}
}

/** The latest of days (YYYY-MM-DD, which sort as text), missing ones aside. */
const latest = (...days) => days.filter(Boolean).sort().at(-1)
/** The earliest of days, missing ones aside. */
const earliest = (...days) => days.filter(Boolean).sort()[0]

/**
 * The view a chart reads under: the dashboard's (campaign, drill-down or picked location, date range),
 * or none when the chart pins its own (`pinned` in its chart_json).
 */
const viewFor = (chart, view) => (chart.pinned ? {} : view)

/**
 * The API read of a chart under a view ({campaignId, locationId, startDate, endDate}: a dashboard's
 * campaign picker, drill-down or location picker, and date range): `{over, path, where}`. A date range
 * narrows a chart over time to the months in both its own range and the view's, and a chart of
 * campaigns to its campaigns that start in the range. Values of indicators with bounds are read with
 * their status.
 * @param {Record<string, any>} chart
 * @param {{ campaignId?: number | null, locationId?: number | null, startDate?: string | null, endDate?: string | null }} shown
 * @param {{ indicatorBounds?: Map<number, any>, indicatorFormat?: Map<number, string>, campaigns?: Array<{ id: number, start_date?: string }> }} [catalog]
 */
export function chartRead(chart, shown, catalog = {}) {
  const view = viewFor(chart, shown)
  const where = locationParams(chart, view)
  const with_status = (chart.indicator_ids ?? []).some((id) => catalog.indicatorBounds?.has(id)) ? 1 : undefined
  // Class indicators' values are read with their labels (LQAS: pass, fail).
  const with_labels = (chart.indicator_ids ?? []).some((id) => catalog.indicatorFormat?.get(id) === 'class') ? 1 : undefined
  const start_date = latest(chart.start_date, view.startDate)
  const end_date = earliest(chart.end_date, view.endDate)
  if (isTimeChart(chart)) {
    const path = `/date_datapoint/${query({ indicator__in: chart.indicator_ids, ...where, start_date, end_date, group_by_time: DATE_BUCKETS.has(chart.groupByTime) ? chart.groupByTime : 'month', with_status, with_labels, limit: 0 })}`
    return { over: 'time', path, where }
  }
  const ranged = view.startDate || view.endDate
  const starts = new Map((catalog.campaigns ?? []).map((c) => [c.id, String(c.start_date ?? '').slice(0, 10)]))
  const inRange = (id) => (!view.startDate || starts.get(id) >= view.startDate) && (!view.endDate || starts.get(id) <= view.endDate)
  const chosen = view.campaignId ? [view.campaignId] : ranged ? (chart.campaign_ids ?? []).filter(inRange) : chart.campaign_ids
  // A range that leaves none of the chart's campaigns reads the campaigns of the range.
  const campaigns = chosen?.length || !chart.campaign_ids?.length ? chosen : undefined
  const byDates = !campaigns?.length
  const dates = byDates ? { start_date, end_date } : {}
  if (countsClasses(chart, catalog)) {
    const path = `/campaign_datapoint/${query({ indicator__in: chart.indicator_ids, campaign__in: campaigns, ...dates, ...where, count_classes: 1, limit: 0 })}`
    return { over: 'classes', path, where }
  }
  const path = `/campaign_datapoint/${query({
    indicator__in: chart.indicator_ids,
    campaign__in: campaigns,
    ...dates,
    ...where,
    chart_type: chart.type === 'ColumnChart' ? 'ColumnChart' : undefined,
    with_status,
    with_labels,
    with_coverage: 1,
    limit: 0,
  })}`
  return { over: 'campaigns', path, where }
}

/**
 * A chart of class indicators only (LQAS), but a map: drawn as how many values of each class each
 * location's subtree holds (`count_classes=1`), since a class is never summed.
 */
const countsClasses = (chart, catalog) =>
  !isMap(chart) && (chart.indicator_ids ?? []).length > 0 && chart.indicator_ids.every((id) => catalog.indicatorFormat?.get(id) === 'class')

const keyOf = (indicatorId, locationId, key) => `${indicatorId}|${locationId}|${key}`

/** The API's CSV of a chart's read: the wide one, a line per location and key with their names. */
function csvOf(path) {
  const url = new URL(path, 'http://api')
  url.searchParams.delete('limit')
  url.searchParams.set('format', 'csv')
  url.searchParams.set('shape', 'wide')
  return `${url.pathname}${url.search}`
}

/** The API's long CSV of a read. */
function longCsvOf(path) {
  const url = new URL(path, 'http://api')
  url.searchParams.delete('limit')
  url.searchParams.set('format', 'csv')
  return `${url.pathname}${url.search}`
}

/** The file name the API gives a CSV of a read: its resource's. */
export const csvName = (path) => `${path.split('/')[1]}.csv`

/**
 * The rows of a chart's table view: a location and a key with each indicator's value, sorted by a
 * column (0 the location's name, 1 the key in time order, 2… an indicator's value, nulls last).
 */
export function tableRows(data, indicatorIds, catalog, sort = { column: -1, descending: false }) {
  const rows = data.locationIds.flatMap((locationId) =>
    data.keys.map((key, keyOrder) => ({
      locationId,
      location: catalog.locationName.get(locationId) ?? t('Location {id}', { id: locationId }),
      key,
      keyOrder,
      values: indicatorIds.map((id) => valueAt(data, id, locationId, key.id)),
      shown: indicatorIds.map((id) => shownValue(data, id, locationId, key.id, catalog.indicatorFormat?.get(id))),
      statuses: indicatorIds.map((id) => statusAt(data, id, locationId, key.id)),
      coverages: indicatorIds.map((id) => coverageWords(coverageAt(data, id, locationId, key.id), locationId, catalog)),
      incomplete: indicatorIds.map((id) => Boolean(coverageAt(data, id, locationId, key.id)?.below_threshold)),
    })),
  )
  if (sort.column < 0) return rows
  const sign = sort.descending ? -1 : 1
  const byLocation = (a, b) => a.location.localeCompare(b.location)
  const byKey = (a, b) => a.keyOrder - b.keyOrder
  const at = sort.column - 2
  const compare =
    sort.column === 0
      ? (a, b) => sign * byLocation(a, b) || byKey(a, b)
      : sort.column === 1
        ? (a, b) => sign * byKey(a, b) || byLocation(a, b)
        : (a, b) => {
            const [x, y] = [a.values[at], b.values[at]]
            // Rows without a value stay last whichever the direction.
            if (x === null || y === null) return Number(x === null) - Number(y === null)
            return sign * (x - y) || byLocation(a, b)
          }
  return rows.sort(compare)
}

/**
 * The values of a read, indexed for lookups by (indicator, location, key): `keys` are the campaigns or
 * time buckets ({id, label}) in time order, `locationIds` in the order the API selected them.
 * @param {Record<string, any>} chart
 * @param {{ over: string, path: string, where: object }} read
 * @param {Array<Record<string, any>>} objects the API's rows ({indicator_id, location_id, campaign_id or time_grouping, value})
 * @param {{ campaigns: Array<{ id: number, name: string, start_date?: string }> }} catalog
 */
export function chartData(chart, read, objects, catalog) {
  const keyOfPoint = (o) => (read.over === 'time' ? o.time_grouping : o.campaign_id)
  // Class counts: the class is the key, its count the value (the label names the key, not the value).
  /** @type {Array<Record<string, any>>} */
  const points = objects.map((o) =>
    read.over === 'classes' ? { ...o, key: o.value, value: o.count, label: undefined, class: o.label } : { ...o, key: keyOfPoint(o) },
  )
  let keys
  if (read.over === 'classes') {
    const names = new Map(points.map((p) => [p.key, p.class ?? String(p.key)]))
    keys = [...names.keys()].sort((a, b) => a - b).map((id) => ({ id, label: names.get(id) }))
  } else if (read.over === 'time') {
    keys = [...new Set(points.map((p) => p.key))].sort().map((id) => ({ id, label: formatPeriod(id, chart.groupByTime) }))
  } else {
    const read = new Set(points.map((p) => p.key))
    keys = catalog.campaigns
      .filter((c) => read.has(c.id))
      .sort((a, b) => String(a.start_date ?? '').localeCompare(String(b.start_date ?? '')) || a.id - b.id)
      .map((c) => ({ id: c.id, label: c.name }))
  }
  const index = new Map(points.map((p) => [keyOf(p.indicator_id, p.location_id, p.key), p]))
  const locationIds = [...new Set(points.map((p) => p.location_id))]
  // Class counts have no wide export: their CSV is the long one.
  return { over: read.over, points, keys, locationIds, where: read.where, index, csv: read.over === 'classes' ? longCsvOf(read.path) : csvOf(read.path) }
}

/** The value at (indicator, location, key), or null. */
export function valueAt(data, indicatorId, locationId, key) {
  return data.index.get(keyOf(indicatorId, locationId, key))?.value ?? null
}

/** The coverage of the value at (indicator, location, key) (`with_coverage=1`): {reported, expected, below_threshold}, or null. */
export function coverageAt(data, indicatorId, locationId, key) {
  return data.index.get(keyOf(indicatorId, locationId, key))?.coverage ?? null
}

/**
 * A coverage in words, naming the children by their type: "7 of 9 districts", and ", incomplete" when
 * below the indicator's threshold; '' for none.
 * @param {{ reported: number, expected: number, below_threshold?: boolean } | null} coverage
 * @param {number} locationId
 * @param {{ childTypeOf?: (id: number) => string | undefined }} catalog
 */
export function coverageWords(coverage, locationId, catalog) {
  if (!coverage) return ''
  // The children named by their type (a name in the data): plural the English way in English.
  const type = catalog.childTypeOf?.(locationId)?.toLowerCase() ?? t('location')
  const types = language() !== 'en' ? type : type.endsWith('y') ? `${type.slice(0, -1)}ies` : `${type}s`
  const words = tn(coverage.expected, '{reported} of {n} {type}', '{reported} of {n} {types}', { reported: coverage.reported, type, types })
  return coverage.below_threshold ? t('{coverage}, incomplete', { coverage: words }) : words
}

/** The value at (indicator, location, key) as a reader reads it: a class's label, else the number formatted. */
export function shownValue(data, indicatorId, locationId, key, format) {
  const point = data.index.get(keyOf(indicatorId, locationId, key))
  return point?.label ?? formatValue(point?.value ?? null, format)
}

/** The status of the value at (indicator, location, key) (read with `with_status=1`), or null. */
export function statusAt(data, indicatorId, locationId, key) {
  return data.index.get(keyOf(indicatorId, locationId, key))?.status ?? null
}

/** What a tooltip says: a title line, then `name: value` lines. */
export function tooltipLines(title, entries) {
  return [title, ...entries.map(([name, value]) => (name ? `${name}: ${value}` : value))]
}

/**
 * The ECharts option of a non-table chart (a map needs `mapName` registered first). `tooltip` turns
 * lines of text into the tooltip's content (a DOM node in the page: no inline style, so the page's CSP
 * has nothing to refuse); `fontFamily`, the text's (a server's export names the font it ships).
 */
export function chartOption(
  chart,
  data,
  catalog,
  { mapName = '', tooltip = (lines) => lines.join('\n'), narrow = false, fontFamily = 'system-ui, sans-serif' } = {},
) {
  const indicatorIds = chart.indicator_ids ?? []
  const colorOf = (indicatorId, i) => chart.indicator_colors?.[indicatorId] ?? PALETTE[i % PALETTE.length]
  const locationName = (id) => catalog.locationName.get(id) ?? t('Location {id}', { id })
  const indicatorName = (id) => catalog.indicatorName.get(id) ?? t('Indicator {id}', { id })
  const formatOf = (id) => catalog.indicatorFormat.get(id)
  // A value's colour by its status, where its indicator has bounds (undefined: the chart's own colour).
  const fillOf = (id, locationId, key) => statusFill(statusAt(data, id, locationId, key), catalog.indicatorBounds?.get(id))
  const coverageOf = (id, locationId, key) => coverageWords(coverageAt(data, id, locationId, key), locationId, catalog)
  const lastKey = data.keys.at(-1)?.id
  const base = {
    animation: false,
    textStyle: { fontFamily },
    tooltip: { trigger: 'item', className: 'chart-tip', confine: true },
  }
  if (isMap(chart))
    return mapOption(chart, data, {
      base,
      mapName,
      tooltip,
      indicatorId: indicatorIds[0],
      color: colorOf(indicatorIds[0], 0),
      locationName,
      indicatorName,
      formatOf,
      fillOf,
      coverageOf,
      key: lastKey,
      narrow,
    })
  if (chart.type === 'PieChart') {
    const indicatorId = indicatorIds[0]
    const format = data.over === 'classes' ? 'int' : formatOf(indicatorId)
    // Class counts: a slice per class, over every location read.
    const slices =
      data.over === 'classes'
        ? data.keys.map((k) => ({ name: k.label, value: data.locationIds.reduce((sum, id) => sum + (valueAt(data, indicatorId, id, k.id) ?? 0), 0) }))
        : topSlices(
            data.locationIds.map((id) => ({ name: locationName(id), value: valueAt(data, indicatorId, id, lastKey) })),
            chart.type_params?.top ?? PIE_SLICES,
          )
    const total = slices.reduce((sum, s) => sum + (s.value ?? 0), 0)
    return {
      ...base,
      tooltip: {
        ...base.tooltip,
        formatter: (p) =>
          tooltip(
            tooltipLines(p.name, [
              [indicatorName(indicatorId), formatValue(p.value, format)],
              [t('Share'), formatValue(p.value / total, 'pct')],
            ]),
          ),
      },
      legend: narrow ? { bottom: 0, type: 'scroll' } : undefined,
      series: [
        {
          type: 'pie',
          name: indicatorName(indicatorId),
          radius: narrow ? '55%' : '65%',
          center: ['50%', narrow ? '45%' : '50%'],
          data: slices,
          label: narrow ? { show: false } : { formatter: (p) => `${p.name}: ${formatValue(p.value, format)}`, overflow: 'break' },
        },
      ],
    }
  }
  return seriesOption(chart, data, { base, tooltip, indicatorIds, colorOf, locationName, indicatorName, formatOf, fillOf, coverageOf, lastKey, narrow })
}

function mapOption(chart, data, { base, mapName, tooltip, indicatorId, color, locationName, indicatorName, formatOf, fillOf, coverageOf, key, narrow }) {
  const format = formatOf(indicatorId)
  const values = data.locationIds.map((id) => ({ name: locationName(id), value: valueAt(data, indicatorId, id, key), fill: fillOf(indicatorId, id, key) }))
  const reported = new Map(data.locationIds.map((id) => [locationName(id), coverageOf(indicatorId, id, key)]))
  const labels = new Map(data.locationIds.map((id) => [locationName(id), data.index.get(keyOf(indicatorId, id, key))?.label ?? undefined]))
  const byStatus = values.some((v) => v.fill)
  const numbers = values.map((v) => v.value).filter((v) => v !== null)
  const min = numbers.length ? Math.min(...numbers) : 0
  const max = numbers.length ? Math.max(...numbers) : 1
  const pointValue = (p) => (Array.isArray(p.value) ? p.value[2] : Number.isFinite(p.value) ? p.value : null)
  const formatter = (p) =>
    tooltip(
      tooltipLines(p.name, [
        [indicatorName(indicatorId), labels.get(p.name) ?? formatValue(pointValue(p), format)],
        ...(reported.get(p.name) ? [[t('Reported'), reported.get(p.name)]] : []),
      ]),
    )
  // Dark text with a white outline: readable on the palest and the darkest fill alike.
  const label = { show: !narrow, fontSize: 11, color: '#1b1f23', textBorderColor: '#fff', textBorderWidth: 2, formatter: (p) => p.name }
  if (chart.type === 'BubbleMap') {
    // Polygons in grey and a circle per location, its area proportional to the value.
    const scale = (v) => (max > 0 ? 6 + 30 * Math.sqrt(Math.max(0, v) / max) : 6)
    return {
      ...base,
      tooltip: { ...base.tooltip, formatter },
      geo: { map: mapName, roam: false, itemStyle: { areaColor: '#e8e8e8', borderColor: '#999' }, label, emphasis: { disabled: true }, silent: true },
      series: [
        {
          type: 'scatter',
          coordinateSystem: 'geo',
          name: indicatorName(indicatorId),
          color,
          data: values.filter((v) => v.value !== null).map((v) => ({ name: v.name, value: [...(data.centres?.get(v.name) ?? [0, 0]), v.value] })),
          symbolSize: (value) => scale(value[2]),
          encode: { value: 2 },
        },
      ],
    }
  }
  if (byStatus) {
    // Regions coloured by their value's status; the card's legend names the statuses.
    return {
      ...base,
      tooltip: { ...base.tooltip, formatter },
      series: [
        {
          type: 'map',
          map: mapName,
          name: indicatorName(indicatorId),
          data: values.map(({ name, value, fill }) => ({ name, value, itemStyle: fill ? { areaColor: fill } : undefined })),
          label,
          emphasis: { label: { show: true } },
          labelLayout: { hideOverlap: true },
        },
      ],
    }
  }
  const classes = numbers.length >= QUANTILE_FROM ? quantileClasses(numbers) : []
  const legend =
    classes.length > 1
      ? // Many locations: quantile classes, each named by its bounds, so that the colours say numbers.
        {
          type: 'piecewise',
          pieces: classes.map((c) => ({ min: c.min, max: c.max, label: `${formatValue(c.min, format)} – ${formatValue(c.max, format)}` })),
          inRange: { color: ['#fff5eb', color] },
          left: 0,
          bottom: 0,
          itemWidth: 14,
          textStyle: { fontSize: 11 },
        }
      : {
          // One value alone takes the full colour (not the palest, which reads as "nothing").
          min: max > min ? min : min - (Math.abs(min) || 1),
          max,
          inRange: { color: ['#fff5eb', color] },
          calculable: false,
          left: 0,
          bottom: 0,
          itemHeight: 80,
          text: [formatValue(max, format), formatValue(min, format)],
          formatter: (v) => formatValue(v, format),
        }
  return {
    ...base,
    tooltip: { ...base.tooltip, formatter },
    visualMap: legend,
    series: [
      {
        type: 'map',
        map: mapName,
        name: indicatorName(indicatorId),
        data: values,
        label,
        emphasis: { label: { show: true } },
        labelLayout: { hideOverlap: true },
      },
    ],
  }
}

/**
 * Columns, stacked percent columns, bars and lines. Over time when more than one campaign or bucket
 * was read (or always for a line), else over locations; `groupBy: 'location'` makes a series of each
 * location (categories: the indicators, or time), `indicator` (the default) a series of each indicator.
 */
function seriesOption(chart, data, { base, tooltip, indicatorIds, colorOf, locationName, indicatorName, formatOf, fillOf, coverageOf, lastKey, narrow }) {
  const overTime = data.over !== 'classes' && (chart.type === 'LineChart' || data.keys.length > 1)
  const byLocation = chart.groupBy === 'location'
  const locations = data.locationIds.slice(0, 12)
  /** Each series: a name, a colour, and its value in each category. */
  let categories
  let series
  if (data.over === 'classes') {
    // Each location's values counted by class: a series per class, stacked.
    categories = locations.map(locationName)
    const i = indicatorIds[0]
    series = data.keys.map((k, n) => ({
      name: k.label,
      color: PALETTE[n % PALETTE.length],
      values: locations.map((l) => valueAt(data, i, l, k.id)),
      fills: locations.map(() => undefined),
      coverages: locations.map(() => ''),
      shown: locations.map((l) => formatValue(valueAt(data, i, l, k.id), 'int')),
      formats: locations.map(() => 'int'),
    }))
  } else if (overTime) {
    categories = data.keys.map((k) => k.label)
    const pairs = byLocation
      ? locations.flatMap((l) => indicatorIds.map((i) => [i, l]))
      : indicatorIds.flatMap((i) => (locations.length ? locations : [null]).map((l) => [i, l]))
    series = pairs.map(([i, l], n) => ({
      name: [byLocation || locations.length > 1 ? locationName(l) : null, !byLocation || indicatorIds.length > 1 ? indicatorName(i) : null]
        .filter(Boolean)
        .join(', '),
      indicatorId: i,
      color: byLocation ? PALETTE[n % PALETTE.length] : colorOf(i, indicatorIds.indexOf(i)),
      values: data.keys.map((k) => valueAt(data, i, l, k.id)),
      fills: data.keys.map((k) => fillOf(i, l, k.id)),
      coverages: data.keys.map((k) => coverageOf(i, l, k.id)),
      shown: data.keys.map((k) => shownValue(data, i, l, k.id, formatOf(i))),
      formats: data.keys.map(() => formatOf(i)),
    }))
  } else if (byLocation) {
    categories = indicatorIds.map(indicatorName)
    series = locations.map((l, n) => ({
      name: locationName(l),
      color: PALETTE[n % PALETTE.length],
      values: indicatorIds.map((i) => valueAt(data, i, l, lastKey)),
      fills: indicatorIds.map((i) => fillOf(i, l, lastKey)),
      coverages: indicatorIds.map((i) => coverageOf(i, l, lastKey)),
      shown: indicatorIds.map((i) => shownValue(data, i, l, lastKey, formatOf(i))),
      formats: indicatorIds.map(formatOf),
    }))
  } else {
    categories = locations.map(locationName)
    series = indicatorIds.map((i, n) => ({
      name: indicatorName(i),
      color: colorOf(i, n),
      values: locations.map((l) => valueAt(data, i, l, lastKey)),
      fills: locations.map((l) => fillOf(i, l, lastKey)),
      coverages: locations.map((l) => coverageOf(i, l, lastKey)),
      shown: locations.map((l) => shownValue(data, i, l, lastKey, formatOf(i))),
      formats: locations.map(() => formatOf(i)),
    }))
  }
  const stackedPercent = chart.type === 'StackedPercentColumnChart' || (data.over === 'classes' && chart.type !== 'LineChart')
  const totals = categories.map((_, c) => series.reduce((sum, s) => sum + Math.abs(s.values[c] ?? 0), 0))
  const shown = (s, c) => (stackedPercent ? (s.values[c] === null || !totals[c] ? null : Math.abs(s.values[c]) / totals[c]) : s.values[c])
  const type = chart.type === 'LineChart' ? 'line' : 'bar'
  const horizontal = chart.type === 'BarChart'
  const many = categories.length > VISIBLE_CATEGORIES
  const echartsSeries = series.map((s) => ({
    type,
    name: s.name,
    color: s.color,
    stack: stackedPercent ? 'share' : undefined,
    // Value labels only where they fit; ECharts hides any that would still overlap.
    labelLayout: { hideOverlap: true },
    label: {
      show: type === 'bar' && series.length * Math.min(categories.length, VISIBLE_CATEGORIES) <= 24,
      position: stackedPercent ? 'inside' : horizontal ? 'right' : 'top',
      formatter: (p) => (stackedPercent ? formatValue(p.value, 'pct') : formatValue(p.value, s.formats[p.dataIndex])),
    },
    // One series of bars: each bar in its value's status colour, where it has one.
    data: categories.map((_, c) =>
      type === 'bar' && !stackedPercent && series.length === 1 && s.fills[c] ? { value: shown(s, c), itemStyle: { color: s.fills[c] } } : shown(s, c),
    ),
  }))
  const categoryAxis = {
    type: 'category',
    data: categories,
    // Every label, turned when there are many (or a phone's width); past 12 (6 on a phone) ECharts leaves
    // out what would still overlap.
    axisLabel: {
      interval: categories.length > (narrow ? 6 : 12) ? 'auto' : 0,
      hideOverlap: true,
      rotate: !horizontal && categories.length > (narrow ? 2 : 6) ? 30 : 0,
    },
  }
  // More categories than fit: the first ones shown, the rest a scroll (slider, wheel or drag) away.
  const zoomAxis = horizontal ? { yAxisIndex: 0 } : { xAxisIndex: 0 }
  const dataZoom = many
    ? [
        { type: 'slider', ...zoomAxis, startValue: 0, endValue: VISIBLE_CATEGORIES - 1, ...(horizontal ? { right: 0, width: 14 } : { bottom: 0, height: 14 }) },
        { type: 'inside', ...zoomAxis, startValue: 0, endValue: VISIBLE_CATEGORIES - 1 },
      ]
    : undefined
  const valueAxis = {
    type: 'value',
    max: stackedPercent ? 1 : undefined,
    axisLabel: { formatter: (v) => formatValue(v, stackedPercent ? 'pct' : formatOf(indicatorIds[0])) },
  }
  return {
    ...base,
    tooltip: {
      ...base.tooltip,
      trigger: 'axis',
      formatter: (items) =>
        tooltip(
          tooltipLines(
            items[0]?.name ?? '',
            items.map((p) => {
              const s = series[p.seriesIndex]
              const raw = s.shown[p.dataIndex]
              const reported = s.coverages[p.dataIndex] ? ` (${s.coverages[p.dataIndex]})` : ''
              return [p.seriesName, `${stackedPercent && p.value !== null ? `${formatValue(p.value, 'pct')} (${raw})` : raw}${reported}`]
            }),
          ),
        ),
    },
    legend: series.length > 1 ? { top: 0, type: 'scroll' } : undefined,
    grid: {
      left: 48,
      right: horizontal && many ? 40 : 24,
      top: series.length > 1 ? 32 : 24,
      bottom: !horizontal && many ? 48 : 32,
      outerBoundsMode: 'same',
      outerBoundsContain: 'axisLabel',
    },
    dataZoom,
    xAxis: horizontal ? valueAxis : categoryAxis,
    yAxis: horizontal ? categoryAxis : valueAxis,
    series: echartsSeries,
  }
}
