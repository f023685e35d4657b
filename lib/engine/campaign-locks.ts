// One writer of a campaign's raw datapoints at a time. Every step that writes them (an upload's sync,
// data entry, a revert, a document's deletion, a cascade, a claim made real) holds the campaign's lock, a
// transaction-scoped advisory lock, from before its first write until it commits, and the recompute
// that follows holds it too. A sync decides from what it reads which keys it writes, which it holds by
// claim and which it deletes: another writer's change between that read and its commit would be lost
// or undone (docs/decisions.md, "One writer per campaign"). Each step takes its campaigns in ascending
// order, so two steps on the same campaigns wait for each other in turn.
import { sql, type Kysely, type RawBuilder } from 'kysely'
import type { DB } from '../../schemas/index.js'
import { lockKey } from '../data/lock-keys.js'

/** The date datapoints' lock (they have no campaign): campaign ids start at 1. */
const DATE_DATAPOINTS = 0

/** Holds the locks of `campaigns` (null: the date datapoints) until the transaction ends, in ascending order. */
export async function lockCampaigns(db: Kysely<DB>, campaigns: Iterable<number | null>): Promise<void> {
  const ids = [...new Set([...campaigns].map((campaign) => campaign ?? DATE_DATAPOINTS))].sort((a, b) => a - b)
  for (const id of ids) await sql`select pg_advisory_xact_lock(${lockKey('campaign', id)})`.execute(db)
}

/** Holds the locks of the campaigns of the rows `rows` selects (a query with a `campaign_id` column). */
export async function lockCampaignsOf(db: Kysely<DB>, rows: RawBuilder<unknown>): Promise<void> {
  const { rows: campaigns } = await sql<{ campaign_id: number | null }>`select distinct campaign_id from (${rows}) r`.execute(db)
  await lockCampaigns(
    db,
    campaigns.map((c) => c.campaign_id),
  )
}
