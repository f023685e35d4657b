// Charts in the original front-end's `chart_json` shape ({type, indicator_ids, campaign_ids,
// location_ids, location_depth, start_date, end_date, groupBy, groupByTime, indicator_colors}): what to
// read for one, and how ECharts draws it. A dashboard's view (its campaign picker and the location it
// drilled down to) overrides the chart's own campaign and location.
import * as echarts from '/app/vendor/echarts.mjs'
import { list, query } from './api.js'

export const CHART_TYPES = ['ColumnChart', 'BarChart', 'LineChart', 'PieChart', 'TableChart', 'RawData', 'ChoroplethMap', 'MapChart']
export const TIME_GROUPINGS = ['month', 'quarter', 'year', 'all_time']
const PALETTE = ['#0b5cad', '#d7301f', '#2a9d8f', '#e9a23b', '#6a4c93', '#52796f']

/** Charts over dates (the date_datapoint read) rather than campaigns. */
export const isTimeChart = (chart) => Boolean(chart.groupByTime) || (!chart.campaign_ids?.length && Boolean(chart.start_date || chart.end_date))
export const isMap = (chart) => chart.type === 'ChoroplethMap' || chart.type === 'MapChart'
export const isTable = (chart) => chart.type === 'TableChart' || chart.type === 'RawData'

/** The location parameters of a chart's read under a view. */
function locationParams(chart, view) {
  if (view.locationId != null) return { location_id: view.locationId, location_depth: chart.location_depth ?? 0 }
  const ids = chart.location_ids ?? []
  if (ids.length > 1) return { location_id__in: ids }
  if (ids.length === 1) return { location_id: ids[0], location_depth: chart.location_depth ?? 0 }
  return {}
}

const timeLabel = (grouping) => (/^\d{6}$/.test(grouping) ? `${grouping.slice(0, 4)}-${grouping.slice(4)}` : grouping)

/**
 * The values a chart shows: `points` ({indicator_id, location_id, key, value}), `keys` (campaigns or
 * time groupings, {id, label}) and `locationIds` in the order the API selected them.
 */
export async function readChart(chart, view, catalog) {
  const where = locationParams(chart, view)
  if (isTimeChart(chart)) {
    const objects = await list(
      `/date_datapoint/${query({ indicator__in: chart.indicator_ids, ...where, start_date: chart.start_date, end_date: chart.end_date, group_by_time: chart.groupByTime || 'month', limit: 0 })}`,
    )
    const keys = [...new Set(objects.map((o) => o.time_grouping))].sort().map((id) => ({ id, label: timeLabel(id) }))
    return shape(objects.map((o) => ({ ...o, key: o.time_grouping })), keys, where)
  }
  const campaigns = view.campaignId ? [view.campaignId] : chart.campaign_ids
  const objects = await list(
    `/campaign_datapoint/${query({
      indicator__in: chart.indicator_ids,
      campaign__in: campaigns,
      start_date: campaigns?.length ? undefined : chart.start_date,
      end_date: campaigns?.length ? undefined : chart.end_date,
      ...where,
      chart_type: chart.type,
      limit: 0,
    })}`,
  )
  const keyIds = [...new Set(objects.map((o) => o.campaign_id))]
  const keys = catalog.campaigns.filter((c) => keyIds.includes(c.id)).map((c) => ({ id: c.id, label: c.name }))
  return shape(objects.map((o) => ({ ...o, key: o.campaign_id })), keys.reverse(), where)
}

function shape(points, keys, where) {
  const locationIds = [...new Set(points.map((p) => p.location_id))]
  return { points, keys, locationIds, where }
}

/** The value at (indicator, location, key), or null. */
export function valueAt(data, indicatorId, locationId, key) {
  const point = data.points.find((p) => p.indicator_id === indicatorId && p.location_id === locationId && p.key === key)
  return point && point.value !== null ? point.value : null
}

/** A number as people read it: percentages as such, whole numbers grouped, fractions to 3 significant places. */
export function formatValue(value, format) {
  if (value === null || value === undefined) return '–'
  if (format === 'pct') return `${Number((100 * value).toPrecision(3))} %`
  return Number.isInteger(value) ? value.toLocaleString('en') : Number(value.toPrecision(3)).toString()
}

