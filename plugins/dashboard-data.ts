// One request per dashboard (`GET /api/v1/dashboard/:id/data/`): every chart's rows under a view (the
// app's campaign and location), each chart read as the app would read it alone (web/chart-data.js
// decides what) and through the same routes, so with the same rights, read cache and answers. The
// whole is kept in the read cache as one answer that any change drops, and leaves with an ETag.
import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { notFound } from '../lib/core/errors.js'
import { API_SECURITY, errorSchema } from '../lib/api/openapi.js'
import { rawQueryOf } from '../lib/api/request.js'
import { type Answer, readerAs } from '../lib/api/composed-read.js'
import { serve } from '../lib/api/representation.js'
import dashboardResource from '../resources/dashboard.js'
import { webModules, type WebModules } from '../lib/export/web-modules.js'
import { querystringOf, readView, VIEW_PARAMS, viewOf } from '../lib/export/view.js'

type Chart = { id: number; uuid?: string; chart_json: unknown }

/** The charts a dashboard's rows show, in order (as its detail expands them: objects). */
const chartsOf = (dashboard: Record<string, unknown>) =>
  ((dashboard.rows as Array<{ charts?: unknown[] }> | null) ?? []).flatMap((row) =>
    (row?.charts ?? []).filter((c): c is Chart => typeof c === 'object' && c !== null && 'chart_json' in c),
  )

/** The route's OpenAPI description. */
const SCHEMA = {
  tags: ['dashboard'],
  operationId: 'readDashboardData',
  summary: "Every chart's rows of a dashboard under a view, in one answer (keyed by chart id)",
  security: API_SECURITY,
  params: { type: 'object', properties: { id: { type: 'integer', minimum: 1, maximum: 2 ** 31 - 1 } }, required: ['id'] },
  querystring: querystringOf(VIEW_PARAMS),
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
        },
        charts: {
          type: 'object',
          description: "by chart id: the chart's read (`read`, the path the app would call) and its `objects` and `meta`, or its `error`",
          additionalProperties: true,
        },
      },
    },
    400: errorSchema,
    401: errorSchema,
    404: errorSchema,
  },
}

/** The answer of a dashboard's data: every chart's read, made with the request's credentials. */
async function answer(app: FastifyInstance, modules: WebModules, request: FastifyRequest, id: number): Promise<Answer> {
  const view = readView(rawQueryOf(request))
  const read = readerAs(app, request)
  const dashboard = await read(`/dashboard/${id}/`)
  if (dashboard.status !== 200) return dashboard
  const charts = chartsOf(dashboard.body)
  const specs = charts.map((chart) => modules.chartSpec(chart.chart_json))
  const indicatorIds = [...new Set(specs.flatMap((spec) => (Array.isArray(spec.indicator_ids) ? spec.indicator_ids.filter(Number.isInteger) : [])))]
  // What the app's catalog tells chartRead: the charts' indicators' formats and bounds.
  const indicators = (
    indicatorIds.length
      ? (await read(`/indicator/?id__in=${indicatorIds.join(',')}&fields=id,data_format,good_bound,bad_bound,bound_json&limit=0`)).body.objects
      : []
  ) as Array<{ id: number; data_format: string }>
  // A date range keeps the charts' campaigns that start in it: chartRead needs their start dates.
  const campaigns =
    view.start_date || view.end_date ? ((await read('/campaign/?fields=id,name,start_date&limit=0')).body.objects as Array<{ id: number; name: string }>) : []
  const catalog = { indicatorBounds: modules.boundsById(indicators), indicatorFormat: new Map(indicators.map((i) => [i.id, i.data_format])), campaigns }
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
    status: 200,
    body: {
      dashboard_id: id,
      view: { campaign: view.campaign ?? null, location: view.location ?? null, start_date: view.start_date ?? null, end_date: view.end_date ?? null },
      charts: Object.fromEntries(reads),
    },
  }
}

export default fp(
  async function dashboardData(app: FastifyInstance) {
    // Reading only: what chartRead needs, without ECharts.
    const modules = await webModules({ drawing: false })
    app.get(
      '/api/v1/dashboard/:id/data/',
      {
        schema: SCHEMA,
        // The id and the view are read by the handler, which names a bad value in the API's own 400 / 404.
        validatorCompiler: () => (data: unknown) => ({ value: data }),
      },
      async (request, reply) => {
        const raw = (request.params as { id: string }).id
        const id = /^\d{1,10}$/.test(raw) && Number(raw) < 2 ** 31 ? Number(raw) : undefined
        if (id === undefined) throw notFound('dashboard', raw)
        const key = app.readCache.keyOfComposed(request, `dashboard/${id}/data`, dashboardResource)
        const kept = key === undefined ? undefined : app.readCache.lookup(request, key)
        if (kept) return serve(reply, kept)
        // Its reads are other requests: it names no table, so any change drops it.
        if (key !== undefined) app.readCache.begin(request, key, app.db.db)
        const { status, body } = await answer(app, modules, request, id)
        return reply.code(status as 200).send(body)
      },
    )
  },
  // Encapsulated: its route stays in its own context.
  { name: 'dashboard-data', dependencies: ['auth', 'http-cache', 'dispatcher'], encapsulate: true },
)
