// A value's status as the app shows it: the API decides the status (`with_status=1`, the rule in
// docs/decisions.md, "Bounds and a value's status"); here each status gets its colour and the legend
// names every range with its limits. Pure functions: no DOM, no fetch (tested in node).
import { formatValue } from './format.js'
import { t } from './i18n.js'

/** Fill of good, ok and bad in a chart (bars, map regions); table cells take a tint of it (app.css). */
const NAMED = {
  good: { fill: '#1a9641' },
  ok: { fill: '#e0a800' },
  bad: { fill: '#d7191c' },
}
/** Colours of an indicator's own ranges, by their order in its bound_json. */
const RANGES = [{ fill: '#2c7bb6' }, { fill: '#7b3294' }, { fill: '#fdae61' }, { fill: '#d7191c' }, { fill: '#1a9641' }]

/**
 * The bounds of the catalog's indicators that have any, by id.
 * @param {Array<{ id: number, good_bound?: number | null, bad_bound?: number | null, bound_json?: any }>} indicators
 */
export function boundsById(indicators) {
  const bounds = new Map()
  for (const i of indicators) {
    const ranges = Array.isArray(i.bound_json) ? i.bound_json : []
    const pair = i.good_bound != null && i.bad_bound != null && i.good_bound !== i.bad_bound
    if (ranges.length || pair) bounds.set(i.id, { good: i.good_bound, bad: i.bad_bound, pair, ranges })
  }
  return bounds
}

/** A status in words: good, ok and bad in the reader's language, an indicator's own range by its name. */
export const statusWord = (status) => (status === 'good' ? t('good') : status === 'ok' ? t('ok') : status === 'bad' ? t('bad') : status)

/** The CSS class of a status of an indicator: `status-good`, … or `status-range-<n>` for its own ranges. */
export function statusClass(status, bounds) {
  if (status === null || status === undefined) return ''
  const range = bounds?.ranges.findIndex((r) => r.bound_name === status) ?? -1
  return range >= 0 ? `status-range-${range % RANGES.length}` : NAMED[status] ? `status-${status}` : ''
}

/** The fill colour of a status (a bar, a map region), or undefined for none. */
export function statusFill(status, bounds) {
  const name = statusClass(status, bounds)
  if (!name) return undefined
  return name.startsWith('status-range-') ? RANGES[Number(name.slice('status-range-'.length))].fill : NAMED[status].fill
}

/**
 * The legend of an indicator's statuses: its ranges with their limits, then good / ok / bad from its
 * good and bad bounds (higher or lower being better as their order says).
 */
export function statusLegend(bounds, format) {
  if (!bounds) return []
  const f = (v) => formatValue(v, format)
  const items = bounds.ranges.map((r) => {
    const limits =
      r.mn_val != null && r.mx_val != null
        ? t('from {min} to {max}', { min: f(r.mn_val), max: f(r.mx_val) })
        : r.mn_val != null
          ? t('from {min}', { min: f(r.mn_val) })
          : r.mx_val != null
            ? t('to {max}', { max: f(r.mx_val) })
            : ''
    return { status: r.bound_name, className: statusClass(r.bound_name, bounds), label: limits ? `${r.bound_name}: ${limits}` : r.bound_name }
  })
  if (bounds.pair) {
    const higherIsBetter = bounds.good > bounds.bad
    const good = { value: f(bounds.good) }
    const bad = { value: f(bounds.bad) }
    items.push(
      { status: 'good', className: 'status-good', label: higherIsBetter ? t('good: {value} or more', good) : t('good: {value} or less', good) },
      {
        status: 'ok',
        className: 'status-ok',
        label: t('ok: between {low} and {high}', { low: f(Math.min(bounds.good, bounds.bad)), high: f(Math.max(bounds.good, bounds.bad)) }),
      },
      { status: 'bad', className: 'status-bad', label: higherIsBetter ? t('bad: {value} or less', bad) : t('bad: {value} or more', bad) },
    )
  }
  return items
}
