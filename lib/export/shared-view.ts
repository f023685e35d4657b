// What a shared link's page is drawn from (`GET /api/v1/shared/<token>/`): the page holds no
// credentials, so one answer carries the dashboard, the names it shows, every chart's rows and every
// other read its chart cards will make (a restricted reader's fallback, a map's shapes), made here by the
// same functions the cards call (web/charts.js).
import { bodyOf, type Reader } from '../api/read-service.js'
import type { QueryOf } from '../api/query.js'
import { chartsOf, type VIEW_PARAMS, viewOf } from './view.js'
import { readCatalog, webModules } from './web-modules.js'

/** The dashboard `dashboardId` under a view, read with `read` (the link's reader). */
export async function sharedView(read: Reader, dashboardId: number, view: QueryOf<typeof VIEW_PARAMS>) {
  const modules = await webModules()
  const [dashboard, data, { lists, catalog }] = await Promise.all([
    bodyOf(read, `/dashboard/${dashboardId}/`),
    bodyOf(read, `/dashboard/${dashboardId}/data/${modules.query(view)}`),
    readCatalog(modules, read),
  ])
  const reads: Record<string, unknown> = {}
  const recorded = async (path: string) => (reads[path] ??= (await bodyOf(read, path)).objects) as Array<Record<string, unknown>>
  const place = viewOf(view)
  for (const chart of chartsOf(dashboard)) {
    const spec = modules.chartSpec(chart.chart_json)
    const prefetched = (data.charts as Record<string, unknown>)[chart.id]
    const drawn = await modules.readChartFor(spec, place, catalog, prefetched, recorded).catch(() => undefined)
    if (drawn && modules.isMap(spec) && drawn.data.points.length) await recorded(`/geo/${modules.query({ ...(drawn.data.where as object), limit: 0 })}`)
  }
  return { dashboard, data, catalog: lists, reads }
}
