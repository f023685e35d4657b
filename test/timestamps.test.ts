// Every timestamp the API writes is in the seed's form: UTC, six fractional digits, no zone
// designator (resource-api "Value formats"); input accepts a zone or none (none means UTC).
import t, { type Test } from 'tap'
import { admin, build, eventually } from './helper.js'
import { client } from './api.js'
import { world } from './world.js'

const SEED_FORM = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}$/

/**
 * The timestamp is in the seed's form and within a minute of now, read as UTC: a zone's offset is a
 * whole number of quarter hours, and a loaded machine takes seconds between a row's write and its read.
 */
function recent(t: Test, value: unknown, what: string) {
  t.match(value, SEED_FORM, `${what}: ${value}`)
  t.ok(Math.abs(Date.parse(`${value}Z`) - Date.now()) < 60_000, `${what} is now, in UTC`)
}

t.test('timestamps in answers, job and ingest summaries and CSV exports have no zone designator', async (t) => {
  const { app } = await build(t)
  const api = client(app)
  await world(api)
  const type = await api.post('/campaign_type/', { name: 'SNID' })
  const created = await api.post('/campaign/', { name: 'T', campaign_type_id: type.body.id, start_date: '2017-01-01', end_date: '2017-01-02' })
  recent(t, created.body.created_at, "a created campaign's created_at")
  recent(t, (await api.get(`/campaign/${created.body.id}/`)).body.created_at, 'the same, read back')

  // An ingest summary: the document transform_upload answers with.
  const doc = await api.post('/document/', {
    docfile: Buffer.from('campaign,geocode,n\nC,a1,3\n').toString('base64'),
    doc_title: 't.csv',
    file_type: 'campaign',
  })
  const run = await api.get(`/transform_upload/?document_id=${doc.body.id}`)
  t.equal(run.status, 200)
  recent(t, run.body.objects[0].created_at, "the ingest summary's document")

  // A job: created, started and finished, and the result it keeps.
  const queued = await api.get(`/refresh_master/?document_id=${doc.body.id}`, { ...admin, prefer: 'respond-async' })
  t.equal(queued.status, 202)
  recent(t, queued.body.created_at, "a job's created_at")
  const done = (
    await eventually(
      () => api.get(`/job/${queued.body.id}/`),
      (r) => r.body.state === 'completed',
      30_000,
    )
  ).body
  recent(t, done.started_at, "a job's started_at")
  recent(t, done.finished_at, "a job's finished_at")
  recent(t, done.result.created_at, "the job's result")

  // CSV: the timestamp column of an export.
  const csv = (await api.get(`/campaign/?id=${created.body.id}&format=csv&fields=id,created_at`)).text.trim().split('\r\n')
  t.equal(csv[0], 'id,created_at')
  recent(t, csv[1].split(',')[1], "a CSV export's created_at")
})

t.test('an input timestamp with Z, with an offset or without a zone is the same UTC instant', async (t) => {
  const { app } = await build(t)
  const api = client(app)
  const w = await world(api)
  const { created_at: stored } = (await api.get(`/campaign/${w.C}/`)).body as { created_at: string }
  const instant = new Date(`${stored}Z`)
  // The same instant written three ways; the microseconds are the stored ones.
  const micro = stored.slice(19)
  const plusTwo = `${new Date(instant.getTime() + 2 * 3600_000).toISOString().slice(0, 19) + micro}+02:00`
  for (const written of [stored, `${stored}Z`, plusTwo]) {
    const exact = await api.get(`/campaign/?created_at=${encodeURIComponent(written)}`)
    t.equal(exact.status, 200, written)
    t.same(
      exact.body.objects.map((c: { id: number }) => c.id),
      [w.C],
      `created_at=${written} finds the campaign`,
    )
    const later = await api.get(`/campaign/?created_at__gt=${encodeURIComponent(written)}`)
    t.same(
      later.body.objects.map((c: { id: number }) => c.id),
      [],
      `nothing after ${written}`,
    )
  }
})

t.test('a timestamp whose offset is no ISO 8601 offset (+99:00) is 400 naming the field, in a body and in a filter', async (t) => {
  const { app } = await build(t)
  const api = client(app)
  const dashboard = (await api.post('/dashboard/', { title: 'd' })).body.id
  for (const zone of ['+99:00', '-24:00', '+05:60']) {
    const share = await api.post('/dashboard_share/', { dashboard_id: dashboard, expires_at: `2030-01-01T00:00:00${zone}` })
    t.equal(share.status, 400, `expires_at with ${zone}: ${JSON.stringify(share.body)}`)
    t.match(share.body, { code: 'VALIDATION_ERROR', message: /expires_at/ })
    const filtered = await api.get(`/campaign/?created_at__gt=${encodeURIComponent(`2016-01-01T00:00:00${zone}`)}`)
    t.equal(filtered.status, 400, `created_at__gt with ${zone}`)
  }
  const fine = await api.post('/dashboard_share/', { dashboard_id: dashboard, expires_at: '2030-01-01T00:00:00+14:00' })
  t.equal(fine.status, 201, 'the largest offsets in use (+14:00) are taken')
  // ISO 8601 and RFC 3339 allow offsets to ±23:59, beyond PostgreSQL's ±15:59: turned into UTC first.
  const far = await api.post('/dashboard_share/', { dashboard_id: dashboard, expires_at: '2030-01-02T00:00:00.5+23:59' })
  t.equal(far.status, 201, `+23:59 is taken: ${JSON.stringify(far.body)}`)
  t.equal(far.body.expires_at, '2030-01-01T00:01:00.500000', 'as the same instant in UTC')
  const west = await api.get(`/campaign/?created_at__gt=${encodeURIComponent('2016-01-01T00:00:00-23:59')}`)
  t.equal(west.status, 200, `and -23:59 in a filter: ${JSON.stringify(west.body).slice(0, 200)}`)
})
