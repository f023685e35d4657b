// Reading uploaded files (ingestion §2): CSV (any line ending, BOM, RFC 4180 quoting, UTF-8 or
// Windows-1252) and XLSX (first sheet), into a normalised header and rows of cells.
import { parse } from 'csv-parse/sync'
import type ExcelJS from 'exceljs'
import { XLSX_MAX_UNCOMPRESSED_DEFAULT } from '../core/config.js'
import { ApiError } from '../core/errors.js'
import { assertZipWithin } from './zip-guard.js'

export type Cell = string | number | boolean | null

export interface Table {
  header: string[]
  /** Data rows, blank rows removed; cells aligned with `header`. */
  rows: Cell[][]
}

export const emptyFile = () => new ApiError(422, 'EMPTY_FILE', 'file is empty please check the upload and try again')
export const unreadableFile = () => new ApiError(422, 'UNREADABLE_FILE', 'There was an error with your file. Please check the upload and try again')

export type FileKind = 'csv' | 'xlsx'

/** More columns than any real upload has: a header that wide is a mistake or an attack. */
export const MAX_COLUMNS = 2_000

export const tooManyColumns = (count: number) => new ApiError(422, 'TOO_MANY_COLUMNS', `The file has ${count} columns; at most ${MAX_COLUMNS} are accepted`)

/**
 * Uploads carry values, not formulas. A CSV cell that starts with `=` would run as a formula in a
 * spreadsheet that opens an export of it; an XLSX formula is read through its saved result, and one
 * without a saved result has no value to read.
 */
export const formulaCell = (row: number, column: string, detail: string) =>
  new ApiError(422, 'FORMULA_CELL', `Row ${row}, column ${column}: ${detail}; upload values, not formulas`, { row, column })

export function fileKind(title: string, fallbackName?: string): FileKind {
  const ext = (name: string) => (name.includes('.') ? name.slice(name.lastIndexOf('.') + 1).toLowerCase() : '')
  const extension = ext(title) || (fallbackName ? ext(fallbackName) : '')
  if (extension === 'csv' || extension === 'xlsx') return extension
  throw new ApiError(422, 'UNSUPPORTED_FILE_TYPE', `Unsupported file type "${extension}": upload a .csv or .xlsx file`)
}

/** §2.4: trimmed names, `column_<n>` for empty ones, `.1`, `.2`… for repeats (as pandas did). */
export function normaliseHeader(raw: Cell[]): string[] {
  const seen = new Map<string, number>()
  return raw.map((cell, i) => {
    let name = cell === null || cell === undefined ? '' : String(cell).trim()
    if (!name) name = `column_${i + 1}`
    const count = seen.get(name) ?? 0
    seen.set(name, count + 1)
    return count ? `${name}.${count}` : name
  })
}

export function cleanCell(cell: Cell | undefined): Cell {
  if (cell === undefined || cell === null) return null
  if (typeof cell === 'string') {
    const trimmed = cell.trim()
    return trimmed === '' ? null : trimmed
  }
  return cell
}

function toTable(records: Cell[][]): Table {
  const nonBlank = records.filter((r) => r.some((c) => cleanCell(c) !== null))
  if (!nonBlank.length) throw emptyFile()
  const width = nonBlank.reduce((widest, r) => Math.max(widest, r.length), 0)
  if (width > MAX_COLUMNS) throw tooManyColumns(width)
  const header = normaliseHeader(nonBlank[0])
  const rows = nonBlank.slice(1).map((r) => header.map((_, i) => cleanCell(r[i])))
  if (!rows.length) throw emptyFile()
  return { header, rows }
}

function decodeText(bytes: Buffer): string {
  let text: string
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch {
    text = new TextDecoder('windows-1252').decode(bytes)
  }
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text
}

export function readCsv(bytes: Buffer): Table {
  if (!bytes.length) throw emptyFile()
  let records: string[][]
  try {
    records = parse(decodeText(bytes), {
      record_delimiter: ['\r\n', '\n', '\r'],
      relax_column_count: true,
      skip_empty_lines: true,
    }) as string[][]
  } catch {
    throw unreadableFile()
  }
  const table = toTable(records)
  table.rows.forEach((row, r) =>
    row.forEach((cell, c) => {
      if (typeof cell === 'string' && cell.charCodeAt(0) === 61 /* = */) {
        throw formulaCell(r + 2, table.header[c], `"${cell.slice(0, 40)}" is a formula`)
      }
    }),
  )
  return table
}

const pad = (n: number) => String(n).padStart(2, '0')
const isoDate = (d: Date) => `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`

function xlsxValue(cell: ExcelJS.Cell, header: () => string): Cell {
  if (cell.isMerged && cell.master !== cell) return null
  let value = cell.value as unknown
  if (value && typeof value === 'object' && ('formula' in value || 'sharedFormula' in value)) {
    value = (value as { result?: unknown }).result
    if (value === undefined) throw formulaCell(Number(cell.row), header(), 'a formula without a saved value')
  }
  if (value === null || value === undefined) return null
  if (value instanceof Date) return isoDate(value)
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'string') return value
  if (typeof value === 'object') {
    const v = value as { richText?: Array<{ text: string }>; text?: string; error?: string; hyperlink?: string }
    if (v.richText) return v.richText.map((r) => r.text).join('')
    if (v.error) return null
    if (typeof v.text === 'string') return v.text
  }
  return null
}

export async function readXlsx(bytes: Buffer, maxUncompressed = XLSX_MAX_UNCOMPRESSED_DEFAULT): Promise<Table> {
  if (!bytes.length) throw emptyFile()
  await assertZipWithin(bytes, maxUncompressed, unreadableFile)
  // Loaded on the first XLSX: it is a fifth of the server's start-up imports.
  const { default: Excel } = await import('exceljs')
  const workbook = new Excel.Workbook()
  try {
    await workbook.xlsx.load(bytes as unknown as ArrayBuffer)
  } catch {
    throw unreadableFile()
  }
  const sheet = workbook.worksheets[0]
  if (!sheet) throw unreadableFile()
  const records: Cell[][] = []
  sheet.eachRow({ includeEmpty: false }, (row) => {
    const cells: Cell[] = []
    for (let c = 1; c <= row.cellCount; c++) cells.push(xlsxValue(row.getCell(c), () => String(records[0]?.[c - 1] ?? `column_${c}`)))
    records.push(cells)
  })
  return toTable(records)
}

export async function readTable(kind: FileKind, bytes: Buffer, maxUncompressed?: number): Promise<Table> {
  return kind === 'csv' ? readCsv(bytes) : readXlsx(bytes, maxUncompressed)
}

/** A cell as code text (§2.3): integers without a decimal point, other numbers as String(n). */
export function cellText(cell: Cell): string {
  return cell === null ? '' : String(cell)
}
