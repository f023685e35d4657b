// §5.4 for the refresh (lib/ingest/refresh.ts): of the cells a document staged under one key, the one
// that wins, gathered in the temporary table `rf_winners` the sync reads (lib/ingest/sync.ts), and the
// keys two cells wrote, reported.
import { sql, type Kysely, type RawBuilder } from 'kysely'
import type { DB } from '../../schemas/index.js'
import type { ConflictPolicy } from './upload.js'

// The unique key of a staged cell, the same as a datapoint's (§5.3), in the column's byte-wise
// collation (sql/006): sorted and compared by bytes, and comparable with datapoint.unique_index.
const KEY = sql`(s.location_id || '_' || s.indicator_id || '_' || coalesce(s.campaign_id::text, to_char(s.data_date, 'YYYY-MM-DD'))) collate "C"`

/**
 * §5.4 over the `staged` cells of document `D`: the winner of each key into `rf_winners` (under
 * `reject`, none for a key whose cells disagree), and the keys two cells wrote, with the cell kept and
 * those dropped.
 */
export async function chooseWinners(db: Kysely<DB>, D: RawBuilder<unknown>, policy: ConflictPolicy, staged: number) {
  const keys = await stageWinners(db, D, policy)
  const conflicts = await findConflicts(db, D, policy, keys === staged)
  if (policy === 'reject' && keys < staged) await dropDisagreeingKeys(db, D)
  return conflicts.rows
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
 * §5.4: keys two cells of the document wrote, with the kept cell and the dropped ones; under `reject`
 * a key whose cells disagree keeps none. Two cells of one key exist exactly when there are fewer
 * winners than staged cells (`none`): the search (a window over every staged cell) runs only then.
 */
async function findConflicts(db: Kysely<DB>, D: RawBuilder<unknown>, policy: ConflictPolicy, none: boolean) {
  if (none) return { rows: [] }
  const rejects = sql.lit(policy === 'reject')
  return sql<{ key: string; kept: unknown; dropped: unknown }>`
    with s as (select ${KEY} as key, s.* from doc_datapoint s where s.document_id = ${D}),
    ranked as (select s.*, row_number() over (partition by key order by ${keptFirst(policy)}) as rank, count(*) over (partition by key) as n,
      min(value) over (partition by key) <> max(value) over (partition by key) as disagree from s)
    select r.key,
      case when ${rejects} and r.disagree then null else jsonb_build_object('row_number', sub.row_number, 'column', r.column_name) end as kept,
      (select jsonb_agg(jsonb_build_object('row_number', sub2.row_number, 'column', l.column_name, 'value', l.value) order by l.id)
         from ranked l join source_submission sub2 on sub2.id = l.source_submission_id where l.key = r.key and (l.rank > 1 or (${rejects} and l.disagree))) as dropped
    from ranked r join source_submission sub on sub.id = r.source_submission_id
    where r.rank = 1 and r.n > 1 order by r.key`.execute(db)
}

/** `reject`: the keys whose staged cells hold different values leave `rf_winners`. */
async function dropDisagreeingKeys(db: Kysely<DB>, D: RawBuilder<unknown>): Promise<void> {
  await sql`delete from rf_winners w using (
      select ${KEY} as key from doc_datapoint s where s.document_id = ${D} group by 1 having min(s.value) <> max(s.value)) d
    where d.key = w.key`.execute(db)
}
