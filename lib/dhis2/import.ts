// A DHIS2 data value set imported through the upload pipeline: its values become the rows of a campaign
// file (geocode, campaign, one column per data element), stored as a document, read, mapped and written
// as an upload is (lib/ingest/actions.ts), in one transaction, with the importer's location scope; the
// answer is DHIS2's import summary. Identifiers are the file's codes: an organisation unit is a location
// code and a data element a column, each found through the mapping of codes (source_object_map), where
// a DHIS2 UID is mapped once like any other code.
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Kysely, Transaction } from 'kysely'
import type { DB } from '../../schemas/index.js'
import type { Config } from '../core/config.js'
import type { AuthUser } from '../data/auth.js'
import { ingest } from '../ingest/actions.js'
import { discard, spoolPath } from '../ingest/spool.js'
import type { Document } from '../ingest/transform.js'
import { storeUpload, type Upload } from '../ingest/upload.js'
import type { DataValue } from './data-values.js'
import { ensureCodes } from '../ingest/template.js'
import { lockCampaigns } from '../engine/campaign-locks.js'
import { type Conflict, type Place, placesOf } from './import-places.js'
import { screen } from './import-screen.js'
import { type FileKind, type FileRow, valuesFile } from './import-file.js'
import { deleteValues } from './import-delete.js'

/** The import parameters this API honours (DHIS2's names and values). */
export interface ImportOptions {
  dryRun: boolean
  /** CREATE leaves the values already stored as they are, UPDATE writes only those: the others are ignored; DELETE deletes them. */
  importStrategy: 'CREATE_AND_UPDATE' | 'CREATE' | 'UPDATE' | 'DELETE'
  /** How organisation units and data elements are named: UID and CODE alike through the mapping of codes, NAME by their names. */
  schemes: IdSchemes
}

/** DHIS2's identifier scheme of each kind of object a value names. */
export interface IdSchemes {
  orgUnit: IdScheme
  dataElement: IdScheme
}
export type IdScheme = 'UID' | 'CODE' | 'NAME'

/** A value set aside, as DHIS2 reports it: what it names, why, and which values (by index). */
export interface ImportConflict {
  object: string
  value: string
  indexes: number[]
}

/** DHIS2's import summary of a data value set. */
export interface ImportSummary {
  responseType: 'ImportSummary'
  status: 'SUCCESS' | 'WARNING' | 'ERROR'
  description: string
  importOptions: { dryRun: boolean; importStrategy: string; idSchemes: Record<string, string> }
  importCount: { imported: number; updated: number; ignored: number; deleted: number }
  conflicts: ImportConflict[]
  dataSetComplete: 'false'
  /** The document the values were stored as (none on a dry run, or when none could be read): the campaign file's where there are two. */
  document_id?: number
  /** Every document the values were stored as: a campaign file and a date file where the set holds both kinds of value. */
  document_ids?: number[]
}

/**
 * The category option combination DHIS2 gives a value that is not disaggregated: by name, by the UID
 * DHIS2 gives it today, and by the one its Web API documentation's examples use.
 */
const DEFAULT_COMBINATIONS = new Set(['default', 'HllvX50cXC0', 'bRowv6yZOF2'])

/** The columns of a campaign file that are not indicators: a data element of one of these names would take its place. */
const RESERVED_COLUMNS = new Set(['geocode', 'campaign', 'location_name', 'unique_key', 'data_date'])

/** Stops the import's transaction once its summary is made, keeping nothing it wrote: a dry run, or nothing left to write. */
class NothingKept extends Error {
  constructor(readonly summary: ImportSummary) {
    super('nothing kept')
  }
}

/**
 * The values as the codes the pipeline maps: with the NAME scheme, each organisation unit's and data
 * element's name becomes a code mapped to its row (its own code, mapped here where the importer may,
 * as a template does); a name no row has, or a row without a usable code, is a conflict.
 */
