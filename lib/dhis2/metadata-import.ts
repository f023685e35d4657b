// DHIS2's metadata import (`POST /api/metadata`): levels, organisation units (parents first, whatever the
// payload's order) and data elements, written through the resources' own writes as the requester (the
// caller hands them in as `ResourceDoors`: this layer sits below lib/api), so the location tree,
// recomputes after a move, caches and every permission hold as for a request of /api/v1. Each object is
// matched by every key it may be named by and imported in its own savepoint; its DHIS2 UID and code are
// mapped to its row (source_object_map), so data value sets naming either go through the upload pipeline.
import { sql, type Kysely } from 'kysely'
import type { DB } from '../../schemas/index.js'
import { ApiError } from '../core/errors.js'
import type { AuthUser } from '../data/auth.js'
import { derivedUid, VALUE_TYPE_OF } from './metadata-export.js'
import {
  badPayload,
  type ElementIn,
  isObject,
  type LevelIn,
  type MetadataImportOptions,
  type MetadataPayload,
  type Ref,
  type UnitIn,
} from './metadata-payload.js'
import { CODE, errorReportOf, type ImportReport, KLASS, ObjectError, ObjectLog, type Outcome, type Stats, TypeLog } from './metadata-report.js'

type Row = Record<string, unknown>

/** The resources an import writes. */
export type MetadataKind = 'location' | 'location_type' | 'geo' | 'indicator' | 'source_object_map'

/**
 * The resources' writes as the requester: `create` and `update` are the API's POST and PATCH of the
 * resource (its checks of who may call, its hooks), in the import's transaction; `may` is the role check alone.
 */
export interface ResourceDoors {
  may(kind: MetadataKind, method: 'POST' | 'PATCH'): boolean
  create(kind: MetadataKind, body: Row): Promise<Row>
  update(kind: MetadataKind, id: number, body: Row): Promise<Row>
}

/** Runs the import's one transaction, its writes recorded as the requester's, then makes them seen. */
export type MetadataTransaction = <T>(work: (trx: Kysely<DB>, doors: ResourceDoors) => Promise<T>) => Promise<T>

/** The data format of each value type DHIS2 has one for; a data element of another type is set aside. */
const FORMAT_OF: Record<string, 'int' | 'pct' | 'bool'> = {
  INTEGER: 'int',
  INTEGER_POSITIVE: 'int',
  INTEGER_NEGATIVE: 'int',
  INTEGER_ZERO_OR_POSITIVE: 'int',
  NUMBER: 'int',
  PERCENTAGE: 'pct',
  UNIT_INTERVAL: 'pct',
  BOOLEAN: 'bool',
  TRUE_ONLY: 'bool',
}

// ---------------------------------------------------------------------------------------------------
// What the database holds, found by every key an object may be named by

interface Mapping {
  id: number
  master: number
}

/**
 * The rows of one kind (locations, indicators) by their unique columns, their own codes, the codes
 * mapped to them and the UIDs derived from their own codes. Changes are staged by the import and kept
 * once the object they belong to is done (a failed object's savepoint takes its writes back).
 */
class Catalogue<R extends { id: number }> {
  readonly rows = new Map<number, R>()
  readonly unique = new Map<string, Map<string, number>>()
  readonly mapped = new Map<string, Mapping>()
  readonly derived = new Map<string, number>()

  constructor(
    readonly kind: 'location' | 'indicator',
    /** Its unique text columns; the first is its own code. */
    readonly columns: Array<keyof R & string>,
  ) {
    for (const column of columns) this.unique.set(column, new Map())
  }

  put(row: R) {
    const previous = this.rows.get(row.id)
    for (const column of this.columns) {
      const values = this.unique.get(column)!
      if (previous && values.get(String(previous[column])) === row.id) values.delete(String(previous[column]))
      values.set(String(row[column]), row.id)
    }
    if (previous) this.derived.delete(derivedUid(this.kind, String(previous[this.columns[0]])))
    this.rows.set(row.id, row)
    this.derived.set(derivedUid(this.kind, String(row[this.columns[0]])), row.id)
  }

