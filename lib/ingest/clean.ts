// Cell cleaning (ingestion §5.1): numbers, thousands separators, percentages, yes/no; anything else
// is rejected as "not a number".
import type { Cell } from './files.js'

const NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/
const THOUSANDS = /^[+-]?\d{1,3}(,\d{3})+(\.\d+)?$/

function numeric(text: string): number | undefined {
  if (NUMBER.test(text)) return Number(text)
  if (THOUSANDS.test(text)) return Number(text.replace(/,/g, ''))
  return undefined
}

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
    if (lower === 'yes' || lower === 'true') value = 1
    else if (lower === 'no' || lower === 'false') value = 0
  }
  return value !== undefined && Number.isFinite(value) ? value : 'reject'
}
