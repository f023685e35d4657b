// Parts of an upload's report (ingest_stats) that say where each row went: the lines skipped, with
// why, read from the statuses the refresh wrote (lib/ingest/submissions.ts), so a person can find them.
import type { Kysely } from 'kysely'
import type { DB } from '../../schemas/index.js'
import { CAP } from './transform.js'

/** A submission's status → the reason the report's `rows` counts it under. */
const REASONS: Record<string, string> = {
  MISSING_LOCATION: 'missing_location',
  MISSING_CAMPAIGN: 'missing_campaign',
  MISSING_DATE: 'missing_date',
  LOCATION_FORBIDDEN: 'location_forbidden',
}

/**
 * The document's rows that wrote nothing, by row: `{count, items: [{row_number, reason, location_code,
 * campaign_code}]}`, the first CAP in file order (row_number is 0-based below the header, as elsewhere).
 */
export async function skippedRows(db: Kysely<DB>, documentId: number) {
  const skipped = db.selectFrom('source_submission').where('document_id', '=', documentId).where('process_status', 'in', Object.keys(REASONS))
  const { n } = await skipped.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()
  const rows = await skipped.select(['row_number', 'process_status', 'location_code', 'campaign_code']).orderBy('row_number').limit(CAP).execute()
  return {
    count: Number(n),
    items: rows.map((r) => ({
      row_number: r.row_number,
      reason: REASONS[r.process_status as string],
      location_code: r.location_code,
      campaign_code: r.campaign_code,
    })),
  }
}
