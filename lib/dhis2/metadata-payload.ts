// DHIS2's metadata payload (`POST /api/metadata`) as an import reads it: organisation units (the
// location tree, with shapes), their levels (location types) and data elements (indicators), all read and
// checked before anything is written, so that a payload that cannot be read is a 400 naming where, never
// a half-done import; and the import's parameters, DHIS2's names and values, those this API does not
// honour refused. Apart from the import (metadata-import.ts): the plugin answers a bad request first.
import { ApiError, badRequest } from '../core/errors.js'

type Row = Record<string, unknown>

const CHOICES = {
  importMode: ['COMMIT', 'VALIDATE'],
  identifier: ['UID', 'CODE', 'AUTO'],
  importStrategy: ['CREATE_AND_UPDATE', 'CREATE', 'UPDATE'],
  atomicMode: ['ALL', 'NONE'],
  importReportMode: ['ERRORS', 'FULL', 'DEBUG'],
} as const

type Choices = typeof CHOICES
/** DHIS2's import parameters this API honours, each one of its values (the first is the default). */
export type MetadataImportOptions = { [K in keyof Choices]: Choices[K][number] }

/** What DHIS2 calls each type, as the payload's keys. */
const TYPES = { organisationUnitLevels: 'level', organisationUnits: 'unit', dataElements: 'element' } as const
/** Keys of an export that are not a type of objects (an export's header), never reported as ignored. */
const NOT_TYPES = new Set(['system', 'date'])

/** The import's options from its query, or a 400 naming the parameter and what it takes. */
export function metadataImportOptions(query: Record<string, string | undefined>): MetadataImportOptions {
  const options: Record<string, string> = {}
  for (const [name, values] of Object.entries(CHOICES) as Array<[keyof Choices, readonly string[]]>) {
    const raw = query[name]
    const value = raw === undefined || raw === '' ? values[0] : raw.toUpperCase()
    if (name === 'importStrategy' && value === 'DELETE') {
      throw badRequest(
        'INVALID_PARAMETER',
        'importStrategy DELETE is not honoured here: a superuser deletes locations and indicators through /api/v1 (DELETE /api/v1/location/<id>/), which names what depends on them first',
      )
    }
    if (!values.includes(value)) throw badRequest('INVALID_PARAMETER', `${name} ${raw}: one of ${values.join(', ')}`)
    options[name] = value
  }
  const dryRun = (query.dryRun ?? 'false').toLowerCase()
  if (dryRun !== 'true' && dryRun !== 'false') throw badRequest('INVALID_PARAMETER', `dryRun ${query.dryRun}: true or false`)
  if (dryRun === 'true') options.importMode = 'VALIDATE'
  if ((query.async ?? 'false').toLowerCase() !== 'false') throw badRequest('INVALID_PARAMETER', 'async: only false (the import answers when done)')
  return options as MetadataImportOptions
}

/** A reference to another object: by its UID, or by its code. */
export interface Ref {
  id?: string
  code?: string
}

interface Keyed {
  /** Its place in its list: DHIS2's object reports name it. */
  index: number
  uid?: string
  code?: string
  name: string
}

export interface LevelIn {
  index: number
  uid?: string
  level: number
  name: string
}

export interface UnitIn extends Keyed {
  parent?: Ref
  level?: number
  /** A Polygon or MultiPolygon geometry (its type and coordinates only). */
  polygon?: { type: string; coordinates: unknown[] }
  /** A Point's longitude and latitude. */
  point?: [number, number]
}

export interface ElementIn extends Keyed {
  shortName: string
  valueType: string
  description?: string
}

/** What an import reads of a payload: each type it knows, and the keys of those it does not. */
export interface MetadataPayload {
  levels?: LevelIn[]
  units?: UnitIn[]
  elements?: ElementIn[]
  ignoredTypes: string[]
}

