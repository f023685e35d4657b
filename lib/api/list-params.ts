// Reserved list parameters (resource-api §9): pagination, ordering, projection and format.
import { badRequest, invalidValue } from '../core/errors.js'
import { DEFAULT_LIMIT, MAX_LIMIT } from './crud.js'
import type { QueryParams } from './query-params.js'
import type { Resource } from './resource.js'

export const RESERVED = ['limit', 'offset', 'order_by', 'format', 'fields', 'shape', 'cascade'] as const

export interface ListParams {
  limit: number
  offset: number
  order: Array<{ field: string; desc: boolean }>
  fields: string[]
  format: 'json' | 'csv'
  shape: 'long' | 'wide'
}

function nonNegativeInteger(query: QueryParams, name: string, fallback: number): number {
  const text = query.last(name)
  if (text === undefined || text === '') return fallback
  if (!/^\d+$/.test(text)) throw invalidValue(name, text, 'a non-negative integer')
  return Number(text)
}

/** `declared`: the resource's own parameters as the route's validator typed them (an optional field's switch among them). */
export function parseListParams(resource: Resource, query: QueryParams, acceptsCsv: boolean, declared: Record<string, unknown> = {}): ListParams {
  const offset = nonNegativeInteger(query, 'offset', 0)

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

  const formatText = query.last('format')
  let format: ListParams['format'] = 'json'
  if (formatText !== undefined && formatText !== '') {
    if (formatText !== 'json' && formatText !== 'csv') throw invalidValue('format', formatText, 'json or csv')
    format = formatText
  } else if (acceptsCsv) format = 'csv'
  if (format === 'csv' && resource.kind !== 'model') throw invalidValue('format', 'csv', 'json (csv is for model resources)')

  // CSV without a limit exports everything up to max_limit (ingestion §10.1).
  let limit = nonNegativeInteger(query, 'limit', format === 'csv' ? MAX_LIMIT : DEFAULT_LIMIT)
  if (limit === 0 || limit > MAX_LIMIT) limit = MAX_LIMIT

  const shapeText = query.last('shape')
  let shape: ListParams['shape'] = 'long'
  if (shapeText !== undefined && shapeText !== '' && shapeText !== 'long') {
    if (shapeText !== 'wide' || !resource.hooks.wide) throw invalidValue('shape', shapeText, 'long')
    if (format !== 'csv') throw invalidValue('shape', shapeText, 'long (wide is a CSV export: add format=csv)')
    shape = 'wide'
  }
  return { limit, offset, order, fields, format, shape }
}

/** `meta.next` / `meta.previous`: the same request with another offset (§9). */
export function pageLink(urlName: string, query: QueryParams, limit: number, offset: number): string {
  const rest = query.without('limit', 'offset').toString()
  return `/api/v1/${urlName}/?${rest ? `${rest}&` : ''}limit=${limit}&offset=${offset}`
}
