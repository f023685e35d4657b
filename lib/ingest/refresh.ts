// Refresh master (ingestion §5): mapped cells of the document's submissions are cleaned and staged in
// doc_datapoint, then synced set-based into datapoint, where the newest information wins.
import { sql, type Kysely, type RawBuilder } from 'kysely'
import type { DB } from '../../schemas/index.js'
import { ingestCells, ingestRejectedRows } from '../core/metrics.js'
import { cleanValue } from './clean.js'
import type { Cell } from './files.js'
import { capped, roleColumns, type Document, type NewSubmission } from './transform.js'
import type { ConflictPolicy } from './upload.js'
import { noProgress, type Progress } from '../core/progress.js'
import { syncDatapoints } from './sync.js'
import { copyInto, copyLine, CopyRows, rowsPerCopy } from '../data/copy.js'

type ContentType = 'indicator' | 'location' | 'campaign'

/** The document's mapped codes: content type → code → master id. */
async function mappings(db: Kysely<DB>, documentId: number) {
  const rows = await db
    .selectFrom('doc_object_map as d')
    .innerJoin('source_object_map as m', 'm.id', 'd.source_object_map_id')
    .select(['m.content_type', 'm.source_object_code', 'm.master_object_id'])
    .where('d.document_id', '=', documentId)
    .execute()
  const maps: Record<ContentType, Map<string, number>> = { indicator: new Map(), location: new Map(), campaign: new Map() }
  const unmapped: Record<ContentType, string[]> = { indicator: [], location: [], campaign: [] }
  for (const r of rows) {
    const type = r.content_type as ContentType
    if (r.master_object_id === -1) unmapped[type].push(r.source_object_code)
    else maps[type].set(r.source_object_code, r.master_object_id)
  }
  for (const list of Object.values(unmapped)) list.sort()
  return { maps, unmapped }
}

// The unique key of a staged cell, the same as a datapoint's (§5.3), in the column's byte-wise
// collation (sql/006): sorted and compared by bytes, and comparable with datapoint.unique_index.
const KEY = sql`(s.location_id || '_' || s.indicator_id || '_' || coalesce(s.campaign_id::text, to_char(s.data_date, 'YYYY-MM-DD'))) collate "C"`

/**
 * `permitted`: the locations the document's rows may be written at (its uploader's, lib/engine/access.ts),
 * null for everywhere; a row mapped elsewhere is kept as a submission and counted, never written.
 * `fresh`: the transform's new submissions, written here with their status (the stored ones are read).
 */
export async function refreshMaster(
  db: Kysely<DB>,
  doc: Document,
  permitted: Set<number> | null,
  timings: Record<string, number> = {},
  progress: Progress = noProgress,
  fresh: NewSubmission[] = [],
) {
  let clock = performance.now()
  const lap = (name: string) => {
    timings[name] = Math.round(performance.now() - clock)
    clock = performance.now()
  }
  // Integer ids from the database, written as literals: these set-based statements are planned for the
  // data at hand (no cached generic plan).
  const D = sql.lit(Math.trunc(doc.id))
  const { maps, unmapped } = await mappings(db, doc.id)
  const header = (doc.file_header as string[] | null) ?? []
  const roles = roleColumns(doc.file_type)
  const indicatorColumns = header.filter((h) => !roles.includes(h) && maps.indicator.has(h))
  const stored: Submission[] = await db
    .selectFrom('source_submission')
    .select(['id', 'row_number', 'location_code', 'campaign_code', 'data_date', 'submission_json'])
    .where('document_id', '=', doc.id)
    .orderBy('row_number')
    .execute()
  const created = await withIds(db, fresh)
  const submissions = stored.length ? [...stored, ...created].sort((a, b) => a.row_number - b.row_number) : created

  await db.deleteFrom('doc_datapoint').where('document_id', '=', doc.id).execute()
  const classes = await classLabels(
    db,
    indicatorColumns.map((column) => maps.indicator.get(column)!),
  )
  const { status, forbiddenRows, rejectedCells, staged } = stageSubmissions(doc, submissions, maps, classes, indicatorColumns, permitted, progress)
  progress('cells staged', submissions.length, submissions.length)
  lap('refresh_read')
  const statusOf = new Map<number, string>()
  for (const [name, ids] of Object.entries(status)) for (const id of ids) statusOf.set(id, STATUS_NAMES[name as keyof typeof STATUS_NAMES])
  await writeSubmissions(db, doc, created, statusOf, progress)
  if (stored.length) await writeStatuses(db, stored, statusOf)
  lap('refresh_submissions')
  // Staged in (row, column) order, so within a key the highest id is the winner (§5.4).
  await insertStaged(db, staged, (done) => progress('cells written', done, staged.length))
  ingestCells.inc(staged.length)
  for (const reason of ['missing_location', 'missing_campaign', 'missing_date', 'location_forbidden'] as const) {
    if (status[reason].length) ingestRejectedRows.inc({ reason }, status[reason].length)
  }
  lap('refresh_stage')

  const policy = (doc.conflict ?? 'last') as ConflictPolicy
  const keys = await stageWinners(db, D, policy)
  const conflicts = await findConflicts(db, D, policy, keys === staged.length)
  if (policy === 'reject' && keys < staged.length) await dropDisagreeingKeys(db, D)

  lap('refresh_conflicts')
  const sync = await syncDatapoints(db, doc, progress)
  lap('refresh_sync')
  return {
    unmapped: { indicator: capped(unmapped.indicator), location: capped(unmapped.location), campaign: capped(unmapped.campaign) },
    rows: {
      processed: status.processed.length,
      missing_location: status.missing_location.length,
      missing_campaign: status.missing_campaign.length,
      missing_date: status.missing_date.length,
      location_forbidden: status.location_forbidden.length,
    },
    forbidden_rows: capped(forbiddenRows),
    doc_datapoints: staged.length,
    datapoints: sync.counts,
    rejected_cells: capped(rejectedCells),
    conflicts: capped(conflicts.rows.map((r) => ({ unique_index: r.key, kept: r.kept, dropped: r.dropped }))),
    touchedCampaigns: sync.touched,
    changedKeysNoted: sync.keysNoted,
  }
}