async function asCodes(trx: Kysely<DB>, values: DataValue[], schemes: IdSchemes, user: AuthUser, conflict: Conflict): Promise<DataValue[]> {
  let named = values
  for (const [field, table] of [
    ['orgUnit', 'location'],
    ['dataElement', 'indicator'],
  ] as const) {
    if (schemes[field] !== 'NAME' || !named.length) continue
    const rows = await trx
      .selectFrom(table)
      .select(['id', 'name'])
      .where('name', 'in', [...new Set(named.map((v) => v[field]))])
      .execute()
    const idOf = new Map(rows.map((r) => [r.name, r.id]))
    const { codes } = await ensureCodes(trx, table, [...idOf.values()], user)
    named = named.flatMap((v) => {
      const id = idOf.get(v[field])
      const code = id === undefined ? undefined : codes.get(id)
      if (code !== undefined) return [{ ...v, [field]: code }]
      conflict(
        v[field],
        id === undefined
          ? `${field} ${v[field]}: no ${table} has this name`
          : `${field} ${v[field]}: no code is mapped to this ${table} yet (an administrator's import or template maps one)`,
        v.index,
      )
      return []
    })
  }
  return named
}

/** The values a set holds that this API does not read (a reserved column's name, a formula, a disaggregation), each a conflict. */
function unread(values: DataValue[], conflict: Conflict): DataValue[] {
  return values.filter((v) => {
    if (RESERVED_COLUMNS.has(v.dataElement.toLowerCase())) {
      conflict(
        v.dataElement,
        `dataElement ${v.dataElement}: a column name an upload reserves (geocode, campaign, location_name, unique_key, data_date)`,
        v.index,
      )
      return false
    }
    const formula = [v.dataElement, v.orgUnit, v.value].find((field) => field.startsWith('='))
    if (formula !== undefined) {
      conflict(formula, `${formula.slice(0, 40)}: a formula; a data value set carries values, not formulas`, v.index)
      return false
    }
    if (v.disaggregation) {
      conflict(v.disaggregation, `${v.disaggregation}: a disaggregation is not read (one is an indicator of its own)`, v.index)
      return false
    }
    if (!v.categoryOptionCombo || DEFAULT_COMBINATIONS.has(v.categoryOptionCombo)) return true
    conflict(
      v.categoryOptionCombo,
      `categoryOptionCombo ${v.categoryOptionCombo}: only the default combination is read (a disaggregation is an indicator of its own)`,
      v.index,
    )
    return false
  })
}

/** The summary's conflicts, one per object and reason with the indexes of its values, and the function that adds one. */
function conflictList() {
  const conflicts = new Map<string, ImportConflict>()
  const conflict: Conflict = (object, value, index) => {
    const key = JSON.stringify([object, value])
    const found = conflicts.get(key) ?? { object, value, indexes: [] }
    found.indexes.push(index)
    conflicts.set(key, found)
  }
  return { conflicts, conflict }
}

/** The summary of an import of `sent` values: its counts (what was neither written nor deleted, ignored) and its conflicts. */
function summaryOf(sent: number, options: ImportOptions, conflicts: Map<string, ImportConflict>) {
  return (counts: Partial<ImportSummary['importCount']>, documentIds: number[] = []): ImportSummary => {
    const importCount = { imported: 0, updated: 0, deleted: 0, ...counts, ignored: 0 }
    importCount.ignored = Math.max(0, sent - importCount.imported - importCount.updated - importCount.deleted)
    const listed = [...conflicts.values()]
    return {
      responseType: 'ImportSummary',
      status: listed.length ? 'WARNING' : 'SUCCESS',
      description: listed.length ? 'Import process completed with conflicts' : 'Import process completed successfully',
      importOptions: {
        dryRun: options.dryRun,
        importStrategy: options.importStrategy,
        idSchemes: { orgUnitIdScheme: options.schemes.orgUnit, dataElementIdScheme: options.schemes.dataElement },
      },
      importCount,
      conflicts: listed,
      dataSetComplete: 'false',
      ...(documentIds.length ? { document_id: documentIds[0], document_ids: documentIds } : {}),
    }
  }
}

