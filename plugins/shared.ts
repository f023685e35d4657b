// Shared dashboards (lib/data/shares.ts): `GET /api/v1/shared/<token>/` answers everything the web app
// needs to draw the link's dashboard (its detail, the names it shows, every chart's rows under the
// view) and `/shared/<token>/export_file/` its files, both read as the link's reader through the API's
// own routes. The token opens nothing else. A link that is unknown, expired, revoked or whose creator
// cannot see it any more is a 404, on every process at once.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { ApiError } from '../lib/core/errors.js'
import { errorSchema } from '../lib/api/openapi.js'
import type { QueryOf } from '../lib/api/query.js'
import { rawQueryOf } from '../lib/api/request.js'
import { serve } from '../lib/api/representation.js'
import { type Answer, readerAs, readingAs } from '../lib/api/composed-read.js'
import { findShare, type Share } from '../lib/data/shares.js'
import { EXPORT_QUERY, fileAsked } from '../lib/export/file.js'
import { webModules } from '../lib/export/web-modules.js'
import { querystringOf, readView, VIEW_PARAMS, viewOf } from '../lib/export/view.js'
import dashboardResource from '../resources/dashboard.js'
import { answerExport, exportSchema } from './export.js'

const { dashboard_id: _dashboard, path: _path, ...SHARED_EXPORT_QUERY } = EXPORT_QUERY

const TOKEN = { type: 'object', properties: { token: { type: 'string', maxLength: 64 } }, required: ['token'] }
const linkGone = () => new ApiError(404, 'SHARE_NOT_FOUND', 'This link does not exist, has expired or was revoked')

/** The body of a 200 read, else its own error. */
async function ok(read: (path: string) => Promise<Answer>, path: string) {
  const { status, body } = await read(path)
  if (status !== 200) throw new ApiError(status, String(body.code ?? 'READ_FAILED'), String(body.message ?? status))
  return body
}

/**
 * The dashboard of a link under a view, with the names the app shows beside ids, and every read its
 * cards will make beyond the dashboard's data (a restricted reader's fallback, a map's shapes), made
 * now as the card makes them (web/charts.js), since the page holding the link may read nothing itself.
 */
async function sharedView(read: (path: string) => Promise<Answer>, share: Share, view: QueryOf<typeof VIEW_PARAMS>) {
  const modules = await webModules()
  const names = Object.keys(modules.CATALOG_READS)
  const [dashboard, data, ...lists] = await Promise.all([
    ok(read, `/dashboard/${share.dashboard_id}/`),
    ok(read, `/dashboard/${share.dashboard_id}/data/${modules.query(view)}`),
    ...names.map((name) => ok(read, modules.CATALOG_READS[name])),
  ])
  const catalogLists = Object.fromEntries(names.map((name, i) => [name, lists[i].objects as Array<Record<string, unknown>>]))
  const catalog = modules.catalogOf(catalogLists)
  const reads: Record<string, unknown> = {}
  const recorded = async (path: string) => (reads[path] ??= (await ok(read, path)).objects) as Array<Record<string, unknown>>
  const place = viewOf(view)
  const charts = ((dashboard.rows as Array<{ charts?: Array<{ id: number; chart_json?: unknown }> }> | null) ?? []).flatMap((row) => row?.charts ?? [])
  for (const chart of charts.filter((c) => typeof c === 'object' && c && 'chart_json' in c)) {
    const spec = modules.chartSpec(chart.chart_json)
    const prefetched = (data.charts as Record<string, unknown>)[chart.id]
    const drawn = await modules.readChartFor(spec, place, catalog, prefetched, recorded).catch(() => undefined)
    if (drawn && modules.isMap(spec) && drawn.data.points.length) await recorded(`/geo/${modules.query({ ...(drawn.data.where as object), limit: 0 })}`)
  }
  return { dashboard, data, catalog: catalogLists, reads }
}

