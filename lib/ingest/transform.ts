// Transform (ingestion §3): the stored file's rows become submissions, its codes are registered.
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { sql, type Kysely } from 'kysely'
import type { DB } from '../../schemas/index.js'
import { ApiError } from '../core/errors.js'
import { cellText, fileKind, readTable, type Cell } from './files.js'
import { checkColumns, type ConflictPolicy, type FileType } from './upload.js'
import { keepRows } from './duplicates.js'
import { parseDataDate, type DateOrder } from './dates.js'
import { noProgress, type Progress } from '../core/progress.js'
import type { NewSubmission } from './submissions.js'

export const CAP = 100
export const capped = <T>(items: T[]) => ({ count: items.length, items: items.slice(0, CAP) })

export interface Document {
  id: number
  doc_title: string
  file_type: string
  date_order: string
  conflict?: string
  docfile: string | null
  file_header: unknown
  created_by_id: number | null
  created_at: string
}

/** The role columns of a file type; every other header is a potential indicator (§2.1, §3.5). */
export function roleColumns(fileType: string): string[] {
  return fileType === 'campaign' ? ['geocode', 'unique_key', 'campaign'] : ['geocode', 'unique_key', 'data_date']
}

/**
 * Parses the stored file into submissions, one per row key, and registers the file's codes. The new
 * submissions are returned, not written: the refresh that follows in the same transaction writes them
 * once, with the status it gives each (instead of writing, reading back and updating them).
 */
export async function transform(db: Kysely<DB>, doc: Document, dataDir: string, progress: Progress = noProgress) {
  if (!doc.docfile) return undefined // the Data Entry document has no file
  let bytes: Buffer
  try {
    bytes = await readFile(join(dataDir, doc.docfile))
  } catch {
    throw new ApiError(422, 'UNREADABLE_FILE', 'There was an error with your file. Please check the upload and try again')
  }
  const table = await readTable(fileKind(doc.docfile), bytes)
  progress('rows parsed', table.rows.length, table.rows.length)
  const fileType = doc.file_type as FileType
  checkColumns(fileType, table.header)
  const column = (name: string) => table.header.indexOf(name)
  const [geocode, campaign, uniqueKey, dataDate] = ['geocode', 'campaign', 'unique_key', 'data_date'].map(column)

  // Row keys (§3.2, §3.3): one row kept per key, the cells its rows disagree on reported.
  const roles = roleColumns(fileType)
  const indicatorColumns = table.header.flatMap((h, i) => (roles.includes(h) ? [] : [i]))
  const keyOf = (row: Cell[]) =>
    uniqueKey >= 0 ? cellText(row[uniqueKey]) : row[geocode] === null || row[campaign] === null ? '' : cellText(row[geocode]) + cellText(row[campaign])
  const { kept, duplicates, emptyKeys, duplicateKeys } = keepRows(table, keyOf, indicatorColumns, (doc.conflict ?? 'last') as ConflictPolicy)
  const existing = new Set(
    (await db.selectFrom('source_submission').select('instance_guid').where('document_id', '=', doc.id).execute()).map((r) => r.instance_guid),
  )
  const rejected: Array<{ row_number: number; column: string; value: Cell; reason: string }> = []
  const fresh: NewSubmission[] = []
  // The codes of the document's submissions, those stored before included (the file is the same).
  const locationCodes = new Set<string>()
  const campaignCodes = new Set<string>()
  for (const [key, { index, rejectedColumns }] of [...kept].sort((a, b) => a[1].index - b[1].index)) {
    const row = table.rows[index]
    let data_date: string | null = null
    if (fileType === 'date') {
      const parsed = parseDataDate(row[dataDate], doc.date_order as DateOrder)
      if ('reason' in parsed) {
        if (!existing.has(key)) rejected.push({ row_number: index, column: 'data_date', value: row[dataDate], reason: parsed.reason })
        continue
      }
      data_date = parsed.date
    }
    const submission: NewSubmission = {
      instance_guid: key,
      row_number: index,
      data_date,
      location_code: cellText(row[geocode]),
      campaign_code: fileType === 'campaign' ? cellText(row[campaign]) : '',
      submission_json: Object.fromEntries(table.header.map((h, i) => [h, rejectedColumns.has(i) ? null : row[i]])),
    }
    if (submission.location_code) locationCodes.add(submission.location_code)
    if (submission.campaign_code) campaignCodes.add(submission.campaign_code)
    if (!existing.has(key)) fresh.push(submission)
  }

  // Code registration (§3.5): every code of the document, linked; unknown ones inserted unmapped.
  const codes: Record<'indicator' | 'location' | 'campaign', string[]> = {
    indicator: table.header.filter((h) => !roles.includes(h)),
    location: [...locationCodes].sort(),
    campaign: [...campaignCodes].sort(),
  }
  const created: Record<string, number> = { indicator: 0, location: 0, campaign: 0 }
  for (const [contentType, list] of Object.entries(codes)) {
    for (let i = 0; i < list.length; i += 1000) {
      const inserted = await db
        .insertInto('source_object_map')
        .values(list.slice(i, i + 1000).map((code) => ({ content_type: contentType, source_object_code: code })))
        .onConflict((oc) => oc.columns(['content_type', 'source_object_code']).doNothing())
        .returning('id')
        .execute()
      created[contentType] += inserted.length
    }
  }
  const listed = (list: string[]) => sql`(select jsonb_array_elements_text(${JSON.stringify(list)}::jsonb))`
  await sql`insert into doc_object_map (document_id, source_object_map_id)
    select ${doc.id}, m.id from source_object_map m
    where (m.content_type = 'indicator' and m.source_object_code in ${listed(codes.indicator)})
       or (m.content_type = 'location' and m.source_object_code in ${listed(codes.location)})
       or (m.content_type = 'campaign' and m.source_object_code in ${listed(codes.campaign)})
    on conflict (document_id, source_object_map_id) do nothing`.execute(db)
  return {
    stats: {
      submissions: {
        file_rows: table.rows.length,
        created: fresh.length,
        existing: [...kept.keys()].filter((k) => existing.has(k)).length,
        duplicate_keys: duplicateKeys,
        empty_keys: emptyKeys,
        rejected_rows: capped(rejected),
      },
      duplicates: capped(duplicates),
      codes: { new: created, linked: codes.indicator.length + codes.location.length + codes.campaign.length },
    },
    fresh,
  }
}
