// A document's submissions for the refresh (ingestion §3, §5): those stored before are read and their
// status updated; those the transform has just made are written once, with the status the refresh
// gives each, instead of being written, read back and updated.
import { sql, type Kysely } from 'kysely'
import type { DB } from '../../schemas/index.js'
import { copyInto, copyLine, CopyRows, rowsPerCopy } from '../data/copy.js'
import type { Cell } from './files.js'

/** A submission the transform made, not yet written. */
export interface NewSubmission {
  instance_guid: string
  row_number: number
  data_date: string | null
  location_code: string
  campaign_code: string
  submission_json: Record<string, Cell>
}

/** A submission as the refresh reads it. */
export type Submission = { id: number; row_number: number; location_code: string; campaign_code: string; data_date: string | null; submission_json: unknown }

type CreatedSubmission = NewSubmission & { id: number }

/** A submission's process status in the database, by the name the refresh counts it under. */
const STATUS_NAMES = {
  processed: 'PROCESSED',
  missing_location: 'MISSING_LOCATION',
  missing_campaign: 'MISSING_CAMPAIGN',
  missing_date: 'MISSING_DATE',
  location_forbidden: 'LOCATION_FORBIDDEN',
} as const

export type Statuses = Record<keyof typeof STATUS_NAMES, number[]>

/** A slice of the document's submissions, in row order: `all`, of which `stored` were read and `created` are new, with ids drawn. */
export interface SubmissionBatch {
  all: Submission[]
  stored: Submission[]
  created: CreatedSubmission[]
}

/** Submissions read, decoded and written a batch at a time: a national file's are never all in memory at once. */
export const submissionBatch = { rows: 20_000 }

/** How many submissions the refresh goes through: those stored before and the new ones. */
export async function submissionCount(db: Kysely<DB>, documentId: number, fresh: number) {
  const { n } = await db
    .selectFrom('source_submission')
    .select((e) => e.fn.countAll<number>().as('n'))
    .where('document_id', '=', documentId)
    .executeTakeFirstOrThrow()
  return Number(n) + fresh
}

/**
 * The id of the document's last stored submission (null: none), read on the document's index. Written
 * as `max(id) … where document_id = …`, the planner walks the primary key backwards until a row of the
 * document turns up: for a new document, every submission of every other one (0.3–0.8 s a correction
 * at 30 M values, bench:scale). The subquery (`offset 0` keeps it one) is read whole, on its index.
 */
export const lastStoredSubmission = (documentId: number) =>
  sql<{ last: number | null }>`select max(id) as last from (select id from source_submission where document_id = ${documentId} offset 0) own`

/**
 * The document's submissions in row order, a batch at a time: those stored before read a page at a
 * time (by row number, on their index), merged with the transform's new ones (`freshSlice`, in row order),
 * which are given ids as their batch comes. Stored rows are those there before the first batch: the new
 * ones this refresh writes as it goes are not read back.
 */
export async function* submissionBatches(
  db: Kysely<DB>,
  documentId: number,
  fresh: { count: number; slice: (from: number, to: number) => NewSubmission[] },
  size = submissionBatch.rows,
): AsyncGenerator<SubmissionBatch> {
  const { last } = (await lastStoredSubmission(documentId).execute(db)).rows[0]
  let storedAfter = -1
  let storedDone = last === null
  let freshNext = 0
  let stored: Submission[] = []
  let created: NewSubmission[] = []
  for (;;) {
    if (!stored.length && !storedDone) {
      stored = await db
        .selectFrom('source_submission')
        .select(['id', 'row_number', 'location_code', 'campaign_code', 'data_date', 'submission_json'])
        .where('document_id', '=', documentId)
        .where('id', '<=', Number(last))
        .where('row_number', '>', storedAfter)
        .orderBy('row_number')
        .limit(size)
        .execute()
      storedDone = stored.length < size
      if (stored.length) storedAfter = stored[stored.length - 1].row_number
    }
    if (!created.length && freshNext < fresh.count) {
      created = fresh.slice(freshNext, freshNext + size)
      freshNext += created.length
    }
    if (!stored.length && !created.length) return
    // The batch: rows in order from both, up to `size`, and up to where a source must be read again.
    const fromStored: boolean[] = []
    let s = 0
    let c = 0
    while (fromStored.length < size && (s < stored.length || c < created.length)) {
      if ((s === stored.length && !storedDone) || (c === created.length && freshNext < fresh.count)) break
      const takeStored = c === created.length || (s < stored.length && stored[s].row_number < created[c].row_number)
      fromStored.push(takeStored)
      if (takeStored) s++
      else c++
    }
    const batch = { stored: stored.slice(0, s), created: await withIds(db, created.slice(0, c)) }
    stored = stored.slice(s)
    created = created.slice(c)
    let [nextStored, nextCreated] = [0, 0]
    yield { ...batch, all: fromStored.map((isStored) => (isStored ? batch.stored[nextStored++] : batch.created[nextCreated++])) }
  }
}

