// The web app's reads, made by the server: the app's modules (web/api.js's catalog, web/chart-data.js's
// chart reads, web/charts.js's map shapes) name what they read by its API path, since the browser asks
// for it over HTTP. Run here (a dashboard's data, a shared link's page, an export), such a path is only
// a resource's name and its parameters, read as a typed list read (lib/api/read-service.ts, `Reads`).
import { ApiError } from '../core/errors.js'
import { QueryParams } from '../api/query-params.js'
import type { ListPage, Reads } from '../api/read-service.js'

/** The list page the web app's read `path` (`/<resource>/?<parameters>`) names, read by `reads`. */
export function webListRead(reads: Pick<Reads, 'list'>, path: string): Promise<ListPage> {
  const name = /^\/([a-z_]+)\/(?:\?|$)/.exec(path)?.[1]
  // The app's modules read lists only: anything else is a mistake of ours, not a client's.
  if (name === undefined) throw new ApiError(500, 'NOT_A_LIST_READ', `Not a list read of the web app: ${path}`)
  return reads.list(name, QueryParams.fromUrl(path))
}
