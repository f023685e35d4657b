// DHIS2's periods (its Web API's "Date and period format"): each the days it covers, first and last,
// as ISO dates. Daily 20261015, weekly 2026W42 (ISO weeks, Monday first), monthly 202610, quarterly
// 2026Q4, yearly 2026; and ADX's ISO 8601 form, a first day and a duration (2026-10-01/P1M, 2026-10-12/P7D,
// 2026-04-01/P1Y), which also holds DHIS2's other period types. Others (six-monthly 2026S1, financial
// years 2026April…) are refused by name.

/** The days a period covers, first and last included (YYYY-MM-DD). */
export interface PeriodDays {
  first: string
  last: string
}

const DAY_MS = 86_400_000
const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10)

/** The first day of ISO week `week` of `year`: the Monday of the week that holds 4 January. */
function isoWeekStart(year: number, week: number): number {
  const fourth = Date.UTC(year, 0, 4)
  const weekday = (new Date(fourth).getUTCDay() + 6) % 7
  return fourth - weekday * DAY_MS + (week - 1) * 7 * DAY_MS
}

/** How many ISO weeks `year` has (52 or 53). */
const isoWeeks = (year: number) => Math.round((isoWeekStart(year + 1, 1) - isoWeekStart(year, 1)) / (7 * DAY_MS))

/** An ISO day as its UTC milliseconds, or undefined when it is no day (2026-02-30). */
function dayMs(year: number, month: number, day: number): number | undefined {
  const ms = Date.UTC(year, month - 1, day)
  return new Date(ms).getUTCMonth() === month - 1 && new Date(ms).getUTCDate() === day ? ms : undefined
}

/** ADX's period: its first day, then how many days, months or years it lasts. */
function adxPeriodDays(text: string, match: RegExpExecArray): PeriodDays | { problem: string } {
  const [year, month, day, count] = match.slice(1, 5).map(Number)
  const unit = match[5]
  const start = dayMs(year, month, day)
  if (start === undefined) return { problem: `${text}: ${match[0].slice(0, 10)} is not a day` }
  if (count < 1) return { problem: `${text}: a duration of at least one ${unit === 'D' ? 'day' : unit === 'M' ? 'month' : 'year'}` }
  const end = unit === 'D' ? start + count * DAY_MS : unit === 'M' ? Date.UTC(year, month - 1 + count, day) : Date.UTC(year + count, month - 1, day)
  return { first: isoDay(start), last: isoDay(end - DAY_MS) }
}

/** `period`'s days, or why it is not a period this API reads. */
export function periodDays(period: string): PeriodDays | { problem: string } {
  const text = period.trim()
  // Date.UTC reads the years 0 to 99 as 1900 to 1999: no campaign is that old.
  if (/^\d{4}/.test(text) && Number(text.slice(0, 4)) < 1900) return { problem: `${text}: a year from 1900` }
  let match = /^(\d{4})-(\d{2})-(\d{2})\/P(\d{1,3})([DMY])$/.exec(text)
  if (match) return adxPeriodDays(text, match)
  match = /^(\d{4})(\d{2})(\d{2})$/.exec(text)
  if (match) {
    const [year, month, day] = match.slice(1).map(Number)
    const ms = dayMs(year, month, day)
    if (ms === undefined) return { problem: `${text} is not a day` }
    return { first: isoDay(ms), last: isoDay(ms) }
  }
  match = /^(\d{4})W(\d{1,2})$/.exec(text)
  if (match) {
    const [year, week] = match.slice(1).map(Number)
    if (week < 1 || week > isoWeeks(year)) return { problem: `${text}: ${year} has weeks 1 to ${isoWeeks(year)}` }
    const start = isoWeekStart(year, week)
    return { first: isoDay(start), last: isoDay(start + 6 * DAY_MS) }
  }
  match = /^(\d{4})(\d{2})$/.exec(text)
  if (match) {
    const [year, month] = match.slice(1).map(Number)
    if (month < 1 || month > 12) return { problem: `${text} is not a month` }
    return { first: isoDay(Date.UTC(year, month - 1, 1)), last: isoDay(Date.UTC(year, month, 1) - DAY_MS) }
  }
  match = /^(\d{4})Q([1-4])$/.exec(text)
  if (match) {
    const [year, quarter] = match.slice(1).map(Number)
    return { first: isoDay(Date.UTC(year, 3 * (quarter - 1), 1)), last: isoDay(Date.UTC(year, 3 * quarter, 1) - DAY_MS) }
  }
  match = /^(\d{4})$/.exec(text)
  if (match) {
    const year = Number(match[1])
    return { first: `${year}-01-01`, last: `${year}-12-31` }
  }
  return {
    problem: `${text} is not a period this API reads (daily 20261015, weekly 2026W42, monthly 202610, quarterly 2026Q4, yearly 2026, or ADX's 2026-10-01/P1M)`,
  }
}
