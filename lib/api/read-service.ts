// The read service: a list page or a detail in JSON as a user sees it, with the routes' access rules,
// read cache and replica routing. The dispatcher's JSON GETs answer with it, and the reads made of
// other reads (a dashboard's data, a shared link, an export) call it as typed functions (`readsOf`):
// a resource by name, its parameters, objects back; no URL, no request through HTTP again.
import type { FastifyRequest } from 'fastify'
import type { Kysely } from 'kysely'
import type { DB } from '../../schemas/index.js'
import type { Config } from '../core/config.js'
import { ApiError } from '../core/errors.js'
import type { AuthUser } from '../data/auth.js'
import type { JobQueue } from '../data/job-queue.js'
import { assertMayCall } from '../engine/access.js'
import type { DetailCache } from './detail-cache.js'
import { JSON_TYPE, type ListServices, type ListEnvelope, listEnvelope, listObjects, listText } from './list-answer.js'
import type { ReadCache } from './read-cache.js'
import { type ReadReply, type ReadRouting, UNSENT } from './read-target.js'
import { QueryParams } from './query-params.js'
import { type Encoding, type Representation, representationOf } from './representation.js'
import { rawQueryOf } from './request.js'
import type { Context, Resource, Row } from './resource.js'

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

/** A list's page as objects: its rows and their meta (resource-api §9). */
export type ListPage = { objects: Row[]; meta: Row }

/**
 * Reads made inside the process as one reader, with the routes' access rules, read cache and replica
 * routing: objects, no URL. A client's mistake or a refusal is thrown as the route would answer it (a
 * 404 stays a 404, a 403 a 403).
 */
export interface Reads {
  /** Whose reads these are. */
  readonly user: AuthUser
  /** A list's page (any filters and parameters in `query`, as a URL's). */
  list(resource: string, query?: QueryParams): Promise<ListPage>
  /** One row's detail. */
  detail(resource: string, id: number): Promise<Row>
  /**
   * A read made of other reads (`compute`), kept under `name` in the read cache, for whoever sees the
   * rows of the resource named `scope` as this reader does, with `query` as the rest of its key; any change drops it.
   */
  composed<T extends object>(name: string, scope: string, query: QueryParams, compute: () => Promise<T>): Promise<T>
}

/** What a composed read answers: its bytes and the headers that describe them. */
export type Composed = { body: Buffer | string; headers: Record<string, string> }

export interface ReadServiceParts {
  config: Config
  jobs: JobQueue
  readCache: ReadCache
  details: DetailCache
  routing: ReadRouting
  /** A resource by any of its URL names. */
  resourceNamed: (name: string) => Resource | undefined
  /** The services a list's action uses (its transactions, its background form). */
  servicesOf: (resource: Resource) => ListServices
}

/** A kept answer takes both encodings when stored: a hit is never compressed again. */
const KEPT_ENCODINGS: Encoding[] = ['br', 'gzip']
const JSON_HEADERS = { 'content-type': JSON_TYPE }

export class ReadService {
  constructor(private readonly parts: ReadServiceParts) {}

  /** A list page in JSON (resource-api §9), from the read cache when kept. */
  async list(resource: Resource, urlName: string, asked: ReadAsked): Promise<Representation> {
    return (await this.#list(resource, urlName, asked)).representation
  }

  /** A list page as it leaves, and as read (its envelope) when it was read now rather than kept. */
  async #list(resource: Resource, urlName: string, asked: ReadAsked): Promise<{ representation: Representation; envelope?: ListEnvelope }> {
    const { readCache } = this.parts
    const params = asked.params ?? (resource.declares_query ? resource.readQuery(asked.query) : {})
    const key = readCache.keyFor(asked.user, resource, urlName, 'json', asked.query)
    const kept = key === undefined || asked.fresh ? undefined : readCache.get(key)
    if (kept) return { representation: kept }
    return this.routed(resource, false, asked.reply ?? UNSENT, async (db, keepable) => {
      const pending = key !== undefined && keepable ? readCache.start(key, db) : undefined
      const envelope = await listEnvelope(this.#context(resource, urlName, asked, pending?.db ?? db, params), this.parts.servicesOf(resource))
      const representation = await representationOf(Buffer.from(listText(envelope)), JSON_HEADERS, pending ? KEPT_ENCODINGS : [])
      if (pending) readCache.store(pending.read, representation)
      return { representation, envelope }
    })
  }

  /** One row's detail, from the detail cache when kept. */
  async detail(resource: Resource, urlName: string, pk: number, asked: ReadAsked): Promise<Representation> {
    if (resource.kind === 'non_model') throw new ApiError(404, 'NOT_FOUND', `No ${urlName} object found for id : ${pk}`)
    return this.routed(resource, !resource.volatile, asked.reply ?? UNSENT, (db) => this.parts.details.read(this.#context(resource, urlName, asked, db), pk))
  }

  /**
   * The reads of `user` inside the process (a composed read's, a shared link's, an export's);
   * `fresh`: computed afresh, the composing request's `Cache-Control: no-cache` reaching every read.
   */
  readsOf(user: AuthUser, { requestId, fresh = false }: { requestId?: string; fresh?: boolean } = {}): Reads {
    const asked = (query: QueryParams): ReadAsked => ({ user, query, requestId, fresh })
    const resourceOf = (name: string) => {
      const resource = this.parts.resourceNamed(name)
      if (!resource) throw new ApiError(404, 'UNKNOWN_RESOURCE', `Unknown resource: ${name}`)
      assertMayCall(user, resource, 'GET')
      return resource
    }
    return {
      user,
      list: async (name, query = QueryParams.of({})) => {
        const { representation, envelope } = await this.#list(resourceOf(name), name, asked(query))
        if (envelope) return listObjects(envelope)
        // A kept page is its bytes: parsed, which costs less than reading it again.
        const { objects, meta } = JSON.parse(representation.body.toString())
        return { objects, meta }
      },
      detail: async (name, id) => {
        const resource = resourceOf(name)
        if (resource.kind === 'non_model') throw new ApiError(404, 'NOT_FOUND', `No ${name} object found for id : ${id}`)
        const context = (db: Kysely<DB>) => this.#context(resource, name, asked(QueryParams.of({})), db)
        return this.routed(resource, !resource.volatile, UNSENT, (db) => this.parts.details.readObject(context(db), id))
      },
      composed: async (name, scope, query, compute) => {
        let computed: Awaited<ReturnType<typeof compute>> | undefined
        const representation = await this.composed(name, resourceOf(scope), asked(query), async () => {
          computed = await compute()
          return { body: JSON.stringify(computed), headers: JSON_HEADERS }
        })
        return computed ?? JSON.parse(representation.body.toString())
      },
    }
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
  servicesOf(resource: Resource): ListServices {
    return this.parts.servicesOf(resource)
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