  /** The row a code is mapped to, when it is mapped to one that exists. */
  mappedTo(key: string): number | undefined {
    const mapping = this.mapped.get(key)
    return mapping && this.rows.has(mapping.master) ? mapping.master : undefined
  }

  /**
   * The row a UID names: mapped to it, or derived from its code; with `ownCode`, also a row whose own
   * code it is. Only an importer who cannot map codes needs that (a unit she made without a code has
   * its UID as code, unmapped); for anyone else it would let a unit someone named after a UID not yet
   * imported take that UID's place (and be renamed and moved into another part with its values).
   */
  byUid(key: string, ownCode: boolean): number | undefined {
    return this.mappedTo(key) ?? this.derived.get(key) ?? (ownCode ? this.unique.get(this.columns[0])!.get(key) : undefined)
  }

  /** The row a code names: its own code, or mapped to it. */
  byCode(key: string): number | undefined {
    return this.unique.get(this.columns[0])!.get(key) ?? this.mappedTo(key)
  }

  /** The row an object names, as `identifier` says: by its UID or its code, and by the other where it has only that. */
  match(object: { uid?: string; code?: string }, identifier: MetadataImportOptions['identifier'], ownCodeAsUid: boolean): number | undefined {
    const byUid = object.uid === undefined ? undefined : this.byUid(object.uid, ownCodeAsUid)
    const byCode = object.code === undefined ? undefined : this.byCode(object.code)
    if (identifier === 'AUTO') return byUid ?? byCode
    if (identifier === 'UID') return object.uid === undefined ? byCode : byUid
    return object.code === undefined ? byUid : byCode
  }

  /** Whether a value of a unique column is another row's than `self`. */
  takenByOther(column: keyof R & string, value: string, self?: number): boolean {
    const holder = this.unique.get(column)!.get(value)
    return holder !== undefined && holder !== self
  }
}

interface PlaceRow {
  id: number
  name: string
  location_code: string
  parent_location_id: number | null
  location_type_id: number
  latitude: number | null
  longitude: number | null
}

interface IndicatorRow {
  id: number
  short_name: string
  name: string
  data_format: string
  description: string
}

/** The mappings of `keys` of a content type. */
async function mappingsOf(db: Kysely<DB>, contentType: 'location' | 'indicator', keys: string[]): Promise<Map<string, Mapping>> {
  if (!keys.length) return new Map()
  const { rows } = await sql<{ id: number; code: string; master: number }>`select id, source_object_code as code, master_object_id as master
    from source_object_map where content_type = ${contentType} and source_object_code = any(${keys}::text[])`.execute(db)
  return new Map(rows.map((r) => [r.code, { id: r.id, master: r.master }]))
}

/** Every key the objects are named by, their parents' included. */
const keysOf = (objects: Array<{ uid?: string; code?: string; parent?: Ref }>) => [
  ...new Set(objects.flatMap((o) => [o.uid, o.code, o.parent?.id, o.parent?.code]).filter((k): k is string => k !== undefined)),
]

async function placesOf(db: Kysely<DB>, units: UnitIn[]): Promise<Catalogue<PlaceRow>> {
  const places = new Catalogue<PlaceRow>('location', ['location_code', 'name'])
  const rows = await db
    .selectFrom('location')
    .select(['id', 'name', 'location_code', 'parent_location_id', 'location_type_id', 'latitude', 'longitude'])
    .execute()
  for (const row of rows) places.put(row)
  for (const [key, mapping] of await mappingsOf(db, 'location', keysOf(units))) places.mapped.set(key, mapping)
  return places
}

async function indicatorsOf(db: Kysely<DB>, elements: ElementIn[]): Promise<Catalogue<IndicatorRow>> {
  const indicators = new Catalogue<IndicatorRow>('indicator', ['short_name', 'name'])
  for (const row of await db.selectFrom('indicator').select(['id', 'short_name', 'name', 'data_format', 'description']).execute()) indicators.put(row)
  for (const [key, mapping] of await mappingsOf(db, 'indicator', keysOf(elements))) indicators.mapped.set(key, mapping)
  return indicators
}