type Mappings = Awaited<ReturnType<typeof mappings>>['maps']

/** Class indicators' values by label (trimmed, any case), of those among `indicators` that have labels. */
async function classLabels(db: Kysely<DB>, indicators: number[]): Promise<Map<number, Map<string, number>>> {
  const rows = indicators.length
    ? await db.selectFrom('indicator_class_map').select(['indicator_id', 'value', 'label']).where('indicator_id', 'in', indicators).orderBy('value').execute()
    : []
  const classes = new Map<number, Map<string, number>>()
  for (const r of rows) {
    if (!classes.has(r.indicator_id)) classes.set(r.indicator_id, new Map())
    classes.get(r.indicator_id)!.set(r.label.trim().toLowerCase(), r.value)
  }
  return classes
}

/**
 * A cell of a class indicator with labels: its label's value, or its number when that is one of the
 * values; anything else is refused (docs/decisions.md, "Class indicators").
 */
function classValue(cell: Cell, labels: Map<string, number>): number | undefined | { reason: string } {
  const cleaned = cleanValue(cell)
  if (cleaned === undefined) return undefined
  const byLabel = labels.get(String(cell).trim().toLowerCase())
  if (byLabel !== undefined) return byLabel
  if (typeof cleaned === 'number' && [...labels.values()].includes(cleaned)) return cleaned
  return { reason: `not a class of the indicator: ${[...labels].map(([label, value]) => `${value} ${label}`).join(', ')}` }
}

type Submission = { id: number; row_number: number; location_code: string; campaign_code: string; data_date: string | null; submission_json: unknown }

/**
 * §5: each submission's cells as staged datapoints, in (row, column) order; rows without a mapped
 * location, campaign or date, and rows outside `permitted`, counted by reason instead.
 */
