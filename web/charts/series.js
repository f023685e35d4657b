// Columns, bars and lines: ECharts series over categories (locations, indicators or time), their
// values labelled where they fit, counts and percents on axes of their own.
import { formatValue } from '../format.js'
import { t } from '../i18n.js'
import { legendHeight, PLAIN_LEGEND_UP_TO, SERIES_COLOURS as PALETTE } from '../chart-parts.js'
import { shownValue, tooltipLines, valueAt } from '../chart-values.js'

/** Categories a column or bar chart shows at once; more scroll (ECharts' dataZoom). */
const VISIBLE_CATEGORIES = 30
/** Text of 12 px is about 6.7 px a character in DejaVu Sans and the browsers' sans-serif: 7 leaves room. */
const CHARACTER = 7
/** A line of that text, high. */
const TEXT_LINE = 14
/** The longest category name (in characters) that may stand upright below a plot: "Sept 2016", "2016 Q4". */
const UPRIGHT_UP_TO = 10
/** What a drawing's axes and margins take from its width, about: the plot is the rest. */
const AROUND_PLOT = 100
/** A legend's line (ECharts' item height and gap); a plain legend of more lines would squeeze the plot. */
const LEGEND_LINE = 22
const PLAIN_LEGEND_LINES = 2

/**
 * Whether value labels fit their bars side by side: the distance between neighbouring bars' labels
 * (ECharts' default gaps: a fifth of a category between categories, 30 % of a bar between bars) at
 * least the widest label. Labels that do not fit are left out rather than drawn over one another.
 */
function labelsFit({ plotWidth, categories, barsPerCategory, widestLabel, horizontal }) {
  if (horizontal) return categories * barsPerCategory <= 14
  const category = plotWidth / Math.max(1, categories)
  const bar = (0.8 * category) / (1.3 * barsPerCategory - 0.3)
  return (barsPerCategory === 1 ? category : 1.3 * bar) >= widestLabel * CHARACTER
}

/**
 * What a drawing of columns, bars or lines `width` pixels wide (unknown: a card's, wide or narrow) has
 * room for: value labels (`labelled`), and category names side by side or turned (`turned`: many, or
 * long, such as a campaign's name), so that none hides another. `labelOf(s, c)`: a value label's text.
 */
function roomFor({ width, narrow, categories, series, type, horizontal, stackedPercent, labelOf }) {
  const plotWidth = (width ?? (narrow ? 340 : 560)) - AROUND_PLOT
  const shownCategories = Math.min(categories.length, VISIBLE_CATEGORIES)
  const widestLabel = Math.max(0, ...series.flatMap((s) => categories.slice(0, shownCategories).map((_, c) => labelOf(s, c).length)))
  const barsPerCategory = stackedPercent ? 1 : series.length
  const labelled =
    type === 'bar' && series.length * shownCategories <= 24 && labelsFit({ plotWidth, categories: shownCategories, barsPerCategory, widestLabel, horizontal })
  const longestCategory = Math.max(0, ...categories.map((c) => String(c).length))
  const spacing = plotWidth / Math.max(1, shownCategories)
  const turned = !horizontal && (categories.length > (narrow ? 2 : 6) || longestCategory * CHARACTER > spacing)
  // A name turned 30° spans cos 30° of its length and half a line across; where that is wider than a
  // category (twelve months in half a printed page), short names (a month, a quarter) stand upright, a
  // line apart, so that none is left out for overlapping its neighbour. A long one (a campaign's name)
  // stays turned: upright, it would take the plot's height.
  const rotate = !turned ? 0 : spacing >= 0.87 * longestCategory * CHARACTER + TEXT_LINE / 2 || longestCategory > UPRIGHT_UP_TO ? 30 : 90
  return { labelled, rotate }
}

/**
 * The categories and each series (a name, a colour, and its value, fill, coverage, text and format in
 * each category, and its flags' tooltip lines, asked when the tooltip shows: flags may come later):
 * over time when more than one campaign or bucket was read (or always for a line), else over
 * locations; `groupBy: 'location'` makes a series of each location.
 */