/** A JSON value with its objects' keys in order: two geometries compare equal whatever order jsonb keeps. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`
  if (isObject(value))
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`)
      .join(',')}}`
  return JSON.stringify(value) ?? 'null'
}

// ---------------------------------------------------------------------------------------------------
// The import

/** Stops the transaction once the report is made, when nothing of it is to be kept (VALIDATE, or an error with atomicMode ALL). */
/** How many suffixed names an object may be given when its own is another's ("Ashford (VD11)", "Ashford (VD11 2)"…). */
const NAME_SUFFIXES = 100

class RolledBack extends Error {
  constructor(readonly report: ImportReport) {
    super('rolled back')
  }
}

/** Parents before children: the payload's units in an order where each comes after its parent among them; a 400 for a cycle. */
function parentsFirst(units: UnitIn[], parentIndex: Map<number, number>): UnitIn[] {
  const ordered: UnitIn[] = []
  const state = new Map<number, 'visiting' | 'done'>()
  for (const start of units) {
    // Up the chain of parents in the payload from `start`, then back down: no recursion on a deep tree.
    const chain: UnitIn[] = []
    let unit: UnitIn | undefined = start
    while (unit && !state.has(unit.index)) {
      state.set(unit.index, 'visiting')
      chain.push(unit)
      const parent = parentIndex.get(unit.index)
      unit = parent === undefined ? undefined : units[parent]
    }
    if (unit && state.get(unit.index) === 'visiting') {
      throw badPayload(`organisationUnits[${unit.index}]: its parents in the payload come back to it (a cycle)`)
    }
    for (const member of chain.reverse()) {
      state.set(member.index, 'done')
      ordered.push(member)
    }
  }
  return ordered
}

class MetadataImport {
  private staged: Array<() => void> = []
  private readonly types = new Map<number, number>()
  private readonly typeNames = new Map<string, number>()
  private readonly levelOfType = new Map<number, number>()
  readonly logs = new Map<string, TypeLog>()

  constructor(
    private readonly trx: Kysely<DB>,
    private readonly doors: ResourceDoors,
    private readonly user: AuthUser,
    private readonly options: MetadataImportOptions,
  ) {}

  /** Later, once the object at work is imported: what the import remembers of the rows it wrote. */
  private stage(change: () => void) {
    this.staged.push(change)
  }

  /** One object's import in a savepoint: its failure takes back its own writes only and is reported. */
  private async object(klass: string, keyed: { index: number; uid?: string; code?: string; name: string }, work: (log: ObjectLog) => Promise<Outcome>) {
    const type = this.logs.get(klass) ?? new TypeLog(klass)
    this.logs.set(klass, type)
    const log = new ObjectLog(klass, keyed.index, keyed.uid ?? keyed.code, keyed.name)
    let outcome: Outcome = 'ignored'
    await sql`savepoint metadata_object`.execute(this.trx)
    try {
      outcome = await work(log)
      await sql`release savepoint metadata_object`.execute(this.trx)
      for (const change of this.staged) change()
    } catch (error) {
      await sql`rollback to savepoint metadata_object`.execute(this.trx)
      await sql`release savepoint metadata_object`.execute(this.trx)
      const report = errorReportOf(error, klass, log.matched)
      if (!report) throw error
      log.errors.push(report)
      outcome = 'ignored'
    } finally {
      this.staged = []
    }
    type.add(outcome, log)
  }

  async loadTypes() {
    for (const type of await this.trx.selectFrom('location_type').select(['id', 'name', 'admin_level']).execute()) {
      this.types.set(type.admin_level, type.id)
      this.typeNames.set(type.name, type.id)
      this.levelOfType.set(type.id, type.admin_level)
    }
  }

