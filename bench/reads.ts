// `npm run bench:reads` (PostgreSQL): datapoint reads over 1,000,000 computed datapoints (10,000
// locations × 20 indicators × 5 campaigns) and 240,000 date datapoints (10,000 locations × 24 months).
// For each read: latency p50/p99 of sequential requests, API and the same SQL run directly through pg
// from this process in turn, and the API's req/s under 50 connections (autocannon). The data is a pure function of the
// ids (no randomness), so every run reads the same numbers.
// BENCH_DATABASE_URL names the server (default postgres://postgres@127.0.0.1:5432/postgres); a scratch
// database is created and dropped. BENCH_SECONDS bounds each timed phase (default 5).
// The direct side runs on a pool opened after seeding, like the server's: a PostgreSQL backend that
// has bulk-loaded data no longer page-faults on its reads, and would time the SQL faster than any
// pool connection can run it (bench/README.md, "Session 7"). Page faults per read of both sides'
// backends are reported when the server runs on this machine.
import { mkdtempSync, readFileSync } from 'node:fs'
import http from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { round, scratchDatabase, startServer, stop } from './lib.js'

const KEY = 'd'.repeat(40)
const auth = { authorization: `ApiKey admin:${KEY}` }
const seconds = Number(process.env.BENCH_SECONDS ?? 5)
const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const LOCATIONS = 10_000
const INDICATORS = 20
const CAMPAIGNS = 5

/** Country 1 → provinces 2..101 → districts 102..10,000; campaigns, indicators, values. */
async function seed(db: pg.Client) {
  await db.query(`insert into campaign_type (id, name) values (1, 'NID')`)
  await db.query(`insert into location_type (id, name, admin_level) values (1, 'Country', 0), (2, 'Province', 1), (3, 'District', 2)`)
  await db.query(`insert into location (id, name, location_code, location_type_id, parent_location_id)
    select g, 'L' || g, 'G' || g, case when g = 1 then 1 when g <= 101 then 2 else 3 end,
           case when g = 1 then null when g <= 101 then 1 else 2 + (g % 100) end
    from generate_series(1, ${LOCATIONS}) g order by g`)
  await db.query(`insert into campaign (id, name, campaign_type_id, start_date, end_date)
    select g, 'C' || g, 1, date '2016-01-01' + 30 * g, date '2016-01-05' + 30 * g from generate_series(1, ${CAMPAIGNS}) g`)
  await db.query(`insert into indicator (id, name, short_name, data_format, resource_name)
    select g, 'I' || g, 'i' || g, 'int', 'campaign' from generate_series(1, ${INDICATORS}) g
    union all select ${INDICATORS + 1}, 'Cases', 'cases', 'date_int', 'date'`)
  for (const table of ['campaign_type', 'location_type', 'location', 'campaign', 'indicator']) {
    await db.query(`select setval(pg_get_serial_sequence('${table}', 'id'), (select max(id) from ${table}))`)
  }
  await db.query(`insert into datapoint_with_computed (indicator_id, location_id, campaign_id, value)
    select i, l, c, (l * 31 + i * 17 + c * 7) % 1000
    from generate_series(1, ${CAMPAIGNS}) c, generate_series(1, ${INDICATORS}) i, generate_series(1, ${LOCATIONS}) l`)
  const { rows } = await db.query(`insert into source_submission (document_id, instance_guid, row_number, submission_json, process_status)
    select id, 'bench', 0, '{}', 'PROCESSED' from source_doc where guid = 'data-entry' returning id`)
  await db.query(`insert into datapoint (indicator_id, location_id, data_date, value, source_submission_id, unique_index, precedence_at)
    select ${INDICATORS + 1}, l, d::date, (l + extract(month from d)::int) % 5, $1, l || '_${INDICATORS + 1}_' || d::date, now()
    from generate_series(1, ${LOCATIONS}) l, generate_series(date '2014-01-01', date '2015-12-01', interval '1 month') d`, [rows[0].id])
  await db.query('vacuum analyze')
}

interface Read {
  name: string
  path: string
  /** The statements the API runs for this read, run directly through pg (same order and overlap). */
  direct: (db: pg.Pool) => Promise<number>
}

// The statements as the API sends them (copied from the server's statement log): the same text, the
// same parameters, as named prepared statements on connections with the server's session settings
// (lib/database.ts), so PostgreSQL does the same work for both sides.
// The location selection (lib/location-selection.ts): `lvl` under a root, with the district fallback;
// `$first` numbers its four parameters (root, depth, root, type name).
const selection = (first: number) => `with primary_selection as materialized (select location_id as id from location_tree where parent_location_id = $${first} and lvl = $${first + 1})
      select id from primary_selection
      union all
      select lt.location_id from location_tree lt
        join location l on l.id = lt.location_id join location_type ty on ty.id = l.location_type_id
      where lt.parent_location_id = $${first + 2} and ty.name = $${first + 3}
        and not exists (select 1 from primary_selection)`
