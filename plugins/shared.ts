// Shared dashboards (lib/data/shares.ts): `GET /api/v1/shared/<token>/` answers everything the web app
// needs to draw the link's dashboard (its detail, the names it shows, every chart's rows under the
// view) and `/shared/<token>/export_file/` its files, both read as the link's reader through the API's
// own routes. The token opens nothing else. A link that is unknown, expired, revoked or whose creator
// cannot see it any more is a 404, on every process at once.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { ApiError } from '../lib/core/errors.js'
import { errorSchema } from '../lib/api/openapi.js'
import { rawQueryOf } from '../lib/api/request.js'
import { serve } from '../lib/api/representation.js'
import { bodyOf, readerAs, readingAs } from '../lib/api/composed-read.js'
import { findShare, type Share } from '../lib/data/shares.js'
import { EXPORT_QUERY, fileAsked } from '../lib/export/file.js'
import { querystringOf, readView, VIEW_PARAMS } from '../lib/export/view.js'
import { sharedView } from '../lib/export/shared-view.js'
import dashboardResource from '../resources/dashboard.js'
import { answerExport, exportSchema } from './export.js'

const { dashboard_id: _dashboard, path: _path, ...SHARED_EXPORT_QUERY } = EXPORT_QUERY

const TOKEN = { type: 'object', properties: { token: { type: 'string', maxLength: 64 } }, required: ['token'] }
const linkGone = () => new ApiError(404, 'SHARE_NOT_FOUND', 'This link does not exist, has expired or was revoked')

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

    // Anyone with the link: limited per client like /detect; a public URL (plugins/http-cache.ts: a read
    // without credentials), never sent on as a Referer nor indexed.
    const rateLimit = { max: app.config.RATE_LIMIT_DETECT_MAX, timeWindow: app.config.RATE_LIMIT_WINDOW_MS }
    const publicAnswer = async (_request: FastifyRequest, reply: FastifyReply) => {
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
        const body = await readingAs(share.reader, (headers) => sharedView(readerAs(app, request, headers), share.dashboard_id, view))
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
            const charts = ((await bodyOf(read, `/dashboard/${share.dashboard_id}/`)).rows as Array<{ charts?: Array<{ id?: number }> }> | null) ?? []
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
