// The OpenAPI description of each dispatched route (its operationId, parameters, bodies and every
// answer it can give), built from the declarations; what Fastify reads of a request by them is in
// lib/api/route-validation.ts.
import { API_SECURITY, bodyContent, detailSchema, errorSchema, listSchema, querystringSchema, writeAnswerSchema } from './openapi.js'
import { helpOf, kindOf, type QuerySchema, WIRE_SCHEMA } from './query.js'
import type { Method, Resource } from './resource.js'

/** The three URLs of a resource: its list, one row, and its description. */
export type UrlKind = 'list' | 'detail' | 'schema'

/** The methods a resource's URL of `kind` answers. */
export const allowedMethods = (resource: Resource, kind: UrlKind): Method[] => (kind === 'schema' ? ['GET'] : resource.methods[kind])

/** OpenAPI's description of declared query parameters. */
export const querystringOf = (params: QuerySchema) => ({
  type: 'object',
  properties: Object.fromEntries(Object.entries(params).map(([name, schema]) => [name, { ...WIRE_SCHEMA[kindOf(schema)], description: helpOf(schema) }])),
})

/** `transform_upload` → `TransformUpload`: the resource's part of an operationId. */
const pascal = (name: string) =>
  name
    .split('_')
    .map((w) => w[0].toUpperCase() + w.slice(1))
    .join('')
const plural = (name: string) => (/(s|_meta)$/.test(name) ? name : name.endsWith('y') ? `${name.slice(0, -1)}ies` : `${name}s`)

/** The answers every route of the dispatcher may give besides its own (resource-api §7, SECURITY.md). */
function errorResponses(resource: Resource, method: Method) {
  const errors: Record<number, unknown> = {
    400: errorSchema,
    401: errorSchema,
    403: errorSchema,
    404: errorSchema,
    405: errorSchema,
    429: errorSchema,
    503: errorSchema,
  }
  if (method !== 'GET') Object.assign(errors, { 409: errorSchema, 413: errorSchema, 415: errorSchema })
  // Uploads refuse files they cannot read; the pipeline's actions the documents they cannot process;
  // writes that report checks, values a block rule refuses (docs/decisions.md, "Validation rules").
  if (resource.multipart || resource.kind === 'non_model') errors[422] = errorSchema
  if (method !== 'GET' && Object.keys(resource.write_fields).length) errors[422] = errorSchema
  return errors
}

/** Retried and conditional writes (docs/decisions.md, "Retried writes"): the request headers, by method. */
const IDEMPOTENCY_KEY = {
  type: 'string',
  description:
    'A key of the client\'s choosing (a quoted string, e.g. `"8e03978e-40d5-43e8"`): a repeat with the same key and body answers the first answer, with its status, and writes nothing again; the same key with another request is 422 `IDEMPOTENCY_KEY_REUSED`. Kept 24 hours per user; a refused write keeps nothing',
}
const IF_MATCH = {
  type: 'string',
  description: "The ETag of the row as read (its detail GET, or a write's answer): 412 with the current row when it changed since",
}
const IF_MATCH_NO_ROW = {
  type: 'string',
  description:
    'A create, or a delete of the rows matching a parameter, has no one row to compare with: only `*` holds, an entity tag is 412 (a POST naming an existing row by `id` compares it with that row)',
}
const ETAG = { etag: { type: 'string', description: "The row's entity tag, for If-Match" } }

/**
 * A GET of a retryable resource's row: its ETag. A write: If-Match on every resource (compared with the
 * row's version where it has one row as its target, `onRow`, else only `*` holds: 412 either way), and
 * where the resource takes retries, Idempotency-Key on POST and PATCH and the written row's ETag.
 */
function conditions(resource: Resource, method: Method, answer: number, response: Record<number, unknown>, onRow = false) {
  const retries = Boolean(resource.retryable_writes) && method !== 'DELETE'
  const withTag = { ...(response[answer] as Record<string, unknown>), headers: ETAG }
  if (method === 'GET') return resource.retryable_writes ? { response: { ...response, [answer]: withTag } } : {}
  const properties = { ...(retries ? { 'idempotency-key': IDEMPOTENCY_KEY } : {}), 'if-match': onRow ? IF_MATCH : IF_MATCH_NO_ROW }
  const failed = {
    412: {
      description: onRow ? 'If-Match named another version: `details.current` is the row now, with its ETag' : 'If-Match named an entity tag',
      ...(onRow ? { headers: ETAG } : {}),
      content: { 'application/json': { schema: errorSchema } },
    },
  }
  const success = retries ? { [answer]: withTag, 422: errorSchema } : {}
  return { headers: { type: 'object', properties }, response: { ...response, ...success, ...failed } }
}

