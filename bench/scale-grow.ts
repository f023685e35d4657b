// How bench:scale grows its database: the national tree (country → 100 provinces → 9,899 districts),
// 20 raw int indicators and 2 calculated ones (a sum and a percent), a campaign a month. A campaign's
// values are uploaded through the API (the first, and the newest of every step); the others are copies
// of the first made by SQL in one transaction each, into every table an upload writes (the document,
// its submissions and doc_datapoints, the raw datapoints, the stored and final values), the datapoint
// triggers writing history and outlier summaries as they do for an upload. A copy takes seconds where an
// upload of the same values takes tens of seconds, and its rows are the upload's rows.
import type pg from 'pg'
import { doing } from './lib.js'
import { type apiClient, INDICATORS, LOCATIONS, seedNation } from './national.js'

/** Districts: ids 102–10,000 (1 is the country, 2–101 the provinces). */
export const FIRST_DISTRICT = 102
export const DISTRICTS = LOCATIONS - FIRST_DISTRICT + 1
export const VALUES_PER_CAMPAIGN = DISTRICTS * INDICATORS
/** The calculated indicators: SUM = I1 + I2, PERCENT = I1 / SUM. */
export const SUM = 51
export const PERCENT = 52

type Api = ReturnType<typeof apiClient>

/** The nation for `campaigns` campaigns, their codes mapped, a campaign a month from January 2014. */
export async function seedScale(db: pg.Client, api: Api, campaigns: number) {
  await seedNation(db, api, campaigns * LOCATIONS)
  // Moved out of the way first: (type, start date) is unique, and the weekly dates overlap the monthly ones.
  await db.query(`update campaign set start_date = start_date + interval '500 years', end_date = end_date + interval '500 years'`)
  await db.query(`update campaign set start_date = date '2014-01-01' + (id - 1) * interval '1 month',
    end_date = date '2014-01-01' + (id - 1) * interval '1 month' + interval '3 days'`)
  await db.query(`insert into indicator (id, name, short_name, data_format) values (${SUM}, 'Sum', 'Sum', 'int'), (${PERCENT}, 'Percent', 'Percent', 'pct')`)
  await db.query(`select setval(pg_get_serial_sequence('indicator', 'id'), 100)`)
  await db.query(`insert into calculated_indicator_component (indicator_id, indicator_component_id, calculation)
    values (${SUM}, 1, 'PART_TO_BE_SUMMED'), (${SUM}, 2, 'PART_TO_BE_SUMMED'), (${PERCENT}, 1, 'NUMERATOR'), (${PERCENT}, ${SUM}, 'DENOMINATOR')`)
}

/** A campaign's file: one line per district, INDICATORS int columns (a pure function of the ids, plus `offset`). */
export function campaignCsv(campaign: number, districts: number[] = range(FIRST_DISTRICT, LOCATIONS), offset = 0): Buffer {
  const header = ['campaign', 'geocode', ...Array.from({ length: INDICATORS }, (_, i) => `I${i + 1}`)]
  const lines = [header.join(',')]
  for (const l of districts) {
    const cells = [`C${campaign}`, `G${l}`]
    for (let i = 1; i <= INDICATORS; i++) cells.push(String(((l * 7919 + i * 104729 + campaign * 31) % 1000) + offset))
    lines.push(cells.join(','))
  }
  return Buffer.from(lines.join('\n'))
}

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i)

/** A file uploaded and transformed through the API; its report (ingest_stats). */
export async function upload(api: Api, csv: Buffer, title: string): Promise<{ timings_ms: Record<string, number>; recomputed_keys: number }> {
  const started = performance.now()
  const doc = await api('POST', 'document/', { docfile: csv.toString('base64'), doc_title: title, file_type: 'campaign' })
  const posted = performance.now() - started
  const run = await api('GET', `transform_upload/?document_id=${doc.id}`)
  const report = (run.objects as Array<{ ingest_stats: { timings_ms: Record<string, number>; recomputed_keys: number } }>)[0].ingest_stats
  // The document's POST, beside the phases of its transform_upload.
  report.timings_ms = { document_post: posted, ...report.timings_ms }
  return report
}

