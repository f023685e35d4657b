// `npm run bench:ingest` (PostgreSQL): (1) a generated campaign CSV of 100,000 rows × 20 indicator columns
// over a generated tree of 10,000 locations, uploaded and run through transform_upload end to end, then
// uploaded again corrected (1 % of its cells changed) and unchanged;
// (2) agg_refresh of one campaign with 10,000 locations × 50 indicators, next to the single hand-written
// aggregation statement on the same data. Seeded: the same files and data every run.
// BENCH_DATABASE_URL names the server (default postgres://postgres@127.0.0.1:5432/postgres); a scratch
// database is created and dropped. BENCH_ROWS scales (1) and (3); BENCH_ONLY=end_to_end runs (1) only,
// BENCH_ONLY=floor (3) only; BENCH_ONLY=reupload_floor the floor of a re-upload only; BENCH_ONLY=history what the datapoint history costs an upload (bench/ingest-history.ts); BENCH_ONLY=parent_totals what a parent's total from its children's final values costs a recompute, against the build in BENCH_BEFORE (bench/ingest-parent-totals.ts). (3), the write floor: the rows the specification's tables must hold for
// the same cells, bulk-inserted by PostgreSQL itself, none of the pipeline's work around them.
import type pg from 'pg'
import { ADMIN_URL, doing, median } from './lib.js'
import { historyCost } from './ingest-history.js'
import { parentTotalsCost } from './ingest-parent-totals.js'
import { type apiClient, campaignsOf, correctedCsv, INDICATORS, LOCATIONS, nationalCsv, onNationalServer } from './national.js'

const ROWS = Number(process.env.BENCH_ROWS ?? 100_000)

async function main() {
  if (process.env.BENCH_ONLY === 'parent_totals') return await parentTotalsCost(ADMIN_URL)
  return onNationalServer({ adminUrl: ADMIN_URL, name: 'ingest', port: 4005, rows: ROWS }, async (api, db) => {
    if (process.env.BENCH_ONLY === 'floor') return void (await besidesTheFloor(db, await writeFloor(db)))
    if (process.env.BENCH_ONLY === 'reupload_floor') return await reuploadFloor(db)
    if (process.env.BENCH_ONLY === 'history') return await historyCost(db, api, ROWS, Number(process.env.BENCH_PAIRS ?? 2))

    // (1) End to end: the national file, then corrected files of the same keys (1 % and none of the cells changed).
    const csv = nationalCsv(ROWS)
    const cells = ROWS * INDICATORS
    console.log(`end to end: ${ROWS} rows × ${INDICATORS} columns = ${cells} cells (${(csv.length / 1e6).toFixed(1)} MB CSV), ${campaignsOf(ROWS)} campaigns`)
    const firstUpload = await uploadTimed(db, api, csv, 'the national file')
    // Unchanged first: each re-upload is compared with what the one before it stored.
    for (const share of [0, 0.01]) {
      const corrected = correctedCsv(csv, share)
      const again = await uploadTimed(db, api, corrected.csv, `re-upload, ${corrected.changed} cells changed`)
      console.log(`  ${((100 * again) / firstUpload).toFixed(1)} % of the first upload's time`)
    }

    if (process.env.BENCH_ONLY === 'end_to_end') return
    let started: number
    // (2) agg_refresh of one campaign: 10,000 locations × 50 indicators of raw values.
    doing('agg_refresh of one campaign, then the hand-written statement')
    const C = campaignsOf(ROWS) + 1
    await db.query(`insert into source_doc (doc_title, file_type, guid) values ('bench-raw', 'campaign', 'bench-raw')`)
    await db.query(
      `insert into source_submission (document_id, instance_guid, row_number, submission_json) select id, 'raw', 0, '{}' from source_doc where guid = 'bench-raw'`,
    )
    await db.query(`insert into datapoint (indicator_id, location_id, campaign_id, value, source_submission_id, unique_index, precedence_at)
      select i, l, ${C}, (l * 7 + i * 13) % 1000, (select id from source_submission where instance_guid = 'raw'), l || '_' || i || '_' || ${C}, now()
      from generate_series(102, ${LOCATIONS}) l cross join generate_series(1, 50) i`)
    await db.query('analyze')
    // The first run writes the campaign's derived rows; the next three find them current.
    const times: number[] = []
    for (let k = 0; k < 4; k++) {
      started = performance.now()
      await api('GET', `agg_refresh/?campaign_id=${C}`)
      times.push(performance.now() - started)
    }
    const first = times.shift()!
    // The same frontier rule, written by hand as one statement over the table; timed with the server's
    // default work_mem and with the engine's (lib/engine/recompute.ts sets 64MB for its transaction).
    const hand = async (workMem: string | null) => {
      const handTimes: number[] = []
      for (let k = 0; k < 3; k++) {
        await db.query('begin')
        if (workMem) await db.query(`set local work_mem = '${workMem}'`)
        started = performance.now()
        await handWritten()
        handTimes.push(performance.now() - started)
        await db.query('commit')
      }
      return handTimes
    }
    const handWritten = () =>
      db.query(`with raw as (select location_id, indicator_id, value from datapoint
          where campaign_id = ${C} and value is not null and value <> 'NaN'::float8),
        nearest as (select b.location_id, b.indicator_id, min(up.lvl) as k from raw b
          join location_tree up on up.location_id = b.location_id and up.lvl >= 1
          join raw a on a.location_id = up.parent_location_id and a.indicator_id = b.indicator_id
          group by b.location_id, b.indicator_id)
        select t.parent_location_id as location_id, r.indicator_id,
               case when i.data_format = 'int' then sum(r.value) else avg(r.value) end as value
        from raw r
        join indicator i on i.id = r.indicator_id and i.data_format in ('int', 'bool')
        left join nearest n on n.location_id = r.location_id and n.indicator_id = r.indicator_id
        join location_tree t on t.location_id = r.location_id and t.lvl >= 1 and (n.k is null or t.lvl < n.k)
        group by t.parent_location_id, r.indicator_id, i.data_format`)
    const seconds = (xs: number[]) => `median ${(median(xs) / 1000).toFixed(2)} s (${xs.map((x) => (x / 1000).toFixed(2)).join(', ')})`
    console.log(`agg_refresh, ${LOCATIONS - 101} × 50 raw values: first run ${(first / 1000).toFixed(2)} s, then ${seconds(times)}`)
    for (const workMem of [null, '64MB']) {
      const handTimes = await hand(workMem)
      console.log(
        `hand-written aggregation statement, work_mem ${workMem ?? 'default'}: ${seconds(handTimes)}; ratio ${(median(times) / median(handTimes)).toFixed(2)}×`,
      )
    }
    const floorMs = await writeFloor(db)
    console.log(
      `end to end ÷ write floor (every index), in cells/s: ${(floorMs / firstUpload).toFixed(2)} (the first upload ${(firstUpload / 1000).toFixed(1)} s, the floor ${(floorMs / 1000).toFixed(1)} s; target ≥ 0.80)`,
    )
    await besidesTheFloor(db, floorMs)
  })
}

