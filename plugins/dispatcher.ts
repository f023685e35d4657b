// The one dispatcher of resource-api §3: every declaration in resources/ becomes its routes here
// (list, detail, schema; canonical name and aliases), all served by the same handler. What a step
// does lives in lib/api (request reading, list answers, the detail cache, the route schemas).
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify'
import fp from 'fastify-plugin'
import multipart from '@fastify/multipart'
import { ApiError } from '../lib/core/errors.js'
import { describeResource } from '../lib/api/schema-doc.js'
import { allowedMethods, documentOnly, queryValidation, routeSchema, type UrlKind } from '../lib/api/route-schemas.js'
import { answerList } from '../lib/api/list-answer.js'
import { DetailCache } from '../lib/api/detail-cache.js'
import { contextOf, effectiveMethod, parsePk } from '../lib/api/request.js'
import { answerWrite } from '../lib/api/write-answer.js'
import { ReadRouting, type ReadTarget } from '../lib/api/read-target.js'
import { serve } from '../lib/api/representation.js'
import { Transactions } from '../lib/api/transactions.js'
import type { Resource } from '../lib/api/resource.js'
import { assertMayCall } from '../lib/engine/access.js'
import { resources } from '../resources/index.js'
import { afterDelete, resourceOfTable } from '../resources/registry.js'
import { jobOf } from '../resources/jobs.js'
import jobResource from '../resources/job.js'

const ALL_METHODS = ['GET', 'POST', 'PATCH', 'DELETE', 'PUT'] as const

export default fp(
  async function dispatcher(app: FastifyInstance) {
    const details = new DetailCache(app.config.DETAIL_CACHE_BYTES)
    const unlisten = await details.listen(app.db)
    app.addHook('onClose', () => unlisten())
    // The services a request is handed to (lib/api): a write's transaction and what it makes stale, where a read goes.
    const transactions = new Transactions(app.db, [{ drop: () => app.dropAuthCache() }, details, app.readCache], app.replicas)
    const routing = new ReadRouting(app.db.db, app.replicas, app.db.standby)

    const context = (request: FastifyRequest, resource: Resource, urlName: string, db = app.db.db, params?: Record<string, unknown>) =>
      contextOf(request, resource, urlName, { db, config: app.config, jobs: app.jobs }, params)

    /** A list's services: the transactions, and the resource's background form when it has one (resources/jobs.ts). */
    const listDoors = (resource: Resource, job = jobOf(resource.name)) => ({ transactions, background: job && { declaration: job, jobResource } })

    /**
     * GET: a list or a detail, from memory when kept (lib/api/read-cache.ts, lib/api/detail-cache.ts),
     * else from a replica when there is one, the primary when it fails.
     */
    async function read(request: FastifyRequest, reply: FastifyReply, resource: Resource, urlName: string, kind: UrlKind) {
      const key = kind === 'list' ? app.readCache.keyOf(request, resource, urlName) : undefined
      // A hit leaves as it was kept (plugins/http-cache.ts sends the representation).
      const kept = key === undefined ? undefined : app.readCache.lookup(request, key)
      if (kept) return serve(reply, kept)
      const answer = (target: ReadTarget) => {
        const db = key === undefined || !target.keepable ? target.db : app.readCache.begin(request, key, target.db)
        // A list's declared parameters, as the route's validator typed them (lib/api/query.ts).
        const ctx = context(request, resource, urlName, db, kind === 'list' && resource.declares_query ? (request.query as Record<string, unknown>) : undefined)
        return kind === 'detail'
          ? details.send(ctx, parsePk(ctx, (request.params as { id: string }).id), reply)
          : answerList(ctx, request, reply, listDoors(resource))
      }
      const target = routing.targetOf(resource, kind === 'detail' && !resource.volatile, reply)
      try {
        return await answer(target)
      } catch (error) {
        const primary = routing.failOver(target, error, reply)
        if (!primary) throw error
        return answer(primary)
      }
    }

    async function handle(request: FastifyRequest, reply: FastifyReply, resource: Resource, urlName: string, kind: UrlKind) {
      const method = effectiveMethod(request)
      if (kind === 'detail' && resource.kind === 'non_model')
        throw new ApiError(404, 'NOT_FOUND', `No ${urlName} object found for id : ${(request.params as { id: string }).id}`)
      const allowed = allowedMethods(resource, kind)
      if (!(allowed as string[]).includes(method)) {
        throw new ApiError(405, 'METHOD_NOT_ALLOWED', `Method ${method} not allowed on ${request.url.split('?')[0]}`, undefined, { allow: allowed.join(', ') })
      }
      if (kind === 'schema') return describeResource(resource, resourceOfTable)
      assertMayCall(request.user!, resource, method)
      if (method === 'GET') return read(request, reply, resource, urlName, kind)

      const detailId = kind === 'detail' ? (request.params as { id: string }).id : undefined
      return answerWrite(context(request, resource, urlName), method, detailId, request, reply, { transactions, afterDelete })
    }

    await registerAll(app, handle)
  },
  // Encapsulated: its routes and hooks stay in its own context (the API's index is the service routes').
  { name: 'dispatcher', dependencies: ['db', 'auth', 'jobs', 'http-cache'], encapsulate: true },
)

