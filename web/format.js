// Numbers, periods and times as people read them, in one place: tooltips, labels, legends, tables and
// the CSV preview all format through here (Intl, so grouping and month names follow the language the
// app writes in: web/i18n.js).

import { language, t } from './i18n.js'

/** Each language's formatters, made once. */
const byLanguage = new Map()

/** The formatters of the language the app writes in now. */
function formatters() {
  const code = language()
  let made = byLanguage.get(code)
  if (!made) {
    made = {
      whole: new Intl.NumberFormat(code, { maximumFractionDigits: 0 }),
      threeSignificant: new Intl.NumberFormat(code, { maximumSignificantDigits: 3 }),
      percentDigits: new Intl.NumberFormat(code, { maximumSignificantDigits: 3, maximumFractionDigits: 2 }),
      monthYear: new Intl.DateTimeFormat(code, { month: 'short', year: 'numeric', timeZone: 'UTC' }),
      dateOnly: new Intl.DateTimeFormat(code, { dateStyle: 'medium', timeZone: 'UTC' }),
    }
    byLanguage.set(code, made)
  }
  return made
}

/**
 * A value of an indicator in its data format: `pct` as a percent (0.0438 → "4.38 %"), `bool` as yes or
 * no (a total over places, the share of them that said yes: 0.33 → "33 % yes"), whole numbers with thousands separators, other fractions to three significant digits.
 * @param {number | null | undefined} value
 * @param {string} [format] the indicator's data_format
 * @returns {string}
 */
export function formatValue(value, format) {
  if (value === null || value === undefined || Number.isNaN(value)) return '–'
  const { percentDigits, whole, threeSignificant } = formatters()
  if (format === 'pct') return `${percentDigits.format(100 * value)} %`
  if (format === 'bool') return value === 0 ? t('No') : value === 1 ? t('Yes') : t('{share} yes', { share: `${percentDigits.format(100 * value)} %` })
  if (Number.isInteger(value)) return whole.format(value)
  return Math.abs(value) >= 1000 ? whole.format(value) : threeSignificant.format(value)
}

/**
 * A time bucket of the API's grouped date reads: "201601" → "Jan 2016", "20161" → "2016 Q1", 2016 →
 * "2016", all_time's 1 → "All time".
 * @param {string | number} grouping
 * @param {string} [groupByTime]
 */
export function formatPeriod(grouping, groupByTime) {
  const text = String(grouping)
  const { monthYear, dateOnly } = formatters()
  if (groupByTime === 'all_time') return t('All time')
  if (groupByTime === 'quarter' || /^\d{4}[1-4]$/.test(text)) return t('{year} Q{quarter}', { year: text.slice(0, 4), quarter: text.slice(4) })
  if (groupByTime === 'month' || /^\d{6}$/.test(text)) return monthYear.format(Date.UTC(Number(text.slice(0, 4)), Number(text.slice(4)) - 1, 1))
  if (/^\d{4}-\d{2}-\d{2}$/.test(text)) return dateOnly.format(new Date(`${text}T00:00:00Z`))
  return text
}

/**
 * A server timestamp (UTC, written without a zone designator as the seed does) in the reader's own
 * zone, the zone named: "Nov 29, 2026, 4:05 AM GMT+1".
 * @param {string | null | undefined} timestamp
 * @param {string} [timeZone] the reader's zone unless given
 */
export function formatTime(timestamp, timeZone) {
  if (!timestamp) return '–'
  const instant = new Date(/[zZ]|[+-]\d\d:?\d\d$/.test(timestamp) ? timestamp : `${timestamp}Z`)
  if (Number.isNaN(instant.getTime())) return timestamp
  // dateStyle cannot be combined with timeZoneName: the parts are spelled out.
  const parts = { year: 'numeric', month: 'short', day: 'numeric', hour: 'numeric', minute: '2-digit', timeZoneName: 'short', timeZone }
  return new Intl.DateTimeFormat(language(), /** @type {Intl.DateTimeFormatOptions} */ (parts)).format(instant)
}

/**
 * An uploaded document's title as its file was named: the server keeps titles unique by adding
 * `-<epoch seconds>` (and `-2`, `-3`… on a collision), which the reader does not need.
 * @param {string} title
 */
export const fileNameOf = (title) => title.replace(/-\d{9,11}(-\d+)?$/, '')

/** A count of things, grouped: 12345 → "12,345". @param {number} count */
export const formatCount = (count) => formatters().whole.format(count)

/** Lower case without accents, for searching names: "Mbéré" is found by "mbere". @param {string} text */
export const fold = (text) =>
  text
    .normalize('NFD')
    .replace(/\p{Diacritic}/gu, '')
    .toLowerCase()
