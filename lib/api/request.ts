// Reading a dispatched request: its effective method, its body's encoding and multipart parts, the
// detail id, and the Prefer and cascade parameters (resource-api §3, §11).
import type { FastifyRequest } from 'fastify'
import { ApiError, badRequest, invalidValue, notFound, validationError } from '../core/errors.js'
import { isInt32, parseBoolean } from '../core/values.js'
import { QueryParams } from './query-params.js'
import type { BodyEncoding, Context, Resource, Row } from './resource.js'
import type { Kysely } from 'kysely'
import type { DB } from '../../schemas/index.js'
import type { Config } from '../core/config.js'
import type { JobQueue } from '../data/job-queue.js'

/** DHIS2's own paths this API answers (plugins/dhis2.ts, plugins/dhis2-metadata.ts): authenticated and answered as the API's. */
const DHIS2_PATHS = ['/api/dataValueSets', '/api/dataValueSets.json', '/api/dataValueSets.csv', '/api/metadata', '/api/metadata.json']

/** Whether a URL is one of DHIS2's paths (where DHIS2's clients' HTTP Basic is also taken). */
export const isDhis2Path = (url: string) => DHIS2_PATHS.some((path) => url === path || url.startsWith(`${path}?`))

/** Whether a URL is the API's (authenticated, its errors as JSON): under /api/v1, or one of DHIS2's paths. */
export const isApiPath = (url: string) => url === '/api/v1' || url.startsWith('/api/v1/') || url.startsWith('/api/v1?') || isDhis2Path(url)

/**
 * The requester of one of DHIS2's paths, or a 401: authentication runs on the paths as written (above),
 * and the router also serves other spellings of them (a trailing or doubled slash, an escaped letter),
 * which arrive at their handlers unauthenticated.
 */
export function authenticatedUser(request: FastifyRequest) {
  if (!request.user) throw new ApiError(401, 'UNAUTHENTICATED', 'Authentication required')
  return request.user
}

/**
 * The method a request means: a POST may stand for PATCH or DELETE (`X-HTTP-Method-Override`), and a
 * HEAD is a GET whose body Fastify leaves out.
 */
export function effectiveMethod(request: FastifyRequest): string {
  if (request.method === 'HEAD') return 'GET'
  const override = request.headers['x-http-method-override']
  if (request.method === 'POST' && typeof override === 'string') {
    const method = override.toUpperCase()
    if (method === 'PATCH' || method === 'DELETE') return method
  }
  return request.method
}

/** JSON keeps types; form and multipart fields are strings (§11.1). */
export function encodingOf(request: FastifyRequest): BodyEncoding {
  const type = request.headers['content-type'] ?? ''
  return type.startsWith('application/x-www-form-urlencoded') || type.startsWith('multipart/form-data') ? 'form' : 'json'
}

interface MultipartPart {
  type: 'file' | 'field'
  fieldname: string
  filename?: string
  value?: unknown
  /** Where the part's bytes were written as they arrived (plugins/dispatcher.ts, lib/ingest/spool.ts). */
  spooled?: { path: string; size: number }
}

/** The spool files of a multipart body's file parts (removed after the answer, when still there). */
export function spooledFiles(body: unknown): string[] {
  const parts = Object.values((body ?? {}) as Record<string, MultipartPart | MultipartPart[]>).flat()
  return parts.flatMap((part) => (part?.type === 'file' && part.spooled ? [part.spooled.path] : []))
}

/** A multipart body as a plain object: text fields by value, file parts as {filename, path, size}. */
export function multipartBody(resource: Resource, request: FastifyRequest): Row | undefined {
  if (!(request.headers['content-type'] ?? '').startsWith('multipart/form-data')) return undefined
  if (!resource.multipart) {
    throw new ApiError(415, 'UNSUPPORTED_MEDIA_TYPE', 'Unsupported Media Type: multipart/form-data')
  }
  const body: Row = {}
  for (const [name, value] of Object.entries((request.body ?? {}) as Record<string, MultipartPart | MultipartPart[]>)) {
    const parts = Array.isArray(value) ? value : [value]
    const files = parts.filter((p) => p.type === 'file')
    if (files.length > 1) throw validationError(name, 'only one file part is allowed')
    const part = parts[parts.length - 1]
    body[name] = part.type === 'file' ? { filename: part.filename, ...part.spooled } : part.value
  }
  return body
}

/** `<pk>` on detail URLs: an integer, else 400; outside int32 it cannot exist (404). */
export function parsePk(urlName: string, text: string): number {
  if (!/^-?\d+$/.test(text)) throw badRequest('INVALID_ID', `Invalid id : ${text}`)
  const id = Number(text)
  if (!isInt32(id)) throw notFound(urlName, text)
  return id
}

/** Whether the request's `Prefer` header (RFC 7240) asks for `respond-async`. */
export function prefersAsync(request: FastifyRequest): boolean {
  const header = request.headers.prefer
  const values = Array.isArray(header) ? header : header ? [header] : []
  return values.some((value) => value.split(',').some((preference) => preference.split(/[;=]/)[0].trim().toLowerCase() === 'respond-async'))
}

/** `?cascade=` of a DELETE: a boolean, false when absent. */
export function parseCascade(query: QueryParams): boolean {
  const text = query.last('cascade')
  if (text === undefined || text === '') return false
  const value = parseBoolean(text)
  if (value === undefined) throw invalidValue('cascade', text, 'boolean')
  return value
}

const rawQueries = new WeakMap<FastifyRequest, QueryParams>()

/** The request's query string as (name, value) pairs in order, read once (400 for an encoding no value can hold). */
export function rawQueryOf(request: FastifyRequest): QueryParams {
  let query = rawQueries.get(request)
  if (!query) rawQueries.set(request, (query = QueryParams.fromUrl(request.url)))
  return query
}

/**
 * What a hook sees of a request: the requester, its query (raw, and the declared parameters as the
 * route's validator typed them: a list GET's), the resource as named in the URL, and where to read.
 */
export function contextOf(
  request: FastifyRequest,
  resource: Resource,
  urlName: string,
  app: { db: Kysely<DB>; config: Config; jobs: JobQueue },
  params: Record<string, unknown> = {},
): Context {
  return {
    db: app.db,
    user: request.user!,
    query: rawQueryOf(request),
    params,
    config: app.config,
    resource,
    urlName,
    jobs: app.jobs,
    requestId: request.id,
  }
}
