// What a shared link's page is drawn from (`GET /api/v1/shared/<token>/`): the page holds no
// credentials, so one answer carries the dashboard, the names it shows, every chart's rows and every
// other read its chart cards will make (a restricted reader's fallback, a map's shapes), made here by the
// same functions the cards call (web/charts.js).
import type { View, ViewReads } from './dashboard-data.js'
import { chartsOf, viewOf } from './view.js'
import { readCatalog, webModules } from './web-modules.js'
import { webListRead } from './web-reads.js'

/** The dashboard `dashboardId` under a view, read as the link's reader. */
export async function sharedView(viewReads: ViewReads, dashboardId: number, view: View) {
  const modules = await webModules()
  const [dashboard, data, { lists, catalog }] = await Promise.all([
    viewReads.detail('dashboard', dashboardId),
    viewReads.dashboardData(dashboardId, view),
    readCatalog(modules, viewReads),
  ])
  // Every other read of the cards, by the path they will ask it by.
  const reads: Record<string, unknown> = {}
  const recorded = async (path: string) => (reads[path] ??= (await webListRead(viewReads, path)).objects) as Array<Record<string, unknown>>
  const place = viewOf(view)
  for (const chart of chartsOf(dashboard)) {
    const spec = modules.chartSpec(chart.chart_json)
    const prefetched = data.charts[chart.id]
    const drawn = await modules.readChartFor(spec, place, catalog, prefetched, recorded).catch(() => undefined)
    if (drawn && modules.isMap(spec) && drawn.data.points.length) await recorded(`/geo/${modules.query({ ...(drawn.data.where as object), limit: 0 })}`)
  }
  return { dashboard, data, catalog: lists, reads }
}