function stageSubmissions(
  doc: Document,
  submissions: Submission[],
  maps: Mappings,
  classes: Map<number, Map<string, number>>,
  indicatorColumns: string[],
  permitted: Set<number> | null,
  progress: Progress,
) {
  const status = {
    processed: [] as number[],
    missing_location: [] as number[],
    missing_campaign: [] as number[],
    missing_date: [] as number[],
    location_forbidden: [] as number[],
  }
  const forbiddenRows: Array<{ row_number: number; location_code: string; reason: string }> = []
  const rejectedCells: Array<{ row_number: number; column: string; value: Cell; reason: string }> = []
  const staged: Array<Record<string, unknown>> = []
  let read = 0
  for (const s of submissions) {
    if (++read % 10_000 === 0) progress('cells staged', read, submissions.length)
    const campaign = doc.file_type === 'campaign' ? maps.campaign.get(s.campaign_code) : undefined
    if (doc.file_type === 'campaign' && campaign === undefined) {
      status.missing_campaign.push(s.id)
      continue
    }
    if (doc.file_type === 'date' && !s.data_date) {
      status.missing_date.push(s.id)
      continue
    }
    const location = maps.location.get(s.location_code)
    if (location === undefined) {
      status.missing_location.push(s.id)
      continue
    }
    if (permitted && !permitted.has(location)) {
      status.location_forbidden.push(s.id)
      forbiddenRows.push({ row_number: s.row_number, location_code: s.location_code, reason: "location outside the uploader's responsibility" })
      continue
    }
    status.processed.push(s.id)
    const cells = s.submission_json as Record<string, Cell>
    // File order, so a later column of the same row comes later (the rightmost wins, §5.4).
    for (const column of indicatorColumns) {
      const labels = classes.get(maps.indicator.get(column)!)
      const cleaned = labels ? classValue(cells[column] ?? null, labels) : cleanValue(cells[column] ?? null)
      if (cleaned === undefined) continue
      if (cleaned === 'reject' || typeof cleaned === 'object') {
        rejectedCells.push({ row_number: s.row_number, column, value: cells[column], reason: cleaned === 'reject' ? 'not a number' : cleaned.reason })
        continue
      }
      const value = cleaned
      staged.push({
        document_id: doc.id,
        source_submission_id: s.id,
        column_name: column,
        indicator_id: maps.indicator.get(column)!,
        location_id: location,
        campaign_id: campaign ?? null,
        data_date: doc.file_type === 'date' ? s.data_date : null,
        value,
      })
    }
  }
  return { status, forbiddenRows, rejectedCells, staged }
}

/** A submission's process status in the database, by the name of its list in `stageSubmissions`. */
const STATUS_NAMES = {
  processed: 'PROCESSED',
  missing_location: 'MISSING_LOCATION',
  missing_campaign: 'MISSING_CAMPAIGN',
  missing_date: 'MISSING_DATE',
  location_forbidden: 'LOCATION_FORBIDDEN',
} as const

type CreatedSubmission = NewSubmission & { id: number }

/** `fresh` with ids drawn from the table's sequence, in row order. */
async function withIds(db: Kysely<DB>, fresh: NewSubmission[]): Promise<CreatedSubmission[]> {
  if (!fresh.length) return []
  const { rows } = await sql<{ id: number }>`select nextval(pg_get_serial_sequence('source_submission', 'id'))::int as id
    from generate_series(1, ${fresh.length}::int)`.execute(db)
  const ids = rows.map((r) => r.id).sort((a, b) => a - b)
  return fresh.map((submission, i) => ({ ...submission, id: ids[i] }))
}

/** What a new submission is written with; the rest are its defaults. */
const SUBMISSION_COLUMNS = [
  'id',
  'document_id',
  'instance_guid',
  'row_number',
  'data_date',
  'location_code',
  'campaign_code',
  'submission_json',
  'process_status',
] as const

/**
 * The new submissions with their status, copied (lib/data/copy.ts): a row of a national file holds
 * every cell of the row, so at most 20,000 a statement.
 */
async function writeSubmissions(db: Kysely<DB>, doc: Document, created: CreatedSubmission[], statusOf: Map<number, string>, progress: Progress) {
  if (!created.length) return
  const perStatement = rowsPerCopy(created.length, 20_000)
  for (let i = 0; i < created.length; i += perStatement) {
    progress('submissions written', i, created.length)
    const text = created
      .slice(i, i + perStatement)
      .map((s) =>
        copyLine([
          s.id,
          doc.id,
          s.instance_guid,
          s.row_number,
          s.data_date,
          s.location_code,
          s.campaign_code,
          JSON.stringify(s.submission_json),
          statusOf.get(s.id),
        ]),
      )
      .join('')
    await copyInto(db, 'source_submission', SUBMISSION_COLUMNS, new CopyRows([text]))
  }
  progress('submissions written', created.length, created.length)
}

/** The stored submissions' process status, one statement per status. */
async function writeStatuses(db: Kysely<DB>, stored: Submission[], statusOf: Map<number, string>) {
  const byStatus = new Map<string, number[]>()
  for (const { id } of stored) {
    const name = statusOf.get(id)!
    if (!byStatus.has(name)) byStatus.set(name, [])
    byStatus.get(name)!.push(id)
  }
  // The ids as one array parameter (a list of thousands of parameters is slow to parse and plan).
  for (const [name, ids] of byStatus)
    await db.updateTable('source_submission').set({ process_status: name }).where(sql<boolean>`id = any(${ids}::int4[])`).execute()
}