export const badPayload = (message: string) => new ApiError(400, 'BAD_METADATA', message)
export const isObject = (value: unknown): value is Row => value !== null && typeof value === 'object' && !Array.isArray(value)

/** A field as text (a string or a number), trimmed; a 400 naming where for anything else or one too long. */
function text(object: Row, field: string, where: string, { required = false, max = 255 } = {}): string | undefined {
  const value = object[field]
  if (value === undefined || value === null || value === '') {
    if (required) throw badPayload(`${where}: ${field} is required`)
    return undefined
  }
  if (typeof value !== 'string' && typeof value !== 'number') throw badPayload(`${where}.${field}: a string is required`)
  const trimmed = String(value).trim()
  if (required && !trimmed) throw badPayload(`${where}: ${field} is required`)
  if (trimmed.length > max) throw badPayload(`${where}.${field}: at most ${max} characters`)
  // PostgreSQL's text holds no NUL: refused here, by name, rather than by the database.
  if (trimmed.includes('\u0000')) throw badPayload(`${where}.${field}: a NUL character (\\u0000) is not text`)
  return trimmed || undefined
}

/** A DHIS2 level: an integer from 1 (the top). */
function levelOf(object: Row, where: string, required: boolean): number | undefined {
  const value = object.level
  if (value === undefined || value === null) {
    if (required) throw badPayload(`${where}: level is required`)
    return undefined
  }
  if (!Number.isInteger(value) || (value as number) < 1 || (value as number) > 100) throw badPayload(`${where}.level: an integer from 1 (the top)`)
  return value as number
}

/** Whether `value` is GeoJSON coordinates `depth` arrays deep, positions of two or three numbers at the bottom. */
function coordinatesAt(value: unknown, depth: number): boolean {
  if (!Array.isArray(value)) return false
  if (depth === 0) return (value.length === 2 || value.length === 3) && value.every((n) => typeof n === 'number' && Number.isFinite(n))
  return value.length > 0 && value.every((v) => coordinatesAt(v, depth - 1))
}

/** Whether every position of `coordinates` (`depth` arrays deep) is a longitude within ±180 and a latitude within ±90. */
function onEarth(coordinates: unknown, depth: number): boolean {
  if (depth === 0) {
    const [longitude, latitude] = coordinates as number[]
    return Math.abs(longitude) <= 180 && Math.abs(latitude) <= 90
  }
  return (coordinates as unknown[]).every((inner) => onEarth(inner, depth - 1))
}

/** A unit's geometry: a Polygon or MultiPolygon (its shape), a Point (its coordinates), or none. */
function geometryOf(value: unknown, where: string): Pick<UnitIn, 'polygon' | 'point'> {
  if (value === undefined || value === null) return {}
  const problem = `${where}.geometry: a GeoJSON Polygon, MultiPolygon or Point is required`
  if (!isObject(value)) throw badPayload(problem)
  const { type, coordinates } = value
  if (type === 'Point') {
    if (!coordinatesAt(coordinates, 0)) throw badPayload(`${where}.geometry: a Point's coordinates are [longitude, latitude]`)
    if (!onEarth(coordinates, 0)) throw badPayload(`${where}.geometry: a Point's longitude and latitude are out of range`)
    const [longitude, latitude] = coordinates as number[]
    return { point: [longitude, latitude] }
  }
  const depth = type === 'Polygon' ? 2 : type === 'MultiPolygon' ? 3 : undefined
  if (depth === undefined || !coordinatesAt(coordinates, depth)) throw badPayload(problem)
  if (!onEarth(coordinates, depth)) throw badPayload(`${where}.geometry: a longitude or latitude is out of range (±180, ±90)`)
  return { polygon: { type: type as string, coordinates: coordinates as unknown[] } }
}

