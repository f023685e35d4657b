// `npm run bench:quality`: the Data quality reads of a country-sized campaign, on each engine (the
// embedded database, and PostgreSQL at BENCH_DATABASE_URL, default
// postgres://postgres@127.0.0.1:5432/postgres, a scratch database; BENCH_ENGINES=pglite,postgres).
// The data, seeded in SQL (the embedded database through its socket in DATA_DIR): 10,000 locations
// (a country → 20 provinces → 400 districts → 9,579 places, the leaves, which enter values), 20 count
// indicators, 5 campaigns a month apart with a value of every indicator at every leaf (952,720 raw
// values: one leaf in 37 has not reported in the last one, and 1.5 % of its values are planted
// far from their history), then each campaign recomputed (`agg_refresh`), min–max ranges generated
// for the last one from the four before (`min_max_generate`), two validation rules (I2 <= I1, I3 <= I1;
// one leaf in 47 breaks the first) and two indicator bounds (I4 at the leaves' level, I5 at every
// level). Timed for the last campaign, each answer computed afresh (`Cache-Control: no-cache`: the
// read cache neither answers nor is skipped for the next), by the superuser (the whole country) and by
// a user responsible for one province (location_responsibility): validation_result, campaign_outlier
// and campaign_completeness with `limit=0` (every row). Each read once first, timed apart (the
// country's first outlier read makes the campaign's history summary, as the first read after a
// change of an earlier campaign's values does), then BENCH_RUNS rounds (default 10), the six reads in
// turn in each; median and p95 (nearest rank) per read. The data is a pure function of the ids, so every run reads the same answers.
import http from 'node:http'
import pg from 'pg'
import { ADMIN_URL, doing, median, scratchDatabase, scratchDir, startServer, stop } from './lib.js'

const KEY = 'a'.repeat(40)
const RUNS = Number(process.env.BENCH_RUNS ?? 10)
const ENGINES = (process.env.BENCH_ENGINES ?? 'pglite,postgres').split(',') as Array<'pglite' | 'postgres'>
/** The goal: each read answers within this for the whole country. */
const TARGET_MS = 1000

const LOCATIONS = 10_000
const PROVINCES = 20
const DISTRICTS = 400
/** Ids: the country 1, provinces 2–21, districts 22–421, leaves 422–10,000. */
const FIRST_DISTRICT = 2 + PROVINCES
const FIRST_LEAF = FIRST_DISTRICT + DISTRICTS
const INDICATORS = 20
const CAMPAIGNS = 5
/** The province the restricted user is responsible for. */
const PROVINCE = 7

/**
 * A value of leaf `l`, indicator `i`, campaign `c`: each leaf's level of each indicator (100–999; I1,
 * the targeted, 2,000–2,499; I2 2,000 above it at one leaf in 47, which breaks "I2 at most I1"), 5–10
 * above it in odd campaigns and as much below in even ones, and within 3 of it in the last: no value
 * of the last campaign is far from its history (the mean is the level, the spread 5.8–11.5) but the
 * planted ones: one value in 199 of I6–I20 five times its level (a z-score and a min–max outlier),
 * one in 101 three spreads above (outside its generated range, mean ± 2 standard deviations, only).
 */
const level = `case when i = 1 then 2000 + (l * 37) % 500 else 100 + (l * 37 + i * 101) % 900 end + case when i = 2 and l % 47 = 0 then 2000 else 0 end`
const spread = '(5 + (l * 13 + i * 7) % 6)'
const value = (c: number) =>
  c < CAMPAIGNS
    ? `${level} + ${c % 2 ? '' : '-'}${spread}`
    : `${level} + (l * 13 + i * 7) % 7 - 3
      + case when i >= 6 and (l * 7 + i * 3) % 199 = 0 then 4 * (${level}) when (l * 11 + i * 5) % 101 = 0 then 3 * ${spread} else 0 end`

