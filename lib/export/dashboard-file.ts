// A dashboard (or one chart) as a file: each chart read and drawn as the app reads and draws it (the
// web app's modules), its reads made as the requester, so the file holds what that requester may see
// and nothing else.
import { tooManyCharts } from './limits.js'
import type { ViewReads } from './dashboard-data.js'
import { CHART_HEIGHT, chartSvg, chartWidths, type DrawnChart, FONT_FAMILY, type Layout, messageSvg, tableSvg } from './render.js'
import { type Catalog, type ChartSpec, readCatalog, type View, type WebModules } from './web-modules.js'
import { apiView, chartRowsOf, type SavedChart } from './view.js'
import { webListRead } from './web-reads.js'

/** What to export: a dashboard or a chart, under a view. */
export interface ExportTarget {
  dashboardId?: number
  chartId?: number
  view: View
}

/** The rows of charts to draw, the title, and the dashboard's data (each chart's rows) where there is one. */
async function chartsToDraw(reads: ViewReads, target: ExportTarget) {
  if (target.chartId !== undefined) {
    const chart = (await reads.detail('custom_chart', target.chartId)) as unknown as SavedChart
    return { title: chart.title ?? `#${chart.id}`, rows: [[chart]], prefetched: {} as Record<string, unknown> }
  }
  const dashboardId = target.dashboardId!
  const [dashboard, data] = await Promise.all([reads.detail('dashboard', dashboardId), reads.dashboardData(dashboardId, apiView(target.view))])
  return { title: String(dashboard.title), rows: chartRowsOf(dashboard), prefetched: data.charts as Record<string, unknown> }
}

/** One chart drawn at `width`: its drawing, a table, or the reason there is none. */
async function drawChart(modules: WebModules, chart: SavedChart, spec: ChartSpec, width: number, context: DrawContext): Promise<DrawnChart> {
  const { catalog, view, readObjects, scope } = context
  const title = chart.title ?? `#${chart.id}`
  const { height } = context
  const drawn = (svg: string) => ({ title, svg, width, height })
  let data: Awaited<ReturnType<WebModules['readChartFor']>>['data']
  try {
    data = (await modules.readChartFor(spec, view, catalog, context.prefetched[chart.id], readObjects)).data
  } catch (error) {
    return drawn(messageSvg((error as Error).message, width, height))
  }
  if (data.points.length === 0) return drawn(messageSvg(modules.t('No values for this selection.'), width, height))
  const table = () => {
    const ids = spec.indicator_ids ?? []
    const { t } = modules
    const header = [
      t('Location'),
      data.over === 'time' ? t('Period') : data.over === 'classes' ? t('Class') : t('Campaign'),
      ...ids.map((id) => catalog.indicatorName.get(id) ?? t('Indicator {id}', { id })),
    ]
    const tableRows = modules.tableRows(data, ids, catalog)
    const rows = tableRows.map((row) => [row.location, row.key.label, ...row.shown])
    // Each value's status colour, as the app's table tints its cell (web/status.js).
    const fills = tableRows.map((row) => [undefined, undefined, ...row.statuses.map((s, i) => modules.statusFill(s, catalog.indicatorBounds.get(ids[i])))])
    const legend = modules.statusLegendLayout(ids, catalog, { width })
    const drawnTable = tableSvg(header, rows, width, height, (more) => modules.tn(more, '… {n} more row', '… {n} more rows'), fills, legend)
    return { title, svg: drawnTable.svg, width, height: drawnTable.height }
  }
  if (modules.isTable(spec)) return table()
  let mapName = ''
  if (modules.isMap(spec)) {
    const map = await modules.registerPolygons(data, catalog, { read: readObjects, scope })
    if (map.polygons === 0) return table()
    data.centres = map.centres
    mapName = map.mapName
  }
  return drawn(chartSvg(modules.chartOption(spec, data, catalog, { mapName, fontFamily: FONT_FAMILY, width, height }), width, height))
}

