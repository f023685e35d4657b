// Transform (ingestion §3): the stored file's rows become submissions, its codes are registered. The
// file is read and grouped in a worker thread (lib/ingest/transform-rows.ts); here, on the event loop,
// only what needs the database.
import { access } from 'node:fs/promises'
import { join } from 'node:path'
import { sql, type Kysely } from 'kysely'
import type { DB } from '../../schemas/index.js'
import { ApiError } from '../core/errors.js'
import { fileKind } from './files.js'
import type { ConflictPolicy, FileType } from './columns.js'
import { transformFile } from './parse.js'
import { noProgress, type Progress } from '../core/progress.js'
import { NdjsonLines } from './ndjson-lines.js'
import type { NewSubmission } from './submissions.js'
import type { DateRejection } from './transform-rows.js'

export { roleColumns } from './transform-rows.js'

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

/** The transform's new submissions: the worker's NDJSON lines whose key the document did not store before. */
export interface FreshSubmissions {
  lines: NdjsonLines<NewSubmission>
  /** The new lines' indexes, in row order; null when the document had no submission before (all are new). */
  indexes: Int32Array | null
  count: number
}

/** `task`'s file read in the parse thread, once it is known to be there. */
async function readNow(owner: string, task: Parameters<typeof transformFile>[1]): FileRead {
  try {
    await access(task.path)
  } catch {
    throw new ApiError(422, 'UNREADABLE_FILE', 'There was an error with your file. Please check the upload and try again')
  }
  return transformFile(owner, task)
}

/** New submissions `from` to `to` (excluded), in row order. */
export function freshSlice(fresh: FreshSubmissions, from: number, to: number): NewSubmission[] {
  if (!fresh.indexes) return fresh.lines.slice(from, to)
  return Array.from(fresh.indexes.subarray(from, Math.min(to, fresh.count)), (line) => fresh.lines.at(line))
}

/** Lines read and looked up a slice at a time. */
const SLICE = 10_000

/** Of `keys`, those the document stored before (its unique key on the row key finds each). */
async function storedKeys(db: Kysely<DB>, documentId: number, keys: string[]): Promise<Set<string>> {
  if (!keys.length) return new Set()
  const rows = await db
    .selectFrom('source_submission')
    .select('instance_guid')
    .where('document_id', '=', documentId)
    .where(sql<boolean>`instance_guid = any(${keys}::text[])`)
    .execute()
  return new Set(rows.map((r) => r.instance_guid))
}

/** Each slice of `lines` with the keys of it the document stored before, in order. */
async function* withStoredKeys<T>(db: Kysely<DB>, documentId: number, lines: NdjsonLines<T>, keyOf: (item: T) => string) {
  for (let from = 0; from < lines.length; from += SLICE) {
    const slice = lines.slice(from, from + SLICE)
    yield { from, slice, stored: await storedKeys(db, documentId, slice.map(keyOf)) }
  }
}

/** The submissions of the worker's NDJSON whose key was not stored before. */
async function freshSubmissions(db: Kysely<DB>, documentId: number, lines: NdjsonLines<NewSubmission>): Promise<FreshSubmissions> {
  const anyStored = await db.selectFrom('source_submission').select('id').where('document_id', '=', documentId).limit(1).executeTakeFirst()
  if (!anyStored) return { lines, indexes: null, count: lines.length }
  const indexes: number[] = []
  for await (const { from, slice, stored } of withStoredKeys(db, documentId, lines, (s) => s.instance_guid))
    slice.forEach((submission, i) => {
      if (!stored.has(submission.instance_guid)) indexes.push(from + i)
    })
  return { lines, indexes: Int32Array.from(indexes), count: indexes.length }
}

/** The unreadable dates reported: those of keys not stored before (§3.4), counted, the first CAP listed. */
async function rejectedDates(db: Kysely<DB>, documentId: number, lines: NdjsonLines<DateRejection>) {
  const items: Array<Omit<DateRejection, 'key'>> = []
  let count = 0
  for await (const { slice, stored } of withStoredKeys(db, documentId, lines, (r) => r.key))
    for (const { key, ...rejection } of slice) {
      if (stored.has(key)) continue
      count++
      if (items.length < CAP) items.push(rejection)
    }
  return { count, items }
}

/**
 * Parses the stored file into submissions, one per row key, and registers the file's codes. The new
 * submissions are returned, not written: the refresh that follows in the same transaction writes them
 * once, with the status it gives each (instead of writing, reading back and updating them).
 */
/** How `doc`'s file is read: the parse thread's task, and whose work it counts as. */
function readingOf(doc: Document & { docfile: string }, dataDir: string) {
  const fileType = doc.file_type as FileType
  const conflict = (doc.conflict ?? 'last') as ConflictPolicy
  const task = { path: join(dataDir, doc.docfile), kind: fileKind(doc.docfile), fileType, dateOrder: doc.date_order, conflict, listed: CAP }
  const owner = `user ${doc.created_by_id}`
  return { owner, task, key: JSON.stringify([owner, task]) }
}

type FileRead = ReturnType<typeof transformFile>

/** Files read ahead of their transform's transaction, by what was read and how; each taken once. */
const readAhead = new Map<string, FileRead>()

/**
 * Reads `doc`'s file in the parse thread, before the transform's transaction opens: on the
 * embedded database a transaction holds the one session, and the seconds of reading inside it held
 * every other request's statements. The transform takes the result if it reads the same file the same
 * way (the document's settings may change in between: then it reads again). Returns the function that
 * forgets it, for when the transform did not run.
 */
export async function readFileAhead(doc: Document, dataDir: string): Promise<() => void> {
  if (!doc.docfile) return () => {}
  const { owner, task, key } = readingOf(doc as Document & { docfile: string }, dataDir)
  const read = access(task.path).then(() => transformFile(owner, task))
  readAhead.set(key, read)
  // Read when the transaction opens; a failure is the transform's to report, when it reads the file itself.
  await read.catch(() => {})
  return () => {
    if (readAhead.get(key) === read) readAhead.delete(key)
  }
}

export async function transform(db: Kysely<DB>, doc: Document, dataDir: string, progress: Progress = noProgress) {
  if (!doc.docfile) return undefined // the Data Entry document has no file
  const { owner, task, key } = readingOf(doc as Document & { docfile: string }, dataDir)
  const ahead = readAhead.get(key)
  readAhead.delete(key)
  const read = ahead ? await ahead.catch(() => readNow(owner, task)) : await readNow(owner, task)
  progress('rows parsed', read.rows, read.rows)
  const fresh = await freshSubmissions(db, doc.id, await NdjsonLines.of<NewSubmission>(read.submissions))
  const dateLines = await NdjsonLines.of<DateRejection>(read.rejectedDates)
  const valid = read.keptKeys - dateLines.length
  const rejected = await rejectedDates(db, doc.id, dateLines)
  const codes = read.codes

  // Code registration (§3.5): every code of the document, linked; unknown ones inserted unmapped.
  const created: Record<string, number> = { indicator: 0, location: 0, campaign: 0 }
  for (const [contentType, list] of Object.entries(codes) as Array<[string, string[]]>) {
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
        file_rows: read.rows,
        created: fresh.count,
        existing: valid - fresh.count + (dateLines.length - rejected.count),
        duplicate_keys: read.duplicateKeys,
        empty_keys: read.emptyKeys,
        rejected_rows: rejected,
      },
      duplicates: read.duplicates,
      codes: { new: created, linked: codes.indicator.length + codes.location.length + codes.campaign.length },
    },
    fresh,
  }
}
