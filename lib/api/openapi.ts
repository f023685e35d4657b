// OpenAPI descriptions of each resource's routes, built from the same TypeBox table schemas. The
// answers' schemas also serialise (lib/api/answer-text.ts, Fastify's serializer); a write's body is
// coerced and checked by the dispatcher with the rules of resource-api §11.1, from these same schemas.
import { Type, type TSchema } from 'typebox'
import { COLUMN, Timestamp, type ColumnKind } from '../../schemas/columns.js'
import { resolveField } from './filters.js'
import type { Resource } from './resource.js'
import { aliasOf, helpOf, kindOf, WIRE_SCHEMA } from './query.js'
import { listParamsOf } from './list-params.js'

const KIND_SCHEMA: Record<ColumnKind, () => TSchema> = {
  integer: () => Type.Integer(),
  related: () => Type.Integer(),
  float: () => Type.Number(),
  string: () => Type.String(),
  boolean: () => Type.Boolean(),
  date: () => Type.String({ format: 'date' }),
  // Not `format: date-time`, which requires a zone: the API writes none (the seed's form).
  datetime: Timestamp,
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

/** The object shape of `fields` (query_fields names), with the result fields a list's objects carry. */
export function objectSchema(resource: Resource, fields: string[], { results = true, optional = true } = {}) {
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
  if (results) for (const [name, kind] of Object.entries(resource.result_fields)) properties[name] = resource.result_schemas[name] ?? KIND_SCHEMA[kind]()
  // Every field listed is in every object (null where it has no value); an optional one only when asked for.
  const required = Object.keys(properties)
  for (const [name, param] of optional ? Object.entries(resource.optional_fields) : []) {
    const info = resolveField(resource, name)
    if (info) properties[name] = { ...nullable(KIND_SCHEMA[info.kind]() as Record<string, unknown>), readOnly: true, description: `with ${param}=1` }
  }
  return { type: 'object', properties, required, additionalProperties: true }
}

/**
 * A detail answer: the detail columns and the list's join and synthetic fields (lib/api/crud.ts
 * `readDetail`); not the result fields a list hook shapes (geo's GeoJSON features).
 */
export function detailSchema(resource: Resource) {
  const derived = resource.query_fields.filter((f) => !(f in resource.columns) && !(f in resource.result_fields))
  return objectSchema(resource, [...new Set([...resource.detail_fields, ...derived])], { results: resource.kind !== 'model', optional: false })
}

/** A write's answer: the detail, and the fields the resource's writes add to it (`write_fields`, not always there). */
export function writeAnswerSchema(resource: Resource) {
  const detail = detailSchema(resource)
  return { ...detail, properties: { ...detail.properties, ...resource.write_fields } }
}

interface BodySchema {
  type: 'object'
  properties: Record<string, unknown>
  required?: string[]
  anyOf?: Array<{ required: string[] }>
}

/**
 * Request body: the writable columns, each optional. A create lists required_fields_for_post, or
 * names an existing row by `id` (§11.3, the legacy update: then nothing else is required).
 */
export function bodySchema(resource: Resource, create: boolean): BodySchema {
  const properties: Record<string, unknown> = {}
  if (create && resource.methods.detail.includes('PATCH')) {
    properties.id = { type: 'integer', description: "an existing row's id: the legacy update (answers 200); absent or -1: a new row" }
  }
  for (const [name, meta] of Object.entries(resource.columns)) {
    if (meta.readonly) continue
    // Timestamps are accepted with or without a zone (none means UTC), and written without one.
    properties[name] =
      meta.kind === 'datetime'
        ? { type: 'string', description: 'ISO 8601 date-time; no zone designator means UTC', ...(meta.nullable ? { nullable: true } : {}) }
        : clean(resource.schema!.properties[name])
  }
  for (const [name, field] of Object.entries(resource.write_only)) properties[name] = { ...field.schema, writeOnly: true }
  const required = create ? resource.required_fields_for_post : []
  if (!required.length) return { type: 'object', properties }
  return 'id' in properties ? { type: 'object', properties, anyOf: [{ required }, { required: ['id'] }] } : { type: 'object', properties, required }
}

/** A form's fields are text: each one a string (a JSON column's as JSON text), the same ones required. */
function formSchema(body: BodySchema): BodySchema {
  const properties = Object.fromEntries(Object.keys(body.properties).map((name) => [name, { type: 'string' }]))
  return { ...body, properties }
}

/** An upload's multipart form: the body's fields, `docfile` as a file part. */
function multipartSchema(body: BodySchema): BodySchema {
  return { ...formSchema(body), properties: { ...formSchema(body).properties, docfile: { type: 'string', format: 'binary' } } }
}

/** A write's body in every media type it is accepted in: JSON, a form, and multipart where uploads are. */
export function bodyContent(resource: Resource, create: boolean) {
  const body = bodySchema(resource, create)
  return {
    content: {
      'application/json': { schema: body },
      'application/x-www-form-urlencoded': { schema: formSchema(body) },
      ...(resource.multipart ? { 'multipart/form-data': { schema: multipartSchema(body) } } : {}),
    },
  }
}

export function listSchema(resource: Resource) {
  return {
    type: 'object',
    properties: {
      objects: {
        type: 'array',
        items: resource.result_of
          ? detailSchema(resource.result_of)
          : resource.row_modes.length
            ? { anyOf: [objectSchema(resource, resource.query_fields), ...resource.row_modes] }
            : objectSchema(resource, resource.query_fields),
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
        required: [
          'limit',
          'offset',
          'total_count',
          'next',
          'previous',
          'get_params',
          'top_lvl_location_id',
          ...Object.keys(resource.meta_fields).filter((f) => f !== 'chart_uuid'),
        ],
        additionalProperties: true,
      },
      error: { type: 'string', nullable: true },
    },
    required: ['objects', 'meta', 'error'],
  }
}

export function querystringSchema(resource: Resource) {
  const properties: Record<string, unknown> = { ...listParamsOf(resource) }
  for (const [name, p] of Object.entries(resource.params)) {
    properties[name] = { ...WIRE_SCHEMA[kindOf(p)], description: helpOf(p) }
    const alias = aliasOf(p)
    if (alias !== undefined) properties[alias] = { ...WIRE_SCHEMA[kindOf(p)], description: `alias of ${name}` }
  }
  for (const name of resource.filtering) {
    if (name in properties) continue
    const kind = resolveField(resource, name)?.kind
    const typed = kind === 'integer' || kind === 'related' ? { type: 'integer' } : kind === 'float' ? { type: 'number' } : { type: 'string' }
    properties[name] = { ...typed, description: `filter; also ${name}__<lookup>` }
  }
  // A lookup by id stands in for the required parameters where the resource allows it.
  if (resource.required_unless_id) {
    for (const name of resource.GET_params_required)
      properties[name] = {
        ...(properties[name] as object),
        description: `${(properties[name] as { description?: string }).description ?? name}; required unless id or id__in is given`,
      }
    return { type: 'object', properties }
  }
  return { type: 'object', properties, required: resource.GET_params_required }
}

/**
 * The error envelope of resource-api §7, one component (`#/components/schemas/Error`) that every
 * error response refers to (plugins/external.ts adds it). `details` only where a code has some.
 */
export const ERROR_ENVELOPE = {
  $id: 'Error',
  type: 'object',
  properties: {
    statusCode: { type: 'integer' },
    error: { type: 'string', description: "The status's reason phrase" },
    code: { type: 'string', description: 'What went wrong, for programs: VALIDATION_ERROR, NOT_FOUND…' },
    message: { type: 'string', description: 'What went wrong, for people, naming the field or parameter' },
    details: { type: 'object', additionalProperties: true },
    request_id: { type: 'string', description: 'The X-Request-Id of the request (also in the server log)' },
  },
  required: ['statusCode', 'error', 'code', 'message', 'request_id'],
}

export const errorSchema = { $ref: 'Error#' }

/** Every /api/v1 operation accepts an API key or a person's session cookie (plugins/session.ts). */
export const API_SECURITY: Array<Record<string, string[]>> = [{ apiKey: [] }, { sessionCookie: [] }]

type Paths = Record<string, unknown>

const pathRef = (path: string) => ({ $ref: `#/paths/${path.replaceAll('~', '~0').replaceAll('/', '~1')}` })

/**
 * The paths the server answers besides the canonical ones, as references to them (a validator
 * resolves a Path Item's `$ref`): every resource's original names (`custom_dashboard` for
 * `dashboard`…) and the form of every path without its trailing slash (the router ignores it).
 */
export function equivalentPaths(paths: Paths, aliases: Array<{ alias: string; canonical: string }>): Paths {
  const all: Paths = { ...paths }
  for (const { alias, canonical } of aliases) {
    const prefix = `/api/v1/${canonical}/`
    for (const path of Object.keys(paths)) {
      if (path.startsWith(prefix)) all[`/api/v1/${alias}/${path.slice(prefix.length)}`] ??= pathRef(path)
    }
  }
  for (const path of Object.keys(all)) {
    if (path.length < 2 || !path.endsWith('/')) continue
    const target = (all[path] as { $ref?: string }).$ref ? all[path] : pathRef(path)
    all[path.slice(0, -1)] ??= target
  }
  return all
}
