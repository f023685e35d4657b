// The one dispatcher of resource-api §3: every declaration in resources/ becomes its routes here
// (list, detail, schema; canonical name and aliases), all served by the same handler. What a step
// does lives in lib/api (request reading, list answers, the detail cache, the route schemas).
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify'
import fp from 'fastify-plugin'
import multipart from '@fastify/multipart'
import { ApiError } from '../lib/core/errors.js'
import { describeResource } from '../lib/api/schema-doc.js'
import { allowedMethods, documentOnly, routeSchema, type UrlKind } from '../lib/api/route-schemas.js'
import { answerList } from '../lib/api/list-answer.js'
import { DetailCache } from '../lib/api/detail-cache.js'
import { contextOf, effectiveMethod, parsePk } from '../lib/api/request.js'
import { answerWrite } from '../lib/api/write-answer.js'
import { onReadTarget } from '../lib/api/read-target.js'
import { serve } from '../lib/api/representation.js'
import { submitJob } from '../lib/api/job-answer.js'
import type { Context, Resource } from '../lib/api/resource.js'
import { assertMayCall } from '../lib/engine/access.js'
import { resources } from '../resources/index.js'
import { afterDelete, resourceOfTable } from '../resources/registry.js'
import { jobOf } from '../resources/jobs.js'
import jobResource from '../resources/job.js'
import { DATA_CHANNEL } from '../lib/data/notified-cache.js'
import { attributedTransaction } from '../lib/data/attribution.js'

const ALL_METHODS = ['GET', 'POST', 'PATCH', 'DELETE', 'PUT'] as const
const WRITE_CONFIRM_MS = 2_000

export default fp(
  async function dispatcher(app: FastifyInstance) {
    const details = new DetailCache(app.config.DETAIL_CACHE_BYTES)
    const unlisten = await details.listen(app.db)
    app.addHook('onClose', () => unlisten())

    const context = (request: FastifyRequest, resource: Resource, urlName: string, db = app.db.db) =>
      contextOf(request, resource, urlName, { db, config: app.config, jobs: app.jobs })

    /**
     * Runs `work` in one transaction (§3 step 10). A write may change who a key authenticates as; the
     * caches are dropped before the response leaves, so the client's next request sees the change.
     */
    const inTransaction = async <T>(ctx: Context, work: (ctx: Context) => Promise<T>) => {
      const result = await attributedTransaction(app.db.db, { via: 'api', userId: ctx.user.id, requestId: ctx.requestId }, (trx) => work({ ...ctx, db: trx }))
      app.dropAuthCache()
      details.drop()
      app.readCache.drop()
      // Read-your-writes through any process: the answer leaves once every other server has dropped what
      // the change made stale (lib/data/notifications.ts; at most WRITE_CONFIRM_MS when one does not answer).
      // The change is committed whatever happens here: a failure to confirm is not the write's.
      await app.db.confirmHeard(DATA_CHANNEL, WRITE_CONFIRM_MS, { othersOnly: true }).catch(() => [])
      // Read-your-writes: the answer leaves once the replicas in use have the change (lib/data/replicas.ts).
      await app.replicas?.caughtUp()
      return result
    }

    /** The background form of a resource's action, when it has one (resources/jobs.ts). */
    const background = (resource: Resource, job = jobOf(resource.name)) =>
      job && ((ctx: Context, reply: FastifyReply) => submitJob(ctx, reply, job, jobResource, async () => app.replicas?.caughtUp()))

    /**
     * GET: a list or a detail, from memory when kept (lib/api/read-cache.ts, lib/api/detail-cache.ts),
     * else from a replica when there is one, the primary when it fails.
     */
    async function read(request: FastifyRequest, reply: FastifyReply, resource: Resource, urlName: string, kind: UrlKind) {
      const key = kind === 'list' ? app.readCache.keyOf(request, resource, urlName) : undefined
      // A hit leaves as it was kept (plugins/http-cache.ts sends the representation).
      const kept = key === undefined ? undefined : app.readCache.lookup(request, key)
      if (kept) return serve(reply, kept)
      const detail = kind === 'detail' && !resource.volatile
      return onReadTarget(app.replicas, app.db.db, resource, detail, reply, (db, keepable) => {
        const ctx = context(request, resource, urlName, key === undefined || !keepable ? db : app.readCache.begin(request, key, db))
        return kind === 'detail'
          ? details.send(ctx, parsePk(ctx, (request.params as { id: string }).id), reply)
          : answerList(ctx, request, reply, { inTransaction, background: background(resource) })
      })
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
      return answerWrite(context(request, resource, urlName), method, detailId, request, reply, { inTransaction, afterDelete })
    }

    await registerAll(app, handle)
  },
  { name: 'dispatcher', dependencies: ['db', 'auth', 'jobs', 'http-cache'] },
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
          app.route({
            method,
            url,
            handler,
            ...documentOnly,
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