export default fp(
  async function sharedDashboards(app: FastifyInstance) {
    /** The live link of the request's token, its reader as the request's user; else 404. */
    async function linkOf(request: FastifyRequest): Promise<Share> {
      const { token } = request.params as { token: string }
      // Looked up at every use (one indexed read): a revoked, expired or narrowed link is refused at once
      // on every server, whoever changed it, psql included.
      const share = /^[\w-]{43}$/.test(token) ? await findShare(app.db.db, token) : undefined
      if (!share) throw linkGone()
      request.user = share.reader
      return share
    }

    // Anyone with the link: limited per client like /detect; a public URL, revalidated at every use so
    // that a revoked link stops at once, and never sent on as a Referer.
    const rateLimit = { max: app.config.RATE_LIMIT_DETECT_MAX, timeWindow: app.config.RATE_LIMIT_WINDOW_MS }
    const publicAnswer = async (_request: FastifyRequest, reply: FastifyReply) => {
      if (reply.statusCode === 200 || reply.statusCode === 304) reply.header('cache-control', 'public, no-cache').header('vary', 'Accept-Encoding')
      reply.header('referrer-policy', 'no-referrer').header('x-robots-tag', 'noindex')
    }
    const options = (schema: Record<string, unknown>) => ({
      schema: { ...schema, params: TOKEN, security: [] },
      config: { credentials: 'none' as const, rateLimit },
      onSend: publicAnswer,
      // The query is read by the handler, which names a bad value in the API's own 400.
      validatorCompiler: () => (data: unknown) => ({ value: data }),
    })

    app.get(
      '/api/v1/shared/:token/',
      options({
        tags: ['dashboard'],
        operationId: 'readSharedDashboard',
        summary: "A shared link's dashboard under a view: its detail, the names it shows and every chart's rows (no credentials: the token is the key)",
        querystring: querystringOf(VIEW_PARAMS),
        response: { 200: { type: 'object', additionalProperties: true }, 400: errorSchema, 404: errorSchema, 429: errorSchema },
      }),
      async (request, reply) => {
        const share = await linkOf(request)
        const view = readView(rawQueryOf(request))
        const key = app.readCache.keyOfComposed(request, `shared/${share.dashboard_id}`, dashboardResource)
        const kept = key === undefined ? undefined : app.readCache.lookup(request, key)
        if (kept) return serve(reply, kept)
        if (key !== undefined) app.readCache.begin(request, key, app.db.db)
        const body = await readingAs(share.reader, (headers) => sharedView(readerAs(app, request, headers), share, view))
        return reply.send({ share: { dashboard_id: share.dashboard_id }, ...body })
      },
    )

    app.get(
      '/api/v1/shared/:token/export_file/',
      options(exportSchema('exportSharedFile', "A shared link's dashboard, or one of its charts, as a file", SHARED_EXPORT_QUERY, [])),
      async (request, reply) => {
        const share = await linkOf(request)
        const asked = fileAsked(rawQueryOf(request), { ownDashboard: share.dashboard_id })
        return readingAs(share.reader, async (headers) => {
          const read = readerAs(app, request, headers)
          if (asked.target.chartId !== undefined) {
            // Only a chart of the shared dashboard.
            const charts = ((await ok(read, `/dashboard/${share.dashboard_id}/`)).rows as Array<{ charts?: Array<{ id?: number }> }> | null) ?? []
            if (!charts.some((row) => row?.charts?.some((chart) => chart?.id === asked.target.chartId)))
              throw new ApiError(404, 'NOT_FOUND', `Chart ${asked.target.chartId} is not on this dashboard`)
          }
          return answerExport(app, request, reply, { name: `shared/${share.dashboard_id}/export_file`, asked, reader: share.reader, read })
        })
      },
    )
  },
  // Encapsulated: its routes stay in their own context.
  { name: 'shared-dashboards', dependencies: ['auth', 'http-cache', 'dispatcher', 'protection'], encapsulate: true },
)