type Handler = (request: FastifyRequest, reply: FastifyReply, resource: Resource, urlName: string, kind: UrlKind) => Promise<unknown>

/**
 * Every resource's routes. https://github.com/fastify/fastify-multipart serves the ones
 * that take files, in a context of their own: it adds three async hooks to each request of its context.
 */
async function registerAll(app: FastifyInstance, handle: Handler) {
  const { MAX_UPLOAD_BYTES } = app.config
  const takesFiles = resources.filter((r) => r.multipart)
  await app.register(async (uploads) => {
    await uploads.register(multipart, { attachFieldsToBody: true, limits: { fileSize: MAX_UPLOAD_BYTES, files: 2 } })
    registerRoutes(uploads, handle, takesFiles)
  })
  const others = resources.filter((r) => !takesFiles.includes(r))
  registerRoutes(app, handle, others)
}

/** The list, schema and detail URLs of `declared` under each of their names, documented where allowed. */
function registerRoutes(app: FastifyInstance, handle: Handler, declared: Resource[]) {
  for (const resource of declared) {
    for (const urlName of [resource.name, ...resource.aliases]) {
      const hide = urlName !== resource.name
      const kinds: Array<[UrlKind, string]> = [
        ['list', `/api/v1/${urlName}/`],
        ['schema', `/api/v1/${urlName}/schema/`],
        ['detail', `/api/v1/${urlName}/:id/`],
      ]
      for (const [kind, url] of kinds) {
        const handler = (request: FastifyRequest, reply: FastifyReply) => handle(request, reply, resource, urlName, kind)
        const documented = kind === 'detail' && resource.kind === 'non_model' ? [] : allowedMethods(resource, kind)
        for (const method of documented) {
          const bodyLimit = method !== 'GET' && resource.body_limit ? resource.body_limit(app.config) : undefined
          const validated = kind === 'list' && method === 'GET' && resource.declares_query
          app.route({
            method,
            url,
            handler,
            ...(validated ? queryValidation(resource, (request) => assertMayCall(request.user!, resource, 'GET')) : documentOnly),
            ...(bodyLimit ? { bodyLimit } : {}),
            schema: routeSchema(resource, kind, method, hide, jobOf(resource.name) && jobResource),
          } as RouteOptions)
        }
        const rest = ALL_METHODS.filter((m) => !(documented as string[]).includes(m))
        if (rest.length) app.route({ method: rest, url, handler, ...documentOnly, schema: { hide: true } } as RouteOptions)
      }
    }
  }
}
