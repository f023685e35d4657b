// `npm run bench:reads` (PostgreSQL): datapoint reads over 1,000,000 computed datapoints (10,000
// locations × 20 indicators × 5 campaigns) and 240,000 date datapoints (10,000 locations × 24 months).
// For each read: latency p50/p99 of sequential requests, in turn: the API without its read cache (the
// miss path: READ_CACHE_BYTES=0), a bare Fastify route running
// the same statements in a process of its own (bench/bare-reads.ts: the floor an HTTP hop sets on
// this machine), and the same SQL run directly through pg from this process. Measured on warm
// processes: a cold phase first (its ratios reported too), then BENCH_WARMUP requests (default 4,000)
// to each side, then the measured phase (see warmUp below); then the API's req/s under 50
// connections (autocannon); then our statements against the best written by hand for the same answer
// (bench/read-statements.ts, `floor`), in turn. Then the read cache: each read, three lists and a
// five-chart dashboard's data (`/dashboard/<id>/data/`) under 50 connections, hit (a second server with
// the cache on) and miss, in the same run as a cached detail GET, and the dashboard read compressed and
// conditional (304). The data is a pure function of the ids (no
// randomness), so every run reads the same numbers.
// BENCH_DATABASE_URL names the server (default postgres://postgres@127.0.0.1:5432/postgres); a scratch
// database is created and dropped. BENCH_SECONDS bounds each timed phase (default 5). BENCH_ONLY=cache
// runs the read cache's table alone.
// The direct side runs on a pool opened after seeding, like the server's: a PostgreSQL backend that
// has bulk-loaded data no longer page-faults on its reads, and would time the SQL faster than any
// pool connection can run it (bench/README.md, "Datapoint reads"). Page faults per read of both sides'
// backends are reported when the server runs on this machine.
import http from 'node:http'
import pg from 'pg'
import { ADMIN_URL, cpuMicros, doing, median, procStat, round, scratchDatabase, scratchDir, startServer, stop } from './lib.js'
import { BARE_APPLICATION, INDICATORS, reads, seedReadsThroughServer } from './read-statements.js'

const KEY = 'd'.repeat(40)
const auth = { authorization: `ApiKey admin:${KEY}` }
const seconds = Number(process.env.BENCH_SECONDS ?? 5)
const warmUpRequests = Number(process.env.BENCH_WARMUP ?? 4000)

// Latency is timed with node:http over one kept-alive connection: fetch (undici) adds a few tenths of
// a millisecond of its own per request, which is the client's cost, not the API's.
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
/** The warm-up's requests, WARM_UP_CONCURRENCY at a time. */
const WARM_UP_CONCURRENCY = 8
const warmUpAgent = new http.Agent({ keepAlive: true, maxSockets: WARM_UP_CONCURRENCY })

/** GET `path` with the admin key; resolves when the whole body has arrived. */
function get(port: number, path: string, through = agent): Promise<void> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path, headers: auth, agent: through }, (res) => {
        if (res.statusCode !== 200) reject(new Error(`${path}: ${res.statusCode}`))
        res.on('data', () => {})
        res.on('end', resolve)
      })
      .on('error', reject)
  })
}

/**
 * `count` requests to each side in turn, WARM_UP_CONCURRENCY at a time. V8 compiles a server's
 * per-request code with its optimizing compiler only after that code has run a few thousand times:
 * counted with --trace-opt, both servers were still compiling after 3,000 sequential grouped reads
 * and had settled by ~4,000, their CPU per read falling by 35-60 % meanwhile (bench/README.md,
 * "Datapoint reads"). Timing before that measures the JIT's warm-up, not the read.
 */
async function warmUp(sides: Record<string, () => Promise<unknown>>, count: number) {
  for (const run of Object.values(sides)) {
    let left = count
    await Promise.all(
      Array.from({ length: WARM_UP_CONCURRENCY }, async () => {
        while (left-- > 0) await run()
      }),
    )
  }
}

/**
 * Sequential latencies of each side, one request of each in turn for 3 × `seconds`: every side sees
 * the same moments of this shared, noisy machine. p50 and p99 in ms for each, and the count.
 */
async function interleaved<Side extends string>(sides: Record<Side, () => Promise<unknown>>) {
  const runs = Object.entries(sides) as Array<[Side, () => Promise<unknown>]>
  for (let i = 0; i < 20; i++) await Promise.all(runs.map(([, run]) => run()))
  const times = Object.fromEntries(runs.map(([side]) => [side, [] as number[]])) as Record<Side, number[]>
  const end = Date.now() + 3 * seconds * 1000
  while (Date.now() < end) {
    for (const [side, run] of runs) {
      const start = process.hrtime.bigint()
      await run()
      times[side].push(Number(process.hrtime.bigint() - start) / 1e6)
    }
  }
  const summary = (values: number[]) => {
    values.sort((a, b) => a - b)
    const at = (q: number) => values[Math.min(values.length - 1, Math.floor(q * values.length))]
    return { n: values.length, p50: at(0.5), p99: at(0.99) }
  }
  return Object.fromEntries(runs.map(([side]) => [side, summary(times[side])])) as Record<Side, ReturnType<typeof summary>>
}

