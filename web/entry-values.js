// What the data-entry page computes without the server: the rows and columns of its grid, values
// typed in the reader's language read back as numbers, and calculated indicators as the server will
// compute them (lib/engine/finals.ts), so that a ratio updates while its parts are typed. Pure: tested in node.
import { language, t } from './i18n.js'

/** Rows of a grid at most: a larger subtree is entered one level at a time. */
export const MAX_ROWS = 60

/**
 * The locations of a grid under `locationId`: its lowest descendants that the reader may see (a
 * district officer's province → her districts), else its children when they would be too many, else
 * the location itself.
 * @param {{ locations: Array<{ id: number, parent_location_id: number | null, name: string }> }} catalog
 * @param {number} locationId
 */
export function entryRows(catalog, locationId) {
  const children = new Map()
  for (const l of catalog.locations) {
    if (!children.has(l.parent_location_id)) children.set(l.parent_location_id, [])
    children.get(l.parent_location_id).push(l)
  }
  const byName = (a, b) => a.name.localeCompare(b.name)
  const leaves = []
  const walk = (id) => {
    for (const child of children.get(id) ?? []) {
      if (children.has(child.id)) walk(child.id)
      else leaves.push(child)
    }
  }
  walk(locationId)
  if (!leaves.length) return catalog.locations.filter((l) => l.id === locationId)
  return leaves.length <= MAX_ROWS ? leaves.sort(byName) : [...(children.get(locationId) ?? [])].sort(byName)
}

/**
 * The columns of a grid: the indicators of campaigns (or of dates), each `calculated` when it is made
 * of components (read-only on the form).
 * @param {Array<{ id: number, short_name: string, resource_name?: string, data_format: string }>} indicators
 * @param {Array<{ indicator_id: number }>} components
 * @param {'campaign' | 'date'} over
 */
export function entryColumns(indicators, components, over) {
  const calculated = new Set(components.map((c) => c.indicator_id))
  return indicators
    .filter((i) => (over === 'date') === (i.resource_name === 'date'))
    .filter((i) => i.data_format !== 'class' || over === 'campaign')
    .map((i) => ({ ...i, calculated: calculated.has(i.id) }))
    .sort((a, b) => Number(a.calculated) - Number(b.calculated))
}

/** The reader's decimal and group separators. */
function separators() {
  const parts = new Intl.NumberFormat(language()).formatToParts(12345.6)
  return { group: parts.find((p) => p.type === 'group')?.value ?? ',', decimal: parts.find((p) => p.type === 'decimal')?.value ?? '.' }
}

/**
 * A value as typed in the reader's language → `{ value }` (null: emptied), or `{ error }` in words.
 * Percent indicators take "4,38 %" or "4,38" as 0.0438; yes/no flags Yes, No, 1, 0; others a number
 * written with the reader's separators ("1 234,5" in French, "1,234.5" in English).
 * @param {string} text
 * @param {string} format the indicator's data_format
 */
export function parseEntered(text, format) {
  const trimmed = text.trim()
  if (trimmed === '') return { value: null }
  if (format === 'bool') {
    const word = trimmed.toLowerCase()
    if (['1', t('Yes').toLowerCase(), 'yes'].includes(word)) return { value: 1 }
    if (['0', t('No').toLowerCase(), 'no'].includes(word)) return { value: 0 }
    return { error: t('Yes or No') }
  }
  const { group, decimal } = separators()
  // Spaces of any kind group digits in French; the group sign itself is dropped, the decimal sign read as a point.
  let number = trimmed
    .replace(/%$/, '')
    .trim()
    .replace(/[\s\u00a0\u202f]/g, '')
  if (group.trim()) number = number.split(group).join('')
  number = number.replace(decimal, '.')
  if (!/^-?\d+(\.\d+)?$/.test(number)) return { error: t('Not a number') }
  const value = Number(number)
  if (format === 'pct') return { value: value / 100 }
  if (format === 'int' && !Number.isInteger(value)) return { error: t('A whole number') }
  return { value }
}

/** A stored value as the form's input shows it (no percent sign: the column says it). @param {number | null | undefined} value @param {string} format */
export function inputText(value, format) {
  if (value === null || value === undefined) return ''
  if (format === 'bool') return value ? t('Yes') : t('No')
  const shown = format === 'pct' ? value * 100 : value
  return new Intl.NumberFormat(language(), { maximumFractionDigits: 6 }).format(shown)
}

/**
 * What a write's `validation` says of one cell: the rules and bounds broken by its indicator at its
 * location (each a violation as validation_result gives it), flags and blocks alike.
 * @param {{ items?: Array<any> } | undefined} validation
 * @param {number} indicatorId
 * @param {number} locationId
 */
export function flagsOf(validation, indicatorId, locationId) {
  return (validation?.items ?? []).filter(
    (v) => v.location?.id === locationId && (v.left?.indicator_id === indicatorId || v.right?.indicator_id === indicatorId),
  )
}
