// Background jobs through the API, on both engines (in-process workers): `Prefer: respond-async` on
// the pipeline's steps, the job resource, one job per document and campaign, cancellation, failures
// with the synchronous call's code and message, and who sees which job.
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { sql } from 'kysely'
import { admin, alice, build, eventually, type Harness } from './helper.js'
import { client, type Response } from './api.js'
import { hMap } from './fixtures.js'
import { uploadFile } from './fixtures/upload-files.js'
import { jobsSchemaOf } from '../lib/data/job-queue.js'

const ASYNC = { ...admin, prefer: 'respond-async' }
const ALICE_ASYNC = { ...alice, prefer: 'respond-async' }
type Api = ReturnType<typeof client>

/** Polls the job until it has finished (completed, failed or cancelled). */
async function finished(api: Api, id: number, headers?: Record<string, string>): Promise<Response> {
  return eventually(
    () => api.get(`/job/${id}/`, headers),
    (r) => ['completed', 'failed', 'cancelled'].includes(r.body?.state),
    30_000,
  )
}

/** The stats of a run that do not depend on when it ran. */
const comparable = (stats: Record<string, unknown>) => ({ ...stats, at: undefined, timings_ms: undefined })

async function uploadDocument(api: Api, name: string): Promise<number> {
  const doc = await api.post('/document/', { docfile: (await uploadFile(name)).toString('base64'), doc_title: name, file_type: 'campaign' })
  if (doc.status !== 201) throw new Error(doc.text)
  return doc.body.id
}

const value = async (api: Api) => (await api.get('/campaign_datapoint/?indicator__in=164&campaign__in=99&location_id__in=12907')).body.objects[0]?.value

t.test('transform_upload and refresh_master in the background give what the synchronous calls give', async (t) => {
  const { app, db } = await build(t, { JOB_POLL_MS: 500 })
  const api = client(app)
  await hMap(db, api.post)
  const first = await uploadDocument(api, 'round-report.csv')
  const accepted = await api.get(`/transform_upload/?document_id=${first}`, ASYNC)
  t.equal(accepted.status, 202)
  t.equal(accepted.headers['preference-applied'], 'respond-async')
  t.equal(accepted.headers.location, `/api/v1/job/${accepted.body.id}/`)
  t.match(accepted.body, { kind: 'transform_upload', params: { document_id: first }, state: /^(created|active|completed)$/, result: null })
  const job = await finished(api, accepted.body.id)
  t.equal(job.body.state, 'completed', job.body.error?.message ?? 'completed')
  t.match(job.body, { error: null, progress: { stage: 'campaigns recomputed', done: 1, total: 1, step: 6, steps: 6 } })
  t.ok(job.body.started_at && job.body.finished_at && job.body.finished_at >= job.body.started_at)
  t.ok(Math.abs((await value(api)) - 0.0734) < 1e-9)
  const asyncStats = job.body.result.ingest_stats
  t.equal(job.body.result.id, first)

  // The same upload, synchronously, on a fresh database: the same numbers.
  const second = await uploadDocument(api, 'round-report-revised.csv')
  const refreshed = await api.get(`/transform_upload/?document_id=${second}`, ASYNC)
  t.equal((await finished(api, refreshed.body.id)).body.state, 'completed')
  t.equal(await value(api), 0.85, 'the newer upload wins, as synchronously')
  const again = await api.get(`/refresh_master/?document_id=${first}`, ASYNC)
  t.equal((await finished(api, again.body.id)).body.result.ingest_stats.action, 'refresh_master')

  const sync = await build(t)
  const syncApi = client(sync.app)
  await hMap(sync.db, syncApi.post)
  const doc = await uploadDocument(syncApi, 'round-report.csv')
  const answer = await syncApi.get(`/transform_upload/?document_id=${doc}`)
  t.equal(answer.status, 200, 'no Prefer header: the synchronous answer, as before')
  t.same(comparable(asyncStats), comparable(answer.body.objects[0].ingest_stats))
})