  /** DHIS2's levels: the location type of each admin level (level − 1), named as DHIS2 names it. */
  async levels(levels: LevelIn[]) {
    for (const level of [...levels].sort((a, b) => a.level - b.level)) {
      await this.object(KLASS.level, level, async () => {
        const adminLevel = level.level - 1
        const existing = this.types.get(adminLevel)
        if (existing === undefined ? this.options.importStrategy === 'UPDATE' : this.options.importStrategy === 'CREATE') return 'ignored'
        const holder = this.typeNames.get(level.name)
        if (holder !== undefined && holder !== existing) throw new ObjectError(CODE.taken, `Another location type is named ${level.name}`, 'name')
        if (existing !== undefined && existing === holder) return 'ignored'
        const row =
          existing === undefined
            ? await this.doors.create('location_type', { name: level.name, admin_level: adminLevel })
            : await this.doors.update('location_type', existing, { name: level.name })
        this.stage(() => {
          for (const [name, id] of this.typeNames) if (id === row.id) this.typeNames.delete(name)
          this.types.set(adminLevel, row.id as number)
          this.typeNames.set(level.name, row.id as number)
          this.levelOfType.set(row.id as number, adminLevel)
        })
        return existing === undefined ? 'created' : 'updated'
      })
    }
  }

  /** The location type of an admin level: the one there, or "Level N" made for it (by those who may). */
  private async typeAt(adminLevel: number): Promise<number> {
    const found = this.types.get(adminLevel)
    if (found !== undefined) return found
    const name = `Level ${adminLevel + 1}`
    if (!this.doors.may('location_type', 'POST')) {
      throw new ObjectError(
        CODE.forbidden,
        `No location type has admin level ${adminLevel} (DHIS2 level ${adminLevel + 1}), and only a superuser or a metadata editor may make one`,
        'level',
      )
    }
    if (this.typeNames.has(name))
      throw new ObjectError(CODE.taken, `No location type has admin level ${adminLevel}, and the name ${name} is another level's`, 'level')
    const id = (await this.doors.create('location_type', { name, admin_level: adminLevel })).id as number
    this.stage(() => {
      this.types.set(adminLevel, id)
      this.typeNames.set(name, id)
      this.levelOfType.set(id, adminLevel)
    })
    return id
  }

  /** A name free of other rows: as given, else with the object's code after it (said in a warning), else an error. */
  private freeName<R extends { id: number }>(rows: Catalogue<R>, column: keyof R & string, wanted: string, code: string, log: ObjectLog, self?: number) {
    if (!rows.takenByOther(column, wanted, self)) return wanted
    // "wanted (code)", then "wanted (code 2)"…: a person who took one of these names (someone responsible
    // for one part of the country may make locations) does not make another's import fail.
    const suffixes = Array.from({ length: NAME_SUFFIXES }, (_, n) => (n ? `${wanted} (${code} ${n + 1})` : `${wanted} (${code})`))
    const current = self === undefined ? undefined : String(rows.rows.get(self)?.[column])
    // Its own, as an earlier import named it.
    if (current !== undefined && suffixes.includes(current)) return current
    const free = suffixes.find((suffixed) => !rows.takenByOther(column, suffixed, self))
    if (free === undefined) {
      throw new ObjectError(CODE.taken, `Another ${rows.kind} has the ${column} ${wanted}, and others each of ${suffixes[0]} to ${suffixes.at(-1)}`, column)
    }
    log.warn(CODE.renamed, `Another ${rows.kind} has the ${column} ${wanted}: this one's is ${free}`, column)
    return free
  }