// Each side's PostgreSQL backends are told apart by their application_name (the API's pool sets none).
const DIRECT_APPLICATION = 'bench-direct'
type Side = 'api' | 'bare' | 'direct'
const sideOf = (application: string): Side => (application === DIRECT_APPLICATION ? 'direct' : application === BARE_APPLICATION ? 'bare' : 'api')

/** Minor page faults so far of each backend of this database, with the side it serves; null when /proc cannot show them. */
async function backendFaults(db: pg.Pool): Promise<Map<number, { side: Side; faults: number }> | null> {
  const { rows } = await db.query(`select pid, application_name from pg_stat_activity where datname = current_database()`)
  const backends = new Map<number, { side: Side; faults: number }>()
  for (const { pid, application_name } of rows) {
    // The 10th field of /proc/<pid>/stat is minflt. A pid that is not a local postgres process (a
    // remote server) makes the whole reading unavailable.
    const stat = procStat(pid)
    if (stat?.command !== 'postgres') return null
    backends.set(pid, { side: sideOf(application_name), faults: Number(stat.fields[7]) })
  }
  return backends
}

/** Page faults per read on each side between two readings (backends present in both; pools close idle ones). */
function faultsPerRead(before: Awaited<ReturnType<typeof backendFaults>>, after: Awaited<ReturnType<typeof backendFaults>>, reads: number): string {
  if (!before || !after) return 'n/a'
  const sum: Record<Side, number> = { api: 0, bare: 0, direct: 0 }
  for (const [pid, { side, faults }] of after) {
    const earlier = before.get(pid)
    if (earlier) sum[side] += faults - earlier.faults
  }
  return `${Math.round(sum.api / reads)} / ${Math.round(sum.bare / reads)} / ${Math.round(sum.direct / reads)}`
}

/**
 * A dashboard of five charts over the seeded data, as the web app saves them (made through the API of
 * the server on `port`): the 100 provinces as columns, a pie and a map, their table of three
 * indicators, a province's cases by quarter. Returns its data's path.
 */
async function benchDashboard(port: number): Promise<string> {
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`http://127.0.0.1:${port}/api/v1${path}`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
    if (res.status !== 201) throw new Error(`${path}: ${res.status} ${await res.text()}`)
    return ((await res.json()) as { id: number }).id
  }
  const byProvince = { campaign_ids: [3], location_ids: [1], location_depth: 1 }
  const charts: Array<Record<string, unknown>> = [
    { type: 'ColumnChart', indicator_ids: [7], ...byProvince },
    { type: 'PieChart', indicator_ids: [8], ...byProvince },
    { type: 'ChoroplethMap', indicator_ids: [9], ...byProvince },
    { type: 'TableChart', indicator_ids: [7, 8, 9], campaign_ids: [3], location_ids: [1], location_depth: 1 },
    {
      type: 'LineChart',
      indicator_ids: [INDICATORS + 1],
      location_ids: [42],
      location_depth: 0,
      groupByTime: 'quarter',
      start_date: '2000-01-01',
      end_date: '2070-01-01',
    },
  ]
  const uuids = charts.map((_, i) => `bench-${i}`)
  for (const [i, chart_json] of charts.entries()) await post('/custom_chart/', { uuid: uuids[i], title: `bench chart ${i}`, chart_json })
  const id = await post('/dashboard/', { title: 'bench dashboard', rows: [{ charts: uuids.slice(0, 3) }, { charts: uuids.slice(3) }] })
  return `/api/v1/dashboard/${id}/data/`
}

/** The reads of the cache table: the datapoint reads above and two plain lists (and, last, a dashboard's data). */
const CACHED_READS: Array<[string, string]> = [
  ...reads.map((read): [string, string] => [read.name, read.path]),
  ['location: children of the root', '/api/v1/location/?parent_location_id=1'],
  ['indicator list', '/api/v1/indicator/'],
]
const DETAIL = '/api/v1/campaign/3/'

/** The bytes of one answer as they travel, with `headers`, and its ETag. */
function onTheWire(port: number, path: string, headers: Record<string, string> = {}): Promise<{ bytes: number; etag: string }> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path, headers: { ...auth, ...headers } }, (res) => {
        let bytes = 0
        res.on('data', (chunk: Buffer) => (bytes += chunk.length))
        res.on('end', () => resolve({ bytes, etag: String(res.headers.etag) }))
      })
      .on('error', reject)
  })
}