/** The files an import wrote: spooled before they are stored, and stored as documents' files (gone again if it is rolled back). */
interface ImportFiles {
  spooled: string[]
  stored: string[]
}

/** What one file of values did: its document and the pipeline's counts. */
interface FileImported {
  documentId: number
  counts: { imported: number; updated: number; deleted: number }
}

/**
 * `values` of one kind as one upload of `user`: their file stored as a document, read, mapped and
 * written by the pipeline; what it set aside added to the conflicts.
 */
async function importFile(
  trx: Kysely<DB>,
  config: Config,
  user: AuthUser,
  kind: FileKind,
  values: DataValue[],
  placeOf: Map<number, Place>,
  report: { conflict: Conflict; sent: Map<number, DataValue> },
  files: ImportFiles,
): Promise<FileImported> {
  const place = (v: DataValue) => placeOf.get(v.index)!
  // Each campaign by a code mapped to it (its name, mapped here when none is), as a template names it.
  const { codes } =
    kind === 'campaign' ? await ensureCodes(trx, 'campaign', [...new Set(values.map((v) => place(v).campaign_id!))], user) : { codes: undefined }
  const placeName = (v: DataValue) => (codes ? codes.get(place(v).campaign_id!)! : place(v).data_date!)
  const { text, header, rows } = valuesFile(kind, values, placeName, report.conflict)
  const path = await spoolPath(config.DATA_DIR)
  files.spooled.push(path)
  await writeFile(path, text)
  const title = kind === 'campaign' ? 'dataValueSets.csv' : 'dataValueSets-dated.csv'
  const input = { path, size: Buffer.byteLength(text), owner: `user ${user.id}`, title, fileType: kind }
  // The file is this import's own, UTF-8 with the columns it names: an upload's check of it (a read of the
  // whole file in a worker thread) would find nothing; the transform reads it as any upload's.
  const upload: Upload = { kind: 'csv', header, fileType: kind, dateOrder: 'YMD', conflict: 'last' }
  const documentId = await storeUpload(trx, config.DATA_DIR, input, upload, user.id)
  const doc = (await trx.selectFrom('source_doc').selectAll().where('id', '=', documentId).executeTakeFirstOrThrow()) as unknown as Document
  if (doc.docfile) files.stored.push(doc.docfile)
  const stats = (await ingest(trx, doc, user, config.DATA_DIR, true)) as unknown as PipelineStats
  pipelineConflicts(stats, values, report.conflict)
  rejectedConflicts(stats, rows, values, placeName, report.conflict, report.sent)
  const counts = stats.datapoints ?? {}
  return { documentId, counts: { imported: counts.inserted ?? 0, updated: counts.updated ?? 0, deleted: counts.deleted ?? 0 } }
}

/**
 * Imports `values` as `user`: those it can place go through the upload pipeline, the values at
 * campaigns as one document and the dated values as another (DELETE deletes them instead); the others,
 * and what the pipeline set aside, are the summary's conflicts.
 */
