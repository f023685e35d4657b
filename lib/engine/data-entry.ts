// The Data Entry submission (ingestion §9): every value typed in through the datapoint resources is
// attributed to the single submission of the "Data Entry" document, created on first use.
import { sql, type Kysely } from 'kysely'
import type { DB } from '../../schemas/index.js'
import { CHANGED_KEYS, createChangedKeys, recomputeChanged } from './recompute-changed.js'

export async function dataEntrySubmission(db: Kysely<DB>): Promise<number> {
  const find = async () =>
    (
      await sql<{ id: number }>`select s.id from source_submission s join source_doc d on d.id = s.document_id
      where d.guid = 'data-entry' and s.instance_guid = 'data-entry'`.execute(db)
    ).rows[0]?.id
  const found = await find()
  if (found !== undefined) return found
  await sql`insert into source_submission (document_id, instance_guid, row_number, submission_json, process_status)
    select id, 'data-entry', 0, '{}'::jsonb, 'PROCESSED' from source_doc where guid = 'data-entry'
    on conflict (document_id, instance_guid) do nothing`.execute(db)
  // A separate statement: if a concurrent first entry created the row while the insert waited, only a
  // snapshot taken after the insert can see it.
  return (await find())!
}

/** The unique key of a raw campaign datapoint (ingestion §5.3). */
export const campaignKey = (v: Record<string, unknown>) => `${v.location_id}_${v.indicator_id}_${v.campaign_id}`

/** The unique key of a raw date datapoint (ingestion §5.3). */
export const dateKey = (v: Record<string, unknown>) => `${v.location_id}_${v.indicator_id}_${v.data_date}`

/** A raw campaign datapoint written as a data entry: inserted, or the existing one taken over. */
export async function enterCampaignValue(db: Kysely<DB>, v: { indicator_id: number; location_id: number; campaign_id: number; value: number | null }) {
  const submission = await dataEntrySubmission(db)
  return db
    .insertInto('datapoint')
    .values({
      indicator_id: v.indicator_id,
      location_id: v.location_id,
      campaign_id: v.campaign_id,
      value: v.value,
      source_submission_id: submission,
      unique_index: campaignKey(v),
      precedence_at: sql<string>`now()`,
    })
    .onConflict((oc) => oc.column('unique_index').doUpdateSet({ value: v.value, source_submission_id: submission, precedence_at: sql<string>`now()` }))
    .returning('id')
    .executeTakeFirstOrThrow()
}

/**
 * The totals above one entered, changed or deleted raw campaign value recomputed, and nothing else of
 * its campaign: the key by key recompute an upload's correction gets. A whole campaign's recompute
 * took a country's campaign of 200,000 values 1.3 s for every cell typed (bench:scale).
 */
export async function recomputeEntry(db: Kysely<DB>, key: { campaign_id: number; location_id: number; indicator_id: number }) {
  await createChangedKeys(db)
  await sql`insert into ${CHANGED_KEYS} values (${key.campaign_id}, ${key.location_id}, ${key.indicator_id})`.execute(db)
  return recomputeChanged(db, key.campaign_id)
}