const campaignPage = `with p as ((select "t"."id" as "id", "t"."indicator_id" as "indicator_id", "t"."campaign_id" as "campaign_id", "t"."location_id" as "location_id", "t"."value" as "value", count(*) over () as "__total" from "datapoint_with_computed" as "t" where "t"."indicator_id" = any($1::int4[]) and "t"."campaign_id" = any($2::int4[]) and t.location_id in (select id from (${selection(3)}) s) order by "t"."id" asc limit $7 offset $8))
    select (select coalesce(json_agg(o), '[]')::text from (select p."id", p."indicator_id", p."campaign_id", p."location_id", case when p."value" in ('NaN'::float8, 'Infinity'::float8, '-Infinity'::float8) then null else p."value" end as "value" from p) o) as objects,
           (select max(__total) from p) as total`
const selectedIds = `select json_agg(distinct id order by id)::text as ids from (${selection(1)}) s where id is not null`
const groupedPage = `with targets as materialized (select id from (${selection(1)}) s) select page.*, meta.__targets
      from (select json_agg(distinct id order by id) as __targets from targets where id is not null) meta
      left join ((select *, count(*) over () as "__total" from (select "d"."indicator_id", "lt"."parent_location_id" as "location_id", to_char(d.data_date, 'YYYYQ') as "time_grouping", sum(d.value) as "value" from (select "t"."indicator_id", "t"."location_id", "t"."data_date", "t"."value" from "datapoint" as "t" where t.data_date is not null and "t"."indicator_id" = any($5::int4[]) and t.value is not null and t.value not in ('NaN'::float8, 'Infinity'::float8, '-Infinity'::float8)) as "d" inner join "location_tree" as "lt" on "lt"."location_id" = "d"."location_id" where lt.parent_location_id in (select id from targets) group by "d"."indicator_id", "lt"."parent_location_id", 3) as "g" order by "time_grouping", "location_id", "indicator_id" limit $6 offset $7)) page on true`

const reads: Read[] = [
  {
    name: 'campaign_datapoint: 1 indicator, 1 campaign, root, depth 2',
    path: '/api/v1/campaign_datapoint/?indicator__in=7&campaign__in=3&location_id=1&location_depth=2',
    direct: async (db) => {
      // The page's objects come from PostgreSQL as one JSON text (lib/crud.ts listPage); the ids for
      // meta are read at the same time on a second connection.
      const [page] = await Promise.all([
        db.query({ name: 'campaign-page', text: campaignPage, values: [[7], [3], 1, 2, 1, 'District', 1000, 0] }),
        db.query({ name: 'selected-ids', text: selectedIds, values: [1, 2, 1, 'District'] }),
      ])
      return (JSON.parse(page.rows[0].objects) as unknown[]).length
    },
  },
  {
    name: 'date_datapoint: grouped by quarter over a province',
    path: `/api/v1/date_datapoint/?indicator__in=${INDICATORS + 1}&group_by_time=quarter&location_id=42`,
    direct: async (db) => {
      // One statement: the targets (materialized once), one page of the sums and the targets for meta.
      const { rows } = await db.query({ name: 'grouped-page', text: groupedPage, values: [42, 0, 42, 'District', [INDICATORS + 1], 1000, 0] })
      return rows.filter((r) => r.__total !== null).length
    },
  },
]

// Latency is timed with node:http over one kept-alive connection: fetch (undici) adds a few tenths of
// a millisecond of its own per request, which is the client's cost, not the API's.
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })

/** GET `path` with the admin key; resolves when the whole body has arrived. */
function get(port: number, path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path, headers: auth, agent }, (res) => {
        if (res.statusCode !== 200) reject(new Error(`${path}: ${res.statusCode}`))
        res.on('data', () => {})
        res.on('end', resolve)
      })
      .on('error', reject)
  })
}

/**
 * Sequential latencies of `api` and `direct`, one of each in turn for 2 × `seconds`: both sides see
 * the same moments of this shared, noisy machine. p50 and p99 in ms for each.
 */
async function interleaved(api: () => Promise<unknown>, direct: () => Promise<unknown>) {
  for (let i = 0; i < 20; i++) await Promise.all([api(), direct()])
  const times = { api: [] as number[], direct: [] as number[] }
  const timed = async (run: () => Promise<unknown>, into: number[]) => {
    const start = process.hrtime.bigint()
    await run()
    into.push(Number(process.hrtime.bigint() - start) / 1e6)
  }
  const end = Date.now() + 2 * seconds * 1000
  while (Date.now() < end) {
    await timed(api, times.api)
    await timed(direct, times.direct)
  }
  const summary = (values: number[]) => {
    values.sort((a, b) => a - b)
    const at = (q: number) => values[Math.min(values.length - 1, Math.floor(q * values.length))]
    return { n: values.length, p50: at(0.5), p99: at(0.99) }
  }
  return { api: summary(times.api), sql: summary(times.direct) }
}

