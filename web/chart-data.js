// Charts in the original front-end's `chart_json` shape ({type, indicator_ids, campaign_ids,
// location_ids, location_depth, start_date, end_date, groupBy, groupByTime, indicator_colors}), saved
// as an object or as the JSON string that front-end saved: what to read for one, the values read, and
// the ECharts option that draws them. Pure functions: no DOM, no fetch (tested in node).
import { query } from './api.js'
import { formatPeriod } from './format.js'
import { statusFill } from './status.js'
import { t } from './i18n.js'
import { chartSubtitle, SERIES_COLOURS, statusGraphic } from './chart-parts.js'
import { coverageAt, coverageWords, flagLines, keyOf, shownValue, statusAt, valueAt } from './chart-values.js'
import { chartTypeOf, isMap, isTable } from './charts/registry.js'
import './charts/types.js'

// What the app's views and the server's exports take from here besides what is defined below.
export { coverageAt, coverageWords, shownValue, statusAt, tooltipLines, valueAt } from './chart-values.js'
export { chartTypes, drawsOneKey, isMap, isTable, typeName } from './charts/registry.js'
export { quantileClasses } from './charts/map.js'
export { topSlices } from './charts/pie.js'

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
const PALETTE = SERIES_COLOURS

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

/**
 * The chart as a restricted user gets it when its locations are above what she may see: read at her
 * own roots; undefined when she sees its locations.
 * @param {Record<string, any>} chart
 * @param {{ locationName: Map<number, string>, roots: Array<{ id: number }> }} catalog
 * @returns {Record<string, any> | undefined}
 */
export function rootsFallback(chart, catalog) {
  if (isRelative(chart)) return undefined
  const hidden = (chart.location_ids ?? []).some((id) => !catalog.locationName.has(id))
  if (!hidden || catalog.roots.length === 0) return undefined
  // At the chart's own depth: a chart of another province's districts shows hers, not her province alone.
  return { ...chart, location_ids: catalog.roots.map((r) => r.id) }
}

/**
 * A chart saved for "the viewer's location" (`relative_location: "viewer"`, DHIS2's user org unit):
 * its locations are the reader's own roots (the country for whoever sees it whole, Northmarch for an
 * officer of Northmarch), read at the chart's depth, so one saved chart shows each reader her children.
 */
export const isRelative = (chart) => chart.relative_location === 'viewer'

/** The locations a chart reads: its own, or the reader's roots for a relative chart. */
export function chartLocations(chart, catalog = {}) {
  if (isRelative(chart) && catalog.roots?.length) return catalog.roots.map((r) => r.id)
  return chart.location_ids ?? []
}

