// What operators see of a running process: Prometheus metrics (checked by promtool), liveness and
// readiness, request ids, and logs that never hold a key.
import { spawnSync } from 'node:child_process'
import { Writable } from 'node:stream'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { sql } from 'kysely'
import t, { type Test } from 'tap'
import { buildApp } from '../app.js'
import { ADMIN_KEY, ALICE_KEY, admin, build, resetDatabase } from './helper.js'
import { client } from './api.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const promtool = spawnSync('promtool', ['--version']).status === 0

/** A series' value in Prometheus text, 0 when it is not there yet. */
const seriesValue = (text: string, series: string) =>
  Number(
    text
      .split('\n')
      .find((line) => line.startsWith(`${series} `))
      ?.slice(series.length + 1) ?? 0,
  )

t.test('GET /metrics: Prometheus text that promtool accepts, routes as patterns, every layer recorded', async (t) => {
  const { app } = await build(t)
  const api = client(app)
  const type = await api.post('/campaign_type/', { name: 'NID' })
  // The registry is the process's (other apps built in this process have counted before): what this
  // test's requests add is the difference.
  const ok = 'http_request_duration_seconds_count{method="GET",route="/api/v1/campaign_type/:id/",status_code="200"}'
  const notFound = 'http_request_duration_seconds_count{method="GET",route="/api/v1/campaign_type/:id/",status_code="404"}'
  const before = (await app.inject({ url: '/metrics' })).body
  for (let i = 0; i < 3; i++) t.equal((await api.get(`/campaign_type/${type.body.id}/`)).status, 200)
  t.equal((await api.get('/campaign_type/999999/')).status, 404)
  t.equal((await api.get('/no_such_resource/')).status, 404)
  t.equal((await api.post('/detect', { text: 'have a nice day' })).status, 200)
  const doc = await api.post('/document/', {
    docfile: Buffer.from('campaign,geocode,n\nC,x,1\n').toString('base64'),
    doc_title: 'm.csv',
    file_type: 'campaign',
  })
  t.equal((await api.get(`/transform_upload/?document_id=${doc.body.id}`)).status, 200)

  const res = await app.inject({ url: '/metrics' })
  t.equal(res.statusCode, 200)
  t.match(res.headers['content-type'], /^text\/plain; version=0\.0\.4/)
  const text = res.body
  t.equal(seriesValue(text, ok) - seriesValue(before, ok), 3, 'three reads of a campaign type, counted under the route pattern')
  t.equal(seriesValue(text, notFound) - seriesValue(before, notFound), 1, 'one 404 under the same pattern')
  t.notMatch(text, `route="/api/v1/campaign_type/${type.body.id}/"`, 'never a raw id')
  t.match(text, /route="unmatched",status_code="404"/)
  for (const name of [
    'process_cpu_user_seconds_total',
    'nodejs_eventloop_lag_seconds',
    'nodejs_heap_size_used_bytes',
    'rhizome_db_query_duration_seconds_count',
    'rhizome_db_pool_total_connections',
    'rhizome_detect_texts_total',
    'rhizome_detect_windows_per_forward_pass_count',
    'rhizome_detect_inference_seconds_count',
    'rhizome_ingest_cells_total',
    'rhizome_recompute_duration_seconds_count',
  ]) {
    t.match(text, new RegExp(`^${name}`, 'm'), name)
  }
  t.match(text, /rhizome_cache_lookups_total\{cache="detail",result="hit"\} [1-9]/)
  t.match(text, /rhizome_cache_lookups_total\{cache="auth",result="hit"\} [1-9]/)
  t.match(text, /rhizome_ingest_rejected_rows_total\{reason="missing_campaign"\} [1-9]/, 'the row of an unmapped campaign')

  if (!promtool) {
    if (process.env.CI) t.fail('promtool is missing (.ci/run installs the Debian package prometheus)')
    else t.comment('promtool is not installed here (Debian package prometheus): the format check is skipped')
    return
  }
  const check = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' })
  t.equal(check.status, 0, `promtool check metrics: ${check.stdout}${check.stderr}`)
})

t.test('METRICS_TOKEN: /metrics then needs that bearer token', async (t) => {
  const token = 'm'.repeat(32)
  const { app } = await build(t, { METRICS_TOKEN: token })
  t.equal((await app.inject({ url: '/metrics' })).statusCode, 401)
  t.equal((await app.inject({ url: '/metrics', headers: { authorization: `Bearer ${'x'.repeat(32)}` } })).statusCode, 401)
  t.equal((await app.inject({ url: '/metrics', headers: { authorization: `Bearer ${token}` } })).statusCode, 200)
  // As many characters as the token, more bytes: the comparison must neither throw nor tell the length.
  const nonAscii = await app.inject({ url: '/metrics', headers: { authorization: `Bearer ${'m'.repeat(31)}\u00e9` } })
  t.equal(nonAscii.statusCode, 401, 'a wrong token with a non-ASCII byte is 401, not 500')
  t.equal(nonAscii.json().code, 'UNAUTHENTICATED')
  t.equal((await app.inject({ url: '/metrics', headers: { authorization: `Bearer ${'m'.repeat(5)}` } })).statusCode, 401, 'a shorter one too')
})

