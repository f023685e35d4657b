// What a chart says besides its values: the place and time it shows (its subtitle), the colours of its
// series, and its status legend drawn into the chart itself (a file exported has no page around it to
// hold one). Pure functions: no DOM, no fetch (tested in node).
import { language, t } from './i18n.js'
import { statusFill, statusLegend } from './status.js'
import { chartTypeOf, drawsOneKey } from './charts/registry.js'

/**
 * Series colours, twelve told apart: no two alike, none the status colours' green, amber or red first,
 * so that a legend of up to twelve series names twelve different swatches.
 */
export const SERIES_COLOURS = [
  '#0b5cad',
  '#e66101',
  '#5e3c99',
  '#018571',
  '#b2182b',
  '#8c510a',
  '#c51b7d',
  '#4d4d4d',
  '#35978f',
  '#b8860b',
  '#762a83',
  '#2166ac',
]
/** Series a legend lists on lines of its own (never paged); more scroll. */
export const PLAIN_LEGEND_UP_TO = 12

/** A type's name in the plural ("Districts", "Provinces", "Counties") for the reader's language. */
function plural(type) {
  if (language() === 'en') return /[^aeiou]y$/.test(type) ? `${type.slice(0, -1)}ies` : /s$/.test(type) ? type : `${type}s`
  return /[sxz]$/.test(type) ? type : `${type}s`
}

/** The type name of a location ("District"), from the catalog's lists. */
function typeOf(catalog, locationId) {
  const location = catalog.locations?.find((l) => l.id === locationId)
  return catalog.types?.find((type) => type.id === location?.location_type_id)?.name
}

/**
 * Where a chart's values are: "Districts of Eastvale", "Veridia", or the names read. A chart read below
 * a location above the reader's part of the country (its values hers alone) is said to be below her
 * part, by name: "Districts of Southreach", never "Districts of Location 1".
 */
function placeOf(data, catalog) {
  const name = (id) => catalog.locationName?.get(id) ?? t('Location {id}', { id })
  const where = data.where ?? {}
  if (where.location_id != null) {
    const above = !catalog.locationName?.has(where.location_id) && catalog.roots?.length > 0
    const place = above ? catalog.roots.map((r) => r.name).join(', ') : name(where.location_id)
    const herRootsOnly = above && data.locationIds.every((id) => catalog.roots.some((r) => r.id === id))
    // A place with nothing below it is read as itself: named alone, not as the districts of a district.
    const itselfOnly = data.locationIds.length === 1 && data.locationIds[0] === where.location_id
    if (!where.location_depth || herRootsOnly || itselfOnly) return place
    const type = typeOf(catalog, data.locationIds[0])
    return type ? t('{types} of {place}', { types: plural(type), place }) : t('Below {place}', { place })
  }
  const ids = data.locationIds ?? []
  return ids.length > 3 ? t('{first} and {n} more', { first: ids.slice(0, 2).map(name).join(', '), n: ids.length - 2 }) : ids.map(name).join(', ')
}

/** When a chart's values are: its campaign (or "first – last, n campaigns"), or its periods. */
function timeOf(chart, data, catalog) {
  // A pie or a map draws the latest key only.
  if (drawsOneKey(chart) && data.over !== 'classes' && data.keys.length > 1) return timeOf(chart, { ...data, keys: data.keys.slice(-1) }, catalog)
  if (data.over === 'time') {
    if (chart.groupByTime === 'all_time') return t('All time')
    const keys = data.keys
    if (!keys.length) return ''
    return keys.length === 1 ? keys[0].label : `${keys[0].label} – ${keys.at(-1).label}`
  }
  // Campaigns: the keys, or for class counts (whose keys are classes) the campaigns of the points.
  const ids = data.over === 'classes' ? [...new Set(data.points.map((p) => p.campaign_id))] : data.keys.map((k) => k.id)
  const names = ids.map((id) => catalog.campaignName?.get(id) ?? t('Campaign {id}', { id }))
  if (names.length <= 1) return names[0] ?? ''
  return t('{first} – {last} ({n} campaigns)', { first: names[0], last: names.at(-1), n: names.length })
}

/**
 * What a pie or a map given more than it draws says it draws ("Draws Children missed for October 2016
 * only: a pie shows one indicator and one campaign."), else ''.
 */
