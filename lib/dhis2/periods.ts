// DHIS2's periods (its Web API's "Date and period format"): each the days it covers, first and last,
// as ISO dates. Daily 20261015, weekly 2026W42 (ISO weeks, Monday first), monthly 202610, quarterly
// 2026Q4, yearly 2026. Others (six-monthly, financial years, bi-weekly…) are refused by name.

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

/** `period`'s days, or why it is not a period this API reads. */
export function periodDays(period: string): PeriodDays | { problem: string } {
  const text = period.trim()
  // Date.UTC reads the years 0 to 99 as 1900 to 1999: no campaign is that old.
  if (/^\d{4}/.test(text) && Number(text.slice(0, 4)) < 1900) return { problem: `${text}: a year from 1900` }
  let match = /^(\d{4})(\d{2})(\d{2})$/.exec(text)
  if (match) {
    const [year, month, day] = match.slice(1).map(Number)
    const ms = Date.UTC(year, month - 1, day)
    if (new Date(ms).getUTCMonth() !== month - 1 || new Date(ms).getUTCDate() !== day) return { problem: `${text} is not a day` }
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
  return { problem: `${text} is not a period this API reads (daily 20261015, weekly 2026W42, monthly 202610, quarterly 2026Q4, yearly 2026)` }
}
