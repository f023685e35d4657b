// The web app's chart modules (plain JavaScript in web/, beside the server's sources: dist/ holds no
// copy of them), loaded by the server so that what it reads and draws is what the app reads and draws.
import { AsyncLocalStorage } from 'node:async_hooks'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { PROJECT_ROOT } from '../core/paths.js'

type Json = Record<string, unknown>
type Objects = Json[]
/** A chart's saved chart_json as an object. */
export type ChartSpec = Json & { type?: string; indicator_ids?: number[]; location_ids?: number[] }
/** The app's view of a dashboard: its campaign and drill-down. */
export type View = { campaignId: number | null; locationId: number | null; startDate?: string | null; endDate?: string | null }
/** What the app knows by id (web/api.js, catalogOf). */
export type Catalog = Json & {
  campaigns: Array<{ id: number; name: string }>
  locationName: Map<number, string>
  indicatorName: Map<number, string>
  indicatorFormat: Map<number, string>
  indicatorBounds: Map<number, unknown>
  campaignName: Map<number, string>
}
/** A chart's values indexed for drawing (web/chart-data.js, chartData). */
export type ChartValues = Json & { points: Objects; locationIds: number[]; keys: Array<{ id: unknown; label: string }>; centres?: unknown }
export type Reader = (path: string) => Promise<Objects>

export interface WebModules {
  chartSpec(chartJson: unknown): ChartSpec
  chartRead(chart: ChartSpec, view: View, catalog: Partial<Catalog>): { path: string }
  boundsById(indicators: unknown[]): Map<number, unknown>
  isMap(chart: ChartSpec): boolean
  isTable(chart: ChartSpec): boolean
  chartOption(chart: ChartSpec, data: ChartValues, catalog: Catalog, options: { mapName?: string; fontFamily?: string }): Json
  tableRows(data: ChartValues, indicatorIds: number[], catalog: Catalog): Array<{ location: string; key: { label: string }; shown: string[] }>
  readChartFor(chart: ChartSpec, view: View, catalog: Catalog, prefetched: unknown, read: Reader): Promise<{ data: ChartValues; aimedAbove: boolean }>
  registerPolygons(
    data: ChartValues,
    catalog: Catalog,
    options: { read: Reader; scope: string },
  ): Promise<{ mapName: string; polygons: number; centres: unknown }>
  CATALOG_READS: Record<string, string>
  catalogOf(lists: Record<string, Objects>): Catalog
  formatValue(value: number | null, format?: string): string
  query(params: Record<string, unknown>): string
  LANGUAGES: Record<string, string>
  t(text: string, values?: Record<string, string | number>): string
  tn(count: number, one: string, other: string, values?: Record<string, string | number>): string
  useLanguage(source: () => string | undefined): void
}

/** The language of the file being drawn, for every await of its drawing (web/i18n.js reads it). */
export const drawingLanguage = new AsyncLocalStorage<string>()

let loaded: Promise<WebModules> | undefined

/** The modules, loaded once per process. */
export function webModules(): Promise<WebModules> {
  const load = (name: string) => import(pathToFileURL(join(PROJECT_ROOT, 'web', name)).href)
  loaded ??= Promise.all(['chart-data.js', 'status.js', 'charts.js', 'api.js', 'format.js', 'i18n.js'].map(load)).then((loadedModules) => {
    const modules: WebModules = Object.assign({}, ...loadedModules)
    // The app's words, numbers and dates in the language of the drawing in progress (English outside one).
    modules.useLanguage(() => drawingLanguage.getStore())
    return modules
  })
  return loaded
}
