// Refresh master (ingestion §5): mapped cells of the document's submissions are cleaned and staged in
// doc_datapoint, then synced set-based into datapoint, where the newest information wins.
import { sql, type Kysely } from 'kysely'
import type { DB } from '../../schemas/index.js'
import { ingestCells, ingestRejectedRows } from '../core/metrics.js'
import { cleanValue } from './clean.js'
import type { Cell } from './files.js'
import { CAP, capped, type Document, type FreshSubmissions, freshSlice, roleColumns } from './transform.js'
import type { ConflictPolicy } from './upload.js'
import { noProgress, type Progress } from '../core/progress.js'
import { syncDatapoints } from './sync.js'
import { releaseClaims } from './claims.js'
import { copyField, copyInto, CopyRows } from '../data/copy.js'
import { type Statuses, type Submission, submissionBatches, submissionCount, submissionWrites, writeSubmissions } from './submissions.js'
import { chooseWinners } from './winners.js'
import { type IndicatorKind, indicatorKinds, valueProblem } from '../engine/value-fit.js'

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
  fresh?: FreshSubmissions,
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
  // Its claims read its staged cells, about to be staged again: the keys it holds so become its own rows.
  await releaseClaims(db, doc.id)
  await db.deleteFrom('doc_datapoint').where('document_id', '=', doc.id).execute()
  const classes = await classLabels(
    db,
    indicatorColumns.map((column) => maps.indicator.get(column)!),
  )
  const kinds = await indicatorKinds(
    db,
    indicatorColumns.map((column) => maps.indicator.get(column)!),
  )
  const staging = { doc, maps, classes, kinds, indicatorColumns, permitted }
  const totals = newTotals()
  const freshRows = { count: fresh?.count ?? 0, slice: (from: number, to: number) => (fresh ? freshSlice(fresh, from, to) : []) }
  const rowCount = await submissionCount(db, doc.id, freshRows.count)
  // A batch at a time: staged, its submissions written with their status, its cells copied. Staged in
  // (row, column) order across batches, so within a key the highest id is the winner (§5.4). The server
  // copies one batch's cells while the next is staged (which yields now and then, so the COPY's bytes
  // keep flowing): the two cores work at once (bench/README.md, "A corrected re-upload").
  const batches = submissionBatches(db, doc.id, freshRows)[Symbol.asyncIterator]()
  let copyingCells: Promise<void> = Promise.resolve()
  for (let next = await batches.next(); !next.done; ) {
    const batch = next.value
    const cells = await stageSubmissions(staging, batch.all, totals)
    const submissions = submissionWrites(doc.id, batch, totals.batchStatus)
    totals.rows += batch.all.length
    progress('cells staged', totals.rows, rowCount)
    await copyingCells
    // The next batch's read (ids drawn for new rows) goes before this batch's writes on the session.
    // Each promise here is awaited after another: one failing meanwhile (a failed write aborts the
    // transaction, and what is queued behind it) is not an unhandled rejection.
    const following = batches.next()
    following.catch(() => {})
    try {
      await writeSubmissions(db, submissions, (done) => progress('submissions written', totals.created + done, freshRows.count))
    } catch (error) {
      // The read went first: if it failed (a cancelled statement, a lock timeout), the writes' "current
      // transaction is aborted" is its consequence, and its own error is the one to answer with.
      throw (
        (await following.then(
          () => undefined,
          (readError: unknown) => readError,
        )) ?? error
      )
    }
    totals.created += batch.created.length
    if (batch.created.length) progress('submissions written', totals.created, freshRows.count)
    if (cells.count) {
      copyingCells = copyInto(db, 'doc_datapoint', STAGED_COLUMNS, new CopyRows([cells.text])).then(() => {
        totals.cells += cells.count
        progress('cells written', totals.cells, totals.cells)
      })
      copyingCells.catch(() => {})
    } else progress('cells written', totals.cells, totals.cells)
    next = await following
  }
  await copyingCells
  ingestCells.inc(totals.cells)
  for (const reason of ['missing_location', 'missing_campaign', 'missing_date', 'location_forbidden'] as const) {
    if (totals.status[reason]) ingestRejectedRows.inc({ reason }, totals.status[reason])
  }
  lap('refresh_stage')

  const conflicts = await chooseWinners(db, D, (doc.conflict ?? 'last') as ConflictPolicy, totals.cells)
  lap('refresh_conflicts')
  const sync = await syncDatapoints(db, doc, totals.campaigns, progress)
  lap('refresh_sync')
  return {
    unmapped: { indicator: capped(unmapped.indicator), location: capped(unmapped.location), campaign: capped(unmapped.campaign) },
    rows: totals.status,
    forbidden_rows: totals.forbiddenRows,
    doc_datapoints: totals.cells,
    datapoints: sync.counts,
    rejected_cells: totals.rejectedCells,
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

/** What the refresh counts as it goes through the batches, with the first CAP of each list it reports. */
function newTotals() {
  return {
    rows: 0,
    created: 0,
    cells: 0,
    /** The campaigns of the cells staged (null: a date file's), which the sync writes to. */
    campaigns: new Set<number | null>(),
    status: { processed: 0, missing_location: 0, missing_campaign: 0, missing_date: 0, location_forbidden: 0 } as Record<keyof Statuses, number>,
    /** The status of each submission of the batch at hand, by the name it is counted under. */
    batchStatus: emptyStatuses(),
    forbiddenRows: { count: 0, items: [] as Array<{ row_number: number; location_code: string; reason: string }> },
    rejectedCells: { count: 0, items: [] as Array<{ row_number: number; column: string; value: Cell; reason: string }> },
  }
}
type Totals = ReturnType<typeof newTotals>

const emptyStatuses = (): Statuses => ({ processed: [], missing_location: [], missing_campaign: [], missing_date: [], location_forbidden: [] })

/** `item` counted in `list`, and kept while fewer than CAP are. */
function listed<T>(list: { count: number; items: T[] }, item: T) {
  list.count++
  if (list.items.length < CAP) list.items.push(item)
}

/** What staging a document's cells needs: the document, its mappings, its class labels and columns, where it may write. */
interface Staging {
  doc: Document
  maps: Mappings
  classes: Map<number, Map<string, number>>
  /** Each column's indicator's format and kind (lib/engine/value-fit.ts). */
  kinds: Map<number, IndicatorKind>
  indicatorColumns: string[]
  permitted: Set<number> | null
}

/** Submissions staged between two turns of the event loop, in which the COPY under way is sent on. */
const STAGED_BETWEEN_TURNS = 2_000

/**
 * §5: each submission's cells as staged datapoints, in (row, column) order, as the text of their COPY
 * (STAGED_COLUMNS); rows without a mapped location, campaign or date, and rows outside `permitted`,
 * counted by reason instead (into `totals`, with the batch's statuses in `totals.batchStatus`).
 */
async function stageSubmissions({ doc, maps, classes, kinds, indicatorColumns, permitted }: Staging, submissions: Submission[], totals: Totals) {
  const status = emptyStatuses()
  totals.batchStatus = status
  const counted = (reason: keyof Statuses, id: number) => {
    status[reason].push(id)
    totals.status[reason]++
  }
  // What each column's cells start with after the document and submission: its name and indicator.
  const columns = indicatorColumns.map((column) => {
    const indicator = maps.indicator.get(column)!
    return { column, labels: classes.get(indicator), kind: kinds.get(indicator), fields: `${copyField(column)}\t${indicator}\t` }
  })
  const lines: string[] = []
  for (const [n, s] of submissions.entries()) {
    if (n > 0 && n % STAGED_BETWEEN_TURNS === 0) await new Promise((resolve) => setImmediate(resolve))
    const campaign = doc.file_type === 'campaign' ? maps.campaign.get(s.campaign_code) : undefined
    if (doc.file_type === 'campaign' && campaign === undefined) {
      counted('missing_campaign', s.id)
      continue
    }
    if (doc.file_type === 'date' && !s.data_date) {
      counted('missing_date', s.id)
      continue
    }
    const location = maps.location.get(s.location_code)
    if (location === undefined) {
      counted('missing_location', s.id)
      continue
    }
    if (permitted && !permitted.has(location)) {
      counted('location_forbidden', s.id)
      listed(totals.forbiddenRows, { row_number: s.row_number, location_code: s.location_code, reason: "location outside the uploader's responsibility" })
      continue
    }
    counted('processed', s.id)
    const cells = s.submission_json as Record<string, Cell>
    const head = `${doc.id}\t${s.id}\t`
    const tail = `${location}\t${copyField(campaign)}\t${copyField(doc.file_type === 'date' ? s.data_date : null)}\t`
    totals.campaigns.add(campaign ?? null)
    // File order, so a later column of the same row comes later (the rightmost wins, §5.4).
    for (const { column, labels, kind, fields } of columns) {
      const cleaned = labels ? classValue(cells[column] ?? null, labels) : cleanValue(cells[column] ?? null)
      if (cleaned === undefined) continue
      const reason =
        cleaned === 'reject'
          ? 'not a number'
          : typeof cleaned === 'object'
            ? cleaned.reason
            : kind && valueProblem(kind, cleaned, doc.file_type === 'date' ? 'date' : 'campaign')
      if (reason) {
        listed(totals.rejectedCells, { row_number: s.row_number, column, value: cells[column], reason })
        continue
      }
      lines.push(`${head}${fields}${tail}${cleaned}\n`)
    }
  }
  return { text: lines.join(''), count: lines.length }
}

/**
 * The staged cells' columns, in the order they are copied (lib/data/copy.ts): in staging order, so ids
 * follow it, which §5.4 relies on. Measured against the array literals unnested by INSERT it replaced:
 * bench/README.md, "Ingestion".
 */
const STAGED_COLUMNS = ['document_id', 'source_submission_id', 'column_name', 'indicator_id', 'location_id', 'campaign_id', 'data_date', 'value'] as const
