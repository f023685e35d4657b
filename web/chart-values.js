// A chart's values as read and indexed (web/chart-data.js, chartData): the value, its coverage, status
// and label at (indicator, location, key), and the lines a tooltip says. Pure functions, shared by the
// chart types' drawings (web/charts/) and the app's cards and tables.
import { formatValue } from './format.js'
import { language, t, tn } from './i18n.js'

/** A point's key in a chart's index. */
export const keyOf = (indicatorId, locationId, key) => `${indicatorId}|${locationId}|${key}`

/** The value at (indicator, location, key), or null. */
export function valueAt(data, indicatorId, locationId, key) {
  return data.index.get(keyOf(indicatorId, locationId, key))?.value ?? null
}

/** The coverage of the value at (indicator, location, key) (`with_coverage=1`): {reported, expected, below_threshold}, or null. */
export function coverageAt(data, indicatorId, locationId, key) {
  return data.index.get(keyOf(indicatorId, locationId, key))?.coverage ?? null
}

/**
 * A coverage in words, naming the children by their type: "7 of 9 districts", and ", incomplete" when
 * below the indicator's threshold; '' for none.
 * @param {{ reported: number, expected: number, below_threshold?: boolean } | null} coverage
 * @param {number} locationId
 * @param {{ childTypeOf?: (id: number) => string | undefined }} catalog
 */
export function coverageWords(coverage, locationId, catalog) {
  if (!coverage) return ''
  // The children named by their type (a name in the data), made plural by the reader's language's
  // rule for regular nouns ("districts", "provinces"; French "pays" stays, "canal" makes "canaux").
  const type = catalog.childTypeOf?.(locationId)?.toLowerCase() ?? t('location')
  const types = language() === 'fr' ? frenchPlural(type) : englishPlural(type)
  const words = tn(coverage.expected, '{reported} of {n} {type}', '{reported} of {n} {types}', { reported: coverage.reported, type, types })
  return coverage.below_threshold ? t('{coverage}, incomplete', { coverage: words }) : words
}

/** English's regular plural, of a name's last word ("health facility" → "health facilities"). */
const englishPlural = (name) => (/[^aeiou]y$/.test(name) ? `${name.slice(0, -1)}ies` : `${name}s`)

/**
 * French's regular plural, of a name's first word ("aire de santé" → "aires de santé"): -s, -x and -z
 * stay; -al makes -aux; -au, -eau and -eu take an x; others an s.
 */
function frenchPlural(name) {
  const [noun, ...rest] = name.split(' ')
  const plural = /[sxz]$/.test(noun) ? noun : noun.endsWith('al') ? `${noun.slice(0, -2)}aux` : /(?:au|eu)$/.test(noun) ? `${noun}x` : `${noun}s`
  return [plural, ...rest].join(' ')
}

/** The value at (indicator, location, key) as a reader reads it: a class's label, else the number formatted. */
export function shownValue(data, indicatorId, locationId, key, format) {
  const point = data.index.get(keyOf(indicatorId, locationId, key))
  return point?.label ?? formatValue(point?.value ?? null, format)
}

/** The status of the value at (indicator, location, key) (read with `with_status=1`), or null. */
export function statusAt(data, indicatorId, locationId, key) {
  return data.index.get(keyOf(indicatorId, locationId, key))?.status ?? null
}

/** A value's flags (a broken rule, an open follow-up), each a tooltip line of its own. */
export const flagLines = (words) => (words ?? []).map((w) => ['', `⚑ ${w}`])

/** What a tooltip says: a title line, then `name: value` lines (French puts a no-break space before the colon). */
export function tooltipLines(title, entries) {
  return [title, ...entries.map(([name, value]) => (name ? t('{name}: {value}', { name, value }) : value))]
}
