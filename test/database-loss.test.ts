// The database lost and hung under a running server (PostgreSQL only): a PostgreSQL server of the
// test's own (test/topology.ts: initdb in a temporary directory, a free loopback port) and the server as
// a process of its own (test/processes.ts). Killed with SIGKILL in the middle of an upload job: the
// process lives, the job completes once the database is back (not after JOB_EXPIRE_SECONDS) and every
// value is saved once. Stopped with SIGSTOP (a hang: connections open, nothing answers): every request
// answers within 5 s, a failure being 503 with Retry-After, /health/ready within 1 s; writes resume
// once it continues.
import pg from 'pg'
import t, { type Test } from 'tap'
import { engine, tempDir } from './helper.js'
import { api, type Server, startServer, until200 } from './processes.js'
import { type Cluster, missingPostgres, startPrimary } from './topology.js'

const skip = engine !== 'postgres' ? 'a PostgreSQL server of its own, as DATABASE_URL runs have (on PGlite the database is in the process)' : missingPostgres()
if (skip) t.comment(`skipped: needs ${skip}`)

/** Districts in the uploaded file, each with two values. */
const DISTRICTS = 40
/** The row whose insertion sleeps, so that the database is lost while the job runs. */
const SLOW_ROW = 20

interface Answer {
  status: number
  ms: number
  retryAfter: string | null
  body: string
}

/** A request and how long its answer took (status 0: none within 15 s, or the connection failed). */
async function timed(server: Server, path: string, init: RequestInit = {}): Promise<Answer> {
  const started = performance.now()
  try {
    const res = await fetch(`${server.url}${path}`, {
      ...init,
      headers: { ...server.admin(), 'content-type': 'application/json', ...(init.headers ?? {}) },
      signal: AbortSignal.timeout(15_000),
    })
    const body = await res.text()
    return { status: res.status, ms: performance.now() - started, retryAfter: res.headers.get('retry-after'), body }
  } catch (error) {
    return { status: 0, ms: performance.now() - started, retryAfter: null, body: String(error) }
  }
}

async function created(server: Server, path: string, body: unknown): Promise<number> {
  const res = await api(server, path, { method: 'POST', body: JSON.stringify(body) })
  if (res.status !== 201) throw new Error(`${path}: ${res.status} ${await res.text()}`)
  return ((await res.json()) as { id: number }).id
}

/** Districts G0… with their codes mapped, a campaign C and indicators n and m; the file's id, uploaded, not transformed. */
async function uploaded(server: Server): Promise<number> {
  const country = await created(server, '/location_type/', { name: 'Country', admin_level: 0 })
  const district = await created(server, '/location_type/', { name: 'District', admin_level: 1 })
  const root = await created(server, '/location/', { name: 'Root', location_code: 'ROOT', location_type_id: country })
  const type = await created(server, '/campaign_type/', { name: 'NID' })
  const campaign = await created(server, '/campaign/', { name: 'C', campaign_type_id: type, start_date: '2016-01-01', end_date: '2016-01-31' })
  const maps: Array<[string, string, number]> = [['campaign', 'C', campaign]]
  for (const name of ['n', 'm']) maps.push(['indicator', name, await created(server, '/indicator/', { name, short_name: name, data_format: 'int' })])
  for (let i = 0; i < DISTRICTS; i++) {
    const id = await created(server, '/location/', { name: `G${i}`, location_code: `G${i}`, location_type_id: district, parent_location_id: root })
    maps.push(['location', `G${i}`, id])
  }
  for (const [content_type, source_object_code, master_object_id] of maps)
    await created(server, '/source_object_map/', { content_type, source_object_code, master_object_id })
  const rows = Array.from({ length: DISTRICTS }, (_, i) => `C,G${i},${i},${1000 + i}`)
  const csv = Buffer.from(['campaign,geocode,n,m', ...rows].join('\n'))
  return created(server, '/document/', { docfile: csv.toString('base64'), doc_title: 'loss.csv', file_type: 'campaign' })
}

