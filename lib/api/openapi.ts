// OpenAPI descriptions of each resource's routes, built from the same TypeBox table schemas.
// They document; they do not validate (the dispatcher coerces and validates bodies itself, with the
// rules of resource-api §11.1, from these same schemas).
import { Type, type TSchema } from '@sinclair/typebox'
import { COLUMN, type ColumnKind } from '../data/columns.js'
import { resolveField } from './filters.js'
import type { Resource } from './resource.js'

const KIND_SCHEMA: Record<ColumnKind, () => TSchema> = {
  integer: () => Type.Integer(),
  related: () => Type.Integer(),
  float: () => Type.Number(),
  string: () => Type.String(),
  boolean: () => Type.Boolean(),
  date: () => Type.String({ format: 'date' }),
  datetime: () => Type.String({ format: 'date-time' }),
  json: () => Type.Unknown(),
}

function clean(schema: TSchema): Record<string, unknown> {
  const { [COLUMN]: _meta, ...rest } = schema as Record<string, unknown>
  return rest
}

/** The object shape of `fields` (query_fields names). */
export function objectSchema(resource: Resource, fields: string[]) {
  const properties: Record<string, unknown> = {}
  for (const name of fields) {
    const column = resource.schema?.properties[name]
    if (column) properties[name] = clean(column)
    else {
      const info = resolveField(resource, name)
      properties[name] = info ? { ...KIND_SCHEMA[info.kind](), nullable: true, readOnly: true } : {}
    }
  }
  for (const [name, kind] of Object.entries(resource.result_fields)) properties[name] = KIND_SCHEMA[kind]()
  return { type: 'object', properties, additionalProperties: true }
}

export function detailSchema(resource: Resource) {
  return objectSchema(resource, [...new Set([...Object.keys(resource.columns), ...resource.query_fields])])
}

/** Request body: the writable columns, each optional (required_fields_for_post are listed). */
export function bodySchema(resource: Resource, create: boolean) {
  const properties: Record<string, unknown> = {}
  for (const [name, meta] of Object.entries(resource.columns)) {
    if (!meta.readonly) properties[name] = clean(resource.schema!.properties[name])
  }
  return {
    type: 'object',
    properties,
    ...(create && resource.required_fields_for_post.length ? { required: resource.required_fields_for_post } : {}),
  }
}

export function listSchema(resource: Resource) {
  return {
    type: 'object',
    properties: {
      objects: { type: 'array', items: objectSchema(resource, resource.query_fields) },
      meta: {
        type: 'object',
        properties: {
          limit: { type: 'integer' },
          offset: { type: 'integer' },
          total_count: { type: 'integer' },
          next: { type: 'string', nullable: true },
          previous: { type: 'string', nullable: true },
          get_params: { type: 'object', additionalProperties: { type: 'string' } },
          top_lvl_location_id: { type: 'integer', nullable: true },
        },
        additionalProperties: true,
      },
      error: { type: 'string', nullable: true },
    },
  }
}

export function querystringSchema(resource: Resource) {
  const properties: Record<string, unknown> = {
    limit: { type: 'string', description: 'page size (default 1000, 0 = max 100000)' },
    offset: { type: 'string', description: 'rows to skip' },
    order_by: { type: 'string', description: 'field or -field, comma-separated' },
    fields: { type: 'string', description: 'comma-separated projection' },
    format: { type: 'string', enum: resource.kind === 'model' ? ['json', 'csv'] : ['json'] },
  }
  for (const [name, p] of Object.entries(resource.params)) properties[name] = { type: 'string', description: p.help }
  for (const name of resource.filtering) {
    if (!(name in properties)) properties[name] = { type: 'string', description: `filter; also ${name}__<lookup>` }
  }
  return { type: 'object', properties, required: resource.GET_params_required }
}

export const errorSchema = {
  type: 'object',
  properties: {
    statusCode: { type: 'integer' },
    error: { type: 'string' },
    code: { type: 'string' },
    message: { type: 'string' },
    details: { type: 'object', additionalProperties: true },
    request_id: { type: 'string', description: 'The X-Request-Id of the request (also in the server log)' },
  },
}
