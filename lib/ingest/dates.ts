// `data_date` cells of date files (ingestion §3.4).
import { isCalendarDate } from '../core/values.js'

export type DateOrder = 'MDY' | 'DMY' | 'YMD'

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec']
const pad = (n: number) => String(n).padStart(2, '0')
const iso = (y: number, m: number, d: number) => (isCalendarDate(y, m, d) ? `${y}-${pad(m)}-${pad(d)}` : undefined)

function fullYear(text: string): number {
  const y = Number(text)
  if (text.length > 2) return y
  return y <= 68 ? 2000 + y : 1900 + y
}

function monthNumber(name: string): number | undefined {
  const i = MONTHS.indexOf(name.slice(0, 3).toLowerCase())
  if (i < 0) return undefined
  const full = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'][i]
  const lower = name.toLowerCase().replace(/\.$/, '')
  return lower.length === 3 || lower === full || (lower === 'sept' && i === 8) ? i + 1 : undefined
}

/** The calendar date of a cell, or a reason it is rejected. */
export function parseDataDate(cell: string | number | boolean | null, order: DateOrder): { date: string } | { reason: string } {
  if (cell === null || cell === '') return { reason: 'empty date' }
  const text = String(cell).trim()
  let m = /^(\d{4})[-/](\d{1,2})[-/](\d{1,2})(?:[T ].*)?$/.exec(text)
  if (m) {
    const date = iso(+m[1], +m[2], +m[3])
    return date ? { date } : { reason: 'unparseable date' }
  }
  m = /^(\d{1,4})[-/.](\d{1,2})[-/.](\d{1,4})$/.exec(text)
  if (m) {
    const [a, b, c] = [m[1], m[2], m[3]]
    if (a.length === 4) {
      const date = iso(+a, +b, +c)
      return date ? { date } : { reason: 'unparseable date' }
    }
    const readings: Record<DateOrder, () => string | undefined> = {
      MDY: () => iso(fullYear(c), +a, +b),
      DMY: () => iso(fullYear(c), +b, +a),
      YMD: () => iso(fullYear(a), +b, +c),
    }
    // The document's order first; for MDY/DMY the day and month swapped if that is the only valid one.
    const date = readings[order]() ?? (order === 'MDY' ? readings.DMY() : order === 'DMY' ? readings.MDY() : undefined)
    return date ? { date } : { reason: 'unparseable date' }
  }
  m = /^(\d{1,2})[-\s]([A-Za-z]+\.?)[-\s,]+(\d{2,4})$/.exec(text)
  if (m) {
    const month = monthNumber(m[2])
    const date = month && iso(fullYear(m[3]), month, +m[1])
    return date ? { date } : { reason: 'unparseable date' }
  }
  m = /^([A-Za-z]+\.?)\s+(\d{1,2}),?\s+(\d{2,4})$/.exec(text)
  if (m) {
    const month = monthNumber(m[1])
    const date = month && iso(fullYear(m[3]), month, +m[2])
    return date ? { date } : { reason: 'unparseable date' }
  }
  return { reason: 'unparseable date' }
}
