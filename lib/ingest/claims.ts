// Keys held by claim (sql/029; docs/decisions.md, "A repeated value is held without a write"): a
// document whose sync finds a key at the value it carries, where it may take the key over, holds it
// without writing the row. Whatever depends on who holds a key makes the claims it meets real first,
// so the rest of the pipeline reads the holder from the row as it always has.
import { sql, type Kysely, type RawBuilder } from 'kysely'
import type { DB } from '../../schemas/index.js'
import { lockCampaignsOf } from '../engine/campaign-locks.js'

/** Off only where a test compares with the rewrite of every repeated key (the original's §5.5). */
export const repeatedValues = { heldByClaim: true }

/** Whether some document holds keys by claim (`newerThan`: some document created after that time). */
async function claimsExist(db: Kysely<DB>, newerThan?: RawBuilder<unknown>): Promise<boolean> {
  const { rows } = await sql<{ found: boolean }>`select exists (select 1 from document_takeover r join source_doc n on n.id = r.document_id
    where ${newerThan ? sql`n.created_at > ${newerThan}` : sql`true`}) as found`.execute(db)
  return rows[0].found
}

/**
 * The claims on the datapoint rows `candidates` selects (a query of datapoint's columns) made real:
 * each claimed row written with its holder's source and precedence, the history recording each
 * takeover before. Only rows where `document` took a turn (as the holder or before it) when given, and
 * only holders created after `newerThan` when given. It writes the rows: it takes their campaigns'
 * locks (lib/engine/campaign-locks.ts) unless the caller holds them (`campaignsHeld`, as a sync does,
 * where the candidates are a whole file's keys). Returns how many rows were written.
 */
export async function materializeClaims(
  db: Kysely<DB>,
  candidates: RawBuilder<unknown>,
  { document, newerThan, campaignsHeld = false }: { document?: number; newerThan?: RawBuilder<unknown>; campaignsHeld?: boolean } = {},
): Promise<number> {
  if (!(await claimsExist(db, newerThan))) return 0
  await sql`drop table if exists claim_candidates`.execute(db)
  await sql`create temp table claim_candidates as ${candidates}`.execute(db)
  if (!campaignsHeld) await lockCampaignsOf(db, sql`select campaign_id from claim_candidates`)
  const { rows } = await sql<{ written: number }>`select materialize_datapoint_claims('claim_candidates',
    ${document === undefined ? null : Math.trunc(document)}::int, ${newerThan ?? sql`null`}::timestamptz) as written`.execute(db)
  await sql`drop table claim_candidates`.execute(db)
  return rows[0].written
}

/** The datapoint rows at the keys document `D` staged (a query of datapoint's columns). */
export const rowsAtKeysOf = (D: RawBuilder<unknown>) => sql`select p.* from datapoint p where exists (
  select 1 from doc_datapoint d where d.document_id = ${D} and d.location_id = p.location_id and d.indicator_id = p.indicator_id
    and d.campaign_id is not distinct from p.campaign_id and d.data_date is not distinct from p.data_date)`

/** The datapoint rows stored with a submission of document `D` (a query of datapoint's columns). */
export const rowsStoredBy = (D: RawBuilder<unknown>) =>
  sql`select p.* from datapoint p where p.source_submission_id in (select id from source_submission where document_id = ${D})`

/**
 * Document `documentId` gives up holding by claim: every claimed row where it took a turn is written
 * as its holder's (the history records each takeover, this document's among them), then its record
 * goes. Before its cells are staged again (a refresh: the claims read them), and before its revert or
 * its deletion.
 */
export async function releaseClaims(db: Kysely<DB>, documentId: number) {
  const D = sql.lit(Math.trunc(documentId))
  const { rows } = await sql<{ found: boolean }>`select exists (select 1 from document_takeover where document_id = ${D}) as found`.execute(db)
  if (!rows[0].found) return
  await materializeClaims(db, rowsAtKeysOf(D), { document: documentId })
  await sql`delete from document_takeover where document_id = ${D}`.execute(db)
}

/**
 * Document `documentId` holds, by claim, the keys its sync left unwritten at the value it carries: its
 * record says since when (the sync's time, after every write it found). A document that repeats
 * nothing needs none.
 */
export async function recordClaims(db: Kysely<DB>, documentId: number) {
  await sql`insert into document_takeover (document_id, synced_at) values (${Math.trunc(documentId)}, clock_timestamp())
    on conflict (document_id) do update set synced_at = excluded.synced_at`.execute(db)
}
