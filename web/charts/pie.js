// A pie: one indicator's values at the latest key, a slice a location (the largest, then "Other"), or
// a slice a class for class counts.
import { formatValue } from '../format.js'
import { t } from '../i18n.js'
import { tooltipLines, valueAt } from '../chart-values.js'

/** Slices a pie draws at most: the largest, then one "Other" for the rest. */
const PIE_SLICES = 10

/**
 * A pie's slices: the `top` largest values, then "Other (n)" holding the sum of the n others, so that
 * a pie of a hundred provinces stays readable.
 * @param {Array<{ name: string, value: number | null }>} slices
 */
export function topSlices(slices, top = PIE_SLICES) {
  const ordered = slices.filter((s) => s.value !== null).sort((a, b) => b.value - a.value)
  if (ordered.length <= top + 1) return slices
  const rest = ordered.slice(top)
  return [...ordered.slice(0, top), { name: t('Other ({n})', { n: rest.length }), value: rest.reduce((sum, s) => sum + s.value, 0) }]
}

/** A pie's ECharts option (`parts`: web/chart-data.js, chartOption). */
export function pieOption(chart, data, { base, tooltip, indicatorIds, locationName, indicatorName, formatOf, flagLinesOf, lastKey, narrow }) {
  const indicatorId = indicatorIds[0]
  const format = data.over === 'classes' ? 'int' : formatOf(indicatorId)
  // Class counts: a slice per class, over every location read.
  const slices =
    data.over === 'classes'
      ? data.keys.map((k) => ({ name: k.label, value: data.locationIds.reduce((sum, id) => sum + (valueAt(data, indicatorId, id, k.id) ?? 0), 0) }))
      : topSlices(
          data.locationIds.map((id) => ({ name: locationName(id), value: valueAt(data, indicatorId, id, lastKey) })),
          chart.type_params?.top ?? PIE_SLICES,
        )
  const total = slices.reduce((sum, s) => sum + (s.value ?? 0), 0)
  // A location's slice says its value's flags (a class's or the rest's slice has none).
  const idByName = new Map(data.over === 'classes' ? [] : data.locationIds.map((id) => [locationName(id), id]))
  return {
    ...base,
    tooltip: {
      ...base.tooltip,
      formatter: (p) =>
        tooltip(
          tooltipLines(p.name, [
            [indicatorName(indicatorId), formatValue(p.value, format)],
            [t('Share'), formatValue(p.value / total, 'pct')],
            ...(idByName.has(p.name) ? flagLinesOf(indicatorId, idByName.get(p.name), lastKey) : []),
          ]),
        ),
    },
    legend: narrow ? { bottom: 0, type: 'scroll' } : undefined,
    series: [
      {
        type: 'pie',
        name: indicatorName(indicatorId),
        radius: narrow ? '55%' : '65%',
        center: ['50%', narrow ? '45%' : '50%'],
        data: slices,
        // The value on a line of its own: a label wrapped to its room breaks a long name between words, never
        // a number at its separators (ECharts wraps at a comma: "3" then ",477").
        label: narrow ? { show: false } : { formatter: (p) => `${p.name}\n${formatValue(p.value, format)}`, overflow: 'break' },
      },
    ],
  }
}
