// A DHIS2 data value set imported through the upload pipeline: its values become the rows of a campaign
// file (geocode, campaign, one column per data element), stored as a document, read, mapped and written
// as an upload is (lib/ingest/actions.ts), in one transaction, with the importer's location scope; the
// answer is DHIS2's import summary. Identifiers are the file's codes: an organisation unit is a location
// code and a data element a column, each found through the mapping of codes (source_object_map), where
// a DHIS2 UID is mapped once like any other code.
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { stringify } from 'csv-stringify/sync'
import { sql, type Kysely, type Transaction } from 'kysely'
import type { DB } from '../../schemas/index.js'
import type { Config } from '../core/config.js'
import type { AuthUser } from '../data/auth.js'
import { ingest } from '../ingest/actions.js'
import { discard, spoolPath } from '../ingest/spool.js'
import type { Document } from '../ingest/transform.js'
import { checkUpload, storeUpload } from '../ingest/upload.js'
import type { DataValue } from './data-values.js'
import { badRequest } from '../core/errors.js'
import { MAX_COLUMNS } from '../ingest/files.js'
import { ensureCodes } from '../ingest/template.js'
import { periodDays } from './periods.js'

/** The import parameters this API honours (DHIS2's names and values). */
export interface ImportOptions {
  dryRun: boolean
  /** CREATE leaves the values already stored as they are, UPDATE writes only those: the others are ignored. */
  importStrategy: 'CREATE_AND_UPDATE' | 'CREATE' | 'UPDATE'
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
  /** The document the values were stored as (none on a dry run, or when none could be read). */
  document_id?: number
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

type Conflict = (object: string, value: string, index: number) => void

/** The campaign (its id) each value's period stands for (the one that starts in it), or why it stands for none. */
async function campaignsOf(db: Kysely<DB>, values: DataValue[], conflict: Conflict) {
  const campaigns = await db.selectFrom('campaign').select(['id', 'name', 'start_date']).orderBy('start_date').execute()
  const byPeriod = new Map<string, { id: number } | { problem: string }>()
  const placed = new Map<number, number>()
  for (const value of values) {
    let found = byPeriod.get(value.period)
    if (!found) {
      const days = periodDays(value.period)
      const starting =
        'problem' in days ? [] : campaigns.filter((c) => String(c.start_date).slice(0, 10) >= days.first && String(c.start_date).slice(0, 10) <= days.last)
      found =
        'problem' in days
          ? days
          : starting.length === 1
            ? { id: starting[0].id }
            : {
                problem: starting.length
                  ? `${starting.length} campaigns start in period ${value.period} (${starting.map((c) => c.name).join(', ')}): send a period that holds one`
                  : `no campaign starts in period ${value.period}`,
              }
      byPeriod.set(value.period, found)
    }
    if ('id' in found) placed.set(value.index, found.id)
    else conflict(value.period, found.problem, value.index)
  }
  return placed
}

/**
 * The indexes of the values that have a value stored already: their data element and organisation
 * unit mapped (as the pipeline will map them) and a datapoint at their campaign. A value whose code is
 * not mapped has none; the pipeline then names it.
 */
async function storedValues(db: Kysely<DB>, values: DataValue[], campaignOf: Map<number, number>): Promise<Set<number>> {
  const placed = values.filter((v) => campaignOf.has(v.index))
  if (!placed.length) return new Set()
  const { rows } = await sql<{ idx: number }>`
    select v.idx from unnest(${placed.map((v) => v.index)}::int4[], ${placed.map((v) => v.dataElement)}::text[],
      ${placed.map((v) => v.orgUnit)}::text[], ${placed.map((v) => campaignOf.get(v.index)!)}::int4[]) as v(idx, element, unit, campaign_id)
    join source_object_map i on i.content_type = 'indicator' and i.source_object_code = v.element and i.master_object_id > 0
    join source_object_map l on l.content_type = 'location' and l.source_object_code = v.unit and l.master_object_id > 0
    where exists (select 1 from datapoint d where d.campaign_id = v.campaign_id and d.location_id = l.master_object_id
      and d.indicator_id = i.master_object_id and d.value is not null)`.execute(db)
  return new Set(rows.map((r) => r.idx))
}

/** The most data elements a set may carry: an upload's columns, less the file's geocode and campaign. */
const MAX_DATA_ELEMENTS = MAX_COLUMNS - 2

/** The most cells a data value set's campaign file may have: places and campaigns × data elements. */
const MAX_CELLS = 1_000_000

/** A campaign file's line: its organisation unit and campaign (by code), in the file's order. */
interface FileRow {
  orgUnit: string
  campaign: string
}

/**
 * The values as a campaign file's text: a line per organisation unit and campaign (by its code), a
 * column per data element, and the file's rows in order; a 400 when that table would be too large to
 * write (it is dense). A value a later one of the same key replaces is a conflict: the last is kept.
 */
function campaignFile(values: DataValue[], campaignOf: Map<number, number>, codeOf: Map<number, string>, conflict: Conflict) {
  const elements = [...new Set(values.map((v) => v.dataElement))]
  const lines = new Map<string, { row: FileRow; cells: Record<string, string>; sent: Map<string, number> }>()
  for (const value of values) {
    const campaign = codeOf.get(campaignOf.get(value.index)!)!
    const key = JSON.stringify([value.orgUnit, campaign])
    const line = lines.get(key) ?? {
      row: { orgUnit: value.orgUnit, campaign },
      cells: { geocode: value.orgUnit, campaign } as Record<string, string>,
      sent: new Map<string, number>(),
    }
    const earlier = line.sent.get(value.dataElement)
    if (earlier !== undefined)
      conflict(value.dataElement, `dataElement ${value.dataElement}: a later value in this set has the same place and period; the last is kept`, earlier)
    line.cells[value.dataElement] = value.value
    line.sent.set(value.dataElement, value.index)
    lines.set(key, line)
  }
  if (elements.length > MAX_DATA_ELEMENTS || lines.size * elements.length > MAX_CELLS) {
    throw badRequest(
      'DATA_VALUE_SET_TOO_WIDE',
      `${lines.size} places and campaigns × ${elements.length} data elements: at most ${MAX_DATA_ELEMENTS} data elements and ${MAX_CELLS} cells a set; send it in parts by data element`,
    )
  }
  const text = stringify(
    [...lines.values()].map((l) => l.cells),
    { header: true, columns: ['geocode', 'campaign', ...elements] },
  )
  return { text, rows: [...lines.values()].map((l) => l.row) }
}

/**
 * Imports `values` as `user`: those it can place go through the upload pipeline as one document;
 * the others, and what the pipeline set aside, are the summary's conflicts.
 */
export async function importDataValues(
  db: Kysely<DB>,
  config: Config,
  user: AuthUser,
  values: DataValue[],
  options: ImportOptions,
  /** Runs the import's one transaction as a background job's writes, then makes them seen (lib/api/transactions.ts). */
  transaction: <T>(work: (trx: Transaction<DB>) => Promise<T>) => Promise<T>,
): Promise<ImportSummary> {
  const conflicts = new Map<string, ImportConflict>()
  const conflict: Conflict = (object, value, index) => {
    const key = JSON.stringify([object, value])
    const found = conflicts.get(key) ?? { object, value, indexes: [] }
    found.indexes.push(index)
    conflicts.set(key, found)
  }
  const combined = values.filter((v) => {
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
  const campaignOf = await campaignsOf(db, combined, conflict)
  const inCampaigns = combined.filter((v) => campaignOf.has(v.index))
  const summary = (counts: Partial<ImportSummary['importCount']>, documentId?: number): ImportSummary => {
    const importCount = { imported: 0, updated: 0, deleted: 0, ...counts, ignored: 0 }
    importCount.ignored = Math.max(0, values.length - importCount.imported - importCount.updated - importCount.deleted)
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
      ...(documentId === undefined ? {} : { document_id: documentId }),
    }
  }
  if (!inCampaigns.length) return summary({})
  const path = await spoolPath(config.DATA_DIR)
  let stored: string | undefined
  try {
    return await transaction(async (trx) => {
      const coded = await asCodes(trx, inCampaigns, options.schemes, user, conflict)
      const existing = options.importStrategy === 'CREATE_AND_UPDATE' ? undefined : await storedValues(trx, coded, campaignOf)
      const placed = coded.filter((v) => existing === undefined || existing.has(v.index) === (options.importStrategy === 'UPDATE'))
      if (!placed.length) throw new NothingKept(summary({}))
      // Each campaign by a code mapped to it (its name, mapped here when none is), as a template names it.
      const { codes } = await ensureCodes(trx, 'campaign', [...new Set(campaignOf.values())], user)
      const { text, rows } = campaignFile(placed, campaignOf, codes, conflict)
      await writeFile(path, text)
      const input = { path, size: Buffer.byteLength(text), owner: `user ${user.id}`, title: 'dataValueSets.csv', fileType: 'campaign' }
      const id = await storeUpload(trx, config.DATA_DIR, input, await checkUpload(input), user.id)
      const doc = (await trx.selectFrom('source_doc').selectAll().where('id', '=', id).executeTakeFirstOrThrow()) as unknown as Document
      stored = doc.docfile ?? undefined
      const stats = (await ingest(trx, doc, user, config.DATA_DIR, true)) as unknown as PipelineStats
      const sent = new Map(values.map((v) => [v.index, v]))
      pipelineConflicts(stats, placed, conflict, sent)
      rejectedConflicts(stats, rows, placed, (v) => codes.get(campaignOf.get(v.index)!)!, conflict, sent)
      const counts = stats.datapoints ?? {}
      const made = summary({ imported: counts.inserted ?? 0, updated: counts.updated ?? 0, deleted: counts.deleted ?? 0 }, options.dryRun ? undefined : id)
      if (options.dryRun) throw new NothingKept(made)
      return made
    })
  } catch (error) {
    // Rolled back, a dry run or a failure alike: the file it stored goes too.
    if (stored) await discard(join(config.DATA_DIR, stored))
    if (error instanceof NothingKept) return error.summary
    throw error
  } finally {
    await discard(path)
  }
}

/** What the pipeline reports of a document that the summary turns into conflicts. */
interface PipelineStats {
  datapoints?: { inserted?: number; updated?: number; deleted?: number }
  unmapped?: { indicator?: { items?: string[] } | string[]; location?: { items?: string[] } | string[]; campaign?: { items?: string[] } | string[] }
  forbidden_rows?: { items?: Array<{ location_code: string }> }
  rejected_cells?: { items?: Array<{ row_number: number; column: string; value: unknown; reason: string }> }
}

/**
 * The cells the pipeline refused (a value that is not a number, a count below zero…) as conflicts of
 * the values they came from: the file's row (0 its first) and column name the place, period and data
 * element. The pipeline lists the first 100.
 */
function rejectedConflicts(
  stats: PipelineStats,
  rows: FileRow[],
  values: DataValue[],
  campaignCode: (v: DataValue) => string,
  conflict: Conflict,
  sent: Map<number, DataValue>,
) {
  for (const cell of stats.rejected_cells?.items ?? []) {
    const row = rows[cell.row_number]
    if (!row) continue
    // The last of the key: the one the file holds.
    const value = values.filter((v) => v.dataElement === cell.column && v.orgUnit === row.orgUnit && campaignCode(v) === row.campaign).at(-1)
    if (!value) continue
    const { dataElement } = sent.get(value.index) ?? value
    conflict(dataElement, `value ${String(cell.value)} of dataElement ${dataElement}: ${cell.reason}`, value.index)
  }
}

/**
 * The codes the pipeline could not map, and the places outside the importer's part, as conflicts of the
 * values that named them, named as they were sent (`sent`: a name the NAME scheme turned into a code).
 */
function pipelineConflicts(stats: PipelineStats, values: DataValue[], conflict: Conflict, sent: Map<number, DataValue>) {
  const listOf = (found: { items?: string[] } | string[] | undefined) => (Array.isArray(found) ? found : (found?.items ?? []))
  const unmappedElements = new Set(listOf(stats.unmapped?.indicator))
  const unmappedUnits = new Set(listOf(stats.unmapped?.location))
  const forbidden = new Set((stats.forbidden_rows?.items ?? []).map((r) => r.location_code))
  // A campaign's code is mapped before the file is read: one still unmapped means a mapping changed meanwhile.
  if (listOf(stats.unmapped?.campaign).length) {
    for (const v of values) conflict(v.period, `period ${v.period}: its campaign's code is not mapped; import again`, v.index)
    return
  }
  for (const v of values) {
    const { dataElement, orgUnit } = sent.get(v.index) ?? v
    if (unmappedElements.has(v.dataElement))
      conflict(dataElement, `dataElement ${dataElement} is not mapped to an indicator: map the code, then import again`, v.index)
    else if (unmappedUnits.has(v.orgUnit)) conflict(orgUnit, `orgUnit ${orgUnit} is not mapped to a location: map the code, then import again`, v.index)
    else if (forbidden.has(v.orgUnit)) conflict(orgUnit, `orgUnit ${orgUnit} is outside the locations you are responsible for`, v.index)
  }
}
