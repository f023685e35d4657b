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
/**
 * Colours of an indicator's own ranges, by their order in its bound_json; none of them the bars'
 * default blue, so a range never reads as "no status". A range named as a status (good, ok, bad, or
 * their usual words) takes that status's colour instead (statusClass).
 */
const RANGES = [{ fill: '#7b3294' }, { fill: '#e66101' }, { fill: '#01665e' }, { fill: '#8c510a' }, { fill: '#c51b7d' }]
/** Words a programme names its ranges with, and the status colour each means. */
const MEANS = { good: 'good', pass: 'good', ok: 'ok', moderate: 'ok', warning: 'ok', bad: 'bad', fail: 'bad', critical: 'bad', severe: 'bad' }

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
  const meaning = MEANS[String(status).trim().toLowerCase()]
  if (range >= 0 && meaning) return `status-${meaning}`
  return range >= 0 ? `status-range-${range % RANGES.length}` : NAMED[status] ? `status-${status}` : ''
}

/** The fill colour of a status (a bar, a map region), or undefined for none. */
export function statusFill(status, bounds) {
  const name = statusClass(status, bounds)
  if (!name) return undefined
  return name.startsWith('status-range-') ? RANGES[Number(name.slice('status-range-'.length))].fill : NAMED[name.slice('status-'.length)].fill
}

/**
 * The legend of an indicator's statuses: its ranges with their limits (and level, for a range of one
 * level), then good / ok / bad from its good and bad bounds (higher or lower being better as their
 * order says).
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
    // A range of one location level says which (indicator.bound_json carries its name).
    const name = r.location_type ? t('{name} ({level} only)', { name: r.bound_name, level: r.location_type }) : r.bound_name
    return { status: r.bound_name, className: statusClass(r.bound_name, bounds), label: limits ? `${name}: ${limits}` : name }
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
