// A dashboard's data (`GET /api/v1/dashboard/:id/data/`): every chart's rows under a view (the app's
// campaign and location), each chart read as the app would read it alone (web/chart-data.js decides
// what) as the reader, with the routes' rights, read cache and answers. The whole is kept in the read
// cache as one read made of others, which any change drops. The route, a shared link's page and an
// export call it alike.
import { toApiError } from '../api/error-answer.js'
import type { QueryOf } from '../api/query.js'
import { QueryParams } from '../api/query-params.js'
import type { Reads } from '../api/read-service.js'
import type { Row } from '../api/resource.js'
import { chartsOf, type VIEW_PARAMS, viewOf } from './view.js'
import { webModules } from './web-modules.js'
import { webListRead } from './web-reads.js'

/** A dashboard's view as the API takes it. */
export type View = QueryOf<typeof VIEW_PARAMS>

/** A chart's rows as its card reads them (`read`: the API path the app would call), or the read's error. */
export type ChartRows = { uuid?: string; read: string } & ({ objects: Row[]; meta: Row } | { error: Row })

export interface DashboardData {
  dashboard_id: number
  view: { campaign: number | null; location: number | null; start_date: string | null; end_date: string | null }
  /** By chart id. */
  charts: Record<string, ChartRows>
}

/**
 * The reader's own roots, where a chart saved for "the viewer's location" reads: a restricted reader's
 * top location (a shared link's reader included), else the locations without a parent (as the app's
 * catalog finds them: the visible locations whose parent is not visible).
 */
async function rootsOf(reads: Reads): Promise<Array<{ id: number }>> {
  const { user } = reads
  if (user.restricted && user.top_lvl_location_id != null) return [{ id: user.top_lvl_location_id }]
  const page = await reads.list('location', QueryParams.of({ parent_location_id__isnull: 'true', fields: 'id', limit: 0, order_by: 'id' }))
  return page.objects as Array<{ id: number }>
}

/** What the app's catalog tells chartRead of the charts' indicators (formats, resources, bounds) and campaigns. */
async function catalogFor(reads: Reads, specs: Array<Record<string, unknown>>, view: View) {
  const modules = await webModules({ drawing: false })
  const indicatorIds = [...new Set(specs.flatMap((spec) => (Array.isArray(spec.indicator_ids) ? spec.indicator_ids.filter(Number.isInteger) : [])))]
  const indicators = (
    indicatorIds.length
      ? (
          await reads.list(
            'indicator',
            QueryParams.of({ id__in: indicatorIds, fields: 'id,data_format,resource_name,good_bound,bad_bound,bound_json', limit: 0 }),
          )
        ).objects
      : []
  ) as Array<{ id: number; data_format: string }>
  // A date range keeps the charts' campaigns that start in it: chartRead needs their start dates.
  const campaigns = (
    view.start_date || view.end_date ? (await reads.list('campaign', QueryParams.of({ fields: 'id,name,start_date', limit: 0 }))).objects : []
  ) as Array<{ id: number; name: string }>
  return {
    // Their resource: a chart over time of campaign indicators reads campaigns.
    indicators,
    indicatorBounds: modules.boundsById(indicators),
    indicatorFormat: new Map(indicators.map((i) => [i.id, i.data_format])),
    campaigns,
    roots: specs.some(modules.isRelative) ? await rootsOf(reads) : [],
  }
}

/**
 * What a shared link's page and an export read: lists and details, and dashboards' data (kept), as one
 * reader. An export's drawing asks them from its worker thread (lib/export/draw.ts).
 */
export interface ViewReads extends Pick<Reads, 'list' | 'detail'> {
  dashboardData(id: number, view: View): Promise<DashboardData>
}

/** The view reads of `reads`' reader. */
export const viewReads = (reads: Reads): ViewReads => ({
  list: reads.list,
  detail: reads.detail,
  dashboardData: (id, view) => dashboardData(reads, id, view, QueryParams.of(view)),
})

/** What a dashboard's data is kept under in the read cache (with the view, and whose it is). */
export const dashboardDataName = (id: number) => `dashboard/${id}/data`

/** Dashboard `id`'s data under `view`, kept: read as `reads`' reader; `query`, the view as asked (its key in the read cache). */
export const dashboardData = (reads: Reads, id: number, view: View, query: QueryParams): Promise<DashboardData> =>
  reads.composed(dashboardDataName(id), 'dashboard', query, () => readDashboardData(reads, id, view))

/** Dashboard `id`'s data under `view`, read now as `reads`' reader (each chart's read may still be kept). */
export async function readDashboardData(reads: Reads, id: number, view: View): Promise<DashboardData> {
  const modules = await webModules({ drawing: false })
  const charts = chartsOf(await reads.detail('dashboard', id))
  const specs = charts.map((chart) => modules.chartSpec(chart.chart_json))
  const catalog = await catalogFor(reads, specs, view)
  const place = viewOf(view)
  // One chart after the other: a dashboard's data holds one of the pool's connections at a time, as a
  // chart's own request does (all at once, 50 clients' dashboards of five charts wait for 250).
  const rows: Array<readonly [number, ChartRows]> = []
  for (const [i, chart] of charts.entries()) {
    const { path } = modules.chartRead(specs[i], place, catalog)
    rows.push([chart.id, { uuid: chart.uuid, read: path, ...(await chartRowsAt(reads, path)) }])
  }
  return {
    dashboard_id: id,
    view: { campaign: view.campaign ?? null, location: view.location ?? null, start_date: view.start_date ?? null, end_date: view.end_date ?? null },
    charts: Object.fromEntries(rows),
  }
}

/** A chart's rows, or the client's error its read met (a chart of a resource the reader may not read). */
async function chartRowsAt(reads: Reads, path: string): Promise<{ objects: Row[]; meta: Row } | { error: Row }> {
  try {
    return await webListRead(reads, path)
  } catch (error) {
    const api = toApiError(error as Error, undefined, undefined, !reads.user.restricted)
    if (api.statusCode >= 500) throw error
    return { error: api.body() }
  }
}
