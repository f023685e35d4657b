// Export (`GET /api/v1/export_file/`): a dashboard or a chart as PDF, PNG, JPEG or SVG, drawn on the
// server from the chart options the app draws (lib/export), read with the requester's rights, kept
// in the read cache like the reads it is made of, and dropped with them on any change.
import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { ApiError, invalidValue } from '../lib/core/errors.js'
import { API_SECURITY, errorSchema } from '../lib/api/openapi.js'
import { helpOf, Param, queryReader } from '../lib/api/query.js'
import { rawQueryOf } from '../lib/api/request.js'
import { serve } from '../lib/api/representation.js'
import { readerAs } from '../lib/api/composed-read.js'
import { dashboardOfPath } from '../lib/export/app-route.js'
import { type ExportTarget, exportLayout } from '../lib/export/dashboard-file.js'
import { jpegOf, layoutSvg, pdfOf, pngOf } from '../lib/export/render.js'
import { webModules } from '../lib/export/web-modules.js'
import dashboardResource from '../resources/dashboard.js'

/** Each file type: its media type and how the layout becomes its bytes. */
const TYPES = {
  pdf: 'application/pdf',
  png: 'image/png',
  jpeg: 'image/jpeg',
  svg: 'image/svg+xml',
} as const
type FileType = keyof typeof TYPES

const QUERY = {
  dashboard_id: Param.integer('the dashboard to export'),
  chart_id: Param.integer('a chart to export alone'),
  path: Param.string("the original front-end's form: a dashboard route of this app, `/app/#/dashboard/<id>?campaign=…&location=…`"),
  type: Param.string('pdf (a page per row of charts), png, jpeg or svg; pdf by default'),
  campaign: Param.integer("the view's campaign: every chart reads it instead of its own campaigns"),
  location: Param.integer("the view's location (a drill-down): every chart reads it at its own depth"),
  width: Param.integer('the width in pixels of a PNG, JPEG or SVG: 320 to 4000, 1200 by default'),
}
const readQuery = queryReader(QUERY, { names: [], unlessId: false })
const WIDTH = { min: 320, max: 4000, default: 1200 }

/** The file asked for: its type, width and target; a 400 naming what is wrong. */
function fileAsked(request: FastifyRequest): { type: FileType; width: number; target: ExportTarget } {
  const q = readQuery(rawQueryOf(request))
  const type = (q.type ?? 'pdf') as FileType
  if (!(type in TYPES)) throw invalidValue('type', q.type, Object.keys(TYPES).join(', '))
  const width = q.width ?? WIDTH.default
  if (width < WIDTH.min || width > WIDTH.max) throw invalidValue('width', q.width, `an integer from ${WIDTH.min} to ${WIDTH.max}`)
  const named = (['dashboard_id', 'chart_id', 'path'] as const).filter((name) => q[name] !== undefined)
  if (named.length !== 1)
    throw new ApiError(
      400,
      'MISSING_REQUIRED_PARAMETER',
      `Name one thing to export: dashboard_id, chart_id or path${named.length ? ` (not ${named.join(' and ')})` : ''}`,
    )
  const fromPath = q.path === undefined ? undefined : dashboardOfPath(q.path)
  const campaign = q.campaign ?? fromPath?.campaign
  const location = q.location ?? fromPath?.location
  return {
    type,
    width,
    target: { dashboardId: fromPath?.dashboardId ?? q.dashboard_id, chartId: q.chart_id, view: { campaignId: campaign ?? null, locationId: location ?? null } },
  }
}

const SCHEMA = {
  tags: ['dashboard'],
  operationId: 'exportFile',
  summary: 'A dashboard or a chart as a PDF (a page per row of charts), PNG, JPEG or SVG, as its requester sees it',
  security: API_SECURITY,
  querystring: {
    type: 'object',
    properties: Object.fromEntries(Object.entries(QUERY).map(([name, schema]) => [name, { type: schema.type, description: helpOf(schema) }])),
  },
  response: {
    200: {
      description: 'the file',
      content: Object.fromEntries(Object.values(TYPES).map((media) => [media, { schema: { type: 'string', format: 'binary' } }])),
    },
    400: errorSchema,
    401: errorSchema,
    404: errorSchema,
  },
}

export default fp(
  async function exportFile(app: FastifyInstance) {
    const modules = await webModules()
    app.get(
      '/api/v1/export_file/',
      // The query is read by the handler, which names a bad value in the API's own 400.
      { schema: SCHEMA, validatorCompiler: () => (data: unknown) => ({ value: data }) },
      async (request, reply) => {
        const { type, width, target } = fileAsked(request)
        const key = app.readCache.keyOfComposed(request, 'export_file', dashboardResource)
        const kept = key === undefined ? undefined : app.readCache.lookup(request, key)
        if (kept) return serve(reply, kept)
        // Its reads are other requests: it names no table, so any change drops it.
        if (key !== undefined) app.readCache.begin(request, key, app.db.db)
        const user = request.user!
        const made = new Date()
        const layout = await exportLayout(modules, readerAs(app, request), target, {
          width,
          made,
          scope: `${user.restricted ? user.top_lvl_location_id : 'all'}-`,
        })
        const svg = () => layoutSvg(layout, width)
        const bytes =
          type === 'pdf' ? await pdfOf(layout, made) : type === 'png' ? pngOf(svg(), width) : type === 'jpeg' ? jpegOf(svg(), width) : Buffer.from(svg())
        const name = `${
          layout.title
            .replace(/[^\p{L}\p{N} _-]+/gu, '')
            .trim()
            .slice(0, 80) || 'export'
        }.${type === 'jpeg' ? 'jpg' : type}`
        return reply
          .type(TYPES[type])
          .header('content-disposition', `attachment; filename="${name.replace(/[^\x20-\x7e]/g, '_')}"; filename*=UTF-8''${encodeURIComponent(name)}`)
          .send(bytes)
      },
    )
  },
  // Encapsulated: its route stays in its own context.
  { name: 'export-file', dependencies: ['auth', 'http-cache', 'dispatcher'], encapsulate: true },
)
