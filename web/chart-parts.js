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
    if (!where.location_depth || herRootsOnly) return place
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

/**
 * The status legend of a chart's bounded indicators as ECharts graphic elements at the foot of the
 * drawing (a swatch in the status's own fill, then its words), and the height they take.
 * @param {number[]} indicatorIds
 * @param {{ indicatorBounds?: Map<number, any>, indicatorFormat: Map<number, string>, indicatorName: Map<number, string> }} catalog
 */
export function statusGraphic(indicatorIds, catalog, { fontFamily = 'system-ui, sans-serif', narrow = false } = {}) {
  const bounded = indicatorIds.filter((id) => catalog.indicatorBounds?.has(id))
  const lines = bounded.flatMap((id) => {
    const bounds = catalog.indicatorBounds.get(id)
    const items = statusLegend(bounds, catalog.indicatorFormat.get(id)).map((item) => ({ label: item.label, fill: statusFill(item.status, bounds) }))
    // Narrow: a line per status; wide: an indicator's statuses on one line.
    const prefix = bounded.length > 1 ? `${catalog.indicatorName.get(id)}: ` : ''
    return narrow
      ? items.map((item, i) => [{ ...item, label: i === 0 ? `${prefix}${item.label}` : item.label }])
      : [items.map((item, i) => ({ ...item, label: i === 0 ? `${prefix}${item.label}` : item.label }))]
  })
  const LINE = 18
  const elements = lines.flatMap((items, row) => {
    let x = 0
    return items.flatMap((item) => {
      const at = x
      // Text of 12 px is about 6.5 px a character in DejaVu Sans and the browsers' sans-serif.
      x += 22 + Math.ceil(item.label.length * 6.5)
      return [
        {
          type: 'rect',
          left: at,
          bottom: (lines.length - 1 - row) * LINE + 4,
          shape: { width: 12, height: 12 },
          style: { fill: item.fill, stroke: '#57606a' },
          silent: true,
        },
        {
          type: 'text',
          left: at + 16,
          bottom: (lines.length - 1 - row) * LINE + 3,
          style: { text: item.label, fill: '#1b1f23', font: `12px ${fontFamily}` },
          silent: true,
        },
      ]
    })
  })
  return { elements, height: lines.length ? lines.length * LINE + 8 : 0 }
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
