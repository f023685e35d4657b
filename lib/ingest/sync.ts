// §5.5, the sync of a document's winning cells into `datapoint`: the newest information wins. The
// winners (`rf_winners`, chosen by lib/ingest/winners.ts) are written in chunks of rows, so a national
// file's sync reports its progress as it goes.
import { sql, type Kysely, type RawBuilder } from 'kysely'
import type { DB } from '../../schemas/index.js'
import { isUniqueViolation } from '../core/errors.js'
import { lockCampaigns, lockCampaignsOf } from '../engine/campaign-locks.js'
import type { Progress } from '../core/progress.js'
import { createChangedKeys, CHANGED_KEYS } from '../engine/recompute-changed.js'
import { materializeClaims, recordClaims, repeatedValues } from './claims.js'
import type { Document } from './transform.js'

/**
 * About `rows` winners are written a statement. Each chunk is one more statement, each firing the
 * statement-level triggers once (history, references); ten chunks for a national file of 2,000,000
 * cells. Tests write small files in many chunks by lowering it.
 */
export const syncChunks = { rows: 200_000 }

/**
 * Whether the document's submissions hold any datapoint. The ids are read whole first, on the
 * document's index (`array(…)`): as `exists (… in (select id …))` the planner expected a document's
 * average thousands of rows and scanned every submission for the first of a new document's (170 ms a
 * correction at 30 M values, bench:scale).
 */
export const holdsDatapoints = (document: RawBuilder<unknown>) =>
  sql<boolean>`exists (select 1 from datapoint d where d.source_submission_id = any (array(select id from source_submission where document_id = ${document})))`

/**
 * §5.5 over `rf_winners` (chooseWinners): count the keys a newer source holds, write the winners where
 * this document may write (new key, its own row, or an older one) and the value differs, delete its
 * datapoints it no longer makes. A key it may take over at the value it carries is held by claim, not
 * written (lib/ingest/claims.ts): counted unchanged, as D26 counts it. The raw keys whose values change
 * (new, deleted, or another value where this document may write) are left in `CHANGED_KEYS` for the
 * recompute; a value written again under this document's source changes no derived row, which hold
 * values only.
 */
