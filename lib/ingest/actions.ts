// The pipeline steps behind the non-model resources (resource-api §39–§42), each in the dispatcher's
// one transaction, serialised per document and per campaign with advisory locks.
import { sql, type Kysely } from 'kysely'
import type { DB } from '../../schemas/index.js'
import { invalidValue, notFound } from '../errors.js'
import { isInt32, parseInteger } from '../values.js'
import type { Context, Row } from '../resource.js'
import { transform, type Document } from './transform.js'
import { refreshMaster } from './refresh.js'
import { recomputeCampaign } from '../engine/recompute.js'
import { assertOwnDocument, documentLocations } from '../access.js'

/** The integer id in parameter `name`: 400 when not an integer, 404 when no such row. */
export async function requireRow(ctx: Context, name: 'document_id' | 'campaign_id', table: 'source_doc' | 'campaign', label: string) {
  const text = ctx.query.last(name)!
  const id = parseInteger(text)
  if (id === undefined) throw invalidValue(name, text, 'integer')
  const row = isInt32(id) ? await (ctx.db as Kysely<DB>).selectFrom(table).selectAll().where('id', '=', id).executeTakeFirst() : undefined
  if (!row) throw notFound(label, text)
  return row as unknown as Row
}

const lockDocument = (db: Kysely<DB>, id: number) => sql`select pg_advisory_xact_lock(1, ${id})`.execute(db)

/** The `document_id` parameter's document, if the requester may process it (lib/access.ts). */
async function requireDocument(ctx: Context): Promise<Document> {
  const doc = (await requireRow(ctx, 'document_id', 'source_doc', 'document')) as unknown as Document
  assertOwnDocument(ctx.user, doc)
  return doc
}

/**
 * Settings for a bulk write, until the end of the caller's transaction. The pool's sessions plan every
 * statement for its parameters (`force_custom_plan`, lib/database.ts), which a bulk insert pays once
 * per row: each foreign-key check is a cached statement, re-planned on every call under that setting.
 * Measured: the 400,000-row upsert into `datapoint` spent 45 s in its four foreign-key checks with it,
 * 12 s without (bench/README.md, "Ingestion").
 */
export async function bulkWriteSettings(db: Kysely<DB>): Promise<void> {
  await sql`set local plan_cache_mode = auto`.execute(db)
}

/** transform_upload (`withTransform`) or refresh_master: stats stored on the document and returned. */
export async function ingest(ctx: Context, withTransform: boolean): Promise<Record<string, unknown>> {
  const db = ctx.db as Kysely<DB>
  const doc = await requireDocument(ctx)
  await lockDocument(db, doc.id)
  await bulkWriteSettings(db)
  const clock = performance.now()
  const timings_ms: Record<string, number> = {}
  const lap = (name: string, since: number) => (timings_ms[name] = Math.round(performance.now() - since))
  const transformed = withTransform ? await transform(db, doc, ctx.config.DATA_DIR) : undefined
  if (withTransform) lap('transform', clock)
  const refreshStarted = performance.now()
  const { touchedCampaigns, ...refreshed } = await refreshMaster(db, doc, await documentLocations(db, doc, ctx.user), timings_ms)
  lap('refresh', refreshStarted)
  const recomputed = doc.file_type === 'campaign' ? touchedCampaigns : []
  const recomputeStarted = performance.now()
  for (const campaign of recomputed) await recomputeCampaign(db, campaign)
  lap('recompute', recomputeStarted)
  const computed = recomputed.length
    ? Number((await db.selectFrom('datapoint_with_computed').select(sql<number>`count(*)`.as('n')).where('campaign_id', 'in', recomputed).executeTakeFirstOrThrow()).n)
    : 0
  const stats = {
    action: withTransform ? 'transform_upload' : 'refresh_master',
    at: (await sql<{ now: string }>`select now() as now`.execute(db)).rows[0].now,
    ...(transformed ?? {}),
    ...refreshed,
    campaigns_recomputed: recomputed,
    computed_rows: computed,
    timings_ms,
  }
  await db.updateTable('source_doc').set({ ingest_stats: JSON.stringify(stats) }).where('id', '=', doc.id).execute()
  return stats
}

export async function aggRefresh(ctx: Context) {
  const campaign = await requireRow(ctx, 'campaign_id', 'campaign', 'campaign')
  const agg_stats = await recomputeCampaign(ctx.db as Kysely<DB>, campaign.id as number)
  return { ...campaign, agg_stats }
}

export async function queueProcess(ctx: Context) {
  const db = ctx.db as Kysely<DB>
  const doc = await requireDocument(ctx)
  await lockDocument(db, doc.id)
  await db.updateTable('source_submission').set({ process_status: 'TO_PROCESS' }).where('document_id', '=', doc.id as number).execute()
}
