// One request per dashboard (`GET /api/v1/dashboard/:id/data/`): every chart's rows under a view (the
// app's campaign and location), each chart read as the app would read it alone (web/chart-data.js
// decides what) by the read service, so with the routes' rights, read cache and answers. The whole is
// kept in the read cache as one answer that any change drops, and leaves with an ETag.
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { notFound } from '../lib/core/errors.js'
import { API_SECURITY, errorSchema } from '../lib/api/openapi.js'
import { type ReadAsked, askedBy, bodyOf, type Reader } from '../lib/api/read-service.js'
import { serve } from '../lib/api/representation.js'
import type { AuthUser } from '../lib/data/auth.js'
import dashboardResource from '../resources/dashboard.js'
import { webModules, type WebModules } from '../lib/export/web-modules.js'
import { chartsOf, readView, VIEW_PARAMS, viewOf } from '../lib/export/view.js'
import { routeQuery } from '../lib/api/route-schemas.js'
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

/**
 * The reader's own roots, where a chart saved for "the viewer's location" reads: a restricted reader's
 * top location (a shared link's reader included), else the locations without a parent (as the app's
 * catalog finds them: the visible locations whose parent is not visible).
 */
async function rootsOf(user: AuthUser, read: Reader): Promise<Array<{ id: number }>> {
  if (user.restricted && user.top_lvl_location_id != null) return [{ id: user.top_lvl_location_id }]
  const res = await read('/location/?parent_location_id__isnull=true&fields=id&limit=0&order_by=id')
  return res.status === 200 ? (res.body.objects as Array<{ id: number }>) : []
}

/** A dashboard's data: every chart's read, made as the reader. */
async function dashboardData(app: FastifyInstance, modules: WebModules, asked: ReadAsked, id: number, view: View) {
  // No-cache reaches each chart's read, not only the answer kept whole.
  const read = app.reads.reader(asked.user, asked.requestId, asked.fresh)
  const charts = chartsOf(await bodyOf(read, `/dashboard/${id}/`))
  const specs = charts.map((chart) => modules.chartSpec(chart.chart_json))
  const indicatorIds = [...new Set(specs.flatMap((spec) => (Array.isArray(spec.indicator_ids) ? spec.indicator_ids.filter(Number.isInteger) : [])))]
  // What the app's catalog tells chartRead: the charts' indicators' formats, resources and bounds.
  const indicators = (
    indicatorIds.length
      ? (await read(`/indicator/?id__in=${indicatorIds.join(',')}&fields=id,data_format,resource_name,good_bound,bad_bound,bound_json&limit=0`)).body.objects
      : []
  ) as Array<{ id: number; data_format: string }>
  // A date range keeps the charts' campaigns that start in it: chartRead needs their start dates.
  const campaigns =
    view.start_date || view.end_date ? ((await read('/campaign/?fields=id,name,start_date&limit=0')).body.objects as Array<{ id: number; name: string }>) : []
  const catalog = {
    // Their resource: a chart over time of campaign indicators reads campaigns.
    indicators,
    indicatorBounds: modules.boundsById(indicators),
    indicatorFormat: new Map(indicators.map((i) => [i.id, i.data_format])),
    campaigns,
    roots: specs.some(modules.isRelative) ? await rootsOf(asked.user, read) : [],
  }
  const place = viewOf(view)
  // One chart after the other: a dashboard's data holds one of the pool's connections at a time, as a
  // chart's own request does (all at once, 50 clients' dashboards of five charts wait for 250).
  const reads: Array<readonly [number, Record<string, unknown>]> = []
  for (const [i, chart] of charts.entries()) {
    const { path } = modules.chartRead(specs[i], place, catalog)
    const res = await read(path)
    const rows = res.status === 200 ? { objects: res.body.objects, meta: res.body.meta } : { error: res.body }
    reads.push([chart.id, { uuid: chart.uuid, read: path, ...rows }])
  }
  return {
    dashboard_id: id,
    view: { campaign: view.campaign ?? null, location: view.location ?? null, start_date: view.start_date ?? null, end_date: view.end_date ?? null },
    charts: Object.fromEntries(reads),
  }
}

export default fp(
  async function dashboardDataRoute(app: FastifyInstance) {
    // Reading only: what chartRead needs, without ECharts.
    const modules = await webModules({ drawing: false })
    /** The answer, kept in the read cache as one read made of others. */
    const answer = (id: number, asked: ReadAsked, view: View) =>
      app.reads.composed(`dashboard/${id}/data`, dashboardResource, asked, async () => ({
        body: JSON.stringify(await dashboardData(app, modules, asked, id, view)),
        headers: { 'content-type': 'application/json; charset=utf-8' },
      }))
    // A shared link's page reads it as the link's reader.
    app.reads.answerPath(/^\/dashboard\/(\d{1,10})\/data\/$/, (match, asked) => answer(dashboardId(match[1]), asked, readView(asked.query)))
    app.get<{ Params: { id: string }; Querystring: View }>(
      '/api/v1/dashboard/:id/data/',
      // The view is read before the handler; the id by the handler, which answers 404 for what cannot be one.
      { schema: SCHEMA, ...VIEW_QUERY.validation },
      async (request, reply) => serve(reply, await answer(dashboardId(request.params.id), askedBy(request), request.query)),
    )
  },
  // Encapsulated: its route stays in its own context.
  { name: 'dashboard-data', dependencies: ['auth', 'http-cache', 'reads'], encapsulate: true },
)

/** A dashboard's id as the URL spells it; a 404 for what cannot be one. */
function dashboardId(text: string): number {
  if (/^\d{1,10}$/.test(text) && Number(text) < 2 ** 31) return Number(text)
  throw notFound('dashboard', text)
}
