// Rows of one file that share a key (ingestion §3.2, §3.3): which row becomes the submission, and the
// cells where those rows disagree, reported whatever the document's conflict policy
// (docs/decisions.md, "Conflicts inside one upload"). Rows are taken one at a time as the file is
// read: what is kept is a row per key, and for a key seen twice what its cells need to be compared.
import type { ConflictPolicy } from './columns.js'
import { cleanValue } from './clean.js'
import type { Cell } from './files.js'

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
  key: string
  index: number
  cells: Cell[]
  rejectedColumns: Set<number>
}

/** How a cell compares: its cleaned number, else its trimmed text (a value that cleaning refuses). */
function comparable(cell: Cell): string | undefined {
  const value = cleanValue(cell)
  if (value === undefined) return undefined
  return value === 'reject' ? `text:${String(cell).trim()}` : `number:${value}`
}

/** One column of a key seen on several rows: the rows holding a value, the first listed, whether two differ. */
interface ColumnState {
  holding: number
  listed: Array<{ index: number; value: Cell }>
  /** The first holding row's cells (the report names its key's parts). */
  firstRow?: Cell[]
  first?: string
  differs: boolean
}

interface KeyState {
  /** The first row, until a second one arrives (then its cells are in `columns`). */
  first?: { cells: Cell[]; index: number }
  kept: { cells: Cell[]; index: number }
  columns?: ColumnState[]
}

/**
 * Groups rows by `keyOf` (an empty key skips the row) as they are added: each key keeps its last row
 * (`last`, `reject`) or its first (`first`); under `reject` the cells its rows disagree on are not written.
 */
export class KeptRows {
  private readonly keys = new Map<string, KeyState>()
  private rows = 0
  private emptyKeys = 0

  constructor(
    private readonly header: string[],
    private readonly keyOf: (row: Cell[]) => string,
    private readonly indicatorColumns: number[],
    private readonly policy: ConflictPolicy,
  ) {}

  add(cells: Cell[], index: number) {
    this.rows++
    const key = this.keyOf(cells)
    if (!key) {
      this.emptyKeys++
      return
    }
    const state = this.keys.get(key)
    if (!state) {
      this.keys.set(key, { first: { cells, index }, kept: { cells, index } })
      return
    }
    if (!state.columns) {
      const { cells: firstCells, index: firstIndex } = state.first!
      state.columns = this.indicatorColumns.map(() => ({ holding: 0, listed: [], differs: false }))
      this.note(state.columns, firstCells, firstIndex)
      state.first = undefined
    }
    this.note(state.columns, cells, index)
    if (this.policy !== 'first') state.kept = { cells, index }
  }

  private note(columns: ColumnState[], cells: Cell[], index: number) {
    this.indicatorColumns.forEach((c, i) => {
      const value = comparable(cells[c])
      if (value === undefined) return
      const column = columns[i]
      column.holding++
      if (column.listed.length < LISTED_ROWS) column.listed.push({ index, value: cells[c] })
      if (column.first === undefined) {
        column.first = value
        column.firstRow = cells
      } else if (column.first !== value) column.differs = true
    })
  }

  /**
   * The kept rows in file order; the cells rows disagree on (`listed` of them, with the first holding
   * row's cells for naming the key), their count; rows with an empty key; rows a key had already.
   */
  finish(listed: number) {
    const kept: KeptRow[] = []
    const duplicates: Array<DuplicateCell & { firstRow: Cell[] }> = []
    let count = 0
    for (const [key, state] of this.keys) {
      const rejectedColumns = new Set<number>()
      state.columns?.forEach((column, i) => {
        if (!column.differs) return
        count++
        if (this.policy === 'reject') rejectedColumns.add(this.indicatorColumns[i])
        if (duplicates.length >= listed) return
        const rows = column.listed
        duplicates.push({
          key,
          row_numbers: rows.map((r) => r.index),
          column: this.header[this.indicatorColumns[i]],
          values: rows.map((r) => r.value),
          row_count: column.holding,
          firstRow: column.firstRow!,
        })
      })
      kept.push({ key, index: state.kept.index, cells: state.kept.cells, rejectedColumns })
    }
    kept.sort((a, b) => a.index - b.index)
    return { kept, duplicates, duplicateCount: count, emptyKeys: this.emptyKeys, duplicateKeys: this.rows - this.emptyKeys - this.keys.size }
  }
}