/** A direct connection to the test's PostgreSQL server (seeding its trigger, reading what was saved). */
async function psql<T = Record<string, unknown>>(primary: Cluster, text: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: primary.url, connectionTimeoutMillis: 5_000 })
  await client.connect()
  try {
    return (await client.query(text)).rows as T[]
  } finally {
    await client.end()
  }
}

function signal(primary: Cluster, name: NodeJS.Signals) {
  const send = (pid: number) => {
    try {
      process.kill(pid, name)
    } catch {
      // gone already
    }
  }
  // The postmaster first, then its children as they are once it is signalled: a backend it forked
  // between the list and its stop (the server's first ping, a new pool connection) would otherwise
  // run on, answer the ping, and the host would never look hung.
  const [postmaster, ...before] = primary.pids()
  if (postmaster === undefined) return
  send(postmaster)
  for (const pid of new Set([...before, ...primary.pids().slice(1)])) send(pid)
}

async function waitFor<T>(probe: () => Promise<T>, done: (value: T) => boolean, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (done(value)) return value
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs / 1000} s (last: ${JSON.stringify(value)})`)
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

async function deployment(t: Test) {
  const primary = await startPrimary(t)
  // Whatever happens, the server is let go on before it is stopped (a stopped one cannot be).
  t.teardown(() => signal(primary, 'SIGCONT'))
  const server = await startServer(t, { DATABASE_URL: primary.url, DATA_DIR: tempDir(t), DEMO_DATA: '0', JOB_POLL_MS: '500' })
  await until200(server, '/health/ready')
  t.teardown(() => {
    if (server.child.exitCode !== null) t.comment(`the server exited ${server.child.exitCode}:\n${server.output()}`)
  })
  return { primary, server }
}

t.test('kill -9 of the database during an upload job: the process lives, the job completes once it is back, every value saved once', { skip }, async (t) => {
  const { primary, server } = await deployment(t)
  const doc = await uploaded(server)
  await psql(
    primary,
    `create function slow_row() returns trigger language plpgsql as $$
      begin if new.row_number = ${SLOW_ROW} then perform pg_sleep(3); end if; return new; end $$;
     create trigger slow_row before insert on source_submission for each row execute function slow_row()`,
  )
  const accepted = await timed(server, `/api/v1/transform_upload/?document_id=${doc}`, { headers: { prefer: 'respond-async' } })
  t.equal(accepted.status, 202, accepted.body)
  const job = JSON.parse(accepted.body).id as number
  await waitFor(
    () => psql(primary, `select pid from pg_stat_activity where wait_event = 'PgSleep' and query ilike '%source_submission%'`),
    (rows) => rows.length > 0,
    30_000,
    'the job inserting its rows',
  )
  signal(primary, 'SIGKILL')
  await new Promise((resolve) => setTimeout(resolve, 3_000))
  t.equal(server.child.exitCode, null, 'the server process lives on with its database gone')
  t.equal((await timed(server, '/health/live')).status, 200, 'and answers')
  const down = await timed(server, '/api/v1/campaign_type/', { method: 'POST', body: JSON.stringify({ name: 'while down' }) })
  t.equal(down.status, 503, 'a write meanwhile is 503')
  t.ok(down.retryAfter, 'with Retry-After')

  await primary.start()
  const back = Date.now()
  const done = await waitFor(
    async () => JSON.parse((await timed(server, `/api/v1/job/${job}/`)).body),
    (body) => ['completed', 'failed', 'cancelled'].includes(body.state),
    60_000,
    'the job ending',
  )
  const seconds = (Date.now() - back) / 1000
  t.equal(done.state, 'completed', done.error?.message ?? 'completed')
  t.ok(seconds < 20, `completed ${seconds.toFixed(1)} s after the database was back (JOB_EXPIRE_SECONDS is 3600)`)
  t.match(done.result.ingest_stats.submissions, { file_rows: DISTRICTS, created: DISTRICTS })
  const [saved] = await psql<{ values: number; distinct: number; history: number; submissions: number; sum: number }>(
    primary,
    `select (select count(*)::int from datapoint) as values,
       (select count(distinct (location_id, indicator_id, campaign_id))::int from datapoint) as distinct,
       (select count(*)::int from datapoint_history) as history,
       (select count(*)::int from source_submission) as submissions,
       (select sum(value)::int from datapoint) as sum`,
  )
  const expectedSum = (DISTRICTS * (DISTRICTS - 1)) / 2 + DISTRICTS * 1000 + (DISTRICTS * (DISTRICTS - 1)) / 2
  t.same(saved, { values: 2 * DISTRICTS, distinct: 2 * DISTRICTS, history: 2 * DISTRICTS, submissions: DISTRICTS, sum: expectedSum }, 'every value saved once')
  const [queued] = await psql<{ retry_count: number }>(
    primary,
    `select q.retry_count from pgboss.job q join job j on j.queue_job_id = q.id where j.id = ${job}`,
  )
  t.same(queued, { retry_count: 0 }, 'run again by its worker, not retried by the queue after an expiry')
  t.match(server.output(), /job interrupted: the database connection was lost/, 'the interruption is logged')
  t.notMatch(server.output(), /Unhandled|uncaught/i, 'nothing went unhandled')
  t.equal(server.child.exitCode, null)
})

t.test(
  'the database stopped by SIGSTOP: every request answers within 5 s (503 + Retry-After), /health/ready within 1 s; writes resume after SIGCONT',
  { skip },
  async (t) => {
    const { primary, server } = await deployment(t)
    // The key's authentication, the read cache: warm, as on a server in use.
    t.equal((await timed(server, '/api/v1/campaign_type/')).status, 200)
    const write = (name: string) => timed(server, '/api/v1/campaign_type/', { method: 'POST', body: JSON.stringify({ name }) })
    const requests = (round: string) => [
      timed(server, '/api/v1/campaign_type/'),
      timed(server, '/api/v1/location/?limit=5'),
      timed(server, '/api/v1/indicator/1/'),
      timed(server, '/api/v1/job/'),
      write(`stopped ${round}`),
      timed(server, '/health'),
    ]
    const check = (answers: Answer[], round: string) => {
      for (const [i, a] of answers.entries()) {
        t.ok(a.ms < 5_000, `${round} #${i}: answered in ${Math.round(a.ms)} ms`)
        if (a.status >= 300) {
          t.equal(a.status, 503, `${round} #${i}: ${a.body.slice(0, 120)}`)
          t.ok(a.retryAfter, `${round} #${i}: with Retry-After`)
          t.notMatch(a.body, /at .*\.(ts|js):\d+/, 'no stack trace')
        }
      }
    }
    signal(primary, 'SIGSTOP')
    // Requests in flight when it stops, /health/ready among them.
    const [ready, ...first] = await Promise.all([timed(server, '/health/ready'), ...requests('at once')])
    t.ok(ready.ms < 1_000, `/health/ready answered in ${Math.round(ready.ms)} ms`)
    t.equal(ready.status, 503)
    check(first, 'in flight')
    t.equal(first[4].status, 503, 'the write in flight is 503')
    // Once the hang is known, requests are answered at once.
    await new Promise((resolve) => setTimeout(resolve, 1_000))
    const [readyLater, ...later] = await Promise.all([timed(server, '/health/ready'), ...requests('later')])
    t.ok(readyLater.ms < 1_000, `/health/ready answered in ${Math.round(readyLater.ms)} ms`)
    t.match(JSON.parse(readyLater.body), { status: 'not ready', database: 'down' })
    check(later, 'later')
    t.equal(server.child.exitCode, null, 'the process lives')

    signal(primary, 'SIGCONT')
    const resumed = Date.now()
    const again = await waitFor(
      () => write('after SIGCONT'),
      (a) => a.status === 201,
      15_000,
      'a write after SIGCONT',
    )
    t.equal(again.status, 201, `writes resume ${((Date.now() - resumed) / 1000).toFixed(1)} s after SIGCONT`)
    t.equal((await timed(server, '/health/ready')).status, 200, 'ready again')
    const names = await psql<{ name: string }>(primary, `select name from campaign_type where name like '%SIGCONT%' or name like 'stopped%'`)
    t.ok(
      names.some((r) => r.name === 'after SIGCONT'),
      'the write after SIGCONT is saved',
    )
  },
)
