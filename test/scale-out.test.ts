// The reference deployment (deploy/), started on this machine: a PostgreSQL primary and a streaming
// replica of their own, two servers of two processes each (WEB_CONCURRENCY=2) reading from the
// replica (DATABASE_READ_URL), nginx in front with deploy/nginx/rhizome.conf. Through it: writes read
// back at once by the other server, a key revoked through one server refused by the other, datapoint
// reads served by the replica, a replica that stops replaying never read from; a server process killed
// under load, and the replica stopped under load, cost no request.
import autocannon from 'autocannon'
import pg from 'pg'
import t from 'tap'
import { missingTools, startNginx, startPrimary, startReplica, startServer, allProcessesUp, type Server } from './topology.js'

const ADMIN_KEY = '9'.repeat(40)
const admin = { authorization: `ApiKey admin:${ADMIN_KEY}`, 'content-type': 'application/json' }
// Reads that are about where the database is read (not the read cache): computed afresh every time.
const uncached = { ...admin, 'cache-control': 'no-cache' }
// A PostgreSQL topology: it runs with the PostgreSQL suite (DATABASE_URL set), once per CI line.
const skip = (!process.env.DATABASE_URL && 'runs with the PostgreSQL suite (DATABASE_URL)') || missingTools() || false

async function call(base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = admin) {
  const response = await fetch(`${base}/api/v1${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
  const text = await response.text()
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined }
}

/** Whether a process of this id runs. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** A bounded autocannon run through `url` (idempotent GETs), with `during` started after `afterMs`. */
async function underLoad(url: string, paths: string[], seconds: number, afterMs: number, during: () => Promise<void>) {
  const run = autocannon({
    url,
    connections: 20,
    // Paced below nginx's keepalive_requests (1,000 a client connection) over the longest run: nginx
    // then closes a connection, and autocannon, which does not read `Connection: close`, counts the
    // request it had already written there as an error (measured: keepalive_requests 20 failed every
    // run here), which says nothing about the servers.
    overallRate: 1500,
    duration: seconds,
    requests: paths.map((path) => ({ method: 'GET' as const, path, headers: { authorization: admin.authorization, 'cache-control': 'no-cache' } })),
  })
  const event = new Promise<void>((resolve, reject) => setTimeout(() => during().then(resolve, reject), afterMs))
  const [result] = await Promise.all([run, event])
  return result
}

t.test('two servers behind nginx, a primary and a replica', { skip, timeout: 300_000 }, async (t) => {
  const primary = await startPrimary(t)
  const replica = await startReplica(t, primary)
  const env = {
    DATABASE_URL: primary.url,
    DATABASE_READ_URL: replica.url,
    ADMIN_API_KEY: ADMIN_KEY,
    WEB_CONCURRENCY: '2',
    TRUST_PROXY: '127.0.0.1',
    REPLICA_CHECK_MS: '200',
    REPLICA_MAX_LAG_MS: '1000',
    MAX_EVENT_LOOP_DELAY_MS: '0',
    RATE_LIMIT_ALLOWLIST: '127.0.0.1',
  }
  // One after the other: the first migrates the new database.
  const a: Server = await startServer(t, env)
  const b: Server = await startServer(t, env)
  await allProcessesUp(a, 2)
  await allProcessesUp(b, 2)
  const proxy = await startNginx(t, [a.port, b.port])

  t.test('the processes of a server starting at once: each starts its job queue', async (t) => {
    // pg-boss's queue creation, run by two processes at once, deadlocked; they now take turns.
    for (const server of [a, b]) t.notMatch(server.output(), /deadlock|job queue could not start/)
  })

  t.test('a write through one server is read back at once through the other', async (t) => {
    const type = await call(a.url, 'POST', '/campaign_type/', { name: 'NID' })
    t.equal(type.status, 201)
    for (let i = 0; i < 20; i++) {
      const created = await call(a.url, 'POST', '/indicator/', { name: `n${i}`, short_name: `n${i}`, data_format: 'int' })
      const listed = await call(b.url, 'GET', `/indicator/?short_name=n${i}`)
      t.equal(listed.body.meta.total_count, 1, `indicator ${i} listed at once by the other server`)
      const renamed = await call(b.url, 'PATCH', `/indicator/${created.body.id}/`, { name: `renamed ${i}` })
      t.equal(renamed.status, 200)
      const detail = await call(a.url, 'GET', `/indicator/${created.body.id}/`)
      t.equal(detail.body.name, `renamed ${i}`, `the other server's detail (its cache emptied, its replica caught up)`)
      const proxied = await call(proxy.url, 'GET', `/indicator/${created.body.id}/`)
      t.equal(proxied.body.name, `renamed ${i}`, 'through nginx')
    }
  })

  t.test('lists kept in memory by every process: a write through one is read at once through the others', async (t) => {
    // Each server runs two processes, so consecutive requests to one server reach both of its caches.
    const lists = async (path: string) => Promise.all([a, b, a, b].map((server) => call(server.url, 'GET', path)))
    for (let i = 0; i < 10; i++) {
      const before = await lists('/indicator/?limit=100')
      const created = await call(a.url, 'POST', '/indicator/', { name: `kept ${i}`, short_name: `kept${i}`, data_format: 'int' })
      t.equal(created.status, 201)
      for (const after of await lists('/indicator/?limit=100')) {
        t.equal(after.body.meta.total_count, before[0].body.meta.total_count + 1, `indicator ${i} listed at once by every process`)
      }
    }
    const identity = { ...admin, 'accept-encoding': 'identity' }
    const tags = new Set<string | null>()
    for (const server of [a, b, a, b, proxy]) tags.add((await call(server.url, 'GET', '/indicator/?limit=100', undefined, identity)).headers.get('etag'))
    t.equal(tags.size, 1, 'the same ETag from every process and through nginx for the same data')
    const [tag] = tags
    const compressed = await call(proxy.url, 'GET', '/indicator/?limit=100', undefined, { ...admin, 'accept-encoding': 'br' })
    t.equal(compressed.headers.get('content-encoding'), 'br', 'nginx passes the compressed answer')
    t.equal(compressed.headers.get('etag'), `${tag!.slice(0, -1)}-br"`, 'with the ETag of its encoding')
    t.equal(compressed.headers.get('vary'), 'Authorization, Cookie, Accept, Accept-Encoding')
    const held = await call(proxy.url, 'GET', '/indicator/?limit=100', undefined, { ...identity, 'if-none-match': tag! })
    t.equal(held.status, 304, 'a held answer is 304 through nginx')
  })

  t.test('a key revoked through one server is refused by the other on the next request', async (t) => {
    const user = await call(a.url, 'POST', '/user/', { username: 'field' })
    const key = (await call(a.url, 'POST', '/api_key/', { user_id: user.body.id })).body.key as string
    const asField = { authorization: `ApiKey field:${key}` }
    t.equal((await call(b.url, 'GET', '/campaign_type/', undefined, asField)).status, 200, 'the key works (and is cached) on the other server')
    const keyId = (await call(a.url, 'GET', `/api_key/?user_id=${user.body.id}`)).body.objects[0].id
    t.equal((await call(a.url, 'DELETE', `/api_key/${keyId}/`)).status, 204)
    t.equal((await call(b.url, 'GET', '/campaign_type/', undefined, asField)).status, 401)
  })

  t.test('datapoint reads are served by the replica', async (t) => {
    const campaign = await call(proxy.url, 'POST', '/campaign/', { name: 'C', campaign_type_id: 1, start_date: '2016-01-01', end_date: '2016-01-02' })
    const type = await call(proxy.url, 'POST', '/location_type/', { name: 'Country', admin_level: 0 })
    const location = await call(proxy.url, 'POST', '/location/', { name: 'L', location_code: 'L', location_type_id: type.body.id })
    const entered = await call(proxy.url, 'POST', '/campaign_datapoint/', {
      indicator_id: 1,
      location_id: location.body.id,
      campaign_id: campaign.body.id,
      value: 7,
    })
    t.equal(entered.status, 201)
    const read = await call(
      proxy.url,
      'GET',
      `/campaign_datapoint/?indicator__in=1&campaign__in=${campaign.body.id}&location_id__in=${location.body.id}`,
      undefined,
      uncached,
    )
    t.equal(read.body.objects[0].value, 7, 'the entry, read back at once from the replica')
    t.equal(read.headers.get('x-database'), 'replica-1')
    const metrics = await (await fetch(`${a.url}/metrics`)).text()
    t.match(metrics, /rhizome_db_reads_total\{target="replica"\} [1-9]/)
  })

  t.test('a replica that stops replaying: no stale read, not even a cached one; used again once it catches up', async (t) => {
    const standby = new pg.Client({ connectionString: replica.url })
    await standby.connect()
    t.teardown(() => standby.end())
    const indicator = (await call(a.url, 'POST', '/indicator/', { name: 'before', short_name: 'paused', data_format: 'int' })).body.id
    t.equal((await call(b.url, 'GET', `/indicator/${indicator}/`)).body.name, 'before', 'read (and cached) by the other server')
    await standby.query('select pg_wal_replay_pause()')
    const started = Date.now()
    t.equal((await call(a.url, 'PATCH', `/indicator/${indicator}/`, { name: 'after' })).status, 200)
    t.ok(Date.now() - started >= 900, 'the write waited up to REPLICA_MAX_LAG_MS for the replica')
    const detail = await call(b.url, 'GET', `/indicator/${indicator}/`)
    t.equal(detail.body.name, 'after', 'the other server does not answer its cached row, nor the paused replica’s')
    const list = await call(b.url, 'GET', `/indicator/?short_name=paused`)
    t.equal(list.body.objects[0].name, 'after')
    t.equal(list.headers.get('x-database'), 'primary', 'the lagging replica is skipped by every process')
    await standby.query('select pg_wal_replay_resume()')
    const deadline = Date.now() + 20_000
    let served = ''
    while (Date.now() < deadline && served !== 'replica-1') {
      const again = await call(b.url, 'GET', `/indicator/?short_name=paused`, undefined, uncached)
      served = again.headers.get('x-database') ?? ''
      if (served === 'replica-1') t.equal(again.body.objects[0].name, 'after', 'the replica caught up')
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    t.equal(served, 'replica-1', 'the replica serves reads again')
  })

  t.test('a server process killed during a run through nginx: no request fails, the process is replaced', async (t) => {
    const before = a.processes()
    t.equal(before.length, 2)
    const victim = before[0]
    // Reads that take a few milliseconds each, so that the killed process has requests in flight.
    const result = await underLoad(
      proxy.url,
      ['/api/v1/indicator/?limit=100', '/api/v1/campaign_datapoint/?indicator__in=1', '/api/v1/location_type/?limit=100'],
      10,
      3000,
      async () => {
        process.kill(victim, 'SIGKILL')
      },
    )
    t.equal(result.errors, 0, 'no connection error')
    t.equal(result.non2xx, 0, 'no answer other than 2xx')
    // Enough that the killed process had requests in flight: ~2,000 on an idle machine, 600–900
    // while the suite's other files load it.
    t.ok(result.requests.total > 300, `${result.requests.total} requests`)
    await allProcessesUp(a, 2)
    const after = a.processes()
    t.notOk(after.includes(victim), 'the killed process is gone')
    t.equal(after.length, 2, 'and replaced')
    // The replacement must stay: one that dies during its start is forked again a second later, and
    // a count taken in that second would read 2 all the same.
    const replacement = after.find((pid) => !before.includes(pid))
    await new Promise((resolve) => setTimeout(resolve, 3_000))
    t.ok(replacement && alive(replacement), 'the replacement still runs 3 s later')
    t.equal(a.output().split('a server process died').length - 1, 1, `one death, the victim's: ${a.output()}`)
  })

  t.test('the replica stopped during a run: reads go on from the primary, and return to it once it is back', async (t) => {
    const path = '/api/v1/campaign_datapoint/?indicator__in=1'
    const result = await underLoad(proxy.url, [path], 10, 2000, () => replica.stop())
    t.equal(result.errors, 0)
    t.equal(result.non2xx, 0, 'no 5xx while the replica is down')
    t.equal((await call(proxy.url, 'GET', path.slice(7), undefined, uncached)).headers.get('x-database'), 'primary')
    await replica.start()
    const deadline = Date.now() + 20_000
    let served = ''
    while (Date.now() < deadline && served !== 'replica-1') {
      served = (await call(b.url, 'GET', path.slice(7), undefined, uncached)).headers.get('x-database') ?? ''
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    t.equal(served, 'replica-1', 'the replica serves reads again')
  })

  t.test('a server stopped (SIGTERM) during a run: its processes drain and exit, no request fails', async (t) => {
    const processes = a.processes()
    let code: number | null = null
    const result = await underLoad(proxy.url, ['/api/v1/indicator/?limit=100', '/api/v1/indicator/1/'], 6, 2000, async () => {
      a.child.kill('SIGTERM')
      code = await new Promise<number | null>((resolve) => a.child.once('exit', resolve))
    })
    t.equal(code, 0, 'the supervising process exits cleanly once its processes have')
    t.same(processes.filter(alive), [], 'none of its processes is left')
    t.equal(result.errors, 0)
    t.equal(result.non2xx, 0, 'nginx sends the rest to the other server')
  })
})