export async function syncDatapoints(db: Kysely<DB>, doc: Document, campaigns: Iterable<number | null>, progress: Progress) {
  const D = sql.lit(Math.trunc(doc.id))
  const own = sql`(select id from source_submission where document_id = ${D})`
  const tD = sql`(select created_at from source_doc where id = ${D})`
  const byClaim = sql.lit(repeatedValues.heldByClaim)
  // What it compares stays as it read it until it commits: no other writer of the campaigns of its
  // cells (`campaigns`, null for a date file's) meanwhile.
  await lockCampaigns(db, campaigns)
  // A key a newer document holds by claim is made real first: the compare reads the holder from the row.
  await materializeClaims(db, sql`select p.* from datapoint p join rf_winners w on w.key = p.unique_index`, { newerThan: tD, campaignsHeld: true })
  await createChangedKeys(db)
  await sql`drop table if exists rf_offered`.execute(db)
  await sql`create temp table rf_offered (like rf_winners) on commit drop`.execute(db)
  // A first upload's keys are all new: they are not copied into CHANGED_KEYS nor into `rf_offered`,
  // its campaigns are recomputed whole. The `exists` says whether any key is stored already; it is
  // evaluated once. Otherwise the winners the upsert is offered (new keys, and keys this document
  // takes) are copied into `rf_offered` here, where each key's row is read anyway: an unchanged
  // re-upload's upsert then reads nothing.
  const counts = await sql<{ keys: number; existing: number; superseded: number; repeated: number; offered: number; held: boolean; changed: number[] | null }>`
    with compared as materialized (select w.ctid as winner, w.campaign_id, w.location_id, w.indicator_id, p.id is not null as existing,
        p.id is null or (${takes('p', 'w', tD, own)}) as offered,
        p.precedence_at > ${tD} and p.source_submission_id not in ${own} as superseded,
        p.id is null or ((p.precedence_at <= ${tD} or p.source_submission_id in ${own}) and p.value is distinct from w.value) as changed,
        ${byClaim} and p.precedence_at <= ${tD} and p.source_submission_id not in ${own} and p.value is not distinct from w.value as repeated
      from rf_winners w left join datapoint p on p.unique_index = w.key),
    noted as (insert into ${CHANGED_KEYS} select campaign_id, location_id, indicator_id from compared
      where changed and campaign_id is not null and exists (select 1 from compared where existing)),
    copied as (insert into rf_offered select w.* from rf_winners w
      where w.ctid = any (array(select winner from compared where offered)) and exists (select 1 from compared where existing))
    select count(*)::int as keys, count(*) filter (where offered)::int as offered, count(*) filter (where existing)::int as existing,
      count(*) filter (where superseded)::int as superseded, count(*) filter (where repeated)::int as repeated,
      ${holdsDatapoints(D)} as held,
      array_agg(distinct campaign_id) filter (where changed and campaign_id is not null) as changed
    from compared`.execute(db)
  const { keys, existing, superseded, repeated, offered, held, changed } = counts.rows[0]
  let inserted = 0
  let updated = 0
  const source = existing === 0 ? 'rf_winners' : 'rf_offered'
  // Planned with its size known: a few offered rows probe datapoint's key, a whole file's are joined.
  if (existing && offered) await sql`analyze rf_offered`.execute(db)
  const chunks = await chunksOf(db, source, existing === 0 ? keys : offered)
  for (const [done, chunk] of chunks.entries()) {
    progress('datapoints written', Math.round((keys * done) / chunks.length), keys)
    const written = existing === 0 ? await insertFreshKeys(db, tD, own, chunk) : await upsertWinners(db, tD, own, sql`${sql.table(source)} w where ${chunk}`)
    inserted += written.rows[0].inserted
    updated += written.rows[0].updated
  }
  progress('datapoints written', keys, keys)
  if (repeated) await recordClaims(db, doc.id)
  // The document's datapoints under keys it no longer makes; a document that held none (its first
  // run) has none to delete, and the search would visit every row it just wrote. Found once, their
  // campaigns locked (a campaign it no longer writes to at all is not yet); those a newer document holds
  // by claim are made real first (they are that document's, not this one's), the rest deleted.
  if (held) {
    await sql`drop table if exists rf_vanished`.execute(db)
    await sql`create temp table rf_vanished on commit drop as select d.id, d.campaign_id from datapoint d
      where d.source_submission_id in ${own} and not exists (select 1 from rf_winners w where w.key = d.unique_index)`.execute(db)
    await lockCampaignsOf(db, sql`select campaign_id from rf_vanished`)
    await materializeClaims(db, sql`select d.* from datapoint d join rf_vanished v on v.id = d.id`, { campaignsHeld: true })
  }
  const deleted = !held
    ? { rows: [{ deleted: 0, campaigns: null }] }
    : await sql<{ deleted: number; campaigns: number[] | null }>`
    with d as (delete from datapoint d using rf_vanished v where v.id = d.id and d.source_submission_id in ${own}
    returning d.campaign_id, d.location_id, d.indicator_id),
    noted as (insert into ${CHANGED_KEYS} select campaign_id, location_id, indicator_id from d where campaign_id is not null)
    select count(*)::int as deleted, array_agg(distinct campaign_id) filter (where campaign_id is not null) as campaigns from d`.execute(db)
  await sql`drop table if exists rf_winners, rf_offered, rf_vanished`.execute(db)
  const touched = new Set([...(changed ?? []), ...(deleted.rows[0].campaigns ?? [])])
  return {
    counts: { inserted, updated, unchanged: keys - inserted - updated - superseded, superseded, deleted: deleted.rows[0].deleted },
    touched: [...touched].sort((a, b) => a - b),
    // Whether `CHANGED_KEYS` holds every changed key: not for a first upload, whose keys are all new.
    keysNoted: existing > 0,
  }
}

type Written = { rows: Array<{ inserted: number; updated: number }> }

/** What a write statement `w` returning `inserted` did, counted in SQL (returning every row would send millions to this process). */
const countWritten = (w: RawBuilder<unknown>) => sql<Written['rows'][number]>`with w as (${w})
  select count(*) filter (where inserted)::int as inserted, count(*) filter (where not inserted)::int as updated
  from w`

/**
 * The winners `winners` selects (`<table> w where <condition>`) as datapoints of precedence `tD`; the
 * caller adds what happens on a conflict and what is returned.
 */
