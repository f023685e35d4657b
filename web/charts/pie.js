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

/**
 * A label line's width per character (12 px text, a little above the average), and what ECharts
 * leaves between the pie and a label's room (its leader line, 15 + 15 px, and a 10 px margin at the
 * edge), with a few px to spare, in px.
 */
const LABEL_CHARACTER = 7.5
const LEADER = 48
/** The lowest a pie is drawn (the app's card, 18rem): its radius is at most a share of it. */
const LOWEST_DRAWING = 288

/**
 * How big a pie is drawn in `width` px and whether its labels go beside it: each label (a name, its
 * value below) on the room left of the pie, else the pie smaller, down to 60 % of its size; past that
 * (or on a phone) a legend under it names each slice with its value. A label wrapped to a room too
 * small for it broke names and numbers inside ("North / marc / h", "3 0 / 80").
 */
function pieLayout(slices, format, width, narrow) {
  if (narrow) return legendLayout(slices, format, width)
  if (width === undefined) return { radius: '65%', center: ['50%', '50%'], labelled: true }
  const longest = Math.max(0, ...slices.map((s) => Math.max(String(s.name).length, formatValue(s.value, format).length))) * LABEL_CHARACTER
  const largest = (0.65 * Math.min(width, LOWEST_DRAWING)) / 2
  const room = width / 2 - longest - LEADER
  if (room >= largest) return { radius: '65%', center: ['50%', '50%'], labelled: true }
  if (room >= 0.6 * largest) return { radius: Math.floor(room), center: ['50%', '50%'], labelled: true }
  return legendLayout(slices, format, width)
}

/** A legend item's icon and the gap after it, and a legend line's height, in px (ECharts' defaults). */
const LEGEND_ICON = 35
const LEGEND_LINE = 22

/**
 * A pie above a legend that names every slice with its value, on as many lines as it takes: a paged
 * legend hid slices behind its arrows on a phone. The lines are counted as ECharts wraps them, and the
 * pie is drawn in the room left above them (in px, in the app's card, at least 18rem high).
 */
function legendLayout(slices, format, width = 360) {
  const itemWidths = slices.map((s) => (String(s.name).length + 2 + formatValue(s.value, format).length) * LABEL_CHARACTER + LEGEND_ICON)
  let lines = 1
  let used = 0
  for (const item of itemWidths) {
    if (used > 0 && used + item > width - 10) {
      lines++
      used = 0
    }
    used += item
  }
  const above = LOWEST_DRAWING - lines * LEGEND_LINE - 8
  const radius = Math.max(24, Math.floor(Math.min(above - 16, width - 20) / 2))
  return { radius, center: ['50%', Math.floor(above / 2)], labelled: false }
}

/** A pie's ECharts option (`parts`: web/chart-data.js, chartOption). */
export function pieOption(chart, data, { base, tooltip, indicatorIds, locationName, indicatorName, formatOf, flagLinesOf, lastKey, narrow, width }) {
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
  const { radius, center, labelled } = pieLayout(slices, format, width, narrow)
  const shown = new Map(slices.map((s) => [s.name, formatValue(s.value, format)]))
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
    // Without labels beside it, the legend names each slice with its value.
    legend: labelled ? undefined : { bottom: 0, type: 'plain', formatter: (name) => t('{name}: {value}', { name, value: shown.get(name) ?? '' }) },
    series: [
      {
        type: 'pie',
        name: indicatorName(indicatorId),
        radius,
        center,
        data: slices,
        // The value on a line of its own: a label wrapped to its room breaks a long name between words, never
        // a number at its separators (ECharts wraps at a comma: "3" then ",477").
        // Its two lines a line apart (ECharts' default line height set the value over the name's descenders).
        label: labelled ? { formatter: (p) => `${p.name}\n${formatValue(p.value, format)}`, overflow: 'break', lineHeight: 16 } : { show: false },
      },
    ],
  }
}
