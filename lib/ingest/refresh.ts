// Refresh master (ingestion §5): mapped cells of the document's submissions are cleaned and staged in
// doc_datapoint, then synced set-based into datapoint, where the newest information wins.
import { sql, type Kysely } from 'kysely'
import type { DB } from '../../schemas/index.js'
import { ingestCells, ingestRejectedRows } from '../core/metrics.js'
import { cleanValue } from './clean.js'
import type { Cell } from './files.js'
import { capped, roleColumns, type Document } from './transform.js'
import type { ConflictPolicy } from './upload.js'
import { noProgress, type Progress } from '../core/progress.js'
import { syncDatapoints } from './sync.js'
import { copyInto, copyLine, CopyRows, rowsPerCopy } from '../data/copy.js'
import { documentSubmissions, type NewSubmission, type Statuses, type Submission, writeSubmissions } from './submissions.js'
import { chooseWinners } from './winners.js'

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
  const submissions = await documentSubmissions(db, doc.id, fresh)

  await db.deleteFrom('doc_datapoint').where('document_id', '=', doc.id).execute()
  const classes = await classLabels(
    db,
    indicatorColumns.map((column) => maps.indicator.get(column)!),
  )
  const { status, forbiddenRows, rejectedCells, staged } = stageSubmissions(doc, submissions.all, maps, classes, indicatorColumns, permitted, progress)
  progress('cells staged', submissions.all.length, submissions.all.length)
  lap('refresh_read')
  await writeSubmissions(db, doc.id, submissions, status, progress)
  lap('refresh_submissions')
  // Staged in (row, column) order, so within a key the highest id is the winner (§5.4).
  await insertStaged(db, staged, (done) => progress('cells written', done, staged.length))
  ingestCells.inc(staged.length)
  for (const reason of ['missing_location', 'missing_campaign', 'missing_date', 'location_forbidden'] as const) {
    if (status[reason].length) ingestRejectedRows.inc({ reason }, status[reason].length)
  }
  lap('refresh_stage')

  const conflicts = await chooseWinners(db, D, (doc.conflict ?? 'last') as ConflictPolicy, staged.length)
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
    conflicts,
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
  const status: Statuses = { processed: [], missing_location: [], missing_campaign: [], missing_date: [], location_forbidden: [] }
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
