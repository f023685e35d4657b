// `BENCH_ONLY=history npm run bench:ingest`: what keeping the datapoint history (sql/012) costs an upload.
// The national file's first upload, then a re-upload of the same keys with every value changed, each
// timed end to end (POST /document/ + transform_upload), with the history triggers on and off
// (ALTER TABLE … DISABLE TRIGGER), alternated in pairs on the same server and database; the tables
// are emptied between runs.
import type pg from 'pg'
import { median } from './lib.js'
import { type apiClient, INDICATORS, nationalCsv } from './national.js'

const HISTORY_TRIGGERS = ['datapoint_history_on_insert', 'datapoint_history_on_update', 'datapoint_history_on_delete']

async function historyTriggers(db: pg.Client, on: boolean) {
  for (const name of HISTORY_TRIGGERS) await db.query(`alter table datapoint ${on ? 'enable' : 'disable'} trigger ${name}`)
}

/** Back to the seeded nation: no document, no value, no history (not timed). */
async function emptyData(db: pg.Client) {
  await db.query('alter table datapoint disable trigger datapoint_history_on_truncate')
  await db.query(`truncate datapoint, datapoint_history, doc_datapoint, agg_datapoint, datapoint_with_computed, doc_detail, doc_object_map, source_submission`)
  await db.query(`delete from source_doc where guid <> 'data-entry'`)
  await db.query('alter table datapoint enable trigger datapoint_history_on_truncate')
  await db.query('vacuum analyze')
}

async function timedUpload(api: ReturnType<typeof apiClient>, csv: Buffer, title: string) {
  const started = performance.now()
  const doc = await api('POST', 'document/', { docfile: csv.toString('base64'), doc_title: title, file_type: 'campaign' })
  const run = await api('GET', `transform_upload/?document_id=${doc.id}`)
  const ms = performance.now() - started
  const stats = (run.objects as Array<{ ingest_stats: Record<string, unknown> }>)[0].ingest_stats
  return { ms, sync: (stats.timings_ms as Record<string, number>).refresh_sync, datapoints: stats.datapoints }
}

export async function historyCost(db: pg.Client, api: ReturnType<typeof apiClient>, rows: number, pairs = 2) {
  const first = nationalCsv(rows)
  const changed = nationalCsv(rows, 1000)
  const times: Record<'on' | 'off', { first: number[]; again: number[] }> = { on: { first: [], again: [] }, off: { first: [], again: [] } }
  let run = 0
  for (let pair = 0; pair < pairs; pair++) {
    for (const mode of pair % 2 === 0 ? (['on', 'off'] as const) : (['off', 'on'] as const)) {
      await emptyData(db)
      await historyTriggers(db, mode === 'on')
      const a = await timedUpload(api, first, `history-${run}-a.csv`)
      const b = await timedUpload(api, changed, `history-${run++}-b.csv`)
      times[mode].first.push(a.ms)
      times[mode].again.push(b.ms)
      const { n, bytes } = (await db.query(`select count(*)::int as n, pg_total_relation_size('datapoint_history')::float8 as bytes from datapoint_history`))
        .rows[0]
      console.log(
        `history ${mode}: first upload ${(a.ms / 1000).toFixed(1)} s (sync ${(a.sync / 1000).toFixed(1)} s), re-upload ${(b.ms / 1000).toFixed(1)} s (sync ${(b.sync / 1000).toFixed(1)} s, ${JSON.stringify(b.datapoints)}), ${n} history rows${n ? `, ${Math.round(bytes / n)} bytes each with indexes` : ''}`,
      )
    }
  }
  await historyTriggers(db, true)
  const ratio = (kind: 'first' | 'again') => median(times.on[kind]) / median(times.off[kind])
  console.log(`${rows} rows × ${INDICATORS} = ${rows * INDICATORS} cells, medians of ${pairs} runs each:`)
  console.log(
    `  first upload: history on ${(median(times.on.first) / 1000).toFixed(1)} s, off ${(median(times.off.first) / 1000).toFixed(1)} s → ${((ratio('first') - 1) * 100).toFixed(1)} % (target ≤ 10 %)`,
  )
  console.log(
    `  re-upload, every value changed: on ${(median(times.on.again) / 1000).toFixed(1)} s, off ${(median(times.off.again) / 1000).toFixed(1)} s → ${((ratio('again') - 1) * 100).toFixed(1)} % (target ≤ 25 %)`,
  )
}
