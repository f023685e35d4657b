// OpenAPI descriptions of each resource's routes, built from the same TypeBox table schemas.
// They document; they do not validate (the dispatcher coerces and validates bodies itself, with the
// rules of resource-api §11.1, from these same schemas).
import { Type, type TSchema } from '@sinclair/typebox'
import { COLUMN, type ColumnKind } from '../data/columns.js'
import { resolveField } from './filters.js'
import type { ParamSpec, Resource } from './resource.js'

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

/** A column's schema as the API shows it: no internal metadata, no database default (`now()`). */
function clean(schema: TSchema): Record<string, unknown> {
  const { [COLUMN]: _meta, default: _default, ...rest } = schema as Record<string, unknown>
  if (rest.nullable && !('type' in rest)) delete rest.nullable
  return rest
}

/** `nullable` needs a `type` beside it in OpenAPI 3.0; a JSON column's schema has none (any value, null too). */
const nullable = (schema: Record<string, unknown>) => ('type' in schema ? { ...schema, nullable: true } : schema)

/** The object shape of `fields` (query_fields names). */
export function objectSchema(resource: Resource, fields: string[]) {
  const properties: Record<string, unknown> = {}
  for (const name of fields) {
    const column = resource.schema?.properties[name]
    // A float that is not finite (NaN, ±Infinity) is written as null, as JSON.stringify writes it.
    if (column) properties[name] = resource.columns[name]?.kind === 'float' ? nullable(clean(column)) : clean(column)
    else {
      const info = resolveField(resource, name)
      properties[name] = info ? { ...nullable(KIND_SCHEMA[info.kind]() as Record<string, unknown>), readOnly: true } : {}
    }
  }
  for (const [name, kind] of Object.entries(resource.result_fields)) properties[name] = KIND_SCHEMA[kind]()
  // Every field listed is in every object (null where it has no value).
  return { type: 'object', properties, required: Object.keys(properties), additionalProperties: true }
}

/** A detail answer: the detail columns and the list's join and synthetic fields (lib/api/crud.ts `readDetail`). */
export function detailSchema(resource: Resource) {
  const derived = resource.query_fields.filter((f) => !(f in resource.columns) && !(f in resource.result_fields))
  return objectSchema(resource, [...new Set([...resource.detail_fields, ...derived])])
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

/** An upload's multipart form: the body's fields, `docfile` as a file part. */
export function multipartSchema(body: ReturnType<typeof bodySchema>) {
  return { ...body, properties: { ...body.properties, docfile: { type: 'string', format: 'binary' } } }
}

export function listSchema(resource: Resource) {
  return {
    type: 'object',
    properties: {
      objects: {
        type: 'array',
        items: resource.result_of
          ? detailSchema(resource.result_of)
          : resource.row_modes.length ? { anyOf: [objectSchema(resource, resource.query_fields), ...resource.row_modes] } : objectSchema(resource, resource.query_fields),
      },
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
          ...resource.meta_fields,
        },
        required: ['limit', 'offset', 'total_count', 'next', 'previous', 'get_params', 'top_lvl_location_id', ...Object.keys(resource.meta_fields).filter((f) => f !== 'chart_uuid')],
        additionalProperties: true,
      },
      error: { type: 'string', nullable: true },
    },
    required: ['objects', 'meta', 'error'],
  }
}

export function querystringSchema(resource: Resource) {
  const properties: Record<string, unknown> = {
    limit: { type: 'integer', minimum: 0, description: 'page size (default 1000, 0 = max 100000)' },
    offset: { type: 'integer', minimum: 0, description: 'rows to skip' },
    order_by: { type: 'string', description: 'field or -field, comma-separated' },
    fields: { type: 'string', description: 'comma-separated projection' },
    format: { type: 'string', enum: resource.kind === 'model' ? ['json', 'csv'] : ['json'] },
  }
  for (const [name, p] of Object.entries(resource.params)) properties[name] = { ...PARAM_SCHEMA[p.type], description: p.help }
  for (const name of resource.filtering) {
    if (name in properties) continue
    const kind = resolveField(resource, name)?.kind
    const typed = kind === 'integer' || kind === 'related' ? { type: 'integer' } : kind === 'float' ? { type: 'number' } : { type: 'string' }
    properties[name] = { ...typed, description: `filter; also ${name}__<lookup>` }
  }
  // A lookup by id stands in for the required parameters where the resource allows it.
  if (resource.required_unless_id) {
    for (const name of resource.GET_params_required) properties[name] = { ...(properties[name] as object), description: `${(properties[name] as { description?: string }).description ?? name}; required unless id or id__in is given` }
    return { type: 'object', properties }
  }
  return { type: 'object', properties, required: resource.GET_params_required }
}

const PARAM_SCHEMA: Record<ParamSpec['type'], Record<string, unknown>> = {
  integer: { type: 'integer' },
  integer_list: { type: 'string', pattern: '^\\s*-?\\d*(\\s*,\\s*-?\\d*)*\\s*$' },
  string: { type: 'string' },
  boolean: { type: 'string' },
  date: { type: 'string', pattern: '^\\d{4}-\\d{1,2}-\\d{1,2}$' },
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
