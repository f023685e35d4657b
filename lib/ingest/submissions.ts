// A document's submissions for the refresh (ingestion §3, §5): those stored before are read and their
// status updated; those the transform has just made are written once, with the status the refresh
// gives each, instead of being written, read back and updated.
import { sql, type Kysely } from 'kysely'
import type { DB } from '../../schemas/index.js'
import type { Progress } from '../core/progress.js'
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

/** The document's submissions: `all` in row order, of which `stored` were read and `created` are `fresh` with ids drawn. */
export async function documentSubmissions(db: Kysely<DB>, documentId: number, fresh: NewSubmission[]) {
  const stored: Submission[] = await db
    .selectFrom('source_submission')
    .select(['id', 'row_number', 'location_code', 'campaign_code', 'data_date', 'submission_json'])
    .where('document_id', '=', documentId)
    .orderBy('row_number')
    .execute()
  const created = await withIds(db, fresh)
  const all: Submission[] = stored.length ? [...stored, ...created].sort((a, b) => a.row_number - b.row_number) : created
  return { all, stored, created }
}

/** `fresh` with ids drawn from the table's sequence, in row order (one `nextval` a row, as the column's default would call: 77–97 ms for 20,000 ids). */
async function withIds(db: Kysely<DB>, fresh: NewSubmission[]): Promise<CreatedSubmission[]> {
  if (!fresh.length) return []
  const { rows } = await sql<{ id: number }>`select nextval(pg_get_serial_sequence('source_submission', 'id'))::int as id
    from generate_series(1, ${fresh.length}::int)`.execute(db)
  const ids = rows.map((r) => r.id).sort((a, b) => a - b)
  return fresh.map((submission, i) => ({ ...submission, id: ids[i] }))
}

/** Each submission with the status of the list its id is in: the created ones copied, the stored ones updated. */
export async function writeSubmissions(
  db: Kysely<DB>,
  documentId: number,
  { stored, created }: Awaited<ReturnType<typeof documentSubmissions>>,
  statuses: Statuses,
  progress: Progress,
) {
  const statusOf = new Map<number, string>()
  for (const [name, ids] of Object.entries(statuses)) for (const id of ids) statusOf.set(id, STATUS_NAMES[name as keyof Statuses])
  await copySubmissions(db, documentId, created, statusOf, progress)
  await updateStatuses(db, stored, statusOf)
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
 * The new submissions with their status, copied (lib/data/copy.ts): a row of a national file holds
 * every cell of the row, so at most 20,000 a statement.
 */
async function copySubmissions(db: Kysely<DB>, documentId: number, created: CreatedSubmission[], statusOf: Map<number, string>, progress: Progress) {
  if (!created.length) return
  const perStatement = rowsPerCopy(created.length, 20_000)
  for (let i = 0; i < created.length; i += perStatement) {
    progress('submissions written', i, created.length)
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
    await copyInto(db, 'source_submission', SUBMISSION_COLUMNS, new CopyRows([text]))
  }
  progress('submissions written', created.length, created.length)
}

/** The stored submissions' process status, one statement per status. */
async function updateStatuses(db: Kysely<DB>, stored: Submission[], statusOf: Map<number, string>) {
  const byStatus = new Map<string, number[]>()
  for (const { id } of stored) {
    const name = statusOf.get(id)!
    if (!byStatus.has(name)) byStatus.set(name, [])
    byStatus.get(name)!.push(id)
  }
  // The ids as one array parameter (a list of thousands of parameters is slow to parse and plan).
  for (const [name, ids] of byStatus)
    await db.updateTable('source_submission').set({ process_status: name }).where(sql<boolean>`id = any(${ids}::int4[])`).execute()
}
