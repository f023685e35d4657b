// Export (`GET /api/v1/export_file/`): a dashboard or a chart as PDF, PNG, JPEG or SVG, drawn on the
// server from the chart options the app draws (lib/export), read with the requester's rights, kept
// in the read cache like the reads it is made of, and dropped with them on any change.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { API_SECURITY, errorSchema } from '../lib/api/openapi.js'
import { askedBy } from '../lib/api/read-service.js'
import { serve } from '../lib/api/representation.js'
import type { AuthUser } from '../lib/data/auth.js'
import { dashboardOfPath } from '../lib/export/app-route.js'
import { WidthBudget } from '../lib/export/budget.js'
import { viewReads } from '../lib/export/dashboard-data.js'
import { drawFile } from '../lib/export/draw.js'
import { EXPORT_QUERY, FILE_TYPES, type FileAsked, fileAsked } from '../lib/export/file.js'
import { querystringOf } from '../lib/api/route-schemas.js'
import { routeQuery } from '../lib/api/route-validation.js'
import type { QueryOf } from '../lib/api/query.js'
import dashboardResource from '../resources/dashboard.js'

/** The OpenAPI description of an export route (`query`: its parameters). */
export const exportSchema = (
  operationId: string,
  summary: string,
  query: Record<string, { type?: unknown }>,
  security: typeof API_SECURITY = API_SECURITY,
) => ({
  tags: ['dashboard'],
  operationId,
  summary,
  security,
  querystring: querystringOf(query),
  response: {
    200: {
      description: 'the file',
      content: Object.fromEntries(Object.values(FILE_TYPES).map((media) => [media, { schema: { type: 'string', format: 'binary' } }])),
    },
    400: errorSchema,
    401: errorSchema,
    404: errorSchema,
    422: errorSchema,
    429: errorSchema,
  },
})

declare module 'fastify' {
  interface FastifyInstance {
    /** The widths each owner drew each dashboard at in the current window (lib/export/budget.ts). */
    exportWidths: WidthBudget
  }
}

/**
 * Answers an export from the read cache, or draws it in a worker thread with reads made as `reader`
 * and keeps it under `name` for whoever sees what `reader` sees. `owner` (a user, a link) is whose
 * queue and width budget the drawing counts against.
 */
export async function answerExport(
  app: FastifyInstance,
  request: FastifyRequest,
  reply: FastifyReply,
  { name, asked, reader, owner }: { name: string; asked: FileAsked; reader: AuthUser; owner: string },
) {
  const file = app.reads.composed(name, dashboardResource, askedBy(request), async () => {
    const { dashboardId, chartId } = asked.target
    app.exportWidths.admit(`${owner} ${dashboardId ?? `chart ${chartId}`} ${asked.type}`, asked.width)
    const scope = `${reader.restricted ? reader.top_lvl_location_id : 'all'}-`
    const drawn = await drawFile(owner, asked, scope, app.config.MAX_CHARTS_PER_DASHBOARD, viewReads(app.reads.readsOf(reader, { requestId: request.id })))
    return { body: drawn.bytes, headers: { 'content-type': drawn.mediaType, 'content-disposition': drawn.disposition } }
  })
  return serve(reply, await file)
}

export default fp(
  async function exportFiles(app: FastifyInstance) {
    app.decorate('exportWidths', new WidthBudget(app.config.EXPORT_WIDTHS_PER_DASHBOARD, app.config.RATE_LIMIT_WINDOW_MS))
    app.get<{ Querystring: QueryOf<typeof EXPORT_QUERY> }>(
      '/api/v1/export_file/',
      {
        schema: exportSchema(
          'exportFile',
          'A dashboard or a chart as a PDF (a page per row of charts), PNG, JPEG or SVG, as its requester sees it',
          EXPORT_QUERY,
        ),
        ...routeQuery(EXPORT_QUERY).validation,
      },
      async (request, reply) => {
        const asked = fileAsked(request.query, { dashboardRoute: dashboardOfPath })
        const reader = request.user!
        return answerExport(app, request, reply, { name: 'export_file', asked, reader, owner: `user ${reader.id}` })
      },
    )
  },
  // Not encapsulated: shared links' exports (plugins/shared.ts) count against the same width budget.
  { name: 'export-file', dependencies: ['auth', 'http-cache', 'reads'] },
)
