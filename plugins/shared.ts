// Shared dashboards (lib/data/shares.ts): `GET /api/v1/shared/<token>/` answers everything the web app
// needs to draw the link's dashboard (its detail, the names it shows, every chart's rows under the
// view) and `/shared/<token>/export_file/` its files, both read as the link's reader by the read
// service (lib/api/read-service.ts), as the API's routes would answer that reader. The token opens nothing else. A link that is unknown, expired, revoked or whose creator
// cannot see it any more is a 404, on every process at once.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { ApiError } from '../lib/core/errors.js'
import { errorSchema } from '../lib/api/openapi.js'
import { serve } from '../lib/api/representation.js'
import { askedBy } from '../lib/api/read-service.js'
import { viewReads } from '../lib/export/dashboard-data.js'
import { findShare, type Share } from '../lib/data/shares.js'
import { EXPORT_QUERY, fileAsked } from '../lib/export/file.js'
import { chartsOf, VIEW_PARAMS } from '../lib/export/view.js'
import { routeQuery } from '../lib/api/route-validation.js'
import type { QueryOf } from '../lib/api/query.js'
import { sharedView } from '../lib/export/shared-view.js'
import dashboardResource from '../resources/dashboard.js'
import { answerExport, exportSchema } from './export.js'

const { dashboard_id: _dashboard, path: _path, ...SHARED_EXPORT_QUERY } = EXPORT_QUERY
const VIEW_QUERY = routeQuery(VIEW_PARAMS)
// A shared export reads every parameter of an export, to refuse the dashboard_id or path a link may not name.
const EXPORT_READ = routeQuery(EXPORT_QUERY)

const TOKEN = { type: 'object', properties: { token: { type: 'string', maxLength: 64 } }, required: ['token'] }
const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8' }
const linkGone = () => new ApiError(404, 'SHARE_NOT_FOUND', 'This link does not exist, has expired or was revoked')

export default fp(
  async function sharedDashboards(app: FastifyInstance) {
    /** The live link of the request's token, its reader as the request's user; else 404. */
    async function linkOf(request: FastifyRequest<{ Params: { token: string } }>): Promise<Share> {
      const { token } = request.params
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
    // The query is read before the handler (a bad value is the API's own 400); the token by the handler.
    const options = (schema: Record<string, unknown>, validation: typeof VIEW_QUERY.validation) => ({
      schema: { ...schema, params: TOKEN, security: [] },
      config: { credentials: 'none' as const, rateLimit },
      onSend: publicAnswer,
      ...validation,
    })

    app.get<{ Params: { token: string }; Querystring: QueryOf<typeof VIEW_PARAMS> }>(
      '/api/v1/shared/:token/',
      options(
        {
          tags: ['dashboard'],
          operationId: 'readSharedDashboard',
          summary: "A shared link's dashboard under a view: its detail, the names it shows and every chart's rows (no credentials: the token is the key)",
          querystring: VIEW_QUERY.querystring,
          response: { 200: { type: 'object', additionalProperties: true }, 400: errorSchema, 404: errorSchema, 429: errorSchema },
        },
        VIEW_QUERY.validation,
      ),
      async (request, reply) => {
        const share = await linkOf(request)
        const asked = askedBy(request)
        // A view in the query is the reader's own (she changed it); none at all is the link's own.
        const view = Object.values(request.query).some((v) => v !== undefined) ? request.query : { ...share.view }
        const linkView = { campaign: null, location: null, start_date: null, end_date: null, ...share.view }
        const answer = app.reads.composed(`shared/${share.dashboard_id}/${share.id}`, dashboardResource, asked, async () => {
          const body = await sharedView(viewReads(app.reads.readsOf(share.reader, { requestId: request.id })), share.dashboard_id, view)
          return { body: JSON.stringify({ share: { dashboard_id: share.dashboard_id }, view: linkView, ...body }), headers: JSON_HEADERS }
        })
        return serve(reply, await answer)
      },
    )

    app.get<{ Params: { token: string }; Querystring: QueryOf<typeof EXPORT_QUERY> }>(
      '/api/v1/shared/:token/export_file/',
      options(exportSchema('exportSharedFile', "A shared link's dashboard, or one of its charts, as a file", SHARED_EXPORT_QUERY, []), EXPORT_READ.validation),
      async (request, reply) => {
        const share = await linkOf(request)
        const asked = fileAsked(request.query, { ownDashboard: share.dashboard_id })
        if (asked.target.chartId !== undefined) {
          // Only a chart of the shared dashboard.
          const dashboard = await app.reads.readsOf(share.reader, { requestId: request.id }).detail('dashboard', share.dashboard_id)
          if (!chartsOf(dashboard).some((chart) => chart.id === asked.target.chartId))
            throw new ApiError(404, 'NOT_FOUND', `Chart ${asked.target.chartId} is not on this dashboard`)
        }
        // The link, not its creator, is whose queue and budget this is: anyone holding it draws as one.
        const name = `shared/${share.dashboard_id}/export_file`
        return answerExport(app, request, reply, { name, asked, reader: share.reader, owner: `link ${share.id}` })
      },
    )
  },
  // Encapsulated: its routes stay in their own context.
  { name: 'shared-dashboards', dependencies: ['auth', 'http-cache', 'dispatcher', 'protection', 'export-file'], encapsulate: true },
)
