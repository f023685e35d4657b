// The original front-end's export form, `/export_file/?type=pdf&path=<a page>`: here the page must be a
// dashboard route of this app, read as a dashboard and its view. Nothing else is fetched or opened: no
// other origin, no file.
import { ApiError } from '../core/errors.js'
import { QueryParams } from '../api/query-params.js'

/** A dashboard route: `/app/#/dashboard/<id>`, its view after `?` (campaign, location, dates). */
const DASHBOARD_ROUTE = /^(?:\/app\/?)?#\/dashboard\/(\d{1,10})\/?(?:\?([^#]*))?$/

const invalidPath = (path: string) =>
  new ApiError(
    400,
    'INVALID_EXPORT_PATH',
    `path must be a dashboard of this app (/app/#/dashboard/<id>?campaign=…&location=…), not ${JSON.stringify(path.slice(0, 200))}`,
  )

/** The dashboard and the view's parameters a `path` names (read as the export's own); a 400 naming it for anything else. */
export function dashboardOfPath(path: string): { dashboardId: number; view: QueryParams } {
  const match = DASHBOARD_ROUTE.exec(path)
  if (!match || Number(match[1]) >= 2 ** 31 || Number(match[1]) < 1) throw invalidPath(path)
  return { dashboardId: Number(match[1]), view: QueryParams.fromUrl(`?${match[2] ?? ''}`) }
}
