// What Fastify reads of a request in its validation step, before a handler runs: by a declaration's own
// readers (a resource's `:id` and declared query, a hand-written route's query or body: lib/api/query.ts),
// or by a route's TypeBox schemas (typeboxValidation). Checks that answer first (the method, the caller's
// access, the request's origin) run just before, so a 403 or 405 comes before a 400.
import type { FastifyRequest } from 'fastify'
import type { TSchema } from 'typebox'
import { Compile } from 'typebox/compile'
import { Value } from 'typebox/value'
import { ApiError, notFound } from '../core/errors.js'
import { assertMayCall } from '../engine/access.js'
import type { QueryParams } from './query-params.js'
import { effectiveMethod, parsePk, rawQueryOf } from './request.js'
import type { Resource } from './resource.js'
import { allowedMethods, querystringOf, type UrlKind } from './route-schemas.js'
import { queryReader, type QuerySchema } from './query.js'

/** A request part's first refusal by its schema: the keyword, the field as a path (`texts/1`; the part's name for all of it), its value, the keyword's parameters. */
export interface Refusal {
  keyword: string
  field: string
  value: unknown
  params: Record<string, unknown>
}

/** What TypeBox says of a refused value (its errors are shaped as Ajv's). */
interface Issue {
  keyword: string
  instancePath: string
  params: { requiredProperties?: string[] } & Record<string, unknown>
}

function refusalOf(issue: Issue, part: string, value: unknown): Refusal {
  const path = issue.instancePath.split('/').slice(1)
  const missing = issue.keyword === 'required' ? issue.params.requiredProperties?.[0] : undefined
  const at = path.reduce<unknown>((inner: unknown, key: string) => (inner as Record<string, unknown> | undefined)?.[key], value)
  const field = [...path, ...(missing === undefined ? [] : [missing])].join('/') || part
  return { keyword: issue.keyword, field, value: missing === undefined ? at : undefined, params: issue.params }
}

/**
 * Route options that validate each part by the route's TypeBox schemas, each compiled once: a body is
 * checked as sent, never coerced (a number is not a text; Fastify's Ajv would make it one); the first
 * refusal answers as `explain` words it.
 */
export function typeboxValidation(explain: (refusal: Refusal) => ApiError) {
  return { validatorCompiler: typeboxCompiler(explain) }
}

function typeboxCompiler(explain: (refusal: Refusal) => ApiError) {
  return ({ schema, httpPart }: { schema: unknown; httpPart?: string }) => {
    const check = Compile(schema as TSchema)
    return (value: unknown) => {
      const converted = httpPart === 'body' ? value : Value.Convert(schema as TSchema, value)
      if (check.Check(converted)) return { value: converted }
      const [first] = check.Errors(converted) as Issue[]
      return { error: explain(refusalOf(first, httpPart ?? 'body', converted)) }
    }
  }
}

/**
 * Route options of a GET whose query `read` reads before the handler runs, from the raw query in order
 * (repeated names kept), after `before` (the caller's access: a 403 comes before a 400, as on every
 * other route). The handler finds the parameters typed in `request.query`; a client's mistake leaves
 * as its 400.
 */
export const queryValidation = (read: (raw: QueryParams) => unknown, before?: (request: FastifyRequest) => void) =>
  partsValidation({ querystring: read }, before)

/**
 * Route options of a route whose body `read` reads before the handler runs (after `before`: a check
 * that answers first, as a request's origin). The handler finds the body typed; a client's mistake
 * leaves as its 400.
 */
export const bodyValidation = (read: (body: unknown) => unknown, before?: (request: FastifyRequest) => void) => partsValidation({ body: read }, before)

/**
 * The parts of a request a route's validator reads, each by its reader (a declaration's, not Ajv's): the
 * path's parameters as the router found them, the query as sent (names repeated, in order), the body as parsed.
 */
export interface PartReaders {
  params?: (path: Record<string, string>) => unknown
  querystring?: (raw: QueryParams) => unknown
  body?: (body: unknown) => unknown
}

/**
 * Route options that read the parts of a request named in `readers` in Fastify's validation step, after
 * `before` (checks that answer first: the method, the caller's access, the request's origin). A part
 * read by none is left as it came. A reader's ApiError is the answer (lib/core/errors.ts).
 */
export function partsValidation<Request extends FastifyRequest = FastifyRequest>(readers: PartReaders, before?: (request: Request) => void) {
  return {
    // A callback, not an async function: this runs on every list GET, cached answers included.
    preValidation: (request: Request, _reply: unknown, done: (error?: Error) => void) => {
      try {
        before?.(request)
        // The query as sent, names repeated and in order: what a declared query is read from.
        if (readers.querystring) request.query = rawQueryOf(request)
      } catch (error) {
        return done(error as Error)
      }
      done()
    },
    validatorCompiler: ({ httpPart }: { httpPart?: string }) => {
      const read = readers[httpPart as keyof PartReaders] as ((value: unknown) => unknown) | undefined
      if (!read) return (data: unknown) => ({ value: data })
      return (raw: unknown) => {
        try {
          return { value: read(raw) }
        } catch (error) {
          if (error instanceof ApiError) return { error }
          throw error
        }
      }
    },
  }
}

/**
 * What answers before a request's parts are read (a 404, 405 or 403 comes before a 400): a detail URL of
 * an action is no row, a method the URL does not answer is 405, and the caller may call the resource.
 */
export function admit(request: FastifyRequest<{ Params: { id?: string } }>, resource: Resource, urlName: string, kind: UrlKind) {
  const method = effectiveMethod(request)
  if (kind === 'detail' && resource.kind === 'non_model') {
    throw new ApiError(404, 'NOT_FOUND', `No ${urlName} object found for id : ${request.params.id}`)
  }
  const allowed = allowedMethods(resource, kind)
  if (!(allowed as string[]).includes(method)) {
    throw new ApiError(405, 'METHOD_NOT_ALLOWED', `Method ${method} not allowed on ${request.url.split('?')[0]}`, undefined, { allow: allowed.join(', ') })
  }
  if (kind !== 'schema') assertMayCall(request.user!, resource, method)
}

/**
 * What Fastify reads of a dispatched request (a resource's URL) before the handler: a detail URL's
 * `:id` as the pk (400 INVALID_ID, 404 beyond int32), a list GET's declared query. A write's body is
 * read by the handler, which holds the stored row its rules compare with (resource-api §11.1,
 * lib/api/body.ts).
 */
export function readersOf(resource: Resource, urlName: string, kind: UrlKind, method: string): PartReaders {
  const readers: PartReaders = {}
  if (kind === 'detail') readers.params = (path) => ({ id: parsePk(urlName, path.id) })
  if (kind === 'list' && method === 'GET' && resource.declares_query) readers.querystring = resource.readQuery
  return readers
}

/**
 * A hand-written GET's query, declared once as `params` (each a `Param`, lib/api/query.ts): its OpenAPI
 * description, and the route options that read it before the handler, typed as `QueryOf<typeof params>`,
 * as a resource's declared parameters are.
 */
export function routeQuery<P extends QuerySchema>(params: P) {
  const read = queryReader(params, { names: [], unlessId: false })
  return { querystring: querystringOf(params), read, validation: queryValidation(read) }
}

/** A path's `:id` read as a row's: digits within int32, else a 404 naming `resource` (what cannot be a row is none). */
export function rowIdOf(resource: string) {
  return (path: Record<string, string>) => {
    const text = path.id
    if (/^\d{1,10}$/.test(text) && Number(text) < 2 ** 31) return { id: Number(text) }
    throw notFound(resource, text)
  }
}