/**
 * (3) The write floor of (1) on this machine: a campaign upload of N cells leaves a row per cell in
 * four tables the specification defines (the staged `doc_datapoint`, the raw `datapoint`, and the
 * campaign's `agg_datapoint` and `datapoint_with_computed`). Each is written here into a fresh copy of
 * the table with its indexes (`LIKE … INCLUDING ALL`; no triggers), by one INSERT … SELECT over
 * generate_series in the order the pipeline writes it, all in one transaction as the pipeline does.
 * The sum is what filling these tables costs here, before parsing, mapping, cleaning, aggregating or
 * computing anything. Measured three ways: every table logged with every index; with only the primary
 * and unique keys the specification requires (the other indexes serve reads: bench/README.md,
 * "Indexes"); and only `datapoint` logged (the other three are rebuilt from it and
 * `source_submission`, so they could be UNLOGGED at the price of an empty read after a crash until a
 * recompute).
 */
/**
 * One upload end to end (`POST /document/` and `transform_upload`): its time by phase and the WAL it
 * wrote, printed; returns its time in ms.
 */
async function uploadTimed(db: pg.Client, api: ReturnType<typeof apiClient>, csv: Buffer, what: string): Promise<number> {
  const lsn = async () => (await db.query<{ lsn: string }>('select pg_current_wal_lsn()::text as lsn')).rows[0].lsn
  const walBefore = await lsn()
  doing(`${what}: upload and transform_upload`)
  const started = performance.now()
  const doc = await api('POST', 'document/', { docfile: csv.toString('base64'), doc_title: 'bench.csv', file_type: 'campaign' })
  const uploadMs = performance.now() - started
  const run = await api('GET', `transform_upload/?document_id=${doc.id}`)
  const totalMs = performance.now() - started
  const wal = (await db.query<{ bytes: string }>('select pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn)::text as bytes', [walBefore])).rows[0].bytes
  const stats = (run.objects as Array<{ ingest_stats: Record<string, unknown> }>)[0].ingest_stats
  console.log(`${what}: upload ${(uploadMs / 1000).toFixed(1)} s, total ${(totalMs / 1000).toFixed(1)} s, WAL ${(Number(wal) / 1e6).toFixed(0)} MB`)
  console.log(
    `  ${Math.round((ROWS * INDICATORS) / (totalMs / 1000))} cells/s; datapoints ${JSON.stringify(stats.datapoints)}; campaigns recomputed ${(stats.campaigns_recomputed as unknown[]).length}; phases ${JSON.stringify(stats.timings_ms)}`,
  )
  return totalMs
}