  /**
   * The object's UID and code mapped to its row, where they are not: a new code, or one waiting unmapped
   * (-1). A code mapped to another row is left as it is, and so is every code where the requester may not
   * map codes (a user with a location responsibility only): each said in a warning.
   */
  private async mapKeys<R extends { id: number }>(rows: Catalogue<R>, object: { uid?: string; code?: string }, id: number, log: ObjectLog) {
    for (const key of new Set([object.uid, object.code])) {
      if (key === undefined) continue
      const mapping = rows.mapped.get(key)
      if (mapping?.master === id) continue
      if (mapping && rows.rows.has(mapping.master)) {
        // Which one is not said to a user with a location responsibility: it may lie outside her part.
        const which = this.user.restricted ? '' : ` (id ${mapping.master})`
        log.warn(CODE.mappedElsewhere, `The code ${key} is mapped to another ${rows.kind}${which}: left as it is`, 'code')
        continue
      }
      if (!this.doors.may('source_object_map', mapping ? 'PATCH' : 'POST')) {
        log.warn(CODE.notMapped, `The code ${key} is not mapped to it: only a superuser or a metadata editor maps codes`, 'code')
        continue
      }
      try {
        const written = mapping
          ? await this.doors.update('source_object_map', mapping.id, { master_object_id: id })
          : await this.doors.create('source_object_map', { content_type: rows.kind, source_object_code: key, master_object_id: id })
        this.stage(() => rows.mapped.set(key, { id: written.id as number, master: id }))
      } catch (error) {
        // Refused before anything was written (a location outside the part its requester may map): the object stands.
        if (!(error instanceof ApiError) || error.statusCode >= 500) throw error
        log.warn(CODE.notMapped, `The code ${key} is not mapped to it: ${error.message}`, 'code')
      }
    }
  }

  /** The units, parents first: each created, updated or left, its shape and keys with it. */
  async units(units: UnitIn[]) {
    const places = await placesOf(this.trx, units)
    const { parentIndex, existingParent } = this.parentsOf(units, places)
    // Where each unit of the payload is: its row, once imported or found (its children go under it).
    const placed = new Map<number, number>()
    for (const unit of parentsFirst(units, parentIndex)) {
      await this.object(KLASS.unit, unit, async (log) => {
        const matched = places.match(unit, this.options.identifier, !this.doors.may('source_object_map', 'POST'))
        if (matched !== undefined) {
          log.matched = true
          placed.set(unit.index, matched)
        }
        if (matched === undefined ? this.options.importStrategy === 'UPDATE' : this.options.importStrategy === 'CREATE') return 'ignored'
        let parent: number | null | undefined = existingParent.get(unit.index)
        const inPayload = parentIndex.get(unit.index)
        if (inPayload !== undefined) {
          parent = placed.get(inPayload)
          if (parent === undefined) throw new ObjectError(CODE.reference, `Its parent organisationUnits[${inPayload}] was not imported`, 'parent')
        }
        const written =
          matched === undefined ? await this.createUnit(places, unit, parent ?? null, log) : await this.updateUnit(places, unit, matched, parent, log)
        const shaped = unit.polygon ? await this.shape(written.id, unit.polygon) : false
        await this.mapKeys(places, unit, written.id, log)
        this.stage(() => placed.set(unit.index, written.id))
        return matched === undefined ? 'created' : written.changed || shaped ? 'updated' : 'ignored'
      })
    }
  }

  /**
   * Each unit's parent: among the payload's units (by index), or an existing location (its id); a 400
   * for one that is neither. A unit without a parent is a new root, or keeps its place.
   */
  private parentsOf(units: UnitIn[], places: Catalogue<PlaceRow>) {
    const byUid = new Map(units.filter((u) => u.uid !== undefined).map((u) => [u.uid!, u.index]))
    const byCode = new Map(units.filter((u) => u.code !== undefined).map((u) => [u.code!, u.index]))
    const parentIndex = new Map<number, number>()
    const existingParent = new Map<number, number | null>()
    const codeToo = this.options.identifier === 'CODE'
    for (const unit of units) {
      const ref = unit.parent
      if (!ref) continue
      const inPayload =
        (ref.id === undefined ? undefined : (byUid.get(ref.id) ?? (codeToo ? byCode.get(ref.id) : undefined))) ??
        (ref.code === undefined ? undefined : byCode.get(ref.code))
      if (inPayload !== undefined) {
        parentIndex.set(unit.index, inPayload)
        continue
      }
      const existing =
        (ref.id === undefined
          ? undefined
          : (places.byUid(ref.id, !this.doors.may('source_object_map', 'POST')) ?? (codeToo ? places.byCode(ref.id) : undefined))) ??
        (ref.code === undefined ? undefined : places.byCode(ref.code))
      if (existing === undefined) {
        throw badPayload(`organisationUnits[${unit.index}]: its parent ${ref.id ?? ref.code} is neither in the payload nor a known location`)
      }
      existingParent.set(unit.index, existing)
    }
    return { parentIndex, existingParent }
  }