/** The tree, indicators, campaigns, raw values, rules and bounds (the location tree is left to `cache_meta`). */
async function seed(db: pg.Client) {
  await db.query(`insert into campaign_type (id, name) values (1, 'NID')`)
  await db.query(`insert into location_type (id, name, admin_level) values (1, 'Country', 0), (2, 'Province', 1), (3, 'District', 2), (4, 'Place', 3)`)
  await db.query(`insert into location (id, name, location_code, location_type_id, parent_location_id)
    select g, 'L' || g, 'G' || g,
      case when g = 1 then 1 when g < ${FIRST_DISTRICT} then 2 when g < ${FIRST_LEAF} then 3 else 4 end,
      case when g = 1 then null when g < ${FIRST_DISTRICT} then 1
        when g < ${FIRST_LEAF} then 2 + (g - ${FIRST_DISTRICT}) % ${PROVINCES}
        else ${FIRST_DISTRICT} + (g - ${FIRST_LEAF}) % ${DISTRICTS} end
    from generate_series(1, ${LOCATIONS}) g order by g`)
  await db.query(`insert into campaign (id, name, campaign_type_id, start_date, end_date)
    select g, 'C' || g, 1, date '2026-01-05' + 30 * g, date '2026-01-09' + 30 * g from generate_series(1, ${CAMPAIGNS}) g`)
  await db.query(`insert into indicator (id, name, short_name, data_format)
    select g, 'I' || g, 'i' || g, 'int' from generate_series(1, ${INDICATORS}) g`)
  for (const table of ['campaign_type', 'location_type', 'location', 'campaign', 'indicator']) {
    await db.query(`select setval(pg_get_serial_sequence('${table}', 'id'), (select max(id) from ${table}))`)
  }
  const { rows } = await db.query(`insert into source_submission (document_id, instance_guid, row_number, submission_json, process_status)
    select id, 'bench', 0, '{}', 'PROCESSED' from source_doc where guid = 'data-entry' returning id`)
  // One campaign at a time: a statement of a million rows (and their history) holds the embedded
  // database's memory at once.
  for (let c = 1; c <= CAMPAIGNS; c++) {
    doing(`seeding campaign ${c} of ${CAMPAIGNS}`)
    await db.query(
      `insert into datapoint (indicator_id, location_id, campaign_id, value, source_submission_id, unique_index, precedence_at)
      select i, l, ${c}, ${value(c)}, $1, l || '_' || i || '_' || ${c}, now()
      from generate_series(${FIRST_LEAF}, ${LOCATIONS}) l, generate_series(1, ${INDICATORS}) i
      ${c === CAMPAIGNS ? 'where l % 37 <> 7' : ''}`,
      [rows[0].id],
    )
  }
  await db.query(`insert into validation_rule (name, left_indicator_id, operator, right_indicator_id, action)
    values ('I2 at most I1', 2, '<=', 1, 'flag'), ('I3 at most I1', 3, '<=', 1, 'flag')`)
  await db.query(`insert into indicator_bound (indicator_id, mn_val, mx_val, bound_name, location_type_id)
    values (4, 0, 990, 'plausible at a place', 4), (5, 50, null, 'plausible', null)`)
}

/** GET `path` as `auth`, uncached; its status, objects and bytes. */
function get(port: number, path: string, auth: string): Promise<{ status: number; objects: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path, agent, headers: { authorization: auth, 'cache-control': 'no-cache' } }, (res) => {
        const chunks: Buffer[] = []
        res.on('data', (chunk: Buffer) => chunks.push(chunk))
        res.on('end', () => {
          const body = Buffer.concat(chunks)
          if (res.statusCode !== 200) return reject(new Error(`${path}: ${res.statusCode} ${body.toString().slice(0, 300)}`))
          resolve({ status: res.statusCode, objects: (JSON.parse(body.toString()) as { objects: unknown[] }).objects.length, bytes: body.length })
        })
      })
      .on('error', reject)
  })
}
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })

