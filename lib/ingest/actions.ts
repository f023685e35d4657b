// The pipeline steps behind the non-model resources (resource-api §39–§42), each in the dispatcher's
// one transaction, serialised per document and per campaign with advisory locks.
import { sql, type Kysely } from 'kysely'
import type { DB } from '../../schemas/index.js'
import type { AuthUser } from '../data/auth.js'
import { CAP, transform, type Document } from './transform.js'
import { refreshMaster } from './refresh.js'
import { skippedRows } from './report.js'
import { recomputeChanged } from '../engine/recompute-changed.js'
import { recomputeCampaign } from '../engine/recompute.js'
import { documentLocations } from '../engine/access.js'
import { assertNotBlocked, documentCheck, findViolations, reported } from '../engine/validation.js'
import { inStages, noProgress, type Progress } from '../core/progress.js'
import { lockKey } from '../data/lock-keys.js'

export const lockDocument = (db: Kysely<DB>, id: number) => sql`select pg_advisory_xact_lock(${lockKey('document', id)})`.execute(db)

/**
 * Settings for a bulk write, until the end of the caller's transaction. The pool's sessions plan every
 * statement for its parameters (`force_custom_plan`, lib/data/database.ts), which a bulk insert pays once
 * per row: each foreign-key check is a cached statement, re-planned on every call under that setting.
 * Measured: the 400,000-row upsert into `datapoint` spent 45 s in its four foreign-key checks with it,
 * 12 s without (bench/README.md, "Ingestion").
 */
export async function bulkWriteSettings(db: Kysely<DB>): Promise<void> {
  await sql`set local plan_cache_mode = auto`.execute(db)
}

/**
 * transform_upload (`withTransform`) or refresh_master of `doc`, run by `runner` (its rows are written
 * with the uploader's rights, lib/engine/access.ts): stats stored on the document and returned.
 * `progress` hears rows parsed, submissions and cells written, datapoints written, campaigns recomputed.
 */
export async function ingest(
  db: Kysely<DB>,
  doc: Document,
  runner: AuthUser,
  dataDir: string,
  withTransform: boolean,
  progress: Progress = noProgress,
): Promise<Record<string, unknown>> {
  await lockDocument(db, doc.id)
  await bulkWriteSettings(db)
  progress = inStages(ingestStages(doc, withTransform), progress)
  const clock = performance.now()
  const timings_ms: Record<string, number> = {}
  const lap = (name: string, since: number) => (timings_ms[name] = Math.round(performance.now() - since))
  const transformed = withTransform ? await transform(db, doc, dataDir, progress) : undefined
  if (withTransform) lap('transform', clock)
  const refreshStarted = performance.now()
  const permitted = await documentLocations(db, doc, runner)
  const { touchedCampaigns, changedKeysNoted, ...refreshed } = await refreshMaster(db, doc, permitted, timings_ms, progress, transformed?.fresh)
  lap('refresh', refreshStarted)
  const recomputed = doc.file_type === 'campaign' ? touchedCampaigns : []
  const recomputeStarted = performance.now()
  let recomputedKeys = 0
  for (const [done, campaign] of recomputed.entries()) {
    progress('campaigns recomputed', done, recomputed.length)
    // Only what the sync changed, when it noted each changed key (not on a first upload: every key is new).
    if (changedKeysNoted) recomputedKeys += (await recomputeChanged(db, campaign)).changedKeys
    else await recomputeCampaign(db, campaign)
  }
  progress('campaigns recomputed', recomputed.length, recomputed.length)
  lap('recompute', recomputeStarted)
  // After the recompute: the rules compare the final values. A block refuses the whole upload (422).
  const violations = doc.file_type === 'campaign' ? await findViolations(db, documentCheck(doc.id, CAP)) : { count: 0, blocked: 0, items: [] }
  assertNotBlocked(violations)
  const computed = recomputed.length
    ? Number(
        (await db.selectFrom('datapoint_with_computed').select(sql<number>`count(*)`.as('n')).where('campaign_id', 'in', recomputed).executeTakeFirstOrThrow())
          .n,
      )
    : 0
  const stats = {
    action: withTransform ? 'transform_upload' : 'refresh_master',
    at: (await sql<{ now: string }>`select now() as now`.execute(db)).rows[0].now,
    ...transformed?.stats,
    ...refreshed,
    skipped_rows: await skippedRows(db, doc.id),
    validation: reported(violations),
    campaigns_recomputed: recomputed,
    computed_rows: computed,
    recomputed_keys: recomputedKeys,
    timings_ms,
  }
  await db
    .updateTable('source_doc')
    .set({ ingest_stats: JSON.stringify(stats) })
    .where('id', '=', doc.id)
    .execute()
  return stats
}

/** The stages an ingest reports, in the order they run. */
const ingestStages = (doc: Document, withTransform: boolean) => [
  ...(withTransform ? ['rows parsed'] : []),
  'cells staged',
  ...(withTransform ? ['submissions written'] : []),
  'cells written',
  'datapoints written',
  ...(doc.file_type === 'campaign' ? ['campaigns recomputed'] : []),
]

/** Every submission of `doc` back to TO_PROCESS. */
export async function queueProcess(db: Kysely<DB>, doc: Document): Promise<void> {
  await lockDocument(db, doc.id)
  await db.updateTable('source_submission').set({ process_status: 'TO_PROCESS' }).where('document_id', '=', doc.id).execute()
}
