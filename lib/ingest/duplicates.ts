// Rows of one file that share a key (ingestion §3.2, §3.3): which row becomes the submission, and the
// cells where those rows disagree, reported whatever the document's conflict policy
// (docs/decisions.md, "Conflicts inside one upload").
import type { ConflictPolicy } from './upload.js'
import { cleanValue } from './clean.js'
import type { Cell, Table } from './files.js'

/**
 * Two or more different values for one cell: the row key, the column, and the rows holding a value
 * (`row_count`), the first LISTED_ROWS of them listed with their values (0-based data rows).
 */
export interface DuplicateCell {
  key: string
  row_numbers: number[]
  column: string
  values: Cell[]
  row_count: number
}

/**
 * The rows listed for one cell: a national file can repeat a key on thousands of rows, and the
 * report (kept with the job, drawn on the upload page) stays the size of what a person reads.
 */
export const LISTED_ROWS = 20

/** The row a key keeps, and its columns that are written empty because its rows disagree (`reject`). */
export interface KeptRow {
  index: number
  rejectedColumns: Set<number>
}

/** How a cell compares: its cleaned number, else its trimmed text (a value that cleaning refuses). */
function comparable(cell: Cell): string | undefined {
  const value = cleanValue(cell)
  if (value === undefined) return undefined
  return value === 'reject' ? `text:${String(cell).trim()}` : `number:${value}`
}

/** The cells of `rows` (indices into `table.rows`) where two of them hold different values. */
function disagreements(table: Table, key: string, rows: number[], indicatorColumns: number[]): Array<DuplicateCell & { columnIndex: number }> {
  const found: Array<DuplicateCell & { columnIndex: number }> = []
  for (const columnIndex of indicatorColumns) {
    const holding = rows.filter((index) => comparable(table.rows[index][columnIndex]) !== undefined)
    const distinct = new Set(holding.map((index) => comparable(table.rows[index][columnIndex])))
    if (distinct.size < 2) continue
    const listed = holding.slice(0, LISTED_ROWS)
    found.push({
      key,
      row_numbers: listed,
      column: table.header[columnIndex],
      values: listed.map((index) => table.rows[index][columnIndex]),
      row_count: holding.length,
      columnIndex,
    })
  }
  return found
}

/**
 * Groups the rows by `keyOf` (an empty key skips the row): each key keeps its last row (`last`,
 * `reject`) or its first (`first`); under `reject` the cells its rows disagree on are not written.
 */
export function keepRows(table: Table, keyOf: (row: Cell[]) => string, indicatorColumns: number[], policy: ConflictPolicy) {
  let emptyKeys = 0
  const rowsByKey = new Map<string, number[]>()
  table.rows.forEach((row, index) => {
    const key = keyOf(row)
    if (!key) emptyKeys++
    else if (rowsByKey.has(key)) rowsByKey.get(key)!.push(index)
    else rowsByKey.set(key, [index])
  })
  const kept = new Map<string, KeptRow>()
  const duplicates: DuplicateCell[] = []
  for (const [key, rows] of rowsByKey) {
    const index = policy === 'first' ? rows[0] : rows[rows.length - 1]
    const disagreeing = rows.length > 1 ? disagreements(table, key, rows, indicatorColumns) : []
    for (const { columnIndex: _, ...cell } of disagreeing) duplicates.push(cell)
    kept.set(key, { index, rejectedColumns: new Set(policy === 'reject' ? disagreeing.map((d) => d.columnIndex) : []) })
  }
  return { kept, duplicates, emptyKeys, duplicateKeys: table.rows.length - emptyKeys - kept.size }
}