t.test('liveness and readiness', async (t) => {
  const { app, db } = await build(t)
  const api = client(app)
  t.same((await api.get('/health/live')).body, { status: 'ok' })
  const ready = await api.get('/health/ready')
  t.equal(ready.status, 200)
  t.same(ready.body, { status: 'ready', database: 'ok', migrations: 'ok', model: 'ok', shutting_down: 'no' })
  // A migration not applied (a new release started against an old database): not ready.
  const last = (await sql<{ name: string }>`select name from kysely_migration order by name desc limit 1`.execute(db)).rows[0]
  await sql`delete from kysely_migration where name = ${last.name}`.execute(db)
  const pending = await api.get('/health/ready')
  t.equal(pending.status, 503)
  t.equal(pending.body.migrations, `pending: ${last.name}`)
  await sql`insert into kysely_migration (name, timestamp) values (${last.name}, now()::text)`.execute(db)
  t.equal((await api.get('/health/ready')).status, 200)
})

/** An app whose log records are collected (every level), on the shared test database. */
async function loggedApp(t: Test, config: Record<string, unknown> = {}) {
  const { database } = await resetDatabase()
  const lines: string[] = []
  const stream = new Writable({ write: (chunk, _enc, done) => (lines.push(...String(chunk).split('\n').filter(Boolean)), done()) })
  const app = await buildApp({
    database,
    config: { DATA_DIR: join(ROOT, '.data', 'test'), MAX_EVENT_LOOP_DELAY_MS: 0, LOG_LEVEL: 'trace', ...config },
    logStream: stream,
  })
  await app.ready()
  t.teardown(() => app.close())
  return { app, lines }
}

t.test('request ids: on every answer, in every log line of the request and in error bodies; taken from a trusted proxy only', async (t) => {
  const { app, lines } = await loggedApp(t, { TRUST_PROXY: '10.0.0.1' })
  const ok = await app.inject({ url: '/api/v1/campaign/', headers: admin })
  const id = ok.headers['x-request-id'] as string
  t.match(id, /^[0-9a-f-]{36}$/)
  const records = lines.map((l) => JSON.parse(l) as { reqId?: string })
  t.ok(records.filter((r) => r.reqId === id).length >= 2, "the request's log lines carry its id")
  const other = await app.inject({ url: '/api/v1/campaign/', headers: admin })
  t.not(other.headers['x-request-id'], id, 'a new id per request')

  const failed = await app.inject({ url: '/api/v1/campaign/abc/', headers: admin })
  t.equal(failed.statusCode, 400)
  t.equal(failed.json().request_id, failed.headers['x-request-id'], 'an error body names its request')

  const fromProxy = await app.inject({ url: '/health/live', headers: { 'x-request-id': 'edge-42' }, remoteAddress: '10.0.0.1' })
  t.equal(fromProxy.headers['x-request-id'], 'edge-42', "the trusted proxy's id is kept")
  const fromClient = await app.inject({ url: '/health/live', headers: { 'x-request-id': 'edge-42' }, remoteAddress: '198.51.100.9' })
  t.not(fromClient.headers['x-request-id'], 'edge-42', "a client's own id is not believed")
  const hostile = await app.inject({ url: '/health/live', headers: { 'x-request-id': 'a b\u0000' }, remoteAddress: '10.0.0.1' })
  t.match(hostile.headers['x-request-id'], /^[0-9a-f-]{36}$/, 'an id that is not a plain token is replaced')
})

t.test('logs never hold an API key or an Authorization header', async (t) => {
  const { app, lines } = await loggedApp(t)
  const wrong = 'f'.repeat(40)
  const requests = [
    { url: '/api/v1/campaign/', headers: admin },
    { url: '/api/v1/campaign/', headers: { authorization: `Bearer ${ADMIN_KEY}` } },
    { url: '/api/v1/campaign/', headers: { authorization: `ApiKey alice:${ALICE_KEY}` } },
    { url: '/api/v1/campaign/', headers: { authorization: `ApiKey admin:${wrong}` } },
    { url: '/api/v1/campaign/abc/', headers: admin },
    { url: '/api/v1/nothing/', headers: admin },
    { method: 'POST' as const, url: '/api/v1/campaign/', headers: admin, payload: '{' },
  ]
  for (const request of requests) await app.inject(request)
  t.ok(lines.length >= requests.length * 2, `${lines.length} log lines`)
  for (const secret of [ADMIN_KEY, ALICE_KEY, wrong])
    t.notOk(
      lines.some((l) => l.includes(secret)),
      'no key in any line',
    )
  t.notOk(
    lines.some((l) => /authorization"\s*:\s*"(ApiKey|Bearer)/i.test(l)),
    'no Authorization header value',
  )
})