function seriesOf(chart, data, { indicatorIds, colorOf, locationName, indicatorName, formatOf, fillOf, coverageOf, flagLinesOf, lastKey, look }) {
  const overTime = data.over !== 'classes' && (look.line || data.keys.length > 1)
  const byLocation = chart.groupBy === 'location'
  // With locations as the series, one campaign's indicators are the categories of one axis: counts and
  // percents together would leave the percents flat at 0, so the locations stay the categories.
  const isPercent = (i) => formatOf(i) === 'pct'
  const indicatorsAsCategories = byLocation && !(indicatorIds.some(isPercent) && !indicatorIds.every(isPercent))
  const locations = data.locationIds.slice(0, 12)
  /** Each series: a name, a colour, and its value in each category. */
  let categories
  let series
  if (data.over === 'classes') {
    // Each location's values counted by class: a series per class, stacked.
    categories = locations.map(locationName)
    const i = indicatorIds[0]
    series = data.keys.map((k, n) => ({
      name: k.label,
      color: PALETTE[n % PALETTE.length],
      values: locations.map((l) => valueAt(data, i, l, k.id)),
      fills: locations.map(() => undefined),
      coverages: locations.map(() => ''),
      flags: locations.map(() => () => []),
      shown: locations.map((l) => formatValue(valueAt(data, i, l, k.id), 'int')),
      formats: locations.map(() => 'int'),
    }))
  } else if (overTime) {
    categories = data.keys.map((k) => k.label)
    const pairs = byLocation
      ? locations.flatMap((l) => indicatorIds.map((i) => [i, l]))
      : indicatorIds.flatMap((i) => (locations.length ? locations : [null]).map((l) => [i, l]))
    // Coloured by what varies from series to series: the locations (or both), else the indicators.
    const byIndicatorOnly = !byLocation && locations.length <= 1
    series = pairs.map(([i, l], n) => ({
      // Named by what varies: the location, the indicator, or both.
      name: [byLocation || locations.length > 1 ? locationName(l) : null, indicatorIds.length > 1 || byIndicatorOnly ? indicatorName(i) : null]
        .filter(Boolean)
        .join(', '),
      indicatorId: i,
      color: byIndicatorOnly ? colorOf(i, indicatorIds.indexOf(i)) : PALETTE[n % PALETTE.length],
      values: data.keys.map((k) => valueAt(data, i, l, k.id)),
      fills: data.keys.map((k) => fillOf(i, l, k.id)),
      coverages: data.keys.map((k) => coverageOf(i, l, k.id)),
      flags: data.keys.map((k) => () => flagLinesOf(i, l, k.id)),
      shown: data.keys.map((k) => shownValue(data, i, l, k.id, formatOf(i))),
      formats: data.keys.map(() => formatOf(i)),
    }))
  } else if (indicatorsAsCategories) {
    categories = indicatorIds.map(indicatorName)
    series = locations.map((l, n) => ({
      name: locationName(l),
      color: PALETTE[n % PALETTE.length],
      values: indicatorIds.map((i) => valueAt(data, i, l, lastKey)),
      fills: indicatorIds.map((i) => fillOf(i, l, lastKey)),
      coverages: indicatorIds.map((i) => coverageOf(i, l, lastKey)),
      flags: indicatorIds.map((i) => () => flagLinesOf(i, l, lastKey)),
      shown: indicatorIds.map((i) => shownValue(data, i, l, lastKey, formatOf(i))),
      formats: indicatorIds.map(formatOf),
    }))
  } else {
    categories = locations.map(locationName)
    series = indicatorIds.map((i, n) => ({
      name: indicatorName(i),
      color: colorOf(i, n),
      values: locations.map((l) => valueAt(data, i, l, lastKey)),
      fills: locations.map((l) => fillOf(i, l, lastKey)),
      coverages: locations.map((l) => coverageOf(i, l, lastKey)),
      flags: locations.map((l) => () => flagLinesOf(i, l, lastKey)),
      shown: locations.map((l) => shownValue(data, i, l, lastKey, formatOf(i))),
      formats: locations.map(() => formatOf(i)),
    }))
  }
  return { categories, series }
}

/** The value axis (or one for counts and one for percents, so that neither is flat at 0) and which series take the second. */
function valueAxes(series, { stackedPercent, formatOf, indicatorIds }) {
  const isPercent = (s) => s.formats.every((f) => f === 'pct')
  const twoAxes = !stackedPercent && series.some(isPercent) && !series.every(isPercent)
  const axisFormat = (percent) => (stackedPercent || percent ? 'pct' : (series.find((s) => !isPercent(s))?.formats[0] ?? formatOf(indicatorIds[0])))
  const axisOf = (percent) => ({
    type: 'value',
    max: stackedPercent ? 1 : undefined,
    // Whole numbers step by whole numbers (no 0.5 case).
    minInterval: axisFormat(percent) === 'pct' ? undefined : 1,
    axisLabel: { formatter: (v) => formatValue(v, axisFormat(percent)), hideOverlap: true },
    ...(twoAxes ? { name: percent ? '%' : '', splitLine: { show: !percent } } : {}),
  })
  const valueAxis = twoAxes ? [axisOf(false), axisOf(true)] : axisOf(series.length > 0 && series.every(isPercent))
  return { valueAxis, twoAxes, onSecond: series.map((s) => twoAxes && isPercent(s)) }
}

/**
 * Columns, stacked percent columns, bars and lines (series of `seriesOf`), their values labelled where
 * they fit, more categories than fit a scroll away.
 */
