// The chart types, one entry each: every list and dispatch of the app and of the server's exports
// derives from them (the builder's choices, what a chart reads, whether it is a map or a table, what
// it draws and its ECharts option). The entries are web/charts/types.js; a new type is one entry there.

/**
 * @typedef {'series' | 'pie' | 'map' | 'table'} ChartFamily
 * How a type is drawn: ECharts series over categories, a pie, a map of the locations' shapes, or a
 * table of the values (no drawing).
 */

/**
 * @typedef {object} ChartType
 * @property {string} type the name saved in chart_json (the original front-end's names)
 * @property {ChartFamily} family
 * @property {() => string} label the type as people name it (the builder's choice, a drawing's label)
 * @property {Record<string, string>} [reads] what its campaign read adds (the API's `chart_type`)
 * @property {Record<string, boolean>} [look] how its family draws it (a line, bars across, stacked to 100 %, circles)
 * @property {(chart: Record<string, any>, data: any, parts: any) => any} [option] its ECharts option (web/chart-data.js, chartOption); a table has none
 */

/** @type {Map<string, ChartType>} */
const types = new Map()

/**
 * Adds a chart type (in the builder's order; the same name again replaces it). Returns what takes it
 * out again (a test's toy type).
 */
export function defineChartType(/** @type {ChartType} */ entry) {
  types.set(entry.type, entry)
  return () => types.delete(entry.type)
}

/** Every chart type, in the builder's order. */
export const chartTypes = () => [...types.values()]

/** A chart's type, undefined for a name no entry has. */
export const chartTypeOf = (/** @type {{ type?: string }} */ chart) => (chart.type === undefined ? undefined : types.get(chart.type))

export const isMap = (chart) => chartTypeOf(chart)?.family === 'map'
export const isTable = (chart) => chartTypeOf(chart)?.family === 'table'
/** Pies and maps draw one indicator and one campaign (or period): the first and the latest. */
export const drawsOneKey = (chart) => ['pie', 'map'].includes(chartTypeOf(chart)?.family ?? '')

/** A chart type as people name it (the saved names are the original front-end's, never shown). */
export const typeName = (/** @type {string} */ type) => types.get(type)?.label() ?? type
