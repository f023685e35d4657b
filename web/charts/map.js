// A map: one indicator's values at the latest key on the locations' shapes (registered first, web/charts.js),
// regions coloured by their value's status or by quantile classes, or circles sized by the value.
import { formatValue } from '../format.js'
import { t } from '../i18n.js'
import { keyOf, tooltipLines, valueAt } from '../chart-values.js'

/** Locations from which a map colours by quantiles (five classes, each named in the legend). */
const QUANTILE_FROM = 10

/**
 * Quantile classes of values: up to `classes` pieces [min, max], each holding about as many values,
 * for a map legend that names its numbers.
 * @param {number[]} values
 */
export function quantileClasses(values, classes = 5) {
  const sorted = [...values].sort((a, b) => a - b)
  const bounds = [
    ...new Set(Array.from({ length: classes + 1 }, (_, i) => sorted[Math.min(sorted.length - 1, Math.round((i * (sorted.length - 1)) / classes))])),
  ]
  return bounds.slice(0, -1).map((min, i) => ({ min, max: bounds[i + 1] }))
}

/** The legend of a map coloured by value: quantile classes named by their bounds, or a gradient from the least to the most. */
function valueLegend(numbers, format, color) {
  const min = numbers.length ? Math.min(...numbers) : 0
  const max = numbers.length ? Math.max(...numbers) : 1
  const classes = numbers.length >= QUANTILE_FROM ? quantileClasses(numbers) : []
  return classes.length > 1
    ? // Many locations: quantile classes, each named by its bounds, so that the colours say numbers.
      {
        type: 'piecewise',
        pieces: classes.map((c) => ({ min: c.min, max: c.max, label: `${formatValue(c.min, format)} – ${formatValue(c.max, format)}` })),
        inRange: { color: ['#fff5eb', color] },
        left: 0,
        bottom: 0,
        itemWidth: 14,
        textStyle: { fontSize: 11 },
      }
    : {
        // One value alone takes the full colour (not the palest, which reads as "nothing").
        min: max > min ? min : min - (Math.abs(min) || 1),
        max,
        inRange: { color: ['#fff5eb', color] },
        calculable: false,
        left: 0,
        bottom: 0,
        itemHeight: 80,
        text: [formatValue(max, format), formatValue(min, format)],
        formatter: (v) => formatValue(v, format),
      }
}

/** Regions a phone's map still names on the map itself. */
const FEW_REGIONS = 6

/** A map's ECharts option (`parts`: web/chart-data.js, chartOption). */
export function mapOption(
  _chart,
  data,
  { base, mapName, tooltip, indicatorIds, colorOf, locationName, indicatorName, formatOf, fillOf, coverageOf, flagLinesOf, lastKey: key, narrow, look },
) {
  const indicatorId = indicatorIds[0]
  const color = colorOf(indicatorId, 0)
  const format = formatOf(indicatorId)
  const values = data.locationIds.map((id) => ({ name: locationName(id), value: valueAt(data, indicatorId, id, key), fill: fillOf(indicatorId, id, key) }))
  const reported = new Map(data.locationIds.map((id) => [locationName(id), coverageOf(indicatorId, id, key)]))
  const idByName = new Map(data.locationIds.map((id) => [locationName(id), id]))
  const labels = new Map(data.locationIds.map((id) => [locationName(id), data.index.get(keyOf(indicatorId, id, key))?.label ?? undefined]))
  const byStatus = values.some((v) => v.fill)
  const numbers = values.map((v) => v.value).filter((v) => v !== null)
  const max = numbers.length ? Math.max(...numbers) : 1
  const pointValue = (p) => (Array.isArray(p.value) ? p.value[2] : Number.isFinite(p.value) ? p.value : null)
  const formatter = (p) =>
    tooltip(
      tooltipLines(p.name, [
        [indicatorName(indicatorId), labels.get(p.name) ?? formatValue(pointValue(p), format)],
        ...(reported.get(p.name) ? [[t('Reported'), reported.get(p.name)]] : []),
        ...(idByName.has(p.name) ? flagLinesOf(indicatorId, idByName.get(p.name), key) : []),
      ]),
    )
  // Dark text with a white outline: readable on the palest and the darkest fill alike. On a phone, names
  // only when few regions share it (more would cover the shapes; hovering still names each).
  const label = {
    show: !narrow || data.locationIds.length <= FEW_REGIONS,
    fontSize: 11,
    color: '#1b1f23',
    textBorderColor: '#fff',
    textBorderWidth: 2,
    formatter: (p) => p.name,
  }
  if (look.bubbles)
    return bubbleOption({ base, formatter, mapName, label, indicatorName: indicatorName(indicatorId), color, values, centres: data.centres, max })
  if (byStatus) {
    // Regions coloured by their value's status; the card's legend names the statuses.
    return {
      ...base,
      tooltip: { ...base.tooltip, formatter },
      series: [
        {
          type: 'map',
          map: mapName,
          name: indicatorName(indicatorId),
          // Hovered, a region keeps its status's colour (ECharts' own hover colour is a pale yellow, which
          // reads as "ok"), outlined instead.
          data: values.map(({ name, value, fill }) => ({
            name,
            value,
            itemStyle: fill ? { areaColor: fill } : undefined,
            emphasis: fill ? { itemStyle: { areaColor: fill, borderColor: '#1b1f23', borderWidth: 2 } } : undefined,
          })),
          label,
          emphasis: { label: { show: true } },
          select: { disabled: true },
          labelLayout: { hideOverlap: true },
        },
      ],
    }
  }
  const legend = valueLegend(numbers, format, color)
  return {
    ...base,
    tooltip: { ...base.tooltip, formatter },
    visualMap: legend,
    series: [
      {
        type: 'map',
        map: mapName,
        name: indicatorName(indicatorId),
        data: values,
        label,
        emphasis: { label: { show: true } },
        labelLayout: { hideOverlap: true },
      },
    ],
  }
}

/** A map of grey polygons and a circle per location, its area proportional to the value. */
function bubbleOption({ base, formatter, mapName, label, indicatorName, color, values, centres, max }) {
  const scale = (v) => (max > 0 ? 6 + 30 * Math.sqrt(Math.max(0, v) / max) : 6)
  return {
    ...base,
    tooltip: { ...base.tooltip, formatter },
    // The names go under the circles, not on the regions: a region's name at its centre was hidden by
    // its own circle.
    geo: {
      map: mapName,
      roam: false,
      itemStyle: { areaColor: '#e8e8e8', borderColor: '#999' },
      label: { show: false },
      emphasis: { disabled: true },
      silent: true,
    },
    series: [
      {
        type: 'scatter',
        coordinateSystem: 'geo',
        name: indicatorName,
        color,
        data: values.filter((v) => v.value !== null).map((v) => ({ name: v.name, value: [...(centres?.get(v.name) ?? [0, 0]), v.value] })),
        symbolSize: (value) => scale(value[2]),
        encode: { value: 2 },
        label: { ...label, position: 'bottom', distance: 3 },
        labelLayout: { hideOverlap: true },
      },
    ],
  }
}
