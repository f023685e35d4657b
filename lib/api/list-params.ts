// Reserved list parameters (resource-api §9): pagination, ordering, projection and format. Declared once,
// as LIST_PARAMS (lib/api/query.ts): `parseListParams` reads a request by it, and the OpenAPI document
// shows it (`listParamsOf`, lib/api/openapi.ts).
import type { Static } from 'typebox'
import { badRequest, invalidValue } from '../core/errors.js'
import { DEFAULT_LIMIT, LIST_PARAMS, MAX_LIMIT } from './query.js'
import type { QueryParams } from './query-params.js'
import type { Resource } from './resource.js'

type Format = Static<typeof LIST_PARAMS.format>
type Shape = Static<typeof LIST_PARAMS.shape>

export interface ListParams {
  limit: number
  offset: number
  order: Array<{ field: string; desc: boolean }>
  fields: string[]
  format: Format
  shape: Shape
}

/** The formats a resource's list answers in: a CSV export is a table's rows (model resources). */
export const formatsOf = (resource: Resource): Format[] => (resource.kind === 'model' ? LIST_PARAMS.format.enum : ['json'])

/** The shapes of its CSV export: wide is a pivot, made by a resource's `wide` hook. */
const shapesOf = (resource: Resource): Shape[] => (resource.hooks.wide ? LIST_PARAMS.shape.enum : ['long'])

/**
 * The list parameters of `resource`'s list GET, as its OpenAPI description shows them: LIST_PARAMS with
 * `format` and `shape` narrowed to what the resource answers (no `shape` where there is no choice).
 */
export function listParamsOf(resource: Resource) {
  const { format, shape, ...always } = LIST_PARAMS
  const shapes = shapesOf(resource)
  return { ...always, format: { ...format, enum: formatsOf(resource) }, ...(shapes.length > 1 ? { shape: { ...shape, enum: shapes } } : {}) }
}

/**
 * `limit` or `offset`: an integer of at least 0 (its schema's `minimum`), written in digits alone, and
 * one a double holds exactly (a larger offset would reach the database as another number, or overflow).
 */
function integerParam(query: QueryParams, name: 'limit' | 'offset', fallback: number): number {
  const text = query.last(name)
  if (text === undefined || text === '') return fallback
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(Number(text))) throw invalidValue(name, text, `a non-negative integer up to ${Number.MAX_SAFE_INTEGER}`)
  return Number(text)
}

/** The value of an enumerated parameter, or undefined when not given (empty means not given). */
function enumParam<T extends string>(query: QueryParams, name: 'format' | 'shape', values: readonly T[], expected: string): T | undefined {
  const text = query.last(name)
  if (text === undefined || text === '') return undefined
  if (!(values as readonly string[]).includes(text)) throw invalidValue(name, text, expected)
  return text as T
}

/** `declared`: the resource's own parameters as the route's validator typed them (an optional field's switch among them). */
export function parseListParams(resource: Resource, query: QueryParams, acceptsCsv: boolean, declared: Record<string, unknown> = {}): ListParams {
  const offset = integerParam(query, 'offset', 0)

  const order: ListParams['order'] = []
  const requested = query.list('order_by')
  for (const item of requested) {
    const desc = item.startsWith('-')
    const field = desc ? item.slice(1) : item
    if (!resource.query_fields.includes(field)) throw badRequest('INVALID_ORDER_BY', `Cannot order by '${field}'`)
    order.push({ field, desc })
  }
  if (!requested.length) {
    for (const item of resource.ordering) order.push({ field: item.replace(/^-/, ''), desc: item.startsWith('-') })
  }
  // `id` is always the last tie-breaker, so pages are stable.
  if ('id' in resource.columns && !order.some((o) => o.field === 'id')) order.push({ field: 'id', desc: false })

  let fields = resource.query_fields
  if (query.has('fields')) {
    fields = query.list('fields')
    for (const f of fields) if (!resource.query_fields.includes(f)) throw invalidValue('fields', f, 'a query field')
  }
  for (const [field, param] of Object.entries(resource.optional_fields)) {
    if (declared[param] === true && !fields.includes(field)) fields = [...fields, field]
  }

  const formats = LIST_PARAMS.format.enum
  const format = enumParam(query, 'format', formats, formats.join(' or ')) ?? (acceptsCsv ? 'csv' : 'json')
  if (!formatsOf(resource).includes(format)) throw invalidValue('format', format, 'json (csv is for model resources)')

  // CSV without a limit exports everything up to max_limit (ingestion §10.1).
  let limit = integerParam(query, 'limit', format === 'csv' ? MAX_LIMIT : DEFAULT_LIMIT)
  if (limit === 0 || limit > MAX_LIMIT) limit = MAX_LIMIT

  const shape = enumParam(query, 'shape', shapesOf(resource), 'long') ?? 'long'
  if (shape === 'wide' && format !== 'csv') throw invalidValue('shape', shape, 'long (wide is a CSV export: add format=csv)')
  return { limit, offset, order, fields, format, shape }
}

/** `meta.next` / `meta.previous`: the same request with another offset (resource-api §9). */
export function pageLink(urlName: string, query: QueryParams, limit: number, offset: number): string {
  const rest = query.without('limit', 'offset').toString()
  return `/api/v1/${urlName}/?${rest ? `${rest}&` : ''}limit=${limit}&offset=${offset}`
}