export function drawnOnly(chart, data, catalog) {
  if (!drawsOneKey(chart)) return ''
  const ids = chart.indicator_ids ?? []
  const keys = data.over === 'classes' ? [] : data.keys
  if (ids.length <= 1 && keys.length <= 1) return ''
  const what = { indicator: catalog.indicatorName.get(ids[0]) ?? t('Indicator {id}', { id: ids[0] }), key: keys.at(-1)?.label ?? '' }
  const drawn = keys.length ? t('Draws {indicator} for {key} only', what) : t('Draws {indicator} only', what)
  return `${drawn}: ${chartTypeOf(chart)?.family === 'pie' ? t('a pie shows one indicator and one campaign.') : t('a map shows one indicator and one campaign.')}`
}

/** A chart's subtitle: when and where its values are ("October 2016 - NID - bOPV · Districts of Eastvale"). */
export function chartSubtitle(chart, data, catalog) {
  return [timeOf(chart, data, catalog), placeOf(data, catalog)].filter(Boolean).join(' · ')
}

/** Text of 12 px is about 6.7 px a character in DejaVu Sans and the browsers' sans-serif: 7 leaves room. */
const LEGEND_CHARACTER = 7
/** A legend line's height, and the room a swatch takes before its words. */
const LEGEND_LINE = 18
const SWATCH = 16

/**
 * Where each item of a chart's status legend goes, at the foot of a drawing `width` pixels wide: its
 * bounded indicators' statuses (a swatch in the status's own fill, then its words), an indicator's on
 * one line when they fit, on the next line when they do not (narrow: a line per status). `line` counts
 * from the top; `height` is what the legend takes. The drawing's legend (statusGraphic) and a table's
 * exported legend (lib/export/render.ts) both place it so.
 * @param {number[]} indicatorIds
 * @param {{ indicatorBounds?: Map<number, any>, indicatorFormat: Map<number, string>, indicatorName: Map<number, string> }} catalog
 */
export function statusLegendLayout(indicatorIds, catalog, { width = Number.POSITIVE_INFINITY, narrow = false } = {}) {
  const bounded = indicatorIds.filter((id) => catalog.indicatorBounds?.has(id))
  /** @type {Array<{ label: string, fill: string | undefined, x: number, line: number }>} */
  const items = []
  let line = -1
  for (const id of bounded) {
    const bounds = catalog.indicatorBounds.get(id)
    const prefix = bounded.length > 1 ? `${t('{name}: {value}', { name: catalog.indicatorName.get(id) ?? '', value: '' })} ` : ''
    let x = 0
    line++
    for (const [i, item] of statusLegend(bounds, catalog.indicatorFormat.get(id)).entries()) {
      const label = i === 0 ? `${prefix}${item.label}` : item.label
      const room = SWATCH + Math.ceil(label.length * LEGEND_CHARACTER) + 12
      if (x > 0 && (narrow || x + room > width)) {
        line++
        x = 0
      }
      items.push({ label, fill: statusFill(item.status, bounds), x, line })
      x += room
    }
  }
  return { items, lines: line + 1, height: line >= 0 ? (line + 1) * LEGEND_LINE + 8 : 0 }
}

/**
 * The status legend of a chart's bounded indicators as ECharts graphic elements at the foot of the
 * drawing (statusLegendLayout), and the height they take.
 */
export function statusGraphic(indicatorIds, catalog, { fontFamily = 'system-ui, sans-serif', narrow = false, width = Number.POSITIVE_INFINITY } = {}) {
  const { items, lines, height } = statusLegendLayout(indicatorIds, catalog, { width, narrow })
  const elements = items.flatMap((item) => {
    const bottom = (lines - 1 - item.line) * LEGEND_LINE
    return [
      { type: 'rect', left: item.x, bottom: bottom + 4, shape: { width: 12, height: 12 }, style: { fill: item.fill, stroke: '#57606a' }, silent: true },
      { type: 'text', left: item.x + SWATCH, bottom: bottom + 3, style: { text: item.label, fill: '#1b1f23', font: `12px ${fontFamily}` }, silent: true },
    ]
  })
  return { elements, height }
}

/**
 * How tall a plain legend of `names` is when it wraps (ECharts lays it out in rows; the grid must start
 * below it): each item a 25 px icon and its text, at about 6.5 px a character, in `width` pixels.
 */
export function legendHeight(names, width) {
  let rows = 1
  let x = 0
  for (const name of names) {
    const item = 25 + 5 + Math.ceil(name.length * 6.5) + 10
    if (x > 0 && x + item > width) {
      rows++
      x = 0
    }
    x += item
  }
  return rows * 22
}
