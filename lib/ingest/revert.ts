// revert_document: every value a document wrote goes back to what it was before the document, read
// from the datapoint history (sql/012). A value changed since by another source is a conflict, kept
// unless forced. The revert's own changes are history, marked with the document they revert: a second
// revert finds nothing pending and changes nothing.
import { sql, type Kysely } from 'kysely'
import type { DB } from '../../schemas/index.js'
import { attributeRevert } from '../data/attribution.js'
import { recomputeCampaign } from '../engine/recompute.js'
import { lockCampaignsOf } from '../engine/campaign-locks.js'
import { lockDocument } from './actions.js'
import { materializeClaims, releaseClaims, rowsStoredBy } from './claims.js'
import { CAP } from './transform.js'
import { inStages, noProgress, type Progress } from '../core/progress.js'

type Key = { unique_index: string; location_id: number; indicator_id: number; campaign_id: number | null; data_date: string | null }
type Conflict = Key & { value_now: number | null; document_now: number | null; value_before_document: number | null }

/**
 * The plan in `rv_plan`, one row per key the document wrote since its last revert: the state before its
 * first such write (the target; no submission = the key did not exist), the datapoint there now, and
 * the action: `restore` or `delete` (now the document's value, or forced), `unchanged` (already the
 * target), `conflict` (another source's value since), `forbidden` (outside `permitted`).
 */
async function plan(db: Kysely<DB>, D: ReturnType<typeof sql.lit>, force: boolean, permitted: Set<number> | null) {
  await sql`drop table if exists rv_plan`.execute(db)
  const allowed = permitted === null ? sql`true` : sql`p.location_id = any(${[...permitted]}::int4[])`
  await sql`create temp table rv_plan on commit drop as
    with last_revert as (
      select unique_index, max(id) as id from datapoint_history where reverted_document_id = ${D} group by unique_index
    ), first_write as (
      select distinct on (h.unique_index) h.* from datapoint_history h left join last_revert r on r.unique_index = h.unique_index
      where h.document_id = ${D} and h.change <> 'delete' and h.reverted_document_id is distinct from ${D} and h.id > coalesce(r.id, 0)
      order by h.unique_index, h.id
    ), states as (
      select w.unique_index, w.location_id, w.indicator_id, w.campaign_id, w.data_date,
        -- A value whose submission is gone (its document deleted since) cannot come back: the key goes.
        case when w.change = 'update' and exists (select 1 from source_submission s where s.id = w.source_submission_id_before)
          then w.source_submission_id_before end as target_submission,
        w.value_before as target_value, w.precedence_at_before as target_precedence,
        d.id as current_id, d.value as current_value, d.source_submission_id as current_submission, cs.document_id as current_document
      from first_write w left join datapoint d on d.unique_index = w.unique_index
        left join source_submission cs on cs.id = d.source_submission_id
    )
    select p.*, case
        when not (${allowed}) then 'forbidden'
        when (p.current_id is null and p.target_submission is null)
          or (p.current_submission = p.target_submission and p.current_value is not distinct from p.target_value) then 'unchanged'
        when p.current_document is distinct from ${D} and not ${sql.lit(force)} then 'conflict'
        when p.target_submission is null then 'delete'
        else 'restore' end as action
    from states p`.execute(db)
}

/** What the plan holds, counted, with the first CAP keys of each action; read in SQL (a national document has millions). */
async function summarise(db: Kysely<DB>, D: ReturnType<typeof sql.lit>) {
  const { rows } = await sql<
    Record<'restore' | 'delete' | 'forbidden' | 'conflict' | 'unchanged' | 'without_history', number> & { campaigns: number[] | null }
  >`
    select count(*) filter (where action = 'restore')::int as restore, count(*) filter (where action = 'delete')::int as delete,
      count(*) filter (where action = 'forbidden')::int as forbidden, count(*) filter (where action = 'conflict')::int as conflict,
      count(*) filter (where action = 'unchanged')::int as unchanged,
      array_agg(distinct campaign_id order by campaign_id) filter (where action in ('restore', 'delete') and campaign_id is not null) as campaigns,
      (select count(*)::int from datapoint d join source_submission s on s.id = d.source_submission_id
        where s.document_id = ${D} and not exists (select 1 from rv_plan p where p.unique_index = d.unique_index)) as without_history
    from rv_plan`.execute(db)
  const counts = rows[0]
  const listed = async <T>(action: 'restore' | 'delete' | 'forbidden' | 'conflict', columns = sql``) => ({
    count: counts[action],
    items: (
      await sql<T>`select unique_index, location_id, indicator_id, campaign_id, data_date ${columns}
        from rv_plan where action = ${action} order by unique_index limit ${CAP}`.execute(db)
    ).rows,
  })
  return {
    restored: await listed<Key>('restore'),
    deleted: await listed<Key>('delete'),
    unchanged: counts.unchanged,
    conflicts: await listed<Conflict>('conflict', sql`, current_value as value_now, current_document as document_now, target_value as value_before_document`),
    location_forbidden: await listed<Key>('forbidden'),
    without_history: counts.without_history,
    campaigns: counts.campaigns ?? [],
  }
}

/** Reverts document `documentId` (see above); `permitted`: the locations it may change (null: all). */
export async function revertDocument(db: Kysely<DB>, documentId: number, force: boolean, permitted: Set<number> | null, progress: Progress = noProgress) {
  await lockDocument(db, documentId)
  progress = inStages(['values reverted', 'campaigns recomputed'], progress)
  const D = sql.lit(Math.trunc(documentId))
  // The keys it wrote stay as the plan reads them until it commits (lib/engine/campaign-locks.ts).
  await lockCampaignsOf(db, sql`select campaign_id from datapoint_history where document_id = ${D}`)
  // The plan reads who holds each key from the rows and the history: the keys this document holds by
  // claim become its rows (each takeover in the history), and those newer documents hold of its rows theirs.
  await releaseClaims(db, documentId)
  await materializeClaims(db, rowsStoredBy(D))
  await plan(db, D, force, permitted)
  const { campaigns, ...summary } = await summarise(db, D)
  const changing = summary.restored.count + summary.deleted.count

  progress('values reverted', 0, changing)
  await attributeRevert(db, documentId)
  await sql`delete from datapoint d using rv_plan p where p.action = 'delete' and d.unique_index = p.unique_index`.execute(db)
  await sql`insert into datapoint as d (indicator_id, location_id, campaign_id, data_date, value, source_submission_id, unique_index, precedence_at)
    select indicator_id, location_id, campaign_id, data_date, target_value, target_submission, unique_index, target_precedence
    from rv_plan where action = 'restore'
    on conflict (unique_index) do update set value = excluded.value, source_submission_id = excluded.source_submission_id,
      precedence_at = excluded.precedence_at, created_at = now()`.execute(db)
  await attributeRevert(db, undefined)
  progress('values reverted', changing, changing)

  for (const [done, campaign] of campaigns.entries()) {
    progress('campaigns recomputed', done, campaigns.length)
    await recomputeCampaign(db, campaign)
  }
  progress('campaigns recomputed', campaigns.length, campaigns.length)
  await sql`drop table rv_plan`.execute(db)
  return { document_id: documentId, forced: force, ...summary, campaigns_recomputed: campaigns }
}
