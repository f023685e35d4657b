// `BENCH_ONLY=parent_totals BENCH_BEFORE=<a checkout with dist/ built> npm run bench:ingest`: what a
// parent's int total from its children's final values (lib/engine/finals.ts) costs a recompute, against
// the build in BENCH_BEFORE. Two servers, this build's and that one's, each on a scratch database seeded
// alike: 10,000 locations × 50 raw int indicators at the districts, 10 int indicators calculated as the
// sum of two of them and 5 ratios over those sums, and each sum given a raw value at 1 % of the
// districts (corrections: the case where the rules differ). Timed in alternation, the build before
// first in each round: agg_refresh from empty derived tables (a first recompute), agg_refresh again
// (nothing changes), and one district's corrected sum uploaded (recomputed key by key).
import { join } from 'node:path'
import pg from 'pg'
import { median, scratchDatabase, startServer, stop, scratchDir } from './lib.js'
import { apiClient, campaignsOf, LOCATIONS, seedNation, SERVER_ENV } from './national.js'

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
const SEED_ROWS = LOCATIONS // one campaign of the national file's; the benched campaign is the next one
const C = campaignsOf(SEED_ROWS) + 1
const SUMS = 10

interface Build {
  name: string
  db: pg.Client
  api: ReturnType<typeof apiClient>
  times: { first: number[]; again: number[]; correction: number[] }
}

export async function parentTotalsCost(adminUrl: string) {
  const before = process.env.BENCH_BEFORE
  if (!before) throw new Error('BENCH_BEFORE names a checkout of the build to compare with, its dist/ built (npm run build there)')
  const builds: Build[] = []
  const stops: Array<() => Promise<void>> = []
  try {
    for (const [name, root, port] of [
      ['before', before, 4011],
      ['this build', process.cwd(), 4012],
    ] as const) {
      const scratch = await scratchDatabase(adminUrl, `rhizome_bench_totals_${port}`)
      stops.push(scratch.close)
      const env = { ...SERVER_ENV, DATABASE_URL: scratch.url, DATA_DIR: scratchDir('rhizome-totals-') }
      const server = await startServer([join(root, 'dist/server.js')], env, port)
      stops.push(() => stop(server))
      const db = new pg.Client({ connectionString: scratch.url })
      await db.connect()
      stops.push(() => db.end())
      const build = { name, db, api: apiClient(port), times: { first: [], again: [], correction: [] } }
      console.log(`${name}: seeding (${LOCATIONS} locations × 50 raw indicators, ${SUMS} calculated sums, ${SUMS / 2} ratios)`)
      await seed(build)
      builds.push(build)
    }
    for (let round = 0; round < ROUNDS; round++) {
      for (const build of builds) await timeRound(build, round)
      console.log(`round ${round + 1} of ${ROUNDS} done`)
    }
    const seconds = (xs: number[]) => `${(median(xs) / 1000).toFixed(2)} s (${xs.map((x) => (x / 1000).toFixed(2)).join(', ')})`
    for (const what of ['first', 'again', 'correction'] as const) {
      const [b, a] = builds.map((build) => build.times[what])
      console.log(`${what}: before ${seconds(b)}; this build ${seconds(a)}; ratio ${(median(a) / median(b)).toFixed(2)}×`)
    }
  } finally {
    for (const close of stops.reverse()) await close()
  }
}

async function seed({ db, api }: Build) {
  await seedNation(db, api, SEED_ROWS)
  await db.query(`insert into source_doc (doc_title, file_type, guid) values ('bench-raw', 'campaign', 'bench-raw')`)
  await db.query(`insert into source_submission (document_id, instance_guid, row_number, submission_json)
    select id, 'raw', 0, '{}' from source_doc where guid = 'bench-raw'`)
  const raw = (
    indicator: string,
    where: string,
  ) => `insert into datapoint (indicator_id, location_id, campaign_id, value, source_submission_id, unique_index, precedence_at)
    select i, l, ${C}, (l * 7 + i * 13) % 1000, (select id from source_submission where instance_guid = 'raw'), l || '_' || i || '_' || ${C}, now()
    from generate_series(102, ${LOCATIONS}) l cross join ${indicator} i where ${where}`
  await db.query(raw('generate_series(1, 50)', 'true'))
  // S_k = I_(2k-1) + I_(2k), ids 51–60; R_k = I_(2k-1) / S_k, ids 61–65.
  await db.query(`insert into indicator (id, name, short_name, data_format)
    select 50 + k, 'S' || k, 'S' || k, 'int' from generate_series(1, ${SUMS}) k
    union all select 60 + k, 'R' || k, 'R' || k, 'pct' from generate_series(1, ${SUMS / 2}) k`)
  await db.query(`select setval(pg_get_serial_sequence('indicator', 'id'), 100)`)
  await db.query(`insert into calculated_indicator_component (indicator_id, indicator_component_id, calculation)
    select 50 + k, 2 * k - 1 + p, 'PART_TO_BE_SUMMED' from generate_series(1, ${SUMS}) k cross join generate_series(0, 1) p
    union all select 60 + k, 2 * k - 1, 'NUMERATOR' from generate_series(1, ${SUMS / 2}) k
    union all select 60 + k, 50 + k, 'DENOMINATOR' from generate_series(1, ${SUMS / 2}) k`)
  await db.query(raw(`generate_series(51, ${50 + SUMS})`, 'l % 100 = 7'))
  await db.query(`insert into source_object_map (content_type, source_object_code, master_object_id)
    values ('campaign', 'C${C}', ${C}), ('indicator', 'S1', 51)`)
  await db.query('analyze')
}

/** The district whose S1 each correction changes, and I1's stored value there (sent unchanged). */
const DISTRICT = 5_007
const I1 = (DISTRICT * 7 + 13) % 1000

async function timeRound({ db, api, times }: Build, round: number) {
  const timed = async (work: () => Promise<unknown>) => {
    const started = performance.now()
    await work()
    return performance.now() - started
  }
  await db.query(`delete from agg_datapoint where campaign_id = ${C}`)
  await db.query(`delete from datapoint_with_computed where campaign_id = ${C}`)
  times.first.push(await timed(() => api('GET', `agg_refresh/?campaign_id=${C}`)))
  times.again.push(await timed(() => api('GET', `agg_refresh/?campaign_id=${C}`)))
  // I1 unchanged and S1 changed: a document with a stored key, one changed, recomputed key by key.
  const csv = `campaign,geocode,I1,S1\nC${C},G${DISTRICT},${I1},${1000 + round}\n`
  times.correction.push(
    await timed(async () => {
      const doc = (await api('POST', 'document/', { docfile: Buffer.from(csv).toString('base64'), doc_title: 'fix.csv', file_type: 'campaign' })) as {
        id: number
      }
      const run = (await api('GET', `transform_upload/?document_id=${doc.id}`)) as { objects: Array<{ ingest_stats: { recomputed_keys: number } }> }
      if (!(run.objects[0].ingest_stats.recomputed_keys > 0)) throw new Error('the correction was not recomputed key by key')
    }),
  )
}
