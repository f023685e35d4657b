// The transform's in-memory phase (ingestion §3.2–§3.4), run in a worker thread (lib/ingest/parse.ts):
// the stored file read row by row, one row kept per key, the cells its rows disagree on, the dates
// read, the codes collected, and the submissions as NDJSON bytes, handed back without a copy.
import { checkColumns, type ConflictPolicy, type FileType, LABEL_COLUMN } from './columns.js'
import { cellText, type Cell, type FileKind } from './files.js'
import { KeptRows } from './duplicates.js'
import { parseDataDate, type DateOrder } from './dates.js'
import { readRows } from './rows.js'
import type { NewSubmission } from './submissions.js'

/** The role columns of a file type and the label column; every other header is a potential indicator (§2.1, §3.5). */
export function roleColumns(fileType: string): string[] {
  return fileType === 'campaign' ? ['geocode', 'unique_key', 'campaign', LABEL_COLUMN] : ['geocode', 'unique_key', 'data_date', LABEL_COLUMN]
}

export interface TransformRowsTask {
  path: string
  kind: FileKind
  fileType: FileType
  dateOrder: string
  conflict: ConflictPolicy
  /** Disagreeing cells listed in the report (the rest counted). */
  listed: number
}

/** A kept row whose date cannot be read: reported unless its key was stored before (§3.4). */
export type DateRejection = { key: string; row_number: number; column: 'data_date'; value: Cell; reason: string }

/** The file read and grouped: a reader of the header's columns, then every row into `kept`. */
async function groupRows(task: TransformRowsTask) {
  let kept: KeptRows | undefined
  let columns: Record<'geocode' | 'campaign' | 'uniqueKey' | 'dataDate', number> | undefined
  let header: string[] = []
  const rows = await readRows(task.path, task.kind, {
    header(names) {
      header = names
      checkColumns(task.fileType, names)
      const at = (name: string) => names.indexOf(name)
      const c = { geocode: at('geocode'), campaign: at('campaign'), uniqueKey: at('unique_key'), dataDate: at('data_date') }
      columns = c
      const roles = roleColumns(task.fileType)
      const indicatorColumns = names.flatMap((h, i) => (roles.includes(h) ? [] : [i]))
      const keyOf = (row: Cell[]) =>
        c.uniqueKey >= 0
          ? cellText(row[c.uniqueKey])
          : row[c.geocode] === null || row[c.campaign] === null
            ? ''
            : cellText(row[c.geocode]) + cellText(row[c.campaign])
      kept = new KeptRows(names, keyOf, indicatorColumns, task.conflict)
    },
    row: (cells, index) => kept!.add(cells, index),
  })
  return { header, rows, columns: columns!, grouped: kept!.finish(task.listed) }
}

export async function transformRows(task: TransformRowsTask) {
  const { header, rows, columns, grouped } = await groupRows(task)
  const { geocode, campaign, uniqueKey, dataDate } = columns
  // A listed cell's key in its parts: the key itself runs the geocode and the campaign together.
  const keyParts = (row: Cell[]) =>
    task.fileType === 'campaign'
      ? { location_code: cellText(row[geocode]), campaign_code: cellText(row[campaign]) }
      : { location_code: cellText(row[geocode]), unique_key: cellText(row[uniqueKey]) }
  const rejectedDates: string[] = []
  const locationCodes = new Set<string>()
  const campaignCodes = new Set<string>()
  const lines: string[] = []
  for (const { key, index, cells, rejectedColumns } of grouped.kept) {
    let data_date: string | null = null
    if (task.fileType === 'date') {
      const parsed = parseDataDate(cells[dataDate], task.dateOrder as DateOrder)
      if ('reason' in parsed) {
        const rejection: DateRejection = { key, row_number: index, column: 'data_date', value: cells[dataDate], reason: parsed.reason }
        rejectedDates.push(JSON.stringify(rejection))
        continue
      }
      data_date = parsed.date
    }
    const submission: NewSubmission = {
      instance_guid: key,
      row_number: index,
      data_date,
      location_code: cellText(cells[geocode]),
      campaign_code: task.fileType === 'campaign' ? cellText(cells[campaign]) : '',
      submission_json: Object.fromEntries(header.map((h, i) => [h, rejectedColumns.has(i) ? null : cells[i]])),
    }
    if (submission.location_code) locationCodes.add(submission.location_code)
    if (submission.campaign_code) campaignCodes.add(submission.campaign_code)
    lines.push(JSON.stringify(submission))
  }
  const roles = roleColumns(task.fileType)
  return {
    header,
    rows,
    submissions: new TextEncoder().encode(lines.join('\n')),
    keptKeys: grouped.kept.length,
    rejectedDates: new TextEncoder().encode(rejectedDates.join('\n')),
    duplicates: { count: grouped.duplicateCount, items: grouped.duplicates.map(({ firstRow, ...d }) => ({ ...d, ...keyParts(firstRow) })) },
    emptyKeys: grouped.emptyKeys,
    duplicateKeys: grouped.duplicateKeys,
    codes: { indicator: header.filter((h) => !roles.includes(h)), location: [...locationCodes].sort(), campaign: [...campaignCodes].sort() },
  }
}

export type TransformedRows = Awaited<ReturnType<typeof transformRows>>
