// One request per dashboard (`GET /api/v1/dashboard/:id/data/`): every chart's rows under a view, read
// as the requester (lib/export/dashboard-data.ts); it leaves with an ETag.
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { API_SECURITY, errorSchema } from '../lib/api/openapi.js'
import { askedBy } from '../lib/api/read-service.js'
import { JSON_TYPE } from '../lib/api/list-answer.js'
import { serve } from '../lib/api/representation.js'
import dashboardResource from '../resources/dashboard.js'
import { dashboardDataName, readDashboardData } from '../lib/export/dashboard-data.js'
import { VIEW_PARAMS } from '../lib/export/view.js'
import { partsValidation, routeQuery, rowIdOf } from '../lib/api/route-validation.js'
import type { QueryOf } from '../lib/api/query.js'

const VIEW_QUERY = routeQuery(VIEW_PARAMS)
type View = QueryOf<typeof VIEW_PARAMS>

/** The route's OpenAPI description. */
const SCHEMA = {
  tags: ['dashboard'],
  operationId: 'readDashboardData',
  summary: "Every chart's rows of a dashboard under a view, in one answer (keyed by chart id)",
  security: API_SECURITY,
  params: { type: 'object', properties: { id: { type: 'integer', minimum: 1, maximum: 2 ** 31 - 1 } }, required: ['id'] },
  querystring: VIEW_QUERY.querystring,
  response: {
    200: {
      type: 'object',
      properties: {
        dashboard_id: { type: 'integer' },
        view: {
          type: 'object',
          properties: {
            campaign: { type: 'integer', nullable: true },
            location: { type: 'integer', nullable: true },
            start_date: { type: 'string', format: 'date', nullable: true },
            end_date: { type: 'string', format: 'date', nullable: true },
          },
          required: ['campaign', 'location', 'start_date', 'end_date'],
        },
        charts: {
          type: 'object',
          description: "by chart id: the chart's read (`read`, the path the app would call) and its `objects` and `meta`, or its `error`",
          additionalProperties: true,
        },
      },
      required: ['dashboard_id', 'view', 'charts'],
    },
    400: errorSchema,
    401: errorSchema,
    404: errorSchema,
  },
}

export default fp(
  async function dashboardDataRoute(app: FastifyInstance) {
    app.get<{ Params: { id: number }; Querystring: View }>(
      '/api/v1/dashboard/:id/data/',
      // The id and the view are read before the handler: 404 for what cannot be a dashboard's id.
      { schema: SCHEMA, ...partsValidation({ params: rowIdOf('dashboard'), querystring: VIEW_QUERY.read }) },
      async (request, reply) => {
        const asked = askedBy(request)
        const { id } = request.params
        // No-cache reaches each chart's read, not only the answer kept whole.
        const reads = app.reads.readsOf(asked.user, { requestId: request.id, fresh: asked.fresh })
        const answer = app.reads.composed(dashboardDataName(id), dashboardResource, asked, async () => ({
          body: JSON.stringify(await readDashboardData(reads, id, request.query)),
          headers: { 'content-type': JSON_TYPE },
        }))
        return serve(reply, await answer)
      },
    )
  },
  // Encapsulated: its route stays in its own context.
  { name: 'dashboard-data', dependencies: ['auth', 'http-cache', 'reads'], encapsulate: true },
)
