// The web app's chart modules (plain JavaScript in web/, compiled into dist/web/ with the server),
// imported by the server so that what it reads and draws is what the app reads and draws.
import { AsyncLocalStorage } from 'node:async_hooks'
import * as api from '../../web/api.js'
import * as chartData from '../../web/chart-data.js'
import * as chartParts from '../../web/chart-parts.js'
import * as format from '../../web/format.js'
import * as i18n from '../../web/i18n.js'
import * as status from '../../web/status.js'

/** The app's dashboard module: how a view is written in a query, which charts a dashboard's rows show. */
export * as appDashboard from '../../web/dashboard.js'
import type { Reads } from '../api/read-service.js'
import { webListRead } from './web-reads.js'
import type { StatusLegend } from './render.js'

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
  /** The reader's visible locations whose parent she cannot see: the country, or a restricted reader's part. */
  roots: Array<{ id: number; name?: string }>
}
/** A chart's values indexed for drawing (web/chart-data.js, chartData). */
export type ChartValues = Json & { points: Objects; locationIds: number[]; keys: Array<{ id: unknown; label: string }>; centres?: unknown }
/** Reads the rows of a list at `path` (the web app's `list`). */
export type ObjectsReader = (path: string) => Promise<Objects>

export interface WebModules {
  chartSpec(chartJson: unknown): ChartSpec
  chartRead(chart: ChartSpec, view: View, catalog: Partial<Catalog>): { path: string }
  boundsById(indicators: unknown[]): Map<number, unknown>
  isRelative(chart: ChartSpec): boolean
  isMap(chart: ChartSpec): boolean
  isTable(chart: ChartSpec): boolean
  isTimeChart(chart: ChartSpec): boolean
  chartOption(chart: ChartSpec, data: ChartValues, catalog: Catalog, options: { mapName?: string; fontFamily?: string; width?: number; height?: number }): Json
  statusLegendLayout(indicatorIds: number[], catalog: Catalog, options: { width?: number }): StatusLegend
  tableRows(
    data: ChartValues,
    indicatorIds: number[],
    catalog: Catalog,
  ): Array<{ location: string; key: { label: string }; shown: string[]; statuses: Array<string | null> }>
  statusFill(status: string | null, bounds: unknown): string | undefined
  readChartFor(chart: ChartSpec, view: View, catalog: Catalog, prefetched: unknown, read: ObjectsReader): Promise<{ data: ChartValues; aimedAbove: boolean }>
  registerPolygons(
    data: ChartValues,
    catalog: Catalog,
    options: { read: ObjectsReader; scope: string },
  ): Promise<{ mapName: string; polygons: number; centres: unknown }>
  CATALOG_READS: Record<string, string>
  catalogOf(lists: Record<string, Objects>): Catalog
  formatValue(value: number | null, format?: string): string
  query(params: Record<string, unknown>): string
  LANGUAGES: Record<string, string>
  t(text: string, values?: Record<string, string | number>): string
  tn(count: number, one: string, other: string, values?: Record<string, string | number>): string
  useLanguage(source: () => string | undefined): () => void
}

/** The language of the file being drawn, for every await of its drawing (web/i18n.js reads it). */
export const drawingLanguage = new AsyncLocalStorage<string>()

// Reading a chart needs only what is imported here; drawing one needs web/charts.js too, which loads
// ECharts (0.5 s): imported on the first export, not at start.
const READING = { ...chartData, ...chartParts, ...status, ...api, ...format, ...i18n } as unknown as WebModules
// The app's words, numbers and dates in the language of the drawing in progress (English outside one).
READING.useLanguage(() => drawingLanguage.getStore())
let drawing: Promise<WebModules> | undefined

/**
 * The modules, loaded once per process: `drawing` adds what draws and reads as a chart card does
 * (web/charts.js), loaded on first use.
 */
export function webModules({ drawing: draws = true } = {}): Promise<WebModules> {
  if (!draws) return Promise.resolve(READING)
  drawing ??= import('../../web/charts.js').then((charts) => ({ ...READING, ...charts }) as unknown as WebModules)
  return drawing
}

/** What the app knows by id, read as the requester (web/api.js, CATALOG_READS): the lists and the catalog made of them. */
export async function readCatalog(modules: WebModules, reads: Pick<Reads, 'list'>) {
  const names = Object.keys(modules.CATALOG_READS)
  const bodies = await Promise.all(names.map((name) => webListRead(reads, modules.CATALOG_READS[name])))
  const lists = Object.fromEntries(names.map((name, i) => [name, bodies[i].objects as Array<Record<string, unknown>>]))
  return { lists, catalog: modules.catalogOf(lists) }
}