/**
 * Every read under 50 connections answered from memory (a hit: the caching server) and computed (a miss:
 * the server without the cache), in the same run as the cached detail GET they are compared with; the
 * dashboard read also compressed and as a conditional request answered 304.
 */
async function cacheTable(missPort: number, hitPort: number, dashboardData: string): Promise<string> {
  const url = (p: number, path: string) => `http://127.0.0.1:${p}${path}`
  const detail = await round('detail', url(hitPort, DETAIL), auth, seconds)
  const lines = [
    `cached detail GET ${DETAIL}: ${detail.requests_per_s} req/s, p50 ${detail.p50_ms} ms`,
    '',
    '| read | hit req/s | hit p50 ms | hit ÷ detail | miss req/s | miss p50 ms | bytes |',
    '|---|---|---|---|---|---|---|',
  ]
  const row = (name: string, hit: Awaited<ReturnType<typeof round>>, miss: Awaited<ReturnType<typeof round>> | undefined, bytes: number) =>
    `| ${name} | ${hit.requests_per_s} | ${hit.p50_ms} | ${((100 * hit.requests_per_s) / detail.requests_per_s).toFixed(1)} % | ${miss?.requests_per_s ?? '—'} | ${miss?.p50_ms ?? '—'} | ${bytes} |`
  for (const [name, path] of CACHED_READS) {
    const { bytes } = await onTheWire(hitPort, path)
    const hit = await round(name, url(hitPort, path), auth, seconds)
    const miss = await round(name, url(missPort, path), auth, seconds)
    lines.push(row(name, hit, miss, bytes))
  }
  const [dashboardName, dashboard] = CACHED_READS[0]
  for (const encoding of ['br', 'gzip']) {
    const headers = { 'accept-encoding': encoding }
    const { bytes } = await onTheWire(hitPort, dashboard, headers)
    lines.push(
      row(`${dashboardName}, Accept-Encoding: ${encoding}`, await round(encoding, url(hitPort, dashboard), { ...auth, ...headers }, seconds), undefined, bytes),
    )
  }
  const { etag } = await onTheWire(hitPort, dashboard)
  const conditional = await round('304', url(hitPort, dashboard), { ...auth, 'if-none-match': etag }, seconds)
  lines.push(row(`${dashboardName}, If-None-Match → 304`, conditional, undefined, 0))
  // Last: its misses under 50 connections would leave the miss server busy with seven reads each well
  // after the round (and slow every row after it); a miss is timed alone, in sequence, instead.
  const { bytes } = await onTheWire(hitPort, dashboardData)
  const hit = await round('dashboard data', url(hitPort, dashboardData), auth, seconds)
  const alone: number[] = []
  for (let i = 0; i < 10; i++) {
    const started = performance.now()
    await get(missPort, dashboardData)
    alone.push(performance.now() - started)
  }
  const missP50 = median(alone).toFixed(0)
  lines.push(`${row('dashboard data: five charts in one answer', hit, undefined, bytes).replace(/\| — \| — \|/, `| — | ${missP50} (alone) |`)}`)
  return lines.join('\n')
}

/** One interleaved run of the sides, with each server's CPU time per read over it ("API / bare"). */
async function phase(sides: Record<Side, () => Promise<unknown>>, apiPid: number | undefined, barePid: number | undefined) {
  const before = [cpuMicros(apiPid), cpuMicros(barePid)]
  const latency = await interleaved(sides)
  const after = [cpuMicros(apiPid), cpuMicros(barePid)]
  const perRead = (i: number, n: number) => (before[i] === null || after[i] === null ? 'n/a' : String(Math.round((after[i]! - before[i]!) / n)))
  return { latency, cpu: `${perRead(0, latency.api.n)} / ${perRead(1, latency.bare.n)}` }
}

