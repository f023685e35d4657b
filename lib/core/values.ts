// Parsing of scalar values shared by query filters, parameters and bodies.

export const INT32_MIN = -2147483648
export const INT32_MAX = 2147483647

// Months and days may have one digit (`2017-3-5`): the original front-end formats dates `YYYY-M-D`,
// and Django accepted them.
const DATE = /^(\d{4})-(\d{1,2})-(\d{1,2})$/
const TIMESTAMP = /^(\d{4})-(\d{1,2})-(\d{1,2})((?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,6})?)?(Z|[+-]\d{2}(?::?\d{2})?)?)?)$/

const pad = (n: string) => n.padStart(2, '0')

export function isCalendarDate(year: number, month: number, day: number): boolean {
  if (month < 1 || month > 12 || day < 1) return false
  const days = new Date(Date.UTC(year, month, 0)).getUTCDate()
  return day <= days
}

/** A calendar date as `YYYY-MM-DD`, or undefined (`2017-2-30` is no date). */
export function parseDate(text: string): string | undefined {
  const m = DATE.exec(text)
  return m && isCalendarDate(+m[1], +m[2], +m[3]) ? `${m[1]}-${pad(m[2])}-${pad(m[3])}` : undefined
}

/**
 * How every timestamp is written (the seed's form): UTC, six fractional digits, no zone designator.
 * A client reads one as `new Date(s + 'Z')`.
 */
export const TIMESTAMP_PATTERN = '^\\d{4,}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{6}$'
export const TIMESTAMP_DESCRIPTION = 'UTC, no zone designator: YYYY-MM-DDTHH:MM:SS.ffffff (ISO 8601, six fractional digits)'

/** Minutes east of UTC of `Z` or an ISO 8601 offset (±HH, ±HHMM, ±HH:MM, at most ±23:59); undefined if none. */
function offsetMinutes(zone: string): number | undefined {
  if (zone === 'Z') return 0
  const offset = /^([+-])(\d{2}):?(\d{2})?$/.exec(zone)
  if (!offset || +offset[2] > 23 || +(offset[3] ?? 0) > 59) return undefined
  return (offset[1] === '-' ? -1 : 1) * (+offset[2] * 60 + +(offset[3] ?? 0))
}

/**
 * `YYYY-MM-DD` or an ISO 8601 date-time; no zone means UTC (the session time zone). A time with an
 * offset is turned into UTC here: ISO 8601 and RFC 3339 allow offsets to ±23:59, PostgreSQL's
 * `timestamptz` input only to ±15:59 (`+23:59` was refused, `+99:00` a 500 once).
 */
export function parseTimestamp(text: string): string | undefined {
  const m = TIMESTAMP.exec(text)
  if (!m || !isCalendarDate(+m[1], +m[2], +m[3])) return undefined
  if (m[5] !== undefined && (+m[5] > 23 || +m[6] > 59 || +(m[7] ?? 0) > 59)) return undefined
  const date = `${m[1]}-${pad(m[2])}-${pad(m[3])}`
  if (m[8] === undefined) return `${date}${m[4]}`
  const minutes = offsetMinutes(m[8])
  if (minutes === undefined) return undefined
  const fraction = /\.\d+/.exec(m[4])?.[0] ?? ''
  // setUTCFullYear, not Date.UTC, which reads the years 0–99 as 1900–1999.
  const utc = new Date(0)
  utc.setUTCFullYear(+m[1], +m[2] - 1, +m[3])
  utc.setUTCHours(+m[5], +m[6] - minutes, +(m[7] ?? 0))
  const iso = utc.toISOString()
  // Shifted out of four-digit years (0000-01-01 minus an offset): no timestamp PostgreSQL keeps as given.
  if (!/^\d{4}-/.test(iso)) return undefined
  return `${iso.slice(0, 19)}${fraction}`
}

export function parseInteger(text: string): number | undefined {
  return /^-?\d+$/.test(text) ? Number(text) : undefined
}

export const isInt32 = (n: number) => Number.isInteger(n) && n >= INT32_MIN && n <= INT32_MAX

export function parseFloatStrict(text: string): number | undefined {
  if (!/^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$/.test(text)) return undefined
  const n = Number(text)
  return Number.isFinite(n) ? n : undefined
}

const TRUE = new Set(['true', 'True', '1'])
const FALSE = new Set(['false', 'False', '0'])

export function parseBoolean(text: string): boolean | undefined {
  return TRUE.has(text) ? true : FALSE.has(text) ? false : undefined
}

export const NULL_TOKENS = new Set(['none', 'None', 'nil', 'null'])