/** A parent reference: `{id}` (a UID) or `{code}`. */
function refOf(value: unknown, where: string): Ref | undefined {
  if (value === undefined || value === null) return undefined
  if (!isObject(value)) throw badPayload(`${where}.parent: an object with an id or a code is required`)
  const ref = { id: text(value, 'id', `${where}.parent`), code: text(value, 'code', `${where}.parent`) }
  if (!ref.id && !ref.code) throw badPayload(`${where}.parent: an id or a code is required`)
  return ref
}

/** The objects of one type: an array of objects, or a 400 saying where it is not. */
function listOf(body: Row, key: string): Row[] | undefined {
  const value = body[key]
  if (value === undefined || value === null) return undefined
  if (!Array.isArray(value)) throw badPayload(`${key}: an array of objects is required`)
  value.forEach((item, index) => {
    if (!isObject(item)) throw badPayload(`${key}[${index}]: an object is required`)
  })
  return value as Row[]
}

/**
 * Each id and code names one object of its list: the same one twice, or one object's id as another's
 * code (both would find one row, and the two would merge), is a 400 naming both places.
 */
function keysOnce(objects: Keyed[], key: string) {
  const named = new Map<string, { index: number; as: string }>()
  for (const object of objects) {
    for (const field of ['uid', 'code'] as const) {
      const value = object[field]
      if (value === undefined) continue
      const as = field === 'uid' ? 'id' : 'code'
      const first = named.get(value)
      if (first !== undefined && first.index !== object.index) {
        const which = first.as === as ? `have the same ${as} ${value}` : `name ${value}, as ${first.as} and as ${as}: one name for two objects`
        throw badPayload(`${key}[${first.index}] and ${key}[${object.index}] ${which}`)
      }
      named.set(value, { index: object.index, as })
    }
  }
  const nameless = objects.find((o) => o.uid === undefined && o.code === undefined)
  if (nameless) throw badPayload(`${key}[${nameless.index}]: an id or a code is required (the key it is found by when imported again)`)
}

/** The payload's objects, read and checked; a 400 naming the first thing that cannot be read. */
export function readMetadataPayload(body: unknown): MetadataPayload {
  if (!isObject(body))
    throw badPayload('The body must be a JSON object of metadata types (organisationUnits, dataElements, organisationUnitLevels), each an array')
  const payload: MetadataPayload = { ignoredTypes: Object.keys(body).filter((key) => !(key in TYPES) && !NOT_TYPES.has(key)) }
  const levels = listOf(body, 'organisationUnitLevels')
  if (levels) {
    payload.levels = levels.map((object, index) => {
      const where = `organisationUnitLevels[${index}]`
      return { index, uid: text(object, 'id', where), level: levelOf(object, where, true)!, name: text(object, 'name', where, { required: true, max: 55 })! }
    })
    const seen = new Set<number>()
    for (const level of payload.levels) {
      if (seen.has(level.level)) throw badPayload(`organisationUnitLevels[${level.index}]: level ${level.level} is given twice`)
      seen.add(level.level)
    }
  }
  const units = listOf(body, 'organisationUnits')
  if (units) {
    payload.units = units.map((object, index) => {
      const where = `organisationUnits[${index}]`
      return {
        index,
        uid: text(object, 'id', where),
        code: text(object, 'code', where),
        name: text(object, 'name', where, { required: true })!,
        parent: refOf(object.parent, where),
        level: levelOf(object, where, false),
        ...geometryOf(object.geometry, where),
      }
    })
    keysOnce(payload.units, 'organisationUnits')
  }
  const elements = listOf(body, 'dataElements')
  if (elements) {
    payload.elements = elements.map((object, index) => {
      const where = `dataElements[${index}]`
      const name = text(object, 'name', where, { required: true })!
      return {
        index,
        uid: text(object, 'id', where),
        code: text(object, 'code', where),
        name,
        shortName: text(object, 'shortName', where) ?? name,
        valueType: text(object, 'valueType', where, { required: true })!.toUpperCase(),
        description: text(object, 'description', where),
      }
    })
    keysOnce(payload.elements, 'dataElements')
  }
  return payload
}
