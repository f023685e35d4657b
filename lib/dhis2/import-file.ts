// A data value set's values as the file an upload would be: a campaign file (geocode, campaign, a
// column per data element) for values at campaigns, a date file (geocode, data_date, unique_key, a
// column per data element) for dated values. The pipeline then reads it as any upload.
import { stringify } from 'csv-stringify/sync'
import { badRequest } from '../core/errors.js'
import { MAX_COLUMNS } from '../ingest/files.js'
import type { DataValue } from './data-values.js'
import type { Conflict } from './import-places.js'

/** The kind of file: the upload's `file_type`. */
export type FileKind = 'campaign' | 'date'

/** The role columns of each kind of file, before its data elements. */
const ROLE_COLUMNS: Record<FileKind, string[]> = { campaign: ['geocode', 'campaign'], date: ['geocode', 'data_date', 'unique_key'] }

/** The most cells a data value set's file may have: places and periods × data elements. */
const MAX_CELLS = 1_000_000

/** A file's line: its organisation unit and where its values go (a campaign's code, or a day), in the file's order. */
export interface FileRow {
  orgUnit: string
  place: string
}

/**
 * The values as a file of `kind`: a line per organisation unit and place (`placeName`: a campaign's
 * code, or a day), a column per data element, and the file's rows in order; a 400 when that table would
 * be too large to write (it is dense). A value a later one of the same key replaces is a conflict: the
 * last is kept.
 */
export function valuesFile(kind: FileKind, values: DataValue[], placeName: (v: DataValue) => string, conflict: Conflict) {
  const elements = [...new Set(values.map((v) => v.dataElement))]
  const lines = new Map<string, { row: FileRow; cells: Record<string, string>; sent: Map<string, number> }>()
  for (const value of values) {
    const place = placeName(value)
    const key = JSON.stringify([value.orgUnit, place])
    const roles: Record<string, string> =
      kind === 'campaign' ? { geocode: value.orgUnit, campaign: place } : { geocode: value.orgUnit, data_date: place, unique_key: key }
    const line = lines.get(key) ?? { row: { orgUnit: value.orgUnit, place }, cells: roles, sent: new Map<string, number>() }
    const earlier = line.sent.get(value.dataElement)
    if (earlier !== undefined)
      conflict(value.dataElement, `dataElement ${value.dataElement}: a later value in this set has the same place and period; the last is kept`, earlier)
    line.cells[value.dataElement] = value.value
    line.sent.set(value.dataElement, value.index)
    lines.set(key, line)
  }
  // An upload's columns, less the file's role columns.
  const mostElements = MAX_COLUMNS - ROLE_COLUMNS[kind].length
  if (elements.length > mostElements || lines.size * elements.length > MAX_CELLS) {
    throw badRequest(
      'DATA_VALUE_SET_TOO_WIDE',
      `${lines.size} places and periods × ${elements.length} data elements: at most ${mostElements} data elements and ${MAX_CELLS} cells a set; send it in parts by data element`,
    )
  }
  const header = [...ROLE_COLUMNS[kind], ...elements]
  const text = stringify(
    [...lines.values()].map((l) => l.cells),
    { header: true, columns: header },
  )
  return { text, header, rows: [...lines.values()].map((l) => l.row) }
}
