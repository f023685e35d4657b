// The read service: a list page or a detail in JSON as a user sees it, with the routes' access rules,
// read cache and replica routing. The dispatcher's JSON GETs answer with it, and the reads made of
// other reads (a dashboard's data, a shared link, an export) call it directly: no request goes through
// HTTP again, and an inner read holds the bytes the route would send.
import type { FastifyRequest } from 'fastify'
import type { Kysely } from 'kysely'
import type { DB } from '../../schemas/index.js'
import type { Config } from '../core/config.js'
import { ApiError } from '../core/errors.js'
import type { AuthUser } from '../data/auth.js'
import type { JobQueue } from '../data/job-queue.js'
import { assertMayCall } from '../engine/access.js'
import type { DetailCache } from './detail-cache.js'
import { toApiError } from './error-answer.js'
import { JSON_TYPE, type ListDoors, listText } from './list-answer.js'
import type { ReadCache } from './read-cache.js'
import { type ReadReply, type ReadRouting, UNSENT } from './read-target.js'
import { QueryParams } from './query-params.js'
import { type Encoding, type Representation, representationOf } from './representation.js'
import { parsePk, rawQueryOf } from './request.js'
import type { Context, Resource } from './resource.js'

/** Who reads, and how: what a route's request says of a read, or what a composing read passes on. */
export interface ReadAsked {
  user: AuthUser
  query: QueryParams
  /** A list's declared parameters as the route's validator typed them; read from `query` when absent. */
  params?: Record<string, unknown>
  /** The request's id (X-Request-Id), for the logs of what the read does. */
  requestId?: string
  /** `Cache-Control: no-cache`: computed afresh (RFC 9111 §5.2.1.4), and its answer kept. */
  fresh?: boolean
  /** Where the read says which database answered (`x-database`); nowhere for an inner read. */
  reply?: ReadReply
}

/** What a GET route's request asks of a read. */
export function askedBy(request: FastifyRequest, reply?: ReadReply): ReadAsked {
  const fresh = request.headers['cache-control']?.includes('no-cache') ?? false
  return { user: request.user!, query: rawQueryOf(request), requestId: request.id, fresh, reply }
}

/** An answer as sent: its status and its body's text (a reader in a worker thread parses it there). */
export type RawAnswer = { status: number; payload: string }
export type RawReader = (path: string) => Promise<RawAnswer>
/** An answer with its body parsed. */
export type Answer = { status: number; body: Record<string, unknown> }
export type Reader = (path: string) => Promise<Answer>

/** The body of a 200 read, else the read's own error (a 404 stays a 404, a 403 a 403). */
export async function bodyOf(read: Reader, path: string): Promise<Record<string, unknown>> {
  const { status, body } = await read(path)
  if (status === 200) return body
  throw new ApiError(status, String(body.code ?? 'READ_FAILED'), String(body.message ?? `${path}: ${status}`))
}

/** What a composed read answers: its bytes and the headers that describe them. */
export type Composed = { body: Buffer | string; headers: Record<string, string> }

/** A read answered by other reads at a path of its own (`/dashboard/:id/data/`), for the path reader. */
export type ComposedPath = (match: RegExpExecArray, asked: ReadAsked) => Promise<Representation>

export interface ReadServiceParts {
  config: Config
  jobs: JobQueue
  readCache: ReadCache
  details: DetailCache
  routing: ReadRouting
  /** A resource by any of its URL names. */
  resourceNamed: (name: string) => Resource | undefined
  /** The services a list's action uses (its transactions, its background form). */
  doorsOf: (resource: Resource) => ListDoors
}

/** A kept answer takes both encodings when stored: a hit is never compressed again. */
const KEPT_ENCODINGS: Encoding[] = ['br', 'gzip']
const JSON_HEADERS = { 'content-type': JSON_TYPE }

export class ReadService {
  readonly #paths: Array<[RegExp, ComposedPath]> = []

  constructor(private readonly parts: ReadServiceParts) {}

