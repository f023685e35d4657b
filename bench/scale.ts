// `npm run bench:scale` (PostgreSQL; SCALE_ENGINE=pglite for the embedded database): one database
// grown in steps of raw campaign values (SCALE_STEPS, default 1,000,000, 3,000,000, 10,000,000 and
// 30,000,000, on either engine; bench/scale-grow.ts says how), and at each step, on the newest
// campaign (just uploaded through the API) and on an old one (campaign 2): a four-chart country
// dashboard's data missed (`Cache-Control: no-cache`) and hit, a province's values, the campaign's CSV
// export, a district's correction end to end and its recompute, a data entry and its province's total,
// the campaign's agg_refresh (bench/scale-measure.ts); then the whole database's: VACUUM ANALYZE, its
// size per table and per raw value, the server's RSS. It prints a table, draws the curve
// (bench/results/scale.svg, scale-pglite.svg) and ends with one `growth` line per operation, first step
// to last. BENCH_DATABASE_URL names the server (default postgres://postgres@127.0.0.1:5432/postgres); a
// scratch database is created and dropped (BENCH_KEEP=1 keeps it).
import { writeFileSync } from 'node:fs'
import pg from 'pg'
import { ADMIN_URL, doing, procStat, scratchDatabase, scratchDir, startServer, stop } from './lib.js'
import { apiClient, SERVER_ENV } from './national.js'
import { curveSvg, type Series } from './scale-curve.js'
import { campaignCsv, growTo, seedScale, upload, VALUES_PER_CAMPAIGN } from './scale-grow.js'
import { countryDashboard, measureCampaign } from './scale-measure.js'

/** SCALE_ENGINE=pglite: the embedded database, in a data directory of the bench's. */
const EMBEDDED = process.env.SCALE_ENGINE === 'pglite'
const STEPS = (process.env.SCALE_STEPS ?? '1000000,3000000,10000000,30000000').split(',').map(Number)
const PORT = 4031
/** The old campaign measured: a copy, so that campaign 1, the copies' source, keeps its upload's rows. */
const OLD = 2
/** The tables that hold a copy of every raw value. */
const VALUE_TABLES = ['datapoint', 'datapoint_history', 'agg_datapoint', 'datapoint_with_computed', 'doc_datapoint', 'source_submission', 'outlier_history']

interface Step {
  values: number
  newest: Record<string, number>
  old: Record<string, number>
  whole: Record<string, number>
  sizes: Record<string, number>
}

async function wholeDatabase(db: pg.Client, serverPid: number | undefined, uploadMs: number) {
  doing('VACUUM ANALYZE of the whole database')
  let started = performance.now()
  await db.query('vacuum analyze')
  const vacuum = performance.now() - started
  started = performance.now()
  await db.query('analyze')
  const analyze = performance.now() - started
  const { rows } = await db.query<{ name: string; bytes: string }>(
    `select relname as name, pg_total_relation_size(oid)::text as bytes from pg_class where relname = any($1) and relkind = 'r'`,
    [VALUE_TABLES],
  )
  const sizes = Object.fromEntries(rows.map((r) => [r.name, Number(r.bytes)]))
  const raw = Number((await db.query<{ n: string }>('select count(*)::text as n from datapoint')).rows[0].n)
  const database = Number((await db.query<{ bytes: string }>('select pg_database_size(current_database())::text as bytes')).rows[0].bytes)
  // Field 24 of /proc/<pid>/stat: the resident set, in pages of 4 KiB.
  const rss = Number(procStat(serverPid)?.fields[21] ?? Number.NaN) * 4096
  const whole = { 'the newest campaign uploaded, end to end': uploadMs, 'VACUUM ANALYZE': vacuum, ANALYZE: analyze }
  return { raw, whole, sizes: { ...sizes, database, 'server RSS': rss } }
}

const ms = (x: number | undefined) => (x === undefined ? '—' : x >= 10_000 ? `${(x / 1000).toFixed(1)} s` : `${Math.round(x)} ms`)
const mb = (x: number) => `${(x / 1e6).toFixed(0)} MB`
const millions = (x: number) => `${(x / 1e6).toFixed(2)} M`