export async function importDataValues(
  config: Config,
  user: AuthUser,
  values: DataValue[],
  options: ImportOptions,
  /** Runs the import's one transaction as a background job's writes, then makes them seen (lib/api/transactions.ts). */
  transaction: <T>(work: (trx: Transaction<DB>) => Promise<T>) => Promise<T>,
): Promise<ImportSummary> {
  const { conflicts, conflict } = conflictList()
  const summary = summaryOf(values.length, options, conflicts)
  const readable = unread(values, conflict)
  if (!readable.length) return summary({})
  const sent = new Map(values.map((v) => [v.index, v]))
  const files: ImportFiles = { spooled: [], stored: [] }
  try {
    return await transaction(async (trx) => {
      const coded = await asCodes(trx, readable, options.schemes, user, conflict)
      const placeOf = await placesOf(trx, coded, conflict)
      let placed = coded.filter((v) => placeOf.has(v.index))
      if (!placed.length) throw new NothingKept(summary({}))
      // Every campaign written, and the dated values, locked at once in ascending order (lib/engine/campaign-locks.ts).
      await lockCampaigns(trx, new Set(placed.map((v) => placeOf.get(v.index)!.campaign_id)))
      const screened = await screen(
        trx,
        user,
        placed,
        placeOf,
        { conflict, sent },
        { values: options.importStrategy !== 'DELETE', stored: options.importStrategy !== 'CREATE_AND_UPDATE' },
      )
      if (options.importStrategy === 'DELETE') {
        const deleted = await deleteValues(trx, [...new Set(screened.stored.values())])
        const made = summary({ deleted })
        if (options.dryRun || !deleted) throw new NothingKept(made)
        return made
      }
      placed =
        options.importStrategy === 'CREATE_AND_UPDATE'
          ? screened.kept
          : screened.kept.filter((v) => screened.stored.has(v.index) === (options.importStrategy === 'UPDATE'))
      const counts = { imported: 0, updated: 0, deleted: 0 }
      const documentIds: number[] = []
      for (const kind of ['campaign', 'date'] as const) {
        const ofKind = placed.filter((v) => (placeOf.get(v.index)!.campaign_id === null) === (kind === 'date'))
        if (!ofKind.length) continue
        const done = await importFile(trx, config, user, kind, ofKind, placeOf, { conflict, sent }, files)
        for (const count of ['imported', 'updated', 'deleted'] as const) counts[count] += done.counts[count]
        documentIds.push(done.documentId)
      }
      if (!documentIds.length) throw new NothingKept(summary({}))
      const made = summary(counts, options.dryRun ? [] : documentIds)
      if (options.dryRun) throw new NothingKept(made)
      return made
    })
  } catch (error) {
    // Rolled back, a dry run or a failure alike: the files it stored go too.
    for (const stored of files.stored) await discard(join(config.DATA_DIR, stored))
    if (error instanceof NothingKept) return error.summary
    throw error
  } finally {
    for (const path of files.spooled) await discard(path)
  }
}

/** What the pipeline reports of a document that the summary turns into conflicts. */
interface PipelineStats {
  datapoints?: { inserted?: number; updated?: number; deleted?: number }
  unmapped?: { campaign?: { items?: string[] } | string[] }
  rejected_cells?: { items?: Array<{ row_number: number; column: string; value: unknown; reason: string }> }
}

/**
 * The cells the pipeline refused that the screen could not judge (a class's labels) as conflicts of the
 * values they came from: the file's row (0 its first) and column name the place, period and data
 * element. The pipeline lists the first 100.
 */
function rejectedConflicts(
  stats: PipelineStats,
  rows: FileRow[],
  values: DataValue[],
  placeName: (v: DataValue) => string,
  conflict: Conflict,
  sent: Map<number, DataValue>,
) {
  for (const cell of stats.rejected_cells?.items ?? []) {
    const row = rows[cell.row_number]
    if (!row) continue
    // The last of the key: the one the file holds.
    const value = values.filter((v) => v.dataElement === cell.column && v.orgUnit === row.orgUnit && placeName(v) === row.place).at(-1)
    if (!value) continue
    const { dataElement } = sent.get(value.index) ?? value
    conflict(dataElement, `value ${String(cell.value)} of dataElement ${dataElement}: ${cell.reason}`, value.index)
  }
}

/**
 * The pipeline's own conflicts: a campaign's code mapped before the file is read, and unmapped when it
 * reads it, means a mapping changed meanwhile. (Unmapped codes, places outside the importer's part and
 * values that do not fit were named before it ran: lib/dhis2/import-screen.ts.)
 */
function pipelineConflicts(stats: PipelineStats, values: DataValue[], conflict: Conflict) {
  const campaigns = stats.unmapped?.campaign
  if (!(Array.isArray(campaigns) ? campaigns : (campaigns?.items ?? [])).length) return
  for (const v of values) conflict(v.period, `period ${v.period}: its campaign's code is not mapped; import again`, v.index)
}