t.test('agg_refresh in the background; a failing document fails its job with the synchronous code and message', async (t) => {
  const { app, db, database } = await build(t, { JOB_POLL_MS: 500 })
  const api = client(app)
  await hMap(db, api.post)
  const doc = await uploadDocument(api, 'round-report.csv')
  await api.get(`/transform_upload/?document_id=${doc}`)
  const accepted = await api.get('/agg_refresh/?campaign_id=99', { ...admin, prefer: 'wait=5, respond-async' })
  t.equal(accepted.status, 202)
  const job = await finished(api, accepted.body.id)
  t.match(job.body, { state: 'completed', kind: 'agg_refresh', params: { campaign_id: 99 }, result: { id: 99, agg_stats: {} } })

  // A document whose stored file is gone: 422 UNREADABLE_FILE synchronously, the same as the job's error.
  const broken = await uploadDocument(api, 'round-report.csv')
  const stored = await db.selectFrom('source_doc').select('docfile').where('id', '=', broken).executeTakeFirstOrThrow()
  rmSync(join(app.config.DATA_DIR, stored.docfile!))
  const syncAnswer = await api.get(`/transform_upload/?document_id=${broken}`)
  t.equal(syncAnswer.status, 422)
  const failing = await api.get(`/transform_upload/?document_id=${broken}`, ASYNC)
  const failed = await finished(api, failing.body.id)
  t.equal(failed.body.state, 'failed')
  t.same(failed.body.error, { code: syncAnswer.body.code, message: syncAnswer.body.message })
  t.equal(failed.body.result, null)
  const queue = jobsSchemaOf(database)
  const attempts = await sql<{ retry_count: number }>`select retry_count from ${sql.table(`${queue}.job`)} q join job j on j.queue_job_id = q.id
    where j.id = ${failing.body.id}`.execute(db)
  t.same(
    attempts.rows.map((r) => r.retry_count),
    [0],
    'a client mistake is not retried',
  )

  // Requests the synchronous call refuses are refused before anything is queued.
  t.equal((await api.get('/transform_upload/?document_id=999999', ASYNC)).status, 404)
  t.equal((await api.get('/agg_refresh/?campaign_id=abc', ASYNC)).status, 400)
  t.equal((await api.get('/agg_refresh/?campaign_id=99', ALICE_ASYNC)).status, 202, 'a user may run agg_refresh')
  // A step with no background form answers as always: the preference is only that (RFC 7240).
  const marked = await api.get(`/queue_process/?document_id=${doc}`, ASYNC)
  t.equal(marked.status, 200)
  t.notOk(marked.headers['preference-applied'])
})

/** A harness whose process runs no jobs: submitted jobs stay queued. */
const idle = (t: Parameters<typeof build>[0]) => build(t, { JOB_CONCURRENCY: 0 })

t.test('one job per document and campaign at a time; recomputes asked for during a run are folded into one more', async (t) => {
  const { app, db, database }: Harness = await idle(t)
  const api = client(app)
  await hMap(db, api.post)
  const doc = await uploadDocument(api, 'round-report.csv')
  const first = await api.get(`/transform_upload/?document_id=${doc}`, ASYNC)
  const second = await api.get(`/refresh_master/?document_id=${doc}`, ASYNC)
  t.equal(second.status, 202)
  t.equal(second.body.id, first.body.id, 'the queued job of the document is the answer')
  const [campaignA, campaignB] = await Promise.all([api.get('/agg_refresh/?campaign_id=99', ASYNC), api.get('/agg_refresh/?campaign_id=99', ASYNC)])
  t.equal(campaignA.body.id, campaignB.body.id, 'two requests at once: one job')
  // The campaign's job starts (as a worker would take it): the next request is one more run, and the
  // one after it is folded into that.
  await sql`update ${sql.table(`${jobsSchemaOf(database)}.job`)} q set state = 'active', started_on = now()
    from job j where j.id = ${campaignA.body.id} and q.id = j.queue_job_id`.execute(db)
  const during = await api.get('/agg_refresh/?campaign_id=99', ASYNC)
  t.not(during.body.id, campaignA.body.id)
  t.equal(during.body.state, 'created')
  t.equal((await api.get('/agg_refresh/?campaign_id=99', ASYNC)).body.id, during.body.id)
  const list = await api.get('/job/?kind=agg_refresh')
  t.equal(list.body.meta.total_count, 2)
})