  /** The admin level a unit is at: its DHIS2 level − 1, else one below its parent's (0 at the top). */
  private adminLevelOf(places: Catalogue<PlaceRow>, unit: UnitIn, parent: number | null): number {
    if (unit.level !== undefined) return unit.level - 1
    if (parent === null) return 0
    return (this.levelOfType.get(places.rows.get(parent)?.location_type_id ?? -1) ?? -1) + 1
  }

  private async createUnit(places: Catalogue<PlaceRow>, unit: UnitIn, parent: number | null, log: ObjectLog) {
    const code = unit.code ?? unit.uid!
    if (places.takenByOther('location_code', code)) {
      // Its UID names no row (one a user with a location responsibility imported has her codes unmapped).
      const hint = this.options.identifier === 'UID' && unit.code !== undefined ? ': identifier=AUTO matches it by its code' : ''
      throw new ObjectError(CODE.taken, `Another location has the code ${code}${hint}`, 'code')
    }
    const body = {
      name: this.freeName(places, 'name', unit.name, code, log),
      location_code: code,
      location_type_id: await this.typeAt(this.adminLevelOf(places, unit, parent)),
      parent_location_id: parent,
      ...(unit.point ? { longitude: unit.point[0], latitude: unit.point[1] } : {}),
    }
    const row = (await this.doors.create('location', body)) as unknown as PlaceRow
    this.stage(() => places.put(row))
    return { id: row.id, changed: true }
  }

  /** A matched unit's changes: its name, code, parent, level and point, as given (what it omits stays). */
  private async updateUnit(places: Catalogue<PlaceRow>, unit: UnitIn, id: number, parent: number | null | undefined, log: ObjectLog) {
    const row = places.rows.get(id)!
    const changes: Row = {}
    const code = unit.code ?? row.location_code
    if (code !== row.location_code) {
      if (places.takenByOther('location_code', code, id)) throw new ObjectError(CODE.taken, `Another location has the code ${code}`, 'code')
      changes.location_code = code
    }
    const name = this.freeName(places, 'name', unit.name, code, log, id)
    if (name !== row.name) changes.name = name
    if (parent !== undefined && parent !== row.parent_location_id) changes.parent_location_id = parent
    if (unit.level !== undefined) {
      const type = await this.typeAt(unit.level - 1)
      if (type !== row.location_type_id) changes.location_type_id = type
    }
    if (unit.point && (unit.point[0] !== row.longitude || unit.point[1] !== row.latitude)) {
      changes.longitude = unit.point[0]
      changes.latitude = unit.point[1]
    }
    if (!Object.keys(changes).length) return { id, changed: false }
    const updated = (await this.doors.update('location', id, changes)) as unknown as PlaceRow
    this.stage(() => places.put(updated))
    return { id, changed: true }
  }

  /** The location's polygon as given, written through the geo resource when it differs; whether it did. */
  private async shape(id: number, polygon: NonNullable<UnitIn['polygon']>): Promise<boolean> {
    const stored = await this.trx.selectFrom('location_polygon').select(['id', 'geo_json']).where('location_id', '=', id).executeTakeFirst()
    const geometry = { type: polygon.type, coordinates: polygon.coordinates }
    if (stored && canonical((stored.geo_json as Row | null)?.geometry) === canonical(geometry)) return false
    if (stored) await this.doors.update('geo', stored.id, { geo_json: geometry })
    else await this.doors.create('geo', { location_id: id, geo_json: geometry })
    return true
  }