/** A call to the API as the superuser; its JSON answer. */
async function call(port: number, method: string, path: string, body?: unknown) {
  const res = await fetch(`http://127.0.0.1:${port}/api/v1/${path}`, {
    method,
    headers: { authorization: `ApiKey admin:${KEY}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  })
  const text = await res.text()
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`)
  return JSON.parse(text) as Record<string, unknown> & { id: number; objects: Array<Record<string, unknown>> }
}

const READS = ['validation_result', 'campaign_outlier', 'campaign_completeness']
interface Row {
  engine: string
  who: string
  read: string
  objects: number
  bytes: number
  /** The first read's time (ms): the outliers' history summary made there. */
  first: number
  times: number[]
}

async function measure(engine: 'pglite' | 'postgres', port: number): Promise<{ rows: Row[]; seeding: string }> {
  const dataDir = scratchDir('rhizome-quality-')
  const scratch = engine === 'postgres' ? await scratchDatabase(ADMIN_URL, 'rhizome_quality') : undefined
  const env = { DATA_DIR: dataDir, ADMIN_API_KEY: KEY, DEMO_DATA: '0', MAX_EVENT_LOOP_DELAY_MS: '0', DATABASE_URL: scratch?.url }
  const server = await startServer(['dist/server.js'], env, port)
  try {
    // The embedded database listens on its socket in DATA_DIR (`psql -h DATA_DIR`).
    const url = scratch?.url ?? `postgresql://rhizome@localhost/rhizome?host=${encodeURIComponent(dataDir)}&port=5432`
    const db = new pg.Client({ connectionString: url })
    await db.connect()
    const started = performance.now()
    const lap = () => `${((performance.now() - started) / 1000).toFixed(0)} s`
    const steps: string[] = []
    try {
      doing(`${engine}: seeding 10,000 locations, ${CAMPAIGNS} campaigns of raw values`)
      await seed(db)
      await call(port, 'GET', 'cache_meta/')
      await db.query('analyze')
      steps.push(`seeded ${lap()}`)
      for (let c = 1; c <= CAMPAIGNS; c++) {
        doing(`${engine}: agg_refresh of campaign ${c} of ${CAMPAIGNS}`)
        await call(port, 'GET', `agg_refresh/?campaign_id=${c}`)
      }
      steps.push(`recomputed ${lap()}`)
      doing(`${engine}: min_max_generate for campaign ${CAMPAIGNS}`)
      await call(port, 'GET', `min_max_generate/?campaign_id=${CAMPAIGNS}`)
      await db.query('vacuum analyze')
      steps.push(`ranges and vacuum ${lap()}`)
    } finally {
      await db.end()
    }
    // The provincial officer: a user with a location responsibility and an API key.
    const officer = await call(port, 'POST', 'user/', { username: 'officer' })
    await call(port, 'POST', 'location_responsibility/', { user_id: officer.id, top_lvl_location_id: PROVINCE })
    const { key } = await call(port, 'POST', 'api_key/', { user_id: officer.id })
    const users = [
      ['country', `ApiKey admin:${KEY}`],
      [`province ${PROVINCE}`, `ApiKey officer:${key}`],
    ]
    const reads = users.flatMap(([who, auth]) => READS.map((read) => ({ who, auth, read, path: `/api/v1/${read}/?campaign_id=${CAMPAIGNS}&limit=0` })))
    const rows: Row[] = []
    for (const r of reads) {
      doing(`${engine}: ${r.read} as ${r.who}, the first`)
      const at = performance.now()
      const { objects, bytes } = await get(port, r.path, r.auth)
      rows.push({ engine, who: r.who, read: r.read, objects, bytes, first: performance.now() - at, times: [] })
    }
    for (let run = 1; run <= RUNS; run++) {
      doing(`${engine}: round ${run} of ${RUNS}`)
      for (const [i, r] of reads.entries()) {
        const at = performance.now()
        await get(port, r.path, r.auth)
        rows[i].times.push(performance.now() - at)
      }
    }
    return { rows, seeding: steps.join(', ') }
  } finally {
    await stop(server)
    await scratch?.close()
  }
}

const p95 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.ceil(0.95 * values.length) - 1]
const ms = (v: number) => Math.round(v).toLocaleString('en')

const all: Row[] = []
let port = 4031
for (const engine of ENGINES) {
  const { rows, seeding } = await measure(engine, port++)
  console.log(`${engine}: ${seeding}`)
  all.push(...rows)
}
console.log(`\n${RUNS} runs each, campaign ${CAMPAIGNS} of ${CAMPAIGNS}, Cache-Control: no-cache; target ≤ ${TARGET_MS} ms\n`)
console.log('| engine | who | read | rows | bytes | first ms | median ms | p95 ms | ≤ 1 s |')
console.log('|---|---|---|---|---|---|---|---|---|')
for (const r of all) {
  const ok = p95(r.times) <= TARGET_MS ? 'yes' : median(r.times) <= TARGET_MS ? 'median only' : 'no'
  console.log(
    `| ${r.engine} | ${r.who} | ${r.read} | ${r.objects.toLocaleString('en')} | ${r.bytes.toLocaleString('en')} | ${ms(r.first)} | ${ms(median(r.times))} | ${ms(p95(r.times))} | ${ok} |`,
  )
}
process.exit(0)