/**
 * A route's schema. `background`: the job resource, when the resource also runs as a background job
 * (its detail is the 202 answer).
 */
export function routeSchema(resource: Resource, kind: UrlKind, method: Method, hide: boolean, background?: Resource) {
  const tags = [resource.name]
  const errors = errorResponses(resource, method)
  const name = pascal(resource.name)
  const base = { hide, tags, security: API_SECURITY }
  if (kind === 'schema') {
    return {
      ...base,
      operationId: `describe${name}`,
      summary: `Describe ${resource.name}`,
      response: { 200: { type: 'object', additionalProperties: true }, 401: errorSchema, 429: errorSchema, 503: errorSchema },
    }
  }
  if (kind === 'list') {
    if (method === 'GET') {
      const csv =
        resource.kind === 'model'
          ? { 'text/csv': { schema: { type: 'string', description: '`format=csv`: the rows as CSV (RFC 4180), a header line first' } } }
          : {}
      // Steps that also run in the background: `Prefer: respond-async` answers 202 with the job.
      const async = background
        ? {
            headers: {
              type: 'object',
              properties: { prefer: { type: 'string', description: '`respond-async` (RFC 7240): queue the step as a background job and answer 202 with it' } },
            },
            202: {
              description: 'Queued (or already queued or running for the same document or campaign): the job, at `Location`',
              headers: { location: { type: 'string', description: '/api/v1/job/<id>/' }, 'preference-applied': { type: 'string', enum: ['respond-async'] } },
              content: { 'application/json': { schema: detailSchema(background) } },
            },
          }
        : undefined
      return {
        ...base,
        operationId: resource.kind === 'model' ? `list${pascal(plural(resource.name))}` : `run${name}`,
        summary: resource.kind === 'model' ? `List ${resource.name}` : `Run ${resource.name}`,
        querystring: querystringSchema(resource),
        ...(async ? { headers: async.headers } : {}),
        response: {
          200: { content: { 'application/json': { schema: listSchema(resource) }, ...csv } },
          ...(async ? { 202: async[202] } : {}),
          ...errors,
        },
      }
    }
    if (method === 'POST') {
      // §11.3: a POST whose body names an existing row's id updates it (the original front-end's form), answering 200.
      const update = resource.methods.detail.includes('PATCH')
        ? {
            200: {
              description: 'The legacy update: the body named an existing row by `id`',
              content: { 'application/json': { schema: writeAnswerSchema(resource) } },
            },
          }
        : {}
      return {
        ...base,
        operationId: `create${name}`,
        summary: `Create ${resource.name}${update[200] ? ' (or update the row named by id)' : ''}`,
        body: bodyContent(resource, true),
        ...conditions(resource, method, 201, { ...update, 201: writeAnswerSchema(resource), ...errors }),
      }
    }
    const by = ['id', ...resource.list_delete_by]
    return {
      ...base,
      operationId: `delete${pascal(plural(resource.name))}Where`,
      summary: `Delete ${resource.name} by ?${by.join(' or ?')} (superuser)`,
      querystring: { type: 'object', properties: Object.fromEntries(by.map((f) => [f, { type: f === 'id' ? 'integer' : 'string' }])) },
      ...conditions(resource, method, 204, { 204: { type: 'null' }, ...errors }),
    }
  }
  const params = { type: 'object', properties: { id: { type: 'integer' } } }
  if (method === 'GET') {
    const response = { 200: detailSchema(resource), ...errors }
    return { ...base, operationId: `get${name}`, summary: `Read one ${resource.name}`, params, response, ...conditions(resource, method, 200, response) }
  }
  if (method === 'PATCH')
    return {
      ...base,
      operationId: `update${name}`,
      summary: `Update one ${resource.name}`,
      params,
      body: bodyContent(resource, false),
      ...conditions(resource, method, 200, { 200: writeAnswerSchema(resource), ...errors }, true),
    }
  return {
    ...base,
    operationId: `delete${name}`,
    summary: `Delete one ${resource.name} (superuser; ?cascade=true)`,
    params,
    ...conditions(resource, method, 204, { 204: { type: 'null' }, ...errors }, true),
  }
}