/** `fresh` with ids drawn from the table's sequence, in row order (one `nextval` a row, as the column's default would call: 77–97 ms for 20,000 ids). */
async function withIds(db: Kysely<DB>, fresh: NewSubmission[]): Promise<CreatedSubmission[]> {
  if (!fresh.length) return []
  const { rows } = await sql<{ id: number }>`select nextval(pg_get_serial_sequence('source_submission', 'id'))::int as id
    from generate_series(1, ${fresh.length}::int)`.execute(db)
  const ids = rows.map((r) => r.id).sort((a, b) => a - b)
  return fresh.map((submission, i) => ({ ...submission, id: ids[i] }))
}

/** What a new submission is written with; the rest are its defaults. */
const SUBMISSION_COLUMNS = [
  'id',
  'document_id',
  'instance_guid',
  'row_number',
  'data_date',
  'location_code',
  'campaign_code',
  'submission_json',
  'process_status',
] as const
/**
 * A batch's submissions as written: the new ones as the text of their COPY statements (a row of a
 * national file holds every cell of the row, so at most 20,000 rows a statement, each reported as it is
 * done), the stored ones' ids by the status they are given. Built before anything is sent, so the
 * refresh builds the next batch while the server writes this one.
 */
export interface SubmissionWrites {
  copies: Array<{ text: string; rowsBefore: number }>
  updates: Map<string, number[]>
}

/** Each submission of `batch` with the status of the list its id is in, ready to be written. */
export function submissionWrites(documentId: number, { stored, created }: SubmissionBatch, statuses: Statuses): SubmissionWrites {
  const statusOf = new Map<number, string>()
  for (const [name, ids] of Object.entries(statuses)) for (const id of ids) statusOf.set(id, STATUS_NAMES[name as keyof Statuses])
  const copies: SubmissionWrites['copies'] = []
  const perStatement = rowsPerCopy(created.length, 20_000)
  for (let i = 0; i < created.length; i += perStatement) {
    const text = created
      .slice(i, i + perStatement)
      .map((s) =>
        copyLine([
          s.id,
          documentId,
          s.instance_guid,
          s.row_number,
          s.data_date,
          s.location_code,
          s.campaign_code,
          JSON.stringify(s.submission_json),
          statusOf.get(s.id),
        ]),
      )
      .join('')
    copies.push({ text, rowsBefore: i })
  }
  const updates = new Map<string, number[]>()
  for (const { id } of stored) {
    const name = statusOf.get(id)!
    if (!updates.has(name)) updates.set(name, [])
    updates.get(name)!.push(id)
  }
  return { copies, updates }
}

/** What `submissionWrites` built, written: the new submissions copied (`written` told the rows done before each statement), the stored ones' status updated. */
export async function writeSubmissions(db: Kysely<DB>, { copies, updates }: SubmissionWrites, written: (done: number) => void) {
  for (const { text, rowsBefore } of copies) {
    written(rowsBefore)
    await copyInto(db, 'source_submission', SUBMISSION_COLUMNS, new CopyRows([text]))
  }
  // The ids as one array parameter, one statement per status (a list of thousands of parameters is slow to parse and plan).
  for (const [name, ids] of updates)
    await db.updateTable('source_submission').set({ process_status: name }).where(sql<boolean>`id = any(${ids}::int4[])`).execute()
}
