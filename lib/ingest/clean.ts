// Cell cleaning (ingestion §5.1): numbers, thousands separators, percentages, yes/no, and the French
// forms of each ("1 234,5", "4,38 %", oui/non) where no English reading exists; anything else is
// rejected as "not a number".
import type { Cell } from './files.js'

const NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/
const THOUSANDS = /^[+-]?\d{1,3}(,\d{3})+(\.\d+)?$/
/** French: spaces (plain, no-break or narrow no-break) between thousands, a decimal comma ("1 234,5"). */
const SPACED_THOUSANDS = /^[+-]?\d{1,3}([ \u00a0\u202f]\d{3})+(,\d+)?$/
/** A decimal comma that no thousands separator can be: not followed by exactly three digits ("4,38"; "1,500" is 1500). */
const DECIMAL_COMMA = /^[+-]?\d+,(\d{1,2}|\d{4,})$/

function numeric(text: string): number | undefined {
  if (NUMBER.test(text)) return Number(text)
  if (THOUSANDS.test(text)) return Number(text.replace(/,/g, ''))
  if (SPACED_THOUSANDS.test(text) || DECIMAL_COMMA.test(text)) return Number(text.replace(/[ \u00a0\u202f]/g, '').replace(',', '.'))
  return undefined
}

const YES = new Set(['yes', 'true', 'oui', 'vrai'])
const NO = new Set(['no', 'false', 'non', 'faux'])

/** undefined = no value (skip silently); 'reject' = not a number; else the value. */
export function cleanValue(cell: Cell): number | undefined | 'reject' {
  if (cell === null) return undefined
  if (typeof cell === 'number') return Number.isFinite(cell) ? cell : 'reject'
  if (typeof cell === 'boolean') return cell ? 1 : 0
  const text = cell.trim()
  if (!text) return undefined
  let value = numeric(text)
  if (value === undefined) {
    const percent = /^(.*?)\s*%$/.exec(text)
    const base = percent ? numeric(percent[1]) : undefined
    if (base !== undefined) value = base / 100
  }
  if (value === undefined) {
    const lower = text.toLowerCase()
    if (YES.has(lower)) value = 1
    else if (NO.has(lower)) value = 0
  }
  return value !== undefined && Number.isFinite(value) ? value : 'reject'
}