function printTable(steps: Step[]) {
  const head = `| operation | ${steps.map((s) => `${millions(s.values)} values`).join(' | ')} |`
  const lines = [head, `|---|${steps.map(() => '---|').join('')}`]
  for (const op of Object.keys(steps[0].newest))
    lines.push(`| campaign ${op} (newest / old) | ${steps.map((s) => `${ms(s.newest[op])} / ${ms(s.old[op])}`).join(' | ')} |`)
  for (const op of Object.keys(steps[0].whole)) lines.push(`| ${op} | ${steps.map((s) => ms(s.whole[op])).join(' | ')} |`)
  for (const table of Object.keys(steps[0].sizes)) lines.push(`| size: ${table} | ${steps.map((s) => mb(s.sizes[table])).join(' | ')} |`)
  const perValue = (s: Step) => VALUE_TABLES.reduce((sum, t) => sum + (s.sizes[t] ?? 0), 0) / s.values
  lines.push(`| bytes per raw value (${VALUE_TABLES.length} tables) | ${steps.map((s) => Math.round(perValue(s))).join(' | ')} |`)
  console.log(lines.join('\n'))
}

function printGrowth(steps: Step[]) {
  const [first, last] = [steps[0], steps.at(-1) as Step]
  const line = (name: string, a: number, b: number, unit: (x: number) => string) =>
    console.log(`growth ${name}: ${unit(a)} -> ${unit(b)} (${(b / a).toFixed(2)}x)`)
  for (const op of Object.keys(first.newest)) {
    line(`campaign ${op} (newest)`, first.newest[op], last.newest[op], ms)
    line(`campaign ${op} (old)`, first.old[op], last.old[op], ms)
  }
  for (const op of Object.keys(first.whole)) line(op, first.whole[op], last.whole[op], ms)
  line('database size', first.sizes.database, last.sizes.database, mb)
  line('server RSS', first.sizes['server RSS'], last.sizes['server RSS'], mb)
}

function drawCurve(steps: Step[]) {
  const series: Series[] = Object.keys(steps[0].newest).map((op) => ({ name: op, points: steps.map((s) => [s.values, s.newest[op]]) }))
  series.push({ name: 'VACUUM ANALYZE', points: steps.map((s) => [s.values, s.whole['VACUUM ANALYZE']]) })
  const file = `bench/results/scale${EMBEDDED ? '-pglite' : ''}.svg`
  writeFileSync(file, curveSvg(`bench:scale, the newest campaign (${EMBEDDED ? 'PGlite' : 'PostgreSQL'})`, series))
  console.log(`curve: ${file}`)
}

async function main() {
  const campaigns = STEPS.map((values) => Math.max(OLD + 1, Math.round(values / VALUES_PER_CAMPAIGN)))
  const dataDir = scratchDir('rhizome-scale-')
  const scratch = EMBEDDED ? undefined : await scratchDatabase(ADMIN_URL, 'rhizome_bench_scale')
  const env = { ...SERVER_ENV, DATA_DIR: dataDir, DEMO_DATA: '0', ...(scratch ? { DATABASE_URL: scratch.url } : {}) }
  const server = await startServer(['dist/server.js'], env, PORT)
  // The embedded database is reached through the socket its server opens in the data directory.
  const db = new pg.Client(scratch ? { connectionString: scratch.url } : { host: dataDir, user: 'postgres', database: 'postgres' })
  await db.connect()
  const api = apiClient(PORT)
  const steps: Step[] = []
  try {
    doing(`seeding the nation for ${campaigns.at(-1)} campaigns`)
    await seedScale(db, api, campaigns.at(-1) as number)
    doing('uploading campaign 1 through the API')
    await upload(api, campaignCsv(1), 'campaign 1.csv')
    const dashboard = await countryDashboard(api)
    let stored = 1
    for (const [round, target] of campaigns.entries()) {
      const { uploadMs } = await growTo(db, api, stored, target)
      stored = target
      const { raw, whole, sizes } = await wholeDatabase(db, server.pid, uploadMs)
      const newest = await measureCampaign(PORT, api, dashboard, target, round)
      const old = await measureCampaign(PORT, api, dashboard, OLD, round)
      steps.push({ values: raw, newest, old, whole, sizes })
      console.log(`step ${round + 1} of ${campaigns.length}: ${millions(raw)} raw values in ${target} campaigns`)
    }
    printTable(steps)
    drawCurve(steps)
    printGrowth(steps)
  } finally {
    await db.end()
    await stop(server)
    await scratch?.close()
  }
}

await main()
