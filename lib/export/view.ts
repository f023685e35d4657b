// A dashboard's view as the API takes it (`campaign`, `location`, `start_date`, `end_date`): what the
// app keeps in its address, and the dashboard's data, its exports and a shared link read the same way;
// and the charts a dashboard's rows show, as its detail expands them.
import { Param, type QueryOf, queryReader } from '../api/query.js'
import type { QueryParams } from '../api/query-params.js'
import { appDashboard, type View } from './web-modules.js'

export const VIEW_PARAMS = {
  campaign: Param.integer("the view's campaign: every chart reads it instead of its own campaigns"),
  location: Param.integer("the view's location (a drill-down or a picked one): every chart reads it at its own depth"),
  start_date: Param.date("the view's first day: charts over time read from it, charts of campaigns their campaigns starting from it"),
  end_date: Param.date("the view's last day, as start_date"),
}
const readParams = queryReader(VIEW_PARAMS, { names: [], unlessId: false })

/** The view of typed parameters, as chartRead takes it. */
export const viewOf = (params: QueryOf<typeof VIEW_PARAMS>): View => ({
  campaignId: params.campaign ?? null,
  locationId: params.location ?? null,
  startDate: params.start_date ?? null,
  endDate: params.end_date ?? null,
})

/** The view a query asks for; a 400 naming a bad value. */
export const readView = (raw: QueryParams) => readParams(raw)

/** The view of chartRead as the API takes it. */
export const apiView = (view: View): QueryOf<typeof VIEW_PARAMS> => ({
  campaign: view.campaignId ?? undefined,
  location: view.locationId ?? undefined,
  start_date: view.startDate ?? undefined,
  end_date: view.endDate ?? undefined,
})

/** A saved chart as a dashboard's detail expands it. */
export type SavedChart = { id: number; uuid?: string; title?: string; chart_json: unknown }

/** The rows of charts a dashboard shows, in order (web/dashboard.js: the app reads them the same way). */
export const chartRowsOf = (dashboard: Record<string, unknown>) => appDashboard.chartRowsOf(dashboard as never) as SavedChart[][]

/** Every chart a dashboard shows, in order. */
export const chartsOf = (dashboard: Record<string, unknown>) => appDashboard.chartsOf(dashboard as never) as SavedChart[]