/** The staged cell a key keeps when the document wrote it twice: the later (`last`, §5.4) or the earlier. */
const keptFirst = (policy: ConflictPolicy) => sql.raw(policy === 'first' ? 'id asc' : 'id desc')

/**
 * §5.4: keys two cells of the document wrote, with the kept cell and the dropped ones; under `reject`
 * a key whose cells disagree keeps none. Two cells of one key exist exactly when there are fewer
 * winners than staged cells (`none`): the search (a window over every staged cell) runs only then.
 */
async function findConflicts(db: Kysely<DB>, D: RawBuilder<unknown>, policy: ConflictPolicy, none: boolean) {
  if (none) return { rows: [] }
  const rejects = sql.lit(policy === 'reject')
  return sql<{ key: string; kept: unknown; dropped: unknown }>`
    with s as (select ${KEY} as key, s.* from doc_datapoint s where s.document_id = ${D}),
    ranked as (select s.*, row_number() over (partition by key order by ${keptFirst(policy)}) as rank, count(*) over (partition by key) as n,
      min(value) over (partition by key) <> max(value) over (partition by key) as disagree from s)
    select r.key,
      case when ${rejects} and r.disagree then null else jsonb_build_object('row_number', sub.row_number, 'column', r.column_name) end as kept,
      (select jsonb_agg(jsonb_build_object('row_number', sub2.row_number, 'column', l.column_name, 'value', l.value) order by l.id)
         from ranked l join source_submission sub2 on sub2.id = l.source_submission_id where l.key = r.key and (l.rank > 1 or (${rejects} and l.disagree))) as dropped
    from ranked r join source_submission sub on sub.id = r.source_submission_id
    where r.rank = 1 and r.n > 1 order by r.key`.execute(db)
}

/** The staged cells' columns, in the order they are copied. */
const STAGED_COLUMNS = ['document_id', 'source_submission_id', 'column_name', 'indicator_id', 'location_id', 'campaign_id', 'data_date', 'value'] as const

/**
 * Bulk insert of staged cells with COPY (lib/data/copy.ts), in staging order: ids follow it, which
 * §5.4 relies on. At most 100,000 cells a statement; the next statement's text is built while
 * PostgreSQL writes this one. Measured against the array literals unnested by INSERT it replaces:
 * bench/README.md, "Ingestion".
 */
async function insertStaged(db: Kysely<DB>, staged: Array<Record<string, unknown>>, written: (done: number) => void) {
  const perStatement = rowsPerCopy(staged.length, 100_000)
  let running: Promise<unknown> | undefined
  for (let start = 0; start < staged.length; start += perStatement) {
    const text = staged
      .slice(start, start + perStatement)
      .map((cell) => copyLine(STAGED_COLUMNS.map((name) => cell[name])))
      .join('')
    await running
    written(start)
    running = copyInto(db, 'doc_datapoint', STAGED_COLUMNS, new CopyRows([text]))
    // Its failure is thrown where it is awaited; until then it must not count as unhandled.
    running.catch(() => {})
  }
  await running
  written(staged.length)
}

/**
 * The winning cell of every key of document `D` (§5.4) in `rf_winners`, keyed so the upsert and the
 * clean-up probe an index. Returns how many keys there are.
 */
async function stageWinners(db: Kysely<DB>, D: ReturnType<typeof sql.lit>, policy: ConflictPolicy): Promise<number> {
  await sql`drop table if exists rf_winners`.execute(db)
  await sql`create temp table rf_winners on commit drop as
    select distinct on (key) ${KEY} as key, s.* from doc_datapoint s where s.document_id = ${D} order by key, s.${keptFirst(policy)}`.execute(db)
  await sql`alter table rf_winners add primary key (key)`.execute(db)
  await sql`analyze rf_winners`.execute(db)
  const { rows } = await sql<{ n: number }>`select count(*)::int as n from rf_winners`.execute(db)
  return rows[0].n
}

/** `reject`: the keys whose staged cells hold different values leave `rf_winners`. */
async function dropDisagreeingKeys(db: Kysely<DB>, D: ReturnType<typeof sql.lit>): Promise<void> {
  await sql`delete from rf_winners w using (
      select ${KEY} as key from doc_datapoint s where s.document_id = ${D} group by 1 having min(s.value) <> max(s.value)) d
    where d.key = w.key`.execute(db)
}
