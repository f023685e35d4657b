// A failure half-way through transform_upload leaves the database exactly as it was (ingestion §5.6).
import t from 'tap'
import { sql } from 'kysely'
import { build, rowCounts } from './helper.js'
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