const scratch = await scratchDatabase(ADMIN_URL, 'rhizome_reads')
const port = 4005
const barePort = 4007
const serverEnv = { DATABASE_URL: scratch.url, DATA_DIR: scratchDir('rhizome-bench-'), ADMIN_API_KEY: KEY, DEMO_DATA: '0' }
// Two servers on the same data: the miss path (no read cache: what the latency table compares with the
// SQL) and the one users get (the read cache on, the last table).
const server = await startServer(['dist/server.js'], { ...serverEnv, READ_CACHE_BYTES: '0' }, port)
const cachingPort = 4006
let caching: Awaited<ReturnType<typeof startServer>> | undefined
// The direct side's connections open at its first query, after seeding (see the top of this file).
let bare: Awaited<ReturnType<typeof startServer>> | undefined
const direct = new pg.Pool({
  connectionString: scratch.url,
  max: 10,
  application_name: DIRECT_APPLICATION,
  options: '-c TimeZone=UTC -c plan_cache_mode=force_custom_plan',
})
try {
  doing('seeding 1,240,000 datapoints')
  await seedReadsThroughServer(scratch.url, port, auth)
  bare = await startServer(['--import', 'tsx', 'bench/bare-reads.ts'], { DATABASE_URL: scratch.url }, barePort)

  const cacheOnly = process.env.BENCH_ONLY === 'cache'
  const lines = [
    '| read | API p50 ms | API p99 ms | SQL p50 ms | SQL p99 ms | API / SQL at p50 | bare route p50 ms | bare / SQL at p50 | our SQL / hand-written SQL, p50 ms | cold: API / SQL, bare / SQL, server CPU µs per read | warm-up s | API req/s (50 conn.) | rows | page faults per read (API / bare / SQL) | server CPU µs per read (API / bare) |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
  ]
  for (const [index, read] of cacheOnly ? [] : reads.entries()) {
    const barePath = `/reads/${index}`
    const res = await fetch(`http://127.0.0.1:${port}${read.path}`, { headers: auth })
    const body = (await res.json()) as { objects: unknown[]; meta: { total_count: number } }
    const check = (await read.run(direct)).count()
    const bareCount = ((await (await fetch(`http://127.0.0.1:${barePort}${barePath}`)).json()) as { objects: unknown[] }).objects.length
    if (res.status !== 200 || body.objects.length !== check || bareCount !== check) {
      throw new Error(`${read.name}: API ${res.status} ${body.objects?.length} rows, bare route ${bareCount}, SQL ${check}`)
    }
    // Each side's request; the HTTP sides through `through` (one socket when timed, several in the warm-up).
    const sidesThrough = (through: http.Agent) => ({
      api: () => get(port, read.path, through),
      bare: () => get(barePort, barePath, through),
      direct: () => read.run(direct),
    })
    const sides = sidesThrough(agent)
    // Cold: the pattern on servers that have not yet served this read. Reported, not the measurement.
    doing(`${read.name}: cold, warm-up, then timed`)
    const cold = await phase(sides, server.pid, bare.pid)
    const started = Date.now()
    await warmUp(sidesThrough(warmUpAgent), warmUpRequests)
    const warmUpSeconds = (Date.now() - started) / 1000
    const before = await backendFaults(direct)
    const warm = await phase(sides, server.pid, bare.pid)
    const after = await backendFaults(direct)
    const faults = faultsPerRead(before, after, warm.latency.api.n)
    const load = await round(read.name, `http://127.0.0.1:${port}${read.path}`, auth, seconds)
    // Our statements against the best written by hand for the same answer, in turn.
    const floorRows = await read.floor(direct)
    if (floorRows !== check) throw new Error(`${read.name}: the hand-written statement reads ${floorRows} rows, ours ${check}`)
    const versus = await interleaved({ ours: () => read.run(direct), floor: () => read.floor(direct) })
    const f = (n: number) => n.toFixed(2)
    const { api, bare: floor, direct: sql } = warm.latency
    const ratios = ({ latency }: typeof cold) => `${(latency.api.p50 / latency.direct.p50).toFixed(2)} / ${(latency.bare.p50 / latency.direct.p50).toFixed(2)}`
    lines.push(
      `| ${read.name} | ${f(api.p50)} | ${f(api.p99)} | ${f(sql.p50)} | ${f(sql.p99)} | ${(api.p50 / sql.p50).toFixed(2)} | ${f(floor.p50)} | ${(floor.p50 / sql.p50).toFixed(2)} | ${f(versus.ours.p50)} / ${f(versus.floor.p50)} = **${(versus.ours.p50 / versus.floor.p50).toFixed(2)}** | ${ratios(cold)}, CPU ${cold.cpu} | ${warmUpSeconds.toFixed(0)} | ${load.requests_per_s} | ${body.objects.length} of ${body.meta.total_count} | ${faults} | ${warm.cpu} |`,
    )
  }
  if (!cacheOnly) console.log(lines.join('\n'))
  const dashboardData = await benchDashboard(port)
  caching = await startServer(['dist/server.js'], serverEnv, cachingPort)
  console.log(`\n${await cacheTable(port, cachingPort, dashboardData)}`)
} finally {
  await direct.end()
  agent.destroy()
  warmUpAgent.destroy()
  await stop(server)
  if (caching) await stop(caching)
  if (bare) await stop(bare)
  await scratch.close()
}
