// Export (`GET /api/v1/export_file/`): a dashboard or a chart as PDF, PNG, JPEG or SVG, drawn on the
// server from the chart options the app draws (lib/export), read with the requester's rights, kept
// in the read cache like the reads it is made of, and dropped with them on any change.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { API_SECURITY, errorSchema } from '../lib/api/openapi.js'
import { rawQueryOf } from '../lib/api/request.js'
import { serve } from '../lib/api/representation.js'
import { readerAs } from '../lib/api/composed-read.js'
import type { AuthUser } from '../lib/data/auth.js'
import { dashboardOfPath } from '../lib/export/app-route.js'
import { EXPORT_QUERY, exportFile, FILE_TYPES, type FileAsked, fileAsked } from '../lib/export/file.js'
import { webModules } from '../lib/export/web-modules.js'
import { querystringOf } from '../lib/export/view.js'
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
  },
})

/**
 * Answers an export from the read cache, or draws it with `read` (reads as `reader`) and keeps it
 * under `name` for whoever sees what `reader` sees.
 */
export async function answerExport(
  app: FastifyInstance,
  request: FastifyRequest,
  reply: FastifyReply,
  { name, asked, reader, read }: { name: string; asked: FileAsked; reader: AuthUser; read: ReturnType<typeof readerAs> },
) {
  const key = app.readCache.keyOfComposed(request, name, dashboardResource)
  const kept = key === undefined ? undefined : app.readCache.lookup(request, key)
  if (kept) return serve(reply, kept)
  // Its reads are other requests: it names no table, so any change drops it.
  if (key !== undefined) app.readCache.begin(request, key, app.db.db)
  const scope = `${reader.restricted ? reader.top_lvl_location_id : 'all'}-`
  const file = await exportFile(await webModules(), read, asked, scope)
  return reply.type(file.mediaType).header('content-disposition', file.disposition).send(file.bytes)
}

export default fp(
  async function exportFiles(app: FastifyInstance) {
    app.get(
      '/api/v1/export_file/',
      {
        schema: exportSchema(
          'exportFile',
          'A dashboard or a chart as a PDF (a page per row of charts), PNG, JPEG or SVG, as its requester sees it',
          EXPORT_QUERY,
        ),
        // The query is read by the handler, which names a bad value in the API's own 400.
        validatorCompiler: () => (data: unknown) => ({ value: data }),
      },
      async (request, reply) => {
        const asked = fileAsked(rawQueryOf(request), { dashboardRoute: dashboardOfPath })
        return answerExport(app, request, reply, { name: 'export_file', asked, reader: request.user!, read: readerAs(app, request) })
      },
    )
  },
  // Encapsulated: its route stays in its own context.
  { name: 'export-file', dependencies: ['auth', 'http-cache', 'dispatcher'], encapsulate: true },
)
