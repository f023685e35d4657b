// Who is writing, and through what: said to the database for the length of the writing transaction, so
// its triggers can record it (sql/012: the datapoint history). A session that says nothing (psql, a
// script) is recorded as `sql`.
import { sql, type Kysely, type Transaction } from 'kysely'
import type { DB } from '../../schemas/index.js'

export interface Attribution {
  /** The path of the change: `api` (a request), `job` (a background job), `cli`, `demo`. */
  via: 'api' | 'job' | 'cli' | 'demo'
  userId?: number | null
  jobId?: number
  requestId?: string
  /** Set while a revert writes: the document whose changes it undoes (lib/engine/revert.ts). */
  revertedDocumentId?: number
  /** A request's writes wait at most this long for a lock, then fail (55P03: 503 DATABASE_BUSY); jobs wait as long as they must. */
  lockTimeoutMs?: number
}

const text = (value: number | string | null | undefined) => (value === undefined || value === null ? '' : String(value))

/** Says `attribution` until the end of the current transaction (`set_config(…, true)`). */
export async function attribute(db: Kysely<DB>, attribution: Attribution): Promise<void> {
  await sql`select set_config('rhizome.via', ${attribution.via}, true), set_config('rhizome.user_id', ${text(attribution.userId)}, true),
    set_config('rhizome.job_id', ${text(attribution.jobId)}, true), set_config('rhizome.request_id', ${text(attribution.requestId)}, true),
    set_config('rhizome.reverted_document_id', ${text(attribution.revertedDocumentId)}, true)${lockTimeout(attribution.lockTimeoutMs)}`.execute(db)
}

// In the same statement: a request's write pays no extra round trip for its bound.
const lockTimeout = (ms: number | undefined) => (ms ? sql`, set_config('lock_timeout', ${`${ms}ms`}, true)` : sql``)

/** Says (or, with undefined, stops saying) which document's changes the transaction's next writes undo. */
export async function attributeRevert(db: Kysely<DB>, documentId: number | undefined): Promise<void> {
  await sql`select set_config('rhizome.reverted_document_id', ${text(documentId)}, true)`.execute(db)
}

/** Runs `work` in one transaction that says `attribution` before anything else. */
export function attributedTransaction<T>(db: Kysely<DB>, attribution: Attribution, work: (trx: Transaction<DB>) => Promise<T>): Promise<T> {
  return db.transaction().execute(async (trx) => {
    await attribute(trx, attribution)
    return work(trx)
  })
}