t.test('cancelling a job that has not started; a started one is 409; only a superuser cancels', async (t) => {
  const { app, db, database } = await idle(t)
  const api = client(app)
  await hMap(db, api.post)
  const doc = await uploadDocument(api, 'round-report.csv')
  const job = await api.get(`/transform_upload/?document_id=${doc}`, ASYNC)
  t.equal((await api.delete(`/job/${job.body.id}/`, alice)).status, 403)
  t.equal((await api.delete(`/job/${job.body.id}/`)).status, 204)
  const cancelled = await api.get(`/job/${job.body.id}/`)
  t.match(cancelled.body, { state: 'cancelled', result: null, error: null })
  t.ok(cancelled.body.finished_at)
  const next = await api.get(`/transform_upload/?document_id=${doc}`, ASYNC)
  t.not(next.body.id, job.body.id, 'a cancelled job is not the document’s job any more')
  await sql`update ${sql.table(`${jobsSchemaOf(database)}.job`)} q set state = 'active', started_on = now()
    from job j where j.id = ${next.body.id} and q.id = j.queue_job_id`.execute(db)
  const refused = await api.delete(`/job/${next.body.id}/`)
  t.equal(refused.status, 409)
  t.match(refused.body, { code: 'JOB_STARTED', message: `Job ${next.body.id} is active: only a job that has not started can be cancelled` })
  t.equal((await api.delete('/job/999999/')).status, 404)
  t.equal((await api.post('/job/', { kind: 'agg_refresh' })).status, 405, 'jobs are made by the pipeline, not written')
})

t.test('a restricted user sees only the jobs it asked for', async (t) => {
  const { app, db, aliceId } = await idle(t)
  const api = client(app)
  await hMap(db, api.post)
  const adminJob = await api.get(`/transform_upload/?document_id=${await uploadDocument(api, 'round-report.csv')}`, ASYNC)
  const aliceDoc = await api.post(
    '/document/',
    { docfile: (await uploadFile('round-report.csv')).toString('base64'), doc_title: 'mine.csv', file_type: 'campaign' },
    alice,
  )
  await db.insertInto('location_permission').values({ user_id: aliceId, top_lvl_location_id: 12907 }).execute()
  app.dropAuthCache()
  const aliceJob = await api.get(`/transform_upload/?document_id=${aliceDoc.body.id}`, ALICE_ASYNC)
  t.equal(aliceJob.status, 202, aliceJob.text)
  const seen = await api.get('/job/', alice)
  t.same(
    seen.body.objects.map((j: { id: number }) => j.id),
    [aliceJob.body.id],
  )
  t.equal((await api.get(`/job/${adminJob.body.id}/`, alice)).status, 404)
  t.equal((await api.get(`/job/${aliceJob.body.id}/`, alice)).status, 200)
  t.equal((await api.get('/job/')).body.meta.total_count, 2, 'a superuser sees every job')
  // The background form is refused exactly as the synchronous call, before anything is queued.
  t.equal((await api.get(`/refresh_master/?document_id=${adminJob.body.params.document_id}`, ALICE_ASYNC)).status, 403, "another's document")
  t.equal((await api.get('/agg_refresh/?campaign_id=99', ALICE_ASYNC)).status, 403, 'a whole campaign')
  t.equal((await api.get('/job/')).body.meta.total_count, 2, 'nothing queued')
})
