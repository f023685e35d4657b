// Every chart type the original front-end saved, in the builder's order: its family, its name for
// people, what its read adds and how its family draws it (web/charts/registry.js). A new type is one
// entry here.
import { t } from '../i18n.js'
import { mapOption } from './map.js'
import { pieOption } from './pie.js'
import { defineChartType } from './registry.js'
import { seriesOption } from './series.js'

// A column chart's read asks for its columns' coverage by location (the API's chart_type).
defineChartType({ type: 'ColumnChart', family: 'series', label: () => t('Columns'), reads: { chart_type: 'ColumnChart' }, option: seriesOption })
defineChartType({
  type: 'StackedPercentColumnChart',
  family: 'series',
  label: () => t('Columns stacked to 100 %'),
  look: { stackedPercent: true },
  option: seriesOption,
})
defineChartType({ type: 'BarChart', family: 'series', label: () => t('Bars'), look: { horizontal: true }, option: seriesOption })
defineChartType({ type: 'LineChart', family: 'series', label: () => t('Line chart'), look: { line: true }, option: seriesOption })
defineChartType({ type: 'PieChart', family: 'pie', label: () => t('Pie'), option: pieOption })
defineChartType({ type: 'TableChart', family: 'table', label: () => t('Table') })
defineChartType({ type: 'RawData', family: 'table', label: () => t('Raw data') })
defineChartType({ type: 'ChoroplethMap', family: 'map', label: () => t('Map, regions coloured'), option: mapOption })
defineChartType({ type: 'MapChart', family: 'map', label: () => t('Map'), option: mapOption })
defineChartType({ type: 'BubbleMap', family: 'map', label: () => t('Map, circles sized'), look: { bubbles: true }, option: mapOption })