const insertWinners = (
  tD: RawBuilder<unknown>,
  winners: RawBuilder<unknown>,
) => sql`insert into datapoint as p (indicator_id, location_id, campaign_id, data_date, value, source_submission_id, unique_index, precedence_at)
  select w.indicator_id, w.location_id, w.campaign_id, w.data_date, w.value, w.source_submission_id, w.key, ${tD} from ${winners}`

/**
 * Whether datapoint `p` takes winner `w`: this document may write the key (§5.5) and the value differs,
 * or the row is this document's under another of its submissions (or repeated values are rewritten).
 */
const takes = (p: string, w: string, tD: RawBuilder<unknown>, own: RawBuilder<unknown>) => {
  const [row, winner] = [sql.ref(p), sql.ref(w)]
  return sql`(${row}.precedence_at <= ${tD} or ${row}.source_submission_id in ${own})
    and (${row}.value is distinct from ${winner}.value or (${row}.source_submission_id <> ${winner}.source_submission_id
      and (${row}.source_submission_id in ${own} or not ${sql.lit(repeatedValues.heldByClaim)})))`
}

/**
 * The winners `winners` selects where some keys already have a datapoint: an upsert of those a
 * datapoint does not hold already (new keys, and keys it takes), checked again as the statement runs.
 * Winners it would leave are not offered to the upsert: a conflicting row is locked even where the
 * update's condition then leaves it, which would write every row of an unchanged re-upload.
 */
async function upsertWinners(db: Kysely<DB>, tD: RawBuilder<unknown>, own: RawBuilder<unknown>, winners: RawBuilder<unknown>): Promise<Written> {
  const offered = sql`${winners} and not exists (select 1 from datapoint q where q.unique_index = w.key and not (${takes('q', 'w', tD, own)}))`
  return countWritten(sql`${insertWinners(tD, offered)}
    on conflict (unique_index) do update set
      indicator_id = excluded.indicator_id, location_id = excluded.location_id, campaign_id = excluded.campaign_id,
      data_date = excluded.data_date, value = excluded.value, source_submission_id = excluded.source_submission_id,
      precedence_at = excluded.precedence_at, created_at = now()
    where ${takes('p', 'excluded', tD, own)}
    returning (xmax = 0) as inserted`).execute(db)
}

/**
 * The winners where none of their keys had a datapoint when counted (a first upload of new data): a
 * plain insert, without the upsert's per-row speculative insertion (~30 % of the write, bench/README.md
 * "Ingestion"). Should a concurrent writer commit one of the keys meanwhile, the insert fails on the
 * unique key and the upsert runs instead, from a savepoint, with the same outcome as if it had run
 * first.
 */
async function insertFreshKeys(db: Kysely<DB>, tD: RawBuilder<unknown>, own: RawBuilder<unknown>, chunk: RawBuilder<unknown>): Promise<Written> {
  await sql`savepoint fresh_keys`.execute(db)
  try {
    const written = await countWritten(sql`${insertWinners(tD, sql`rf_winners w where ${chunk}`)} returning true as inserted`).execute(db)
    await sql`release savepoint fresh_keys`.execute(db)
    return written
  } catch (error) {
    if (!isUniqueViolation(error)) throw error
    await sql`rollback to savepoint fresh_keys`.execute(db)
    return upsertWinners(db, tD, own, sql`rf_winners w where ${chunk}`)
  }
}

/**
 * `table` (`rf_winners` or `rf_offered`, of `rows` rows) in chunks of about `syncChunks.rows` rows, each
 * a condition on `w`: a range of the table's blocks (a TID range scan reads only those). The tables
 * were written in key order, so each chunk is a range of keys, written in order.
 */
async function chunksOf(db: Kysely<DB>, table: 'rf_winners' | 'rf_offered', rows: number): Promise<RawBuilder<unknown>[]> {
  const count = Math.ceil(rows / syncChunks.rows)
  if (count <= 1) return [sql`true`]
  const { rows: size } = await sql<{
    blocks: number
  }>`select (pg_relation_size(${sql.lit(table)}) / current_setting('block_size')::int)::int as blocks`.execute(db)
  const step = Math.max(1, Math.ceil(size[0].blocks / count))
  const block = (k: number) => sql`${sql.lit(`(${k * step},0)`)}::tid`
  return Array.from({ length: count }, (_, k) => (k === count - 1 ? sql`w.ctid >= ${block(k)}` : sql`w.ctid >= ${block(k)} and w.ctid < ${block(k + 1)}`))
}