// Cell n of the file: campaign-major rows of LOCATIONS locations, INDICATORS columns per row.
const CELLS = `(select n, 1 + n / ${INDICATORS} / ${LOCATIONS} as c, 1 + (n / ${INDICATORS}) % ${LOCATIONS} as l, 1 + n % ${INDICATORS} as i,
    (n::int8 * 7919 % 1000)::float8 as v from generate_series(0, ${ROWS * INDICATORS - 1}) n)`

/** Returns the time of the first variant (every table logged, every index), in ms. */
async function writeFloor(db: pg.Client): Promise<number> {
  doing('the write floor')
  const cell = CELLS
  const cells = ROWS * INDICATORS
  const writes: Array<[string, string]> = [
    [
      'doc_datapoint',
      `insert into floor_doc_datapoint (document_id, source_submission_id, column_name, indicator_id, location_id, campaign_id, value)
      select 1, 1 + n / ${INDICATORS}, 'I' || i, i, l, c, v from ${cell} x order by n`,
    ],
    [
      'datapoint',
      `insert into floor_datapoint (indicator_id, location_id, campaign_id, value, source_submission_id, unique_index, precedence_at)
      select i, l, c, v, 1 + n / ${INDICATORS}, (l || '_' || i || '_' || c) collate "C", now() from ${cell} x order by (l || '_' || i || '_' || c) collate "C"`,
    ],
    [
      'agg_datapoint',
      `insert into floor_agg_datapoint (indicator_id, location_id, campaign_id, value, is_raw)
      select i, l, c, v, true from ${cell} x order by c, l, i`,
    ],
    [
      'datapoint_with_computed',
      `insert into floor_datapoint_with_computed (indicator_id, location_id, campaign_id, value)
      select i, l, c, v from ${cell} x order by c, l, i`,
    ],
  ]
  const variants = [
    { name: 'all logged, every index', unlogged: false, keysOnly: false },
    { name: 'all logged, primary and unique keys only', unlogged: false, keysOnly: true },
    { name: 'only datapoint logged, every index', unlogged: true, keysOnly: false },
  ]
  let everyIndexMs = 0
  for (const variant of variants) {
    await db.query('begin')
    const { times, total } = await timedInserts(db, writes, async (table) => {
      const unlogged = variant.unlogged && table !== 'datapoint' ? 'unlogged' : ''
      await db.query(`create ${unlogged} table floor_${table} (like ${table} including all)`)
      if (variant.keysOnly) {
        const { rows } = await db.query(`select c.relname from pg_index i join pg_class c on c.oid = i.indexrelid
          where i.indrelid = 'floor_${table}'::regclass and not i.indisunique`)
        for (const { relname } of rows) await db.query(`drop index ${relname}`)
      }
    })
    await db.query('commit')
    for (const [table] of writes) await db.query(`drop table floor_${table}`)
    console.log(
      `write floor, ${cells} cells, ${variant.name}: ${times.join(', ')}; ` +
        `total ${(total / 1000).toFixed(1)} s → at most ${Math.round(cells / (total / 1000))} cells/s`,
    )
    if (!everyIndexMs) everyIndexMs = total
  }
  await reuploadFloor(db)
  return everyIndexMs
}

/** Each insert of `writes` ([table, statement]) timed, after `prepare` made its table; in the caller's transaction. */
async function timedInserts(db: pg.Client, writes: Array<[string, string]>, prepare: (table: string) => Promise<void>) {
  const times: string[] = []
  let total = 0
  for (const [table, insert] of writes) {
    await prepare(table)
    const started = performance.now()
    await db.query(insert)
    const ms = performance.now() - started
    total += ms
    times.push(`${table} ${(ms / 1000).toFixed(1)} s`)
  }
  return { times, total }
}