/** The location parameters of a chart's read under a view (a drill-down replaces the chart's own). */
function locationParams(chart, view, catalog) {
  if (view.locationId != null) return { location_id: view.locationId, location_depth: chart.location_depth ?? 0 }
  const ids = chartLocations(chart, catalog)
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
 * @param {{ indicatorBounds?: Map<number, any>, indicatorFormat?: Map<number, string>, campaigns?: Array<{ id: number, start_date?: string }>, roots?: Array<{ id: number }>, indicators?: Array<{ id: number, resource_name?: string }> }} [catalog]
 */
export function chartRead(chart, shown, catalog = {}) {
  const view = viewFor(chart, shown)
  const where = locationParams(chart, view, catalog)
  const with_status = (chart.indicator_ids ?? []).some((id) => catalog.indicatorBounds?.has(id)) ? 1 : undefined
  // Class indicators' values are read with their labels (LQAS: pass, fail).
  const with_labels = (chart.indicator_ids ?? []).some((id) => catalog.indicatorFormat?.get(id) === 'class') ? 1 : undefined
  const start_date = latest(chart.start_date, view.startDate)
  const end_date = earliest(chart.end_date, view.endDate)
  if (isTimeChart(chart) && campaignIndicatorsOnly(chart, catalog)) {
    // Campaign values grouped by time: the campaigns starting in the range, combined per bucket here.
    const path = `/campaign_datapoint/${query({ indicator__in: chart.indicator_ids, start_date, end_date, ...where, with_labels, limit: 0 })}`
    return { over: 'time', byCampaign: DATE_BUCKETS.has(chart.groupByTime) ? chart.groupByTime : 'month', path, where }
  }
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
    ...chartTypeOf(chart)?.reads,
    with_status,
    with_labels,
    with_coverage: 1,
    limit: 0,
  })}`
  return { over: 'campaigns', path, where }
}

/** A chart whose indicators are all campaign indicators (as the catalog's indicators say). */
const campaignIndicatorsOnly = (chart, catalog) => {
  const known = new Map((catalog.indicators ?? []).map((i) => [i.id, i]))
  const ids = chart.indicator_ids ?? []
  return ids.length > 0 && ids.every((id) => known.has(id) && known.get(id).resource_name !== 'date')
}

/** The date API's bucket of a day (YYYY-MM-DD) under a grouping: 2016, 20161 (a quarter), 201603, all_time. */
function bucketOf(day, grouping) {
  const [year, month] = [day.slice(0, 4), Number(day.slice(5, 7))]
  if (grouping === 'year') return year
  if (grouping === 'quarter') return `${year}${Math.ceil(month / 3)}`
  if (grouping === 'all_time') return 'all_time'
  return `${year}${String(month).padStart(2, '0')}`
}

/**
 * Campaign values in time buckets (by each campaign's first day): per indicator, location and bucket,
 * counts (and yes/no flags, counted) summed as the date API sums, any other value (a percent) the mean
 * of its campaigns', since percents do not add.
 */
function campaignsInBuckets(objects, grouping, catalog) {
  const starts = new Map((catalog.campaigns ?? []).map((c) => [c.id, String(c.start_date ?? '').slice(0, 10)]))
  const groups = new Map()
  for (const o of objects) {
    const day = starts.get(o.campaign_id)
    if (!day || o.value === null || o.value === undefined) continue
    const time_grouping = bucketOf(day, grouping)
    const key = keyOf(o.indicator_id, o.location_id, time_grouping)
    const group = groups.get(key) ?? { indicator_id: o.indicator_id, location_id: o.location_id, time_grouping, values: [] }
    group.values.push(o.value)
    groups.set(key, group)
  }
  return [...groups.values()].map(({ values, ...group }) => {
    const sum = values.reduce((a, b) => a + b, 0)
    const summed = ['int', 'bool'].includes(catalog.indicatorFormat?.get(group.indicator_id))
    return { ...group, value: summed ? sum : sum / values.length }
  })
}

/**
 * A chart of class indicators only (LQAS), but a map: drawn as how many values of each class each
 * location's subtree holds (`count_classes=1`), since a class is never summed.
 */
const countsClasses = (chart, catalog) =>
  !isMap(chart) && (chart.indicator_ids ?? []).length > 0 && chart.indicator_ids.every((id) => catalog.indicatorFormat?.get(id) === 'class')

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
 * @param {{ over: string, path: string, where: object, byCampaign?: string }} read campaign values to put in time buckets when `byCampaign` names the grouping
 * @param {Array<Record<string, any>>} objects the API's rows ({indicator_id, location_id, campaign_id or time_grouping, value})
 * @param {{ campaigns: Array<{ id: number, name: string, start_date?: string }> }} catalog
 */
export function chartData(chart, read, objects, catalog) {
  if (read.byCampaign) return chartData(chart, { ...read, byCampaign: undefined }, campaignsInBuckets(objects, read.byCampaign, catalog), catalog)
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

/**
 * The ECharts option of a non-table chart (a map needs `mapName` registered first). `tooltip` turns
 * lines of text into the tooltip's content (a DOM node in the page: no inline style, so the page's CSP
 * has nothing to refuse); `fontFamily`, the text's (a server's export names the font it ships). The
 * drawing carries its subtitle (place and time) and its status legend unless the page shows them
 * around it (`framed`: the app's card does, a file has nothing around it); `width`, the drawing's, is
 * where that legend wraps to a next line, and `height` where a map fits between the two; `flagsOf(indicatorId,
 * locationId, key)`, the words of a value's flags (a broken rule, an open follow-up) that its tooltip adds.
 */
export function chartOption(chart, data, catalog, options = {}) {
  const { narrow = false, fontFamily = 'system-ui, sans-serif', framed = false, width, height } = options
  const option = drawnOption(chart, data, catalog, options)
  if (framed) return option
  // The subtitle above the drawing, the status legend below it: room made by moving what is drawn.
  const subtitle = chartSubtitle(chart, data, catalog)
  const legend = hasStatusColours(option) ? statusGraphic(chart.indicator_ids ?? [], catalog, { fontFamily, narrow, width }) : { elements: [], height: 0 }
  const top = subtitle ? 22 : 0
  const text = { type: 'text', left: 0, top: 2, style: { text: subtitle, fill: '#444', font: `12px ${fontFamily}` }, silent: true }
  const shift = (component) =>
    component && typeof component === 'object' && !Array.isArray(component) ? { ...component, top: (Number(component.top) || 0) + top } : component
  const grid = option.grid && { ...option.grid, top: option.grid.top + top, bottom: option.grid.bottom + legend.height }
  return {
    ...option,
    grid,
    legend: shift(option.legend),
    visualMap: option.visualMap && { ...option.visualMap, bottom: (option.visualMap.bottom ?? 0) + legend.height },
    // A map: its own box, between the subtitle and the legend.
    series: option.series.map((s) => (s.type === 'map' ? { ...s, ...mapBox(top + 8, legend.height + 8, width, height) } : s)),
    geo: option.geo && { ...option.geo, ...mapBox(top + 8, legend.height + 8, width, height) },
    graphic: [...(subtitle ? [text] : []), ...legend.elements],
  }
}

/**
 * Where a map is drawn in a drawing `width` × `height` px, `above` and `below` it left to other things:
 * in the largest square between them, centred, which ECharts fills keeping the map's aspect. Given only
 * a top and a bottom, ECharts takes the map's width from its height, and a wide map (three districts
 * side by side) ran past both sides of its box.
 */
function mapBox(above, below, width, height) {
  if (!width || !height) return { top: above, bottom: below }
  const room = height - above - below
  return { layoutCenter: [width / 2, above + room / 2], layoutSize: Math.max(1, Math.min(width - 16, room)) }
}

/**
 * Whether a chart shows values in their statuses' colours, and so has a status legend: a table's cells,
 * a map's regions and the bars of a single series are; several series keep a colour each, and a pie's
 * slices and a map's bubbles are never.
 */
export const drawsStatuses = (chart, data, catalog) => isTable(chart) || hasStatusColours(drawnOption(chart, data, catalog))

/** Whether a drawn option (never a table's) gives any of its items a colour of its own: a status's. */
const hasStatusColours = (option) => (option.series ?? []).some((s) => Array.isArray(s.data) && s.data.some((item) => item?.itemStyle))

function drawnOption(
  chart,
  data,
  catalog,
  {
    mapName = '',
    tooltip = (lines) => lines.join('\n'),
    narrow = false,
    fontFamily = 'system-ui, sans-serif',
    width = undefined,
    flagsOf = (_indicatorId, _locationId, _key) => undefined,
  } = {},
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
    // Slices and series in the app's own colours (ECharts' default palette has near-alike blues).
    color: PALETTE,
    textStyle: { fontFamily },
    tooltip: { trigger: 'item', className: 'chart-tip', confine: true },
  }
  const type = chartTypeOf(chart) ?? chartTypeOf({ type: 'ColumnChart' })
  // `width`, the drawing's when known: what its value labels, category names and legend are laid out for.
  // What a tooltip says of a value's flags (a broken rule, a follow-up), one line each.
  const flagLinesOf = (id, locationId, key) => flagLines(flagsOf(id, locationId, key))
  const parts = {
    base,
    mapName,
    tooltip,
    indicatorIds,
    colorOf,
    locationName,
    indicatorName,
    formatOf,
    fillOf,
    coverageOf,
    flagLinesOf,
    lastKey,
    narrow,
    width,
  }
  return type.option(chart, data, { ...parts, look: type.look ?? {} })
}
