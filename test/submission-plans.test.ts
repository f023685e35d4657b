// Two statements of every upload that read a document's own submissions: planned from a document's
// average size, they walked or scanned every submission of every document to find a new document's
// none (a district's correction 0.27 s at 1 M values, 0.8 s at 30 M: bench:scale). Read on the
// document's index, they touch a handful of pages however many submissions are stored. PostgreSQL only:
// the plans are its planner's, on its statistics.
import { type RawBuilder, sql } from 'kysely'
import t from 'tap'
import { lastStoredSubmission } from '../lib/ingest/submissions.js'
import { holdsDatapoints } from '../lib/ingest/sync.js'
import { build, engine } from './helper.js'

const skip = engine !== 'postgres' && "PostgreSQL only: the plans are its planner's"

/** The shared buffers a statement touched, run with EXPLAIN (ANALYZE, BUFFERS). */
async function buffersOf(db: Parameters<RawBuilder<unknown>['execute']>[0], statement: RawBuilder<unknown>): Promise<number> {
  const { rows } = await sql<{ 'QUERY PLAN': Array<{ Plan: Record<string, number> }> }>`explain (analyze, buffers, format json) ${statement}`.execute(db)
  const plan = rows[0]['QUERY PLAN'][0].Plan
  return plan['Shared Hit Blocks'] + plan['Shared Read Blocks']
}

t.test("a new document's submissions are found on its index, not among every document's", { skip }, async (t) => {
  const { db } = await build(t)
  // 150 documents of 1,600 lines each (240,000 submissions), then a new one with none. More documents
  // than the statistics keep as most common values: a document's rows are estimated at the average.
  await sql`insert into source_doc (doc_title, file_type, guid) select 'd' || g, 'campaign', 'd' || g from generate_series(1, 150) g`.execute(db)
  await sql`insert into source_submission (document_id, instance_guid, row_number, submission_json)
    select d.id, n::text, n, '{}' from source_doc d cross join generate_series(1, 1600) n`.execute(db)
  // A datapoint from each line. Their locations, indicators and campaigns are not rows: the trigger
  // that checks them is off in this transaction (as for a replica's apply).
  await db.transaction().execute(async (trx) => {
    await sql`set local session_replication_role = replica`.execute(trx)
    await sql`insert into datapoint (indicator_id, location_id, campaign_id, value, source_submission_id, unique_index, precedence_at)
      select 1, s.row_number, s.document_id, 1, s.id, s.id::text, now() from source_submission s`.execute(trx)
  })
  await sql`analyze source_submission, datapoint`.execute(db)
  const fresh = (await sql<{ id: number }>`insert into source_doc (doc_title, file_type, guid) values ('new', 'campaign', 'new') returning id`.execute(db))
    .rows[0].id
  const last = await buffersOf(db, lastStoredSubmission(fresh))
  t.ok(last < 50, `its last submission: ${last} buffers (a walk of the primary key reads thousands)`)
  const held = await buffersOf(db, sql`select ${holdsDatapoints(sql.lit(fresh))}`)
  t.ok(held < 50, `whether it holds datapoints: ${held} buffers (a scan of every submission reads thousands)`)
  t.equal((await lastStoredSubmission(fresh).execute(db)).rows[0].last, null, 'none stored')
})
