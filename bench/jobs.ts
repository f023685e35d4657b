// `npm run bench:jobs` (PostgreSQL): what the background form costs and what worker processes buy.
// (1) transform_upload of the national file (bench/national.ts; BENCH_ROWS, default 100,000 rows × 20
// columns) synchronously and with `Prefer: respond-async` (202, then the job polled every 250 ms until
// it completes), alternated over BENCH_ROUNDS rounds (default 3), each run on a fresh database. The
// overhead compares the best runs (other work on the machine only ever slows a run) and the medians.
// (2) agg_refresh of 4 campaigns (9,899 districts × 20 raw indicator values each) submitted at once as
// jobs, worked by 1 and then 2 worker processes (`node dist/worker.js`, JOB_CONCURRENCY=1 each; the
// server works none), each configuration on a fresh database: the time until all 4 have completed.
import type { ChildProcess } from 'node:child_process'
import type pg from 'pg'
import { ADMIN_URL, doing, median, startProcess, stop } from './lib.js'
import { type apiClient, LOCATIONS, nationalCsv, onNationalServer } from './national.js'

const ROWS = Number(process.env.BENCH_ROWS ?? 100_000)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const PORT = 4007
const ASYNC = { prefer: 'respond-async' }

/** A server on a fresh, seeded database; `work` runs with it, then everything is dropped. */
const onFreshDatabase = <T>(
  serverEnv: Record<string, string>,
  work: (api: ReturnType<typeof apiClient>, db: pg.Client, env: Record<string, string>) => Promise<T>,
): Promise<T> => onNationalServer({ adminUrl: ADMIN_URL, name: 'jobs', port: PORT, rows: ROWS, serverEnv: { JOB_POLL_MS: '500', ...serverEnv } }, work)

/** Polls the jobs until every one has completed; throws on a failed one. */
async function completed(api: ReturnType<typeof apiClient>, ids: number[]): Promise<void> {
  for (;;) {
    const { objects } = (await api('GET', `job/?id__in=${ids.join(',')}`)) as { objects: Array<{ id: number; state: string; error: unknown }> }
    const failed = objects.find((j) => j.state === 'failed' || j.state === 'cancelled')
    if (failed) throw new Error(`job ${failed.id}: ${failed.state} ${JSON.stringify(failed.error)}`)
    if (objects.length === ids.length && objects.every((j) => j.state === 'completed')) return
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
}

async function transformUpload(mode: 'sync' | 'async', csv: Buffer): Promise<number> {
  return onFreshDatabase({}, async (api) => {
    doing(`transform_upload of ${ROWS} rows, ${mode}`)
    const doc = await api('POST', 'document/', { docfile: csv.toString('base64'), doc_title: 'bench.csv', file_type: 'campaign' })
    const started = performance.now()
    if (mode === 'sync') await api('GET', `transform_upload/?document_id=${doc.id}`)
    else await completed(api, [(await api('GET', `transform_upload/?document_id=${doc.id}`, undefined, ASYNC)).id as number])
    return performance.now() - started
  })
}

function startWorkers(n: number, env: Record<string, string>): ChildProcess[] {
  return Array.from({ length: n }, () =>
    startProcess(process.execPath, ['dist/worker.js'], {
      env: { ...process.env, ...env, JOB_CONCURRENCY: '1', LOG_LEVEL: 'warn' },
      stdio: ['ignore', process.stderr, 'inherit'],
    }),
  )
}

/** 4 campaigns of raw values, recomputed as 4 jobs at once by `workers` worker processes. */
async function recomputes(workers: number): Promise<number> {
  return onFreshDatabase({ JOB_CONCURRENCY: '0' }, async (api, db, env) => {
    doing('seeding 4 campaigns of raw values')
    const first = 1000
    await db.query(`insert into campaign (id, name, campaign_type_id, start_date, end_date)
      select ${first} + g, 'R' || g, 1, date '2020-01-01' + g * 7, date '2020-01-01' + g * 7 + 3 from generate_series(1, 4) g`)
    await db.query(`insert into source_doc (doc_title, file_type, guid) values ('bench-raw', 'campaign', 'bench-raw')`)
    await db.query(
      `insert into source_submission (document_id, instance_guid, row_number, submission_json) select id, 'raw', 0, '{}' from source_doc where guid = 'bench-raw'`,
    )
    await db.query(`insert into datapoint (indicator_id, location_id, campaign_id, value, source_submission_id, unique_index, precedence_at)
      select i, l, ${first} + c, (l * 7 + i * 13 + c) % 1000, (select id from source_submission where instance_guid = 'raw'), l || '_' || i || '_' || (${first} + c), now()
      from generate_series(1, 4) c cross join generate_series(102, ${LOCATIONS}) l cross join generate_series(1, 20) i`)
    await db.query('analyze')
    doing(`4 campaigns' agg_refresh as jobs, ${workers} worker process(es)`)
    const children = startWorkers(workers, env)
    try {
      // The workers are up once they have registered with the queue (their first poll).
      await new Promise((resolve) => setTimeout(resolve, 5000))
      const started = performance.now()
      const ids = []
      for (let c = 1; c <= 4; c++) ids.push((await api('GET', `agg_refresh/?campaign_id=${first + c}`, undefined, ASYNC)).id as number)
      await completed(api, ids)
      return performance.now() - started
    } finally {
      await Promise.all(children.map((child) => stop(child)))
    }
  })
}

const seconds = (xs: number[]) => xs.map((x) => (x / 1000).toFixed(1)).join(', ')

async function main() {
  if (process.env.BENCH_ONLY !== 'recompute') {
    const csv = nationalCsv(ROWS)
    const times: Record<'sync' | 'async', number[]> = { sync: [], async: [] }
    for (let round = 0; round < ROUNDS; round++) {
      for (const mode of round % 2 ? (['async', 'sync'] as const) : (['sync', 'async'] as const)) {
        times[mode].push(await transformUpload(mode, csv))
        console.log(`round ${round + 1}, ${mode}: ${(times[mode].at(-1)! / 1000).toFixed(1)} s`)
      }
    }
    const best = (xs: number[]) => Math.min(...xs)
    const overhead = (pick: (xs: number[]) => number) => `${((pick(times.async) / pick(times.sync) - 1) * 100).toFixed(1)} %`
    console.log(
      `transform_upload of ${ROWS} rows × 20 columns: sync ${seconds(times.sync)} s, async ${seconds(times.async)} s; ` +
        `overhead of the async form: best runs ${overhead(best)}, medians ${overhead(median)}`,
    )
  }
  if (process.env.BENCH_ONLY !== 'transform') {
    for (const workers of [1, 2]) {
      const ms = await recomputes(workers)
      console.log(`4 campaigns' agg_refresh as jobs, ${workers} worker process(es): ${(ms / 1000).toFixed(1)} s`)
    }
  }
}

await main()
