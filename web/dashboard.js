// A dashboard as the app and the server's reads and exports both take it: its view (`campaign`,
// `location`, `start_date`, `end_date`), kept in the app's address and sent to the API, and the charts
// its rows show. Pure functions: no DOM, no fetch (the server imports them: lib/export/view.ts).
import { query } from './api.js'

/** A day as the API and a date field write it. */
export const isDate = (value) => typeof value === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(value)

/**
 * A view's parameters, by the names of the address and the API.
 * @param {{ campaignId?: number | null, locationId?: number | null, startDate?: string | null, endDate?: string | null }} view
 */
export const viewParams = (view) => ({
  campaign: view.campaignId ?? undefined,
  location: view.locationId ?? undefined,
  start_date: view.startDate ?? undefined,
  end_date: view.endDate ?? undefined,
})

/** A view as a query string (`?campaign=…&location=…`, '' for none). */
export const viewQuery = (view) => query(viewParams(view))

/**
 * The rows of charts a dashboard shows, in order: each row's saved charts as its detail expands them
 * (a uuid the API could not expand is left out, and a row left with none).
 * @param {{ rows?: Array<{ charts?: unknown[] } | null> | null } | null | undefined} dashboard
 * @returns {Array<Array<Record<string, any>>>}
 */
export function chartRowsOf(dashboard) {
  return (dashboard?.rows ?? [])
    .map((row) => (row?.charts ?? []).filter((c) => typeof c === 'object' && c !== null && 'chart_json' in c))
    .filter((row) => row.length > 0)
}

/** Every chart a dashboard shows, in order. */
export const chartsOf = (dashboard) => chartRowsOf(dashboard).flat()
