// The original front-end's export form, `/export_file/?type=pdf&path=<a page>`: here the page must be a
// dashboard route of this app, read as a dashboard and its view. Nothing else is fetched or opened: no
// other origin, no file.
import { ApiError } from '../core/errors.js'

/** A dashboard route: `/app/#/dashboard/<id>`, its view after `?` (campaign, location). */
const DASHBOARD_ROUTE = /^(?:\/app\/?)?#\/dashboard\/(\d{1,10})\/?(?:\?([^#]*))?$/

const invalidPath = (path: string) =>
  new ApiError(
    400,
    'INVALID_EXPORT_PATH',
    `path must be a dashboard of this app (/app/#/dashboard/<id>?campaign=…&location=…), not ${JSON.stringify(path.slice(0, 200))}`,
  )

/** The dashboard and view a `path` names; a 400 naming it for anything else. */
export function dashboardOfPath(path: string): { dashboardId: number; campaign?: number; location?: number } {
  const match = DASHBOARD_ROUTE.exec(path)
  if (!match || Number(match[1]) >= 2 ** 31 || Number(match[1]) < 1) throw invalidPath(path)
  const params = new URLSearchParams(match[2] ?? '')
  const integer = (name: string) => {
    const value = params.get(name)
    if (value === null || value === '') return undefined
    if (!/^\d{1,10}$/.test(value) || Number(value) >= 2 ** 31) throw invalidPath(path)
    return Number(value)
  }
  return { dashboardId: Number(match[1]), campaign: integer('campaign'), location: integer('location') }
}