const DIRECT_APPLICATION = 'bench-direct'

/** Minor page faults so far of each backend of this database, with the side it serves; null when /proc cannot show them. */
async function backendFaults(db: pg.Pool): Promise<Map<number, { direct: boolean; faults: number }> | null> {
  const { rows } = await db.query(`select pid, application_name from pg_stat_activity where datname = current_database()`)
  const backends = new Map<number, { direct: boolean; faults: number }>()
  try {
    for (const { pid, application_name } of rows) {
      // /proc/<pid>/stat: the 10th field is minflt, after the command name in parentheses. A pid that is
      // not a local postgres process (a remote server) makes the whole reading unavailable.
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
      if (!stat.startsWith(`${pid} (postgres) `)) return null
      const faults = Number(stat.split(') ')[1].split(' ')[7])
      backends.set(pid, { direct: application_name === DIRECT_APPLICATION, faults })
    }
  } catch {
    return null
  }
  return backends
}

/** Page faults per read on each side between two readings (backends present in both; pools close idle ones). */
function faultsPerRead(before: Awaited<ReturnType<typeof backendFaults>>, after: Awaited<ReturnType<typeof backendFaults>>, reads: number): string {
  if (!before || !after) return 'n/a'
  const sum = { api: 0, direct: 0 }
  for (const [pid, { direct, faults }] of after) {
    const earlier = before.get(pid)
    if (earlier) sum[direct ? 'direct' : 'api'] += faults - earlier.faults
  }
  return `${Math.round(sum.api / reads)} / ${Math.round(sum.direct / reads)}`
}

const scratch = await scratchDatabase(adminUrl, 'rhizome_reads')
const port = 4005
const server = await startServer(['dist/server.js'], { DATABASE_URL: scratch.url, DATA_DIR: mkdtempSync(join(tmpdir(), 'rhizome-bench-')), ADMIN_API_KEY: KEY, DEMO_DATA: '0' }, port)
// The direct side's connections open at its first query, after seeding (see the top of this file).
const direct = new pg.Pool({ connectionString: scratch.url, max: 10, application_name: DIRECT_APPLICATION, options: '-c TimeZone=UTC -c plan_cache_mode=force_custom_plan' })
try {
  const seeder = new pg.Client({ connectionString: scratch.url })
  await seeder.connect()
  const started = Date.now()
  try {
    await seed(seeder)
    const tree = await fetch(`http://127.0.0.1:${port}/api/v1/cache_meta/`, { headers: auth })
    if (tree.status !== 200) throw new Error(`cache_meta: ${tree.status}`)
    await seeder.query('vacuum analyze location_tree')
  } finally {
    await seeder.end()
  }
  console.log(`seeded in ${((Date.now() - started) / 1000).toFixed(1)} s`)

  const lines = [
    '| read | API p50 ms | API p99 ms | SQL p50 ms | SQL p99 ms | API / SQL at p50 | API req/s (50 conn.) | rows | page faults per read (API / SQL) |',
    '|---|---|---|---|---|---|---|---|---|',
  ]
  for (const read of reads) {
    const res = await fetch(`http://127.0.0.1:${port}${read.path}`, { headers: auth })
    const body = (await res.json()) as { objects: unknown[]; meta: { total_count: number } }
    const check = await read.direct(direct)
    if (res.status !== 200 || body.objects.length !== check) throw new Error(`${read.name}: API ${res.status} ${body.objects?.length} rows, SQL ${check}`)
    const before = await backendFaults(direct)
    const { api, sql } = await interleaved(() => get(port, read.path), () => read.direct(direct))
    const after = await backendFaults(direct)
    const faults = faultsPerRead(before, after, api.n)
    const load = await round(read.name, `http://127.0.0.1:${port}${read.path}`, auth, seconds)
    const f = (n: number) => n.toFixed(2)
    lines.push(`| ${read.name} | ${f(api.p50)} | ${f(api.p99)} | ${f(sql.p50)} | ${f(sql.p99)} | ${(api.p50 / sql.p50).toFixed(2)} | ${load.requests_per_s} | ${body.objects.length} of ${body.meta.total_count} | ${faults} |`)
  }
  console.log(lines.join('\n'))
} finally {
  await direct.end()
  agent.destroy()
  await stop(server)
  await scratch.close()
}
