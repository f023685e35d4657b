// §5.4 for the refresh (lib/ingest/refresh.ts): of the cells a document staged under one key, the one
// that wins, gathered in the temporary table `rf_winners` the sync reads (lib/ingest/sync.ts), and the
// keys two cells wrote, reported.
import { sql, type Kysely, type RawBuilder } from 'kysely'
import type { DB } from '../../schemas/index.js'
import type { ConflictPolicy } from './upload.js'
import { CAP } from './transform.js'

// The unique key of a staged cell, the same as a datapoint's (§5.3), in the column's byte-wise
// collation (sql/006): sorted and compared by bytes, and comparable with datapoint.unique_index.
const KEY = sql`(s.location_id || '_' || s.indicator_id || '_' || coalesce(s.campaign_id::text, to_char(s.data_date, 'YYYY-MM-DD'))) collate "C"`

/** A key two cells of the document wrote: the cell kept (none under `reject` when they disagree) and those dropped (the first CAP, and how many). */
export interface Conflict {
  unique_index: string
  kept: { row_number: number; column: string } | null
  dropped: Array<{ row_number: number; column: string; value: number }>
  dropped_count: number
}

/**
 * §5.4 over the `staged` cells of document `D`: the winner of each key into `rf_winners` (under
 * `reject`, none for a key whose cells disagree), and the keys two cells wrote: how many, and the
 * first CAP of them in key order.
 */
export async function chooseWinners(db: Kysely<DB>, D: RawBuilder<unknown>, policy: ConflictPolicy, staged: number) {
  const keys = await stageWinners(db, D, policy)
  const conflicts = keys === staged ? { count: 0, items: [] } : await findConflicts(db, D, policy)
  if (policy === 'reject' && keys < staged) await dropDisagreeingKeys(db, D)
  return conflicts
}

/** The staged cell a key keeps when the document wrote it twice: the later (`last`, §5.4) or the earlier. */
const keptFirst = (policy: ConflictPolicy) => sql.raw(policy === 'first' ? 'id asc' : 'id desc')

/**
 * The winning cell of every key of document `D` (§5.4) in `rf_winners`, written in key order (the sync
 * writes `datapoint`'s unique index in that order) and without a key of its own: its readers scan it
 * (the sync's chunks are ranges of its blocks) or hash it (building the key cost 0.11–0.13 s at
 * 400,000 cells, and the clean-up of a document's vanished keys took 0.46–0.49 s probing it against
 * 0.25–0.26 s hashing it, in psql). Returns how many keys there are.
 */
async function stageWinners(db: Kysely<DB>, D: RawBuilder<unknown>, policy: ConflictPolicy): Promise<number> {
  await sql`drop table if exists rf_winners`.execute(db)
  await sql`create temp table rf_winners on commit drop as
    select distinct on (key) ${KEY} as key, s.* from doc_datapoint s where s.document_id = ${D} order by key, s.${keptFirst(policy)}`.execute(db)
  await sql`analyze rf_winners`.execute(db)
  const { rows } = await sql<{ n: number }>`select count(*)::int as n from rf_winners`.execute(db)
  return rows[0].n
}

/**
 * §5.4: the keys two cells of the document wrote (there are some exactly when there are fewer winners
 * than staged cells), counted, and the first CAP listed with their cells. One pass over the staged
 * cells: a file whose every key is written twice (two columns mapped to one indicator) costs what
 * writing it does.
 */
async function findConflicts(db: Kysely<DB>, D: RawBuilder<unknown>, policy: ConflictPolicy): Promise<{ count: number; items: Conflict[] }> {
  const rejects = sql.lit(policy === 'reject')
  const { rows } = await sql<Conflict & { count: number }>`
    with cells as (
      select ${KEY} as key, s.id, s.column_name, s.value, s.source_submission_id from doc_datapoint s where s.document_id = ${D}),
    ranked as (
      select c.*, row_number() over (partition by key order by ${keptFirst(policy)}) as rank, count(*) over (partition by key) as n,
        min(value) over (partition by key) <> max(value) over (partition by key) as disagree
      from cells c),
    listed as (
      select key, count(*) over ()::int as count from ranked where n > 1 and rank = 1 order by key limit ${CAP})
    select l.key as unique_index, l.count,
      case when ${rejects} and bool_or(r.disagree) then null
        else (array_agg(jsonb_build_object('row_number', sub.row_number, 'column', r.column_name)) filter (where r.rank = 1))[1] end as kept,
      coalesce((jsonb_agg(jsonb_build_object('row_number', sub.row_number, 'column', r.column_name, 'value', r.value) order by r.id)
        filter (where (r.rank > 1 or (${rejects} and r.disagree)) and r.rank <= ${CAP + 1})), '[]') as dropped,
      (count(*) filter (where r.rank > 1 or (${rejects} and r.disagree)))::int as dropped_count
    from listed l join ranked r on r.key = l.key join source_submission sub on sub.id = r.source_submission_id
    group by l.key, l.count order by l.key`.execute(db)
  return { count: rows[0]?.count ?? 0, items: rows.map(({ count: _, ...conflict }) => conflict) }
}

/** `reject`: the keys whose staged cells hold different values leave `rf_winners`. */
async function dropDisagreeingKeys(db: Kysely<DB>, D: RawBuilder<unknown>): Promise<void> {
  await sql`delete from rf_winners w using (
      select ${KEY} as key from doc_datapoint s where s.document_id = ${D} group by 1 having min(s.value) <> max(s.value)) d
    where d.key = w.key`.execute(db)
}