  /** The data elements: each indicator created, updated or left, and its keys mapped. */
  async elements(elements: ElementIn[]) {
    const indicators = await indicatorsOf(this.trx, elements)
    for (const element of elements) {
      await this.object(KLASS.element, element, async (log) => {
        const format = FORMAT_OF[element.valueType]
        if (!format) {
          log.warn(CODE.valueType, `valueType ${element.valueType} has no data format here (numbers, percentages and booleans have): not imported`, 'valueType')
          return 'ignored'
        }
        const matched = indicators.match(element, this.options.identifier, !this.doors.may('source_object_map', 'POST'))
        log.matched = matched !== undefined
        if (matched === undefined ? this.options.importStrategy === 'UPDATE' : this.options.importStrategy === 'CREATE') return 'ignored'
        const code = element.code ?? element.uid!
        const wanted: Row = {
          name: this.freeName(indicators, 'name', element.name, code, log, matched),
          short_name: this.freeName(indicators, 'short_name', element.shortName, code, log, matched),
          data_format: format,
          ...(element.description === undefined ? {} : { description: element.description }),
        }
        let written: IndicatorRow | undefined
        if (matched === undefined) written = (await this.doors.create('indicator', wanted)) as unknown as IndicatorRow
        else {
          const row = indicators.rows.get(matched)!
          // A format DHIS2's value types do not name (a class, a date) is kept: a number would lose what it means.
          if (!(row.data_format in VALUE_TYPE_OF)) delete wanted.data_format
          const changes = Object.fromEntries(Object.entries(wanted).filter(([column, value]) => row[column as keyof IndicatorRow] !== value))
          if (Object.keys(changes).length) written = (await this.doors.update('indicator', matched, changes)) as unknown as IndicatorRow
        }
        if (written) this.stage(() => indicators.put(written))
        await this.mapKeys(indicators, element, matched ?? written!.id, log)
        return matched === undefined ? 'created' : written ? 'updated' : 'ignored'
      })
    }
  }

  report(ignoredTypes: string[]): { report: ImportReport; rollBack: boolean } {
    const logs = [...this.logs.values()]
    const errors = logs.some((l) => l.errors > 0)
    const rolledBack = errors && this.options.atomicMode === 'ALL'
    const typeReports = logs.map((l) => l.report(this.options.importReportMode, rolledBack))
    const stats: Stats = { created: 0, updated: 0, deleted: 0, ignored: 0, total: 0 }
    for (const { stats: s } of typeReports) for (const key of Object.keys(stats) as Array<keyof Stats>) stats[key] += s[key]
    const kept = stats.created + stats.updated > 0
    const status = errors ? (kept ? 'WARNING' : 'ERROR') : logs.some((l) => l.warnings > 0) ? 'WARNING' : 'OK'
    return {
      report: { importParams: { ...this.options, username: this.user.username }, status, typeReports, stats, ignoredTypes },
      rollBack: rolledBack || this.options.importMode === 'VALIDATE',
    }
  }
}

/**
 * Imports `payload` (DHIS2's metadata JSON, read by `readMetadataPayload`) as `user`, in one transaction:
 * levels, then units (parents before children, whatever the payload's order), then data elements.
 * VALIDATE, and an error with atomicMode ALL, roll it all back; the report says what was (or would be) done.
 */
export async function importMetadata(
  user: AuthUser,
  payload: MetadataPayload,
  options: MetadataImportOptions,
  transaction: MetadataTransaction,
): Promise<ImportReport> {
  try {
    return await transaction(async (trx, doors) => {
      const run = new MetadataImport(trx, doors, user, options)
      await run.loadTypes()
      // Each type present gets its report, even when it holds no object.
      for (const [objects, klass] of [
        [payload.levels, KLASS.level],
        [payload.units, KLASS.unit],
        [payload.elements, KLASS.element],
      ] as const) {
        if (objects) run.logs.set(klass, new TypeLog(klass))
      }
      if (payload.levels) await run.levels(payload.levels)
      if (payload.units) await run.units(payload.units)
      if (payload.elements) await run.elements(payload.elements)
      const { report, rollBack } = run.report(payload.ignoredTypes)
      if (rollBack) throw new RolledBack(report)
      return report
    })
  } catch (error) {
    if (error instanceof RolledBack) return error.report
    throw error
  }
}