export function seriesOption(chart, data, parts) {
  const { base, tooltip, indicatorIds, formatOf, narrow, look, width } = parts
  const { categories, series } = seriesOf(chart, data, parts)
  const stackedPercent = look.stackedPercent || (data.over === 'classes' && !look.line)
  const totals = categories.map((_, c) => series.reduce((sum, s) => sum + Math.abs(s.values[c] ?? 0), 0))
  const shown = (s, c) => (stackedPercent ? (s.values[c] === null || !totals[c] ? null : Math.abs(s.values[c]) / totals[c]) : s.values[c])
  const type = look.line ? 'line' : 'bar'
  const horizontal = Boolean(look.horizontal)
  const many = categories.length > VISIBLE_CATEGORIES
  const labelOf = (s, c) => (stackedPercent ? formatValue(shown(s, c), 'pct') : formatValue(s.values[c], s.formats[c]))
  const { labelled, rotate } = roomFor({ width, narrow, categories, series, type, horizontal, stackedPercent, labelOf })
  const echartsSeries = series.map((s) => ({
    type,
    name: s.name,
    color: s.color,
    stack: stackedPercent ? 'share' : undefined,
    // Value labels only where they fit; ECharts hides any that would still overlap.
    labelLayout: { hideOverlap: true },
    label: {
      show: labelled,
      position: stackedPercent ? 'inside' : horizontal ? 'right' : 'top',
      formatter: (p) => (stackedPercent ? formatValue(p.value, 'pct') : formatValue(p.value, s.formats[p.dataIndex])),
    },
    // One series of bars: each bar in its value's status colour, where it has one.
    data: categories.map((_, c) =>
      type === 'bar' && !stackedPercent && series.length === 1 && s.fills[c] ? { value: shown(s, c), itemStyle: { color: s.fills[c] } } : shown(s, c),
    ),
  }))
  const categoryAxis = {
    type: 'category',
    data: categories,
    // Every label, turned (or upright) when they would not fit side by side; past 12 (6 on a phone) ECharts leaves
    // out what would still overlap.
    axisLabel: {
      interval: categories.length > (narrow ? 6 : 12) ? 'auto' : 0,
      hideOverlap: true,
      rotate,
    },
  }
  // More categories than fit: the first ones shown, the rest a scroll (slider, wheel or drag) away.
  const zoomAxis = horizontal ? { yAxisIndex: 0 } : { xAxisIndex: 0 }
  const dataZoom = many
    ? [
        { type: 'slider', ...zoomAxis, startValue: 0, endValue: VISIBLE_CATEGORIES - 1, ...(horizontal ? { right: 0, width: 14 } : { bottom: 0, height: 14 }) },
        { type: 'inside', ...zoomAxis, startValue: 0, endValue: VISIBLE_CATEGORIES - 1 },
      ]
    : undefined
  const { valueAxis, twoAxes, onSecond } = valueAxes(series, { stackedPercent, formatOf, indicatorIds })
  for (const [n, second] of onSecond.entries()) if (second) echartsSeries[n][horizontal ? 'xAxisIndex' : 'yAxisIndex'] = 1
  // Every name listed (never paged) while the legend takes two lines at most and names twelve series at
  // most; a longer one would squeeze the plot, so it scrolls on one line. The grid starts below it.
  const names = series.map((s) => s.name)
  const legendWidth = width ? width - 10 : narrow ? 330 : 540
  const plainLegend = series.length <= PLAIN_LEGEND_UP_TO && legendHeight(names, legendWidth) <= PLAIN_LEGEND_LINES * LEGEND_LINE
  const legendTall = series.length > 1 ? (plainLegend ? legendHeight(names, legendWidth) : 24) : 0
  return {
    ...base,
    tooltip: {
      ...base.tooltip,
      trigger: 'axis',
      formatter: (items) =>
        tooltip(
          tooltipLines(
            items[0]?.name ?? '',
            items.flatMap((p) => {
              const s = series[p.seriesIndex]
              const raw = s.shown[p.dataIndex]
              const value = stackedPercent && p.value !== null ? `${formatValue(p.value, 'pct')} (${raw})` : raw
              // Its coverage beside it: "81 (3 of 3 districts)" (French names the type in brackets: a comma there).
              const coverage = s.coverages[p.dataIndex]
              return [[p.seriesName, coverage ? t('{value} ({coverage})', { value, coverage }) : value], ...s.flags[p.dataIndex]()]
            }),
          ),
        ),
    },
    legend: series.length > 1 ? { top: 0, left: 0, type: plainLegend ? 'plain' : 'scroll' } : undefined,
    grid: {
      left: 48,
      right: (horizontal && many ? 40 : 24) + (twoAxes && !horizontal ? 24 : 0),
      top: legendTall + 24,
      bottom: !horizontal && many ? 48 : 32,
      outerBoundsMode: 'same',
      outerBoundsContain: 'axisLabel',
    },
    dataZoom,
    xAxis: horizontal ? valueAxis : categoryAxis,
    yAxis: horizontal ? categoryAxis : valueAxis,
    series: echartsSeries,
  }
}