  /** A list page in JSON (resource-api §9), from the read cache when kept. */
  async list(resource: Resource, urlName: string, asked: ReadAsked): Promise<Representation> {
    const { readCache } = this.parts
    const params = asked.params ?? (resource.declares_query ? resource.readQuery(asked.query) : {})
    const key = readCache.keyFor(asked.user, resource, urlName, 'json', asked.query)
    const kept = key === undefined || asked.fresh ? undefined : readCache.get(key)
    if (kept) return kept
    return this.routed(resource, false, asked.reply ?? UNSENT, async (db, keepable) => {
      const pending = key !== undefined && keepable ? readCache.start(key, db) : undefined
      const text = await listText(this.#context(resource, urlName, asked, pending?.db ?? db, params), this.parts.doorsOf(resource))
      const representation = await representationOf(Buffer.from(text), JSON_HEADERS, pending ? KEPT_ENCODINGS : [])
      if (pending) readCache.store(pending.read, representation)
      return representation
    })
  }

  /** One row's detail (`id` as the URL spells it), from the detail cache when kept. */
  async detail(resource: Resource, urlName: string, id: string, asked: ReadAsked): Promise<Representation> {
    if (resource.kind === 'non_model') throw new ApiError(404, 'NOT_FOUND', `No ${urlName} object found for id : ${id}`)
    const pk = parsePk(urlName, id)
    return this.routed(resource, !resource.volatile, asked.reply ?? UNSENT, (db) => this.parts.details.read(this.#context(resource, urlName, asked, db), pk))
  }

  /**
   * A read made of other reads, kept under `name` for whoever sees `scope`'s rows as the reader does. It
   * names no table of its own: any change drops it.
   */
  async composed(name: string, scope: Resource, asked: ReadAsked, compute: () => Promise<Composed>): Promise<Representation> {
    const { readCache } = this.parts
    const key = readCache.keyOfComposed(asked.user, name, scope, asked.query)
    const kept = key === undefined || asked.fresh ? undefined : readCache.get(key)
    if (kept) return kept
    const pending = key === undefined ? undefined : readCache.start(key)
    const { body, headers } = await compute()
    const representation = await representationOf(Buffer.from(body), headers, pending ? KEPT_ENCODINGS : [])
    if (pending) readCache.store(pending.read, representation)
    return representation
  }

  /** The services a list's action uses (its transactions, its background form). */
  doorsOf(resource: Resource): ListDoors {
    return this.parts.doorsOf(resource)
  }

  /** Answers the paths `pattern` matches (under /api/v1, without the query) with `read`. */
  answerPath(pattern: RegExp, read: ComposedPath): void {
    this.#paths.push([pattern, read])
  }

  /**
   * Reads `path` (under /api/v1, with its query) as `user`: the answer's status and text, a client's
   * error as the route would answer it; `fresh`: computed afresh (the composing request's no-cache). A failure of the server's own is thrown, for the composing
   * request to answer (and log) as its own.
   */
  rawReader(user: AuthUser, requestId?: string, fresh = false): RawReader {
    return async (path) => {
      try {
        const representation = await this.#readPath(path, { user, query: QueryParams.fromUrl(path), requestId, fresh })
        return { status: 200, payload: representation.body.toString() }
      } catch (error) {
        const api = toApiError(error as Error, undefined, undefined, !user.restricted)
        if (api.statusCode >= 500) throw error
        return { status: api.statusCode, payload: JSON.stringify({ ...api.body(), request_id: requestId }) }
      }
    }
  }

  /** As `rawReader`, the body parsed. */
  reader(user: AuthUser, requestId?: string, fresh = false): Reader {
    const raw = this.rawReader(user, requestId, fresh)
    return async (path) => {
      const { status, payload } = await raw(path)
      return { status, body: JSON.parse(payload) }
    }
  }

  async #readPath(path: string, asked: ReadAsked): Promise<Representation> {
    const pathname = path.split('?')[0]
    for (const [pattern, read] of this.#paths) {
      const match = pattern.exec(pathname)
      if (match) return read(match, asked)
    }
    const [, name, id] = /^\/([^/]+)\/(?:([^/]+)\/)?$/.exec(pathname) ?? []
    const resource = name === undefined ? undefined : this.parts.resourceNamed(name)
    if (!resource) throw new ApiError(404, 'UNKNOWN_RESOURCE', `Unknown resource: ${name ?? pathname}`)
    assertMayCall(asked.user, resource, 'GET')
    return id === undefined ? this.list(resource, name, asked) : this.detail(resource, name, id, asked)
  }

  /**
   * A read of `resource` on the database routing chooses (lib/api/read-target.ts), again on the primary
   * when a replica fails under it; `keepable`: whether a cache may keep what is read there.
   */
  async routed<T>(resource: Resource, detail: boolean, reply: ReadReply, read: (db: Kysely<DB>, keepable: boolean) => Promise<T>): Promise<T> {
    const { routing } = this.parts
    const target = routing.targetOf(resource, detail, reply)
    try {
      return await read(target.db, target.keepable)
    } catch (error) {
      const primary = routing.failOver(target, error, reply)
      if (!primary) throw error
      return read(primary.db, primary.keepable)
    }
  }

  #context(resource: Resource, urlName: string, asked: ReadAsked, db: Kysely<DB>, params: Record<string, unknown> = {}): Context {
    const { config, jobs } = this.parts
    return { db, user: asked.user, query: asked.query, params, config, resource, urlName, jobs, requestId: asked.requestId }
  }
}