/** The columns of `table` but `id`, as a select list. */
async function columnsOf(db: pg.Client, table: string): Promise<string[]> {
  const { rows } = await db.query<{ name: string }>(
    `select column_name as name from information_schema.columns where table_schema = current_schema() and table_name = $1 and column_name <> 'id' order by ordinal_position`,
    [table],
  )
  return rows.map((r) => r.name)
}

/**
 * Campaign `to` made a copy of campaign `from`'s upload (its document `fromDocument`), in one
 * transaction: every row an upload writes, with new ids, the campaign and its keys replaced.
 */
export async function copyCampaign(db: pg.Client, from: number, fromDocument: number, to: number) {
  const replaced = (columns: string[], values: Record<string, string>) => columns.map((c) => values[c] ?? c).join(', ')
  await db.query('begin')
  try {
    const docColumns = await columnsOf(db, 'source_doc')
    const { rows } = await db.query<{ id: number }>(
      `insert into source_doc (${docColumns.join(', ')}) select ${replaced(docColumns, { doc_title: `doc_title || ' copy ${to}'`, guid: `guid || '-${to}'` })}
       from source_doc where id = $1 returning id`,
      [fromDocument],
    )
    const document = rows[0].id
    // Submissions keep their order: each new id is the old one shifted past every id in use.
    const { rows: shiftRows } = await db.query<{ shift: number }>(
      `select (select max(id) from source_submission) - min(id) + 1 as shift from source_submission where document_id = $1`,
      [fromDocument],
    )
    const shift = shiftRows[0].shift
    const submission = await columnsOf(db, 'source_submission')
    await db.query(
      `insert into source_submission (id, ${submission.join(', ')}) select id + ${shift}, ${replaced(submission, { document_id: String(document), campaign_code: `'C${to}'` })}
       from source_submission where document_id = $1`,
      [fromDocument],
    )
    await db.query(`select setval(pg_get_serial_sequence('source_submission', 'id'), (select max(id) from source_submission))`)
    const docValues = await columnsOf(db, 'doc_datapoint')
    await db.query(
      `insert into doc_datapoint (${docValues.join(', ')}) select ${replaced(docValues, { document_id: String(document), source_submission_id: `source_submission_id + ${shift}`, campaign_id: String(to) })}
       from doc_datapoint where document_id = $1`,
      [fromDocument],
    )
    const raw = await columnsOf(db, 'datapoint')
    await db.query(
      `insert into datapoint (${raw.join(', ')}) select ${replaced(raw, {
        campaign_id: String(to),
        source_submission_id: `source_submission_id + ${shift}`,
        unique_index: `location_id || '_' || indicator_id || '_' || ${to}`,
        created_at: 'now()',
      })} from datapoint where campaign_id = $1`,
      [from],
    )
    for (const table of ['agg_datapoint', 'datapoint_with_computed']) {
      const columns = await columnsOf(db, table)
      await db.query(
        `insert into ${table} (${columns.join(', ')}) select ${replaced(columns, { campaign_id: String(to) })} from ${table} where campaign_id = $1`,
        [from],
      )
    }
    await db.query('commit')
  } catch (error) {
    await db.query('rollback')
    throw error
  }
}

/** Grows the database from `stored` campaigns to `target`: copies of campaign 1 up to the last, which is uploaded. */
export async function growTo(db: pg.Client, api: Api, stored: number, target: number): Promise<{ uploadMs: number }> {
  const { rows } = await db.query<{ id: number }>(`select min(document_id) as id from source_submission where campaign_code = 'C1'`)
  for (let c = stored + 1; c < target; c++) {
    doing(`copying campaign 1 into campaign ${c} (${c} of ${target})`)
    await copyCampaign(db, 1, rows[0].id, c)
  }
  doing(`uploading campaign ${target} through the API`)
  const started = performance.now()
  await upload(api, campaignCsv(target), `campaign ${target}.csv`)
  return { uploadMs: performance.now() - started }
}
