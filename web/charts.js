// Charts in the page: a chart's values read through the API, its map shapes registered, and ECharts
// drawing into an element (what to read and what to draw is decided in chart-data.js).
import * as echarts from 'echarts'
import { list, query } from './api.js'
import { chartData, chartRead, rootsFallback } from './chart-data.js'
import { t } from './i18n.js'

/**
 * The values a chart shows under a view (see chartData): from `prefetched` (its entry in the dashboard's
 * data, `GET /dashboard/<id>/data/`) when that is the same read, else read now through `read`.
 */
async function readChart(chart, view, catalog, prefetched = undefined, read = list) {
  const planned = chartRead(chart, view, catalog)
  const objects = prefetched?.read === planned.path && Array.isArray(prefetched.objects) ? prefetched.objects : await read(planned.path)
  return chartData(chart, planned, objects, catalog)
}

/**
 * The values of a chart for this user: as saved, or, when the chart is aimed above a restricted
 * user's part of the country and nothing of hers falls in its selection, her own part.
 */
export async function readChartFor(spec, view, catalog, prefetched = undefined, read = list) {
  const fallback = view.locationId == null ? rootsFallback(spec, catalog) : undefined
  const data = await readChart(spec, view, catalog, prefetched, read)
  if (!fallback || data.points.length > 0) return { data, aimedAbove: Boolean(fallback) }
  return { data: await readChart(fallback, view, catalog, undefined, read), aimedAbove: true }
}

/** The centre of a polygon's bounding box: where a bubble map puts its circle. */
function centreOf(geometry) {
  // Polygon or MultiPolygon: the coordinates, flattened, are x, y, x, y…
  const numbers = geometry.coordinates.flat(Number.POSITIVE_INFINITY)
  if (numbers.length < 2) return [0, 0]
  const xs = numbers.filter((_, i) => i % 2 === 0)
  const ys = numbers.filter((_, i) => i % 2 === 1)
  return [(Math.min(...xs) + Math.max(...xs)) / 2, (Math.min(...ys) + Math.max(...ys)) / 2]
}

/**
 * Registers the polygons of a map chart's locations under a name of their own; returns the name, how
 * many there were, and each location's centre by name (for bubbles). `read` lists them (the API
 * through the page's session by default); `scope` names whose view they are, where one registry
 * serves several users (the server's exports).
 */
export async function registerPolygons(data, catalog, { read = list, scope = '' } = {}) {
  const features = await read(`/geo/${query({ ...data.where, limit: 0 })}`)
  const mapName = `locations-${scope}${JSON.stringify(data.where)}`
  const named = features.map((f) => ({
    type: 'Feature',
    geometry: f.geometry,
    properties: { name: catalog.locationName.get(f.location_id) ?? t('Location {id}', { id: f.location_id }) },
  }))
  echarts.registerMap(mapName, { type: 'FeatureCollection', features: named })
  return { mapName, polygons: features.length, centres: new Map(named.map((f) => [f.properties.name, centreOf(f.geometry)])) }
}

/** A tooltip's lines as elements styled by class (the page's CSP refuses inline styles). */
export function tooltipElement(lines) {
  const box = document.createElement('div')
  lines.forEach((line, i) => {
    const row = document.createElement('div')
    row.className = i === 0 ? 'tip-title' : 'tip-line'
    row.textContent = line
    box.append(row)
  })
  return box
}

/** Draws into `element` (SVG: labels are text a screen reader and a test can read); returns the instance. */
export function draw(element, option, onLocationClick) {
  const instance = echarts.init(element, null, { renderer: 'svg' })
  instance.setOption(option)
  instance.on('click', (params) => onLocationClick?.(params.name))
  return instance
}