/** The ECharts option of a non-table chart (a map needs `mapName` registered first). */
export function chartOption(chart, data, catalog, mapName) {
  const indicatorIds = chart.indicator_ids ?? []
  const colorOf = (indicatorId, i) => chart.indicator_colors?.[indicatorId] ?? PALETTE[i % PALETTE.length]
  const locationName = (id) => catalog.locationName.get(id) ?? `Location ${id}`
  const indicatorName = (id) => catalog.indicatorName.get(id) ?? `Indicator ${id}`
  const key = data.keys[0]?.id
  const base = { animation: false, tooltip: { trigger: 'item' }, textStyle: { fontFamily: 'system-ui, sans-serif' } }
  if (isMap(chart)) {
    const indicatorId = indicatorIds[0]
    const values = data.locationIds.map((id) => ({ name: locationName(id), value: valueAt(data, indicatorId, id, key) }))
    const numbers = values.map((v) => v.value).filter((v) => v !== null)
    return {
      ...base,
      visualMap: { min: Math.min(...numbers), max: Math.max(...numbers) > Math.min(...numbers) ? Math.max(...numbers) : Math.min(...numbers) + 1, inRange: { color: ['#fff5eb', colorOf(indicatorId, 0)] }, calculable: false, left: 0, bottom: 0, itemHeight: 80 },
      series: [{ type: 'map', map: mapName, name: indicatorName(indicatorId), data: values, label: { show: true, fontSize: 11 }, emphasis: { label: { show: true } } }],
    }
  }
  if (chart.type === 'PieChart') {
    const indicatorId = indicatorIds[0]
    const slices = data.locationIds.map((id) => ({ name: locationName(id), value: valueAt(data, indicatorId, id, key) }))
    return { ...base, series: [{ type: 'pie', name: indicatorName(indicatorId), radius: '65%', data: slices, label: { formatter: '{b}: {c}' } }] }
  }
  // Columns, bars and lines: over time or campaigns when one location is read, else over locations.
  const overKeys = chart.type === 'LineChart' || data.locationIds.length <= 1
  const categories = overKeys ? data.keys.map((k) => k.label) : data.locationIds.map(locationName)
  const series = indicatorIds.flatMap((indicatorId, i) =>
    (overKeys ? data.locationIds.slice(0, 6) : [null]).map((locationId) => ({
      type: chart.type === 'LineChart' ? 'line' : 'bar',
      name: overKeys && data.locationIds.length > 1 ? `${indicatorName(indicatorId)}, ${locationName(locationId)}` : indicatorName(indicatorId),
      color: colorOf(indicatorId, i),
      label: { show: chart.type !== 'LineChart', position: chart.type === 'BarChart' ? 'right' : 'top' },
      data: overKeys ? data.keys.map((k) => valueAt(data, indicatorId, locationId, k.id)) : data.locationIds.map((id) => valueAt(data, indicatorId, id, key)),
    })),
  )
  const categoryAxis = { type: 'category', data: categories, axisLabel: { interval: 0, hideOverlap: true } }
  const valueAxis = { type: 'value' }
  const horizontal = chart.type === 'BarChart'
  return {
    ...base,
    tooltip: { trigger: 'axis' },
    legend: indicatorIds.length > 1 ? { top: 0 } : undefined,
    grid: { left: 48, right: 24, top: indicatorIds.length > 1 ? 32 : 24, bottom: 32, outerBoundsMode: 'same', outerBoundsContain: 'axisLabel' },
    xAxis: horizontal ? valueAxis : categoryAxis,
    yAxis: horizontal ? categoryAxis : valueAxis,
    series,
  }
}

/** Registers the polygons of a map chart's locations under a name of their own; returns the name. */
export async function registerPolygons(data, catalog) {
  const features = await list(`/geo/${query({ ...data.where, limit: 0 })}`)
  const mapName = `locations-${JSON.stringify(data.where)}`
  echarts.registerMap(mapName, {
    type: 'FeatureCollection',
    features: features.map((f) => ({ type: 'Feature', geometry: f.geometry, properties: { name: catalog.locationName.get(f.location_id) ?? `Location ${f.location_id}` } })),
  })
  return { mapName, polygons: features.length }
}

/** Draws into `element` (SVG: labels are text a screen reader and a test can read); returns the instance. */
export function draw(element, option, onLocationClick) {
  const instance = echarts.init(element, null, { renderer: 'svg' })
  instance.setOption(option)
  instance.on('click', (params) => onLocationClick?.(params.name))
  return instance
}
