// What an export asks (its type, width, target and view) and the file it answers: the part of
// `GET /export_file/` that a shared link's export (plugins/shared.ts) asks the same way.
import { ApiError, invalidValue } from '../core/errors.js'
import type { ViewReads } from './dashboard-data.js'
import { Param, type QueryOf } from '../api/query.js'
import type { QueryParams } from '../api/query-params.js'
import type { ExportTarget } from './dashboard-file.js'
import { drawingLanguage, type WebModules } from './web-modules.js'
import { readView, VIEW_PARAMS, viewOf } from './view.js'

/** Each file type and its media type. */
export const FILE_TYPES = {
  pdf: 'application/pdf',
  png: 'image/png',
  jpeg: 'image/jpeg',
  svg: 'image/svg+xml',
} as const
export type FileType = keyof typeof FILE_TYPES

export const EXPORT_QUERY = {
  dashboard_id: Param.integer('the dashboard to export'),
  chart_id: Param.integer('a chart to export alone'),
  path: Param.string("the original front-end's form: a dashboard route of this app, `/app/#/dashboard/<id>?campaign=…&location=…`"),
  type: Param.string('pdf (a page per row of charts), png, jpeg or svg; pdf by default'),
  ...VIEW_PARAMS,
  width: Param.integer('the width in pixels of a PNG, JPEG or SVG: 320 to 4000, 1200 by default'),
  page: Param.string("a PDF's paper, landscape: a4 (by default) or letter"),
  lang: Param.string("the language of the file's words, numbers and dates: en (by default) or fr"),
  tz: Param.string('the time zone its "Made" time is written in: an IANA name such as Africa/Kinshasa (the app sends the reader\'s), UTC by default'),
}
const WIDTH = { min: 320, max: 4000, default: 1200 }
/** The languages of the web app (web/i18n.js's LANGUAGES; test/i18n.test.ts holds them equal). */
export const EXPORT_LANGUAGES = ['en', 'fr']

export interface FileAsked {
  type: FileType
  width: number
  /** A PDF's paper (render.ts, PAPERS). */
  page: 'a4' | 'letter'
  lang: string
  /** The time zone its "Made" time is written in (IANA). */
  timeZone: string
  target: ExportTarget
}

/** Whether `zone` is a time zone this runtime knows (an IANA name or UTC). */
function knownTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone })
    return true
  } catch {
    return false
  }
}

/**
 * The file a query asks for; a 400 naming what is wrong. `dashboardRoute` reads a `path`; `ownDashboard`
 * is the one dashboard a shared link exports (its charts by chart_id, no other dashboard, no path).
 */
export function fileAsked(
  q: QueryOf<typeof EXPORT_QUERY>,
  { dashboardRoute, ownDashboard }: { dashboardRoute?: (path: string) => { dashboardId: number; view: QueryParams }; ownDashboard?: number },
): FileAsked {
  const type = (q.type ?? 'pdf') as FileType
  if (!(type in FILE_TYPES)) throw invalidValue('type', q.type, Object.keys(FILE_TYPES).join(', '))
  const lang = q.lang ?? 'en'
  if (!EXPORT_LANGUAGES.includes(lang)) throw invalidValue('lang', q.lang, EXPORT_LANGUAGES.join(' or '))
  const timeZone = q.tz ?? 'UTC'
  if (!knownTimeZone(timeZone)) throw invalidValue('tz', q.tz, 'a time zone such as Africa/Kinshasa or UTC')
  const page = q.page ?? 'a4'
  if (page !== 'a4' && page !== 'letter') throw invalidValue('page', q.page, 'a4 or letter')
  const width = q.width ?? WIDTH.default
  if (width < WIDTH.min || width > WIDTH.max) throw invalidValue('width', q.width, `an integer from ${WIDTH.min} to ${WIDTH.max}`)
  const named = (['dashboard_id', 'chart_id', 'path'] as const).filter((name) => q[name] !== undefined)
  if (ownDashboard !== undefined && named.some((name) => name !== 'chart_id'))
    throw new ApiError(400, 'INVALID_VALUE', 'A shared link exports its own dashboard and its charts: name no dashboard_id or path')
  if (ownDashboard === undefined && named.length !== 1)
    throw new ApiError(
      400,
      'MISSING_REQUIRED_PARAMETER',
      `Name one thing to export: dashboard_id, chart_id or path${named.length ? ` (not ${named.join(' and ')})` : ''}`,
    )
  const fromPath = q.path === undefined || !dashboardRoute ? undefined : dashboardRoute(q.path)
  // The path's view, where the query names none of its own.
  const view = fromPath ? viewOf(readView(fromPath.view)) : viewOf(q)
  const dashboardId = q.chart_id === undefined ? (ownDashboard ?? fromPath?.dashboardId ?? q.dashboard_id) : undefined
  return { type, width, page, lang, timeZone, target: { dashboardId, chartId: q.chart_id, view } }
}

/** The file: its bytes, media type and the name a browser saves it under. */
export async function exportFile(
  modules: WebModules,
  reads: ViewReads,
  asked: FileAsked,
  scope: string,
  maxCharts = Number.POSITIVE_INFINITY,
): Promise<{ bytes: Buffer; mediaType: string; disposition: string }> {
  const { type, width, target, lang, page, timeZone } = asked
  const made = new Date()
  // Drawing loads ECharts, pdfkit and resvg: on the first export, not at every start.
  const [{ exportLayout }, { jpegOf, layoutSvg, pdfChartHeight, pdfLayoutWidth, PictureTooLarge, pdfOf, pngOf }] = await Promise.all([
    import('./dashboard-file.js'),
    import('./render.js'),
  ])
  const [layoutWidth, height] = type === 'pdf' ? [pdfLayoutWidth(page), pdfChartHeight(page)] : [width, undefined]
  const layout = await drawingLanguage.run(lang, () =>
    exportLayout(modules, reads, target, { width: layoutWidth, height, made, timeZone, scope, language: lang, maxCharts }),
  )
  const svg = () => layoutSvg(layout, width)
  let bytes: Buffer
  try {
    bytes =
      type === 'pdf' ? await pdfOf(layout, made, page) : type === 'png' ? pngOf(svg(), width) : type === 'jpeg' ? jpegOf(svg(), width) : Buffer.from(svg())
  } catch (error) {
    if (!(error instanceof PictureTooLarge)) throw error
    throw new ApiError(
      400,
      'EXPORT_TOO_LARGE',
      `A picture ${error.width} × ${error.height} pixels is too large: ask a width of at most ${error.widest}, or a PDF`,
    )
  }
  const name = `${
    layout.title
      .replace(/[^\p{L}\p{N} _-]+/gu, '')
      .trim()
      .slice(0, 80) || 'export'
  }.${type === 'jpeg' ? 'jpg' : type}`
  const disposition = `attachment; filename="${name.replace(/[^\x20-\x7e]/g, '_')}"; filename*=UTF-8''${encodeURIComponent(name)}`
  return { bytes, mediaType: FILE_TYPES[type], disposition }
}