interface DrawContext {
  catalog: Catalog
  view: View
  prefetched: Record<string, unknown>
  readObjects: (path: string) => Promise<Array<Record<string, unknown>>>
  /** Whose view the map shapes are (one registry serves every requester). */
  scope: string
  /** How high each chart is drawn. */
  height: number
}

/**
 * The layout of a file of `target` at `width` pixels, each chart `height` high (the screen's card by
 * default): its title, the view's campaign and locations and
 * when it was made, then each row's charts drawn.
 */
export async function exportLayout(
  modules: WebModules,
  reads: ViewReads,
  target: ExportTarget,
  options: { width: number; height?: number; scope: string; made: Date; timeZone?: string; language: string; maxCharts?: number },
): Promise<Layout> {
  const [{ catalog }, charts] = await Promise.all([readCatalog(modules, reads), chartsToDraw(reads, target)])
  // Dashboards saved before the limit, or written around the API, are refused too: drawing is the cost.
  const count = charts.rows.reduce((sum, row) => sum + row.length, 0)
  if (options.maxCharts !== undefined && count > options.maxCharts) throw tooManyCharts(count, options.maxCharts)
  const readObjects = async (path: string) => (await webListRead(reads, path)).objects as Array<Record<string, unknown>>
  const context: DrawContext = {
    catalog,
    view: target.view,
    prefetched: charts.prefetched ?? {},
    readObjects,
    scope: options.scope,
    height: options.height ?? CHART_HEIGHT,
  }
  const rows: DrawnChart[][] = []
  for (const row of charts.rows) {
    const width = chartWidths(row.length, options.width)
    rows.push(await Promise.all(row.map((chart) => drawChart(modules, chart, modules.chartSpec(chart.chart_json), width, context))))
  }
  const specs = charts.rows.flat().map((chart) => modules.chartSpec(chart.chart_json))
  const { campaignId, locationId, startDate, endDate } = target.view
  const campaignIds = campaignId == null ? [...new Set(specs.flatMap((spec) => (spec.campaign_ids as number[] | undefined) ?? []))] : [campaignId]
  const campaigns = campaignIds.map((id) => catalog.campaignName.get(id)).filter(Boolean)
  const locationIds = locationId == null ? [...new Set(specs.flatMap((spec) => spec.location_ids ?? []))] : [locationId]
  // A chart's location the reader cannot see (above her part of the country) is drawn for her part: named so.
  const locations = [
    ...new Set(
      locationIds.flatMap((id) => (catalog.locationName.has(id) ? [catalog.locationName.get(id)!] : catalog.roots.flatMap((root) => root.name ?? []))),
    ),
  ]
  const { t } = modules
  // In the reader's zone, named ("UTC", "GMT+1"), when the request says it; UTC else.
  const made = new Intl.DateTimeFormat(options.language, { dateStyle: 'medium', timeStyle: 'short', timeZone: options.timeZone ?? 'UTC' }).format(options.made)
  const zone =
    new Intl.DateTimeFormat(options.language, { timeZone: options.timeZone ?? 'UTC', timeZoneName: 'short' })
      .formatToParts(options.made)
      .find((part) => part.type === 'timeZoneName')?.value ?? 'UTC'
  const dates = [startDate && t('from {day}', { day: startDate }), endDate && t('to {day}', { day: endDate })].filter(Boolean).join(' ')
  // Charts over dates read no campaign: a dashboard of them only names none.
  const campaignLine = specs.some((spec) => !modules.isTimeChart(spec))
    ? [t('Campaign: {names}', { names: campaigns.length ? campaigns.join(', ') : t('as each chart sets') })]
    : []
  return {
    title: charts.title,
    lines: [
      ...campaignLine,
      t('Locations: {names}', { names: locations.length ? locations.join(', ') : t('as each chart sets') }),
      ...(dates ? [t('Dates: {range}', { range: dates })] : []),
      t('Made {time} {zone}', { time: made, zone }),
    ],
    rows,
  }
}