/**
 * What a first upload writes besides the four tables of the write floor, measured the same way (fresh
 * copies with every index, no triggers, one INSERT … SELECT each): its submissions (one
 * `source_submission` row per file row, its cells as jsonb) and the history (one `datapoint_history`
 * row per value written, in the sync's key order). With them the ratio to the floor can reach at most
 * floor ÷ (floor + these), were parsing, mapping, aggregating and every working table free.
 */
async function besidesTheFloor(db: pg.Client, floorMs: number) {
  const columns = Array.from({ length: INDICATORS }, (_, k) => `'"I${k + 1}": ' || ((r * ${k + 1}) % 1000)`).join(` || ', ' || `)
  const writes: Array<[string, string]> = [
    [
      'source_submission',
      `insert into floor_source_submission (document_id, instance_guid, row_number, location_code, campaign_code, submission_json, process_status)
      select 1, 'k' || r, r, 'L' || (1 + r % ${LOCATIONS}), 'C' || (1 + r / ${LOCATIONS}),
        ('{"geocode": "L' || (1 + r % ${LOCATIONS}) || '", "campaign": "C' || (1 + r / ${LOCATIONS}) || '", ' || ${columns} || '}')::jsonb, 'PROCESSED'
      from generate_series(0, ${ROWS - 1}) r`,
    ],
    [
      'datapoint_history',
      `insert into floor_datapoint_history (change, datapoint_id, unique_index, location_id, indicator_id, campaign_id, value_after, document_id, source_submission_id, via)
      select 'insert', 1 + n, (l || '_' || i || '_' || c) collate "C", l, i, c, v, 1, 1 + n / ${INDICATORS}, 'api' from ${CELLS} x
      order by (l || '_' || i || '_' || c) collate "C"`,
    ],
  ]
  await db.query('begin')
  const { times, total } = await timedInserts(db, writes, async (table) => {
    await db.query(`create table floor_${table} (like ${table} including all)`)
  })
  await db.query('rollback')
  console.log(
    `written besides the floor, every index: ${times.join(', ')}; total ${(total / 1000).toFixed(1)} s → ` +
      `the ratio to the floor can reach at most ${(floorMs / (floorMs + total)).toFixed(2)}, all else free`,
  )
}

/**
 * The floor of a re-upload of the same keys: its staged cells (one `doc_datapoint` row per cell, as
 * for any upload) and, as §5.5 requires, every key's `datapoint` row given the newer document's
 * submission and precedence, whether or not its value changed; into the same fresh copies with every
 * index, no triggers, one transaction. No derived row is written (nothing changed).
 */
async function reuploadFloor(db: pg.Client) {
  const cell = CELLS
  const cells = ROWS * INDICATORS
  await db.query('begin')
  await db.query('create table floor_doc_datapoint (like doc_datapoint including all)')
  await db.query('create table floor_datapoint (like datapoint including all)')
  await db.query(`insert into floor_datapoint (indicator_id, location_id, campaign_id, value, source_submission_id, unique_index, precedence_at)
    select i, l, c, v, 1 + n / ${INDICATORS}, (l || '_' || i || '_' || c) collate "C", now() from ${cell} x order by (l || '_' || i || '_' || c) collate "C"`)
  await db.query('commit')
  await db.query('checkpoint')
  await db.query('begin')
  let started = performance.now()
  await db.query(`insert into floor_doc_datapoint (document_id, source_submission_id, column_name, indicator_id, location_id, campaign_id, value)
    select 2, ${ROWS} + 1 + n / ${INDICATORS}, 'I' || i, i, l, c, v from ${cell} x order by n`)
  const staged = performance.now() - started
  started = performance.now()
  await db.query(
    `update floor_datapoint set source_submission_id = source_submission_id + ${ROWS}, precedence_at = now() + interval '1 second', created_at = now()`,
  )
  const moved = performance.now() - started
  await db.query('commit')
  await db.query('drop table floor_doc_datapoint, floor_datapoint')
  console.log(
    `re-upload floor, ${cells} cells of stored keys, every index: doc_datapoint ${(staged / 1000).toFixed(1)} s, ` +
      `every key's source moved (§5.5) ${(moved / 1000).toFixed(1)} s; total ${((staged + moved) / 1000).toFixed(1)} s`,
  )
}

await main()
