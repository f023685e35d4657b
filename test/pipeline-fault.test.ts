// A failure half-way through transform_upload leaves the database exactly as it was (ingestion §5.6).
import t from 'tap'
import { sql, type KyselyPlugin } from 'kysely'
import { build, rowCounts, tempDir } from './helper.js'
import { buildApp } from '../app.js'
import { client } from './api.js'
import { atHalfWay, halfWayUpload } from './fixtures.js'
import { submissionBatch } from '../lib/ingest/submissions.js'

t.test('a fault after half the rows rolls the whole transform back', async (t) => {
  const { app, db } = await build(t)
  const api = client(app)
  const doc = await halfWayUpload(api.post)
  const before = await rowCounts(db)
  await atHalfWay(t, db, 'fail_half_way', "raise exception 'injected fault after half the rows'")
  const failed = await api.get(`/transform_upload/?document_id=${doc}`)
  t.equal(failed.status, 500)
  t.same(failed.body, {
    statusCode: 500,
    error: 'Internal Server Error',
    code: 'INTERNAL_ERROR',
    message: 'An internal error occurred',
    request_id: failed.headers['x-request-id'],
  })
  t.notOk(failed.text.includes('injected'), 'no internals leak')
  t.same(await rowCounts(db), before, 'nothing was written')
  t.equal((await api.get(`/document/${doc}/`)).body.ingest_stats, null)
  await sql.raw('drop trigger fail_half_way on source_submission').execute(db)
  const ok = await api.get(`/transform_upload/?document_id=${doc}`)
  t.equal(ok.status, 200, 'the server keeps answering, and the same document then goes through')
  t.match(ok.body.objects[0].ingest_stats, { submissions: { created: 3000 }, rows: { processed: 1, missing_location: 2999 } })
})

t.test('a fault in one batch while the next is staged rolls the whole transform back, and nothing is left unhandled', async (t) => {
  const { app, db } = await build(t)
  const api = client(app)
  // Batches of 500 rows: the fault comes in the third batch's write, while the fourth is read and staged.
  const size = submissionBatch.rows
  submissionBatch.rows = 500
  t.teardown(() => {
    submissionBatch.rows = size
  })
  const unhandled: unknown[] = []
  const note = (reason: unknown) => unhandled.push(reason)
  process.on('unhandledRejection', note)
  t.teardown(() => process.off('unhandledRejection', note))
  const doc = await halfWayUpload(api.post)
  const before = await rowCounts(db)
  await atHalfWay(t, db, 'fail_in_batch', "raise exception 'injected fault in a batch'")
  const failed = await api.get(`/transform_upload/?document_id=${doc}`)
  t.equal(failed.status, 500)
  t.same(await rowCounts(db), before, 'nothing was written')
  await new Promise((resolve) => setTimeout(resolve, 50))
  t.same(unhandled, [], 'no promise was rejected without a handler')
  await sql.raw('drop trigger fail_in_batch on source_submission').execute(db)
  const ok = await api.get(`/transform_upload/?document_id=${doc}`)
  t.equal(ok.status, 200, 'the same document then goes through, batch by batch')
  t.match(ok.body.objects[0].ingest_stats, { submissions: { created: 3000 }, rows: { processed: 1, missing_location: 2999 } })
  const ids = await sql<{ ordered: boolean }>`select bool_and(row_number > previous) as ordered from (select row_number,
    lag(row_number) over (order by id) as previous from source_submission where document_id = ${doc}) s where previous is not null`.execute(db)
  t.equal(ids.rows[0].ordered, true, 'ids follow the rows across batches')
})

t.test("a failed read of the next batch answers as itself, not as the aborted transaction's next write", async (t) => {
  const { app: setup, database, db } = await build(t)
  const size = submissionBatch.rows
  submissionBatch.rows = 500
  t.teardown(() => {
    submissionBatch.rows = size
  })
  const doc = await halfWayUpload(client(setup).post)
  t.equal((await client(setup).get(`/transform_upload/?document_id=${doc}`)).status, 200)
  // A refresh reads the stored submissions 500 at a time, each read sent before the last batch's writes.
  // Its third read fails in the database (a lock timeout, a cancelled statement, a deadlock): the
  // transaction is aborted there, and the second batch's writes after it fail with "current
  // transaction is aborted". Each of those failures is a retry's business: 503 with Retry-After.
  let reads = 0
  const failingRead = db.selectNoFrom(sql<number>`read_failure_injected()`.as('failed')).toOperationNode()
  const thirdReadFails: KyselyPlugin = {
    transformQuery: ({ node }) => {
      const batchRead = node.kind === 'SelectQueryNode' && node.limit && JSON.stringify(node.from).includes('"source_submission"')
      return batchRead && ++reads === 3 ? failingRead : node
    },
    transformResult: async ({ result }) => result,
  }
  const app = await buildApp({
    logger: false,
    database: { ...database, db: database.db.withPlugin(thirdReadFails) },
    config: { DATA_DIR: tempDir(t, 'rhizome-read-fault-'), MAX_EVENT_LOOP_DELAY_MS: 0 },
  })
  t.teardown(() => app.close())
  t.teardown(() => sql.raw('drop function if exists read_failure_injected()').execute(db))
  const before = await rowCounts(db)
  for (const [code, message] of [
    ['55P03', 'canceling statement due to lock timeout'],
    ['57014', 'canceling statement due to statement timeout'],
    ['40P01', 'deadlock detected'],
  ]) {
    await sql
      .raw(`create or replace function read_failure_injected() returns int language plpgsql as $$
      begin raise exception '${message}' using errcode = '${code}'; end $$`)
      .execute(db)
    reads = 0
    const failed = await client(app).get(`/refresh_master/?document_id=${doc}`)
    t.equal(reads, 3, `${code}: the third batch read was the one that failed`)
    t.equal(failed.status, 503, failed.text)
    t.equal(failed.body.code, 'DATABASE_BUSY')
    t.equal(failed.headers['retry-after'], '5')
  }
  t.same(await rowCounts(db), before, 'nothing was written')
})
