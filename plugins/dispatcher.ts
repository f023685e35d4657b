// The one dispatcher of resource-api §3: every declaration in resources/ becomes its routes here
// (list, detail, schema; canonical name and aliases), all served by the same handler. What a step
// does lives in lib/api (request reading, list answers, the detail cache, the route schemas).
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify'
import fp from 'fastify-plugin'
import multipart, { type MultipartFile } from '@fastify/multipart'
import { discard, removeSpoolFolder, type Spooled, spoolStream } from '../lib/ingest/spool.js'
import { describeResource } from '../lib/api/schema-doc.js'
import { allowedMethods, routeSchema, type UrlKind } from '../lib/api/route-schemas.js'
import { admit, partsValidation, readersOf } from '../lib/api/route-validation.js'
import { answerList, answersJson } from '../lib/api/list-answer.js'
import { askedBy } from '../lib/api/read-service.js'
import { contextOf, effectiveMethod, spooledFiles } from '../lib/api/request.js'
import { answerWrite } from '../lib/api/write-answer.js'
import { serve } from '../lib/api/representation.js'
import type { Resource } from '../lib/api/resource.js'
import { resources } from '../resources/index.js'
import { afterDelete, resourceOfTable } from '../resources/registry.js'
import { jobOf } from '../resources/jobs.js'
import jobResource from '../resources/job.js'

const ALL_METHODS = ['GET', 'POST', 'PATCH', 'DELETE', 'PUT'] as const

export default fp(
  async function dispatcher(app: FastifyInstance) {
    const { reads, transactions } = app
    const context = (request: FastifyRequest, resource: Resource, urlName: string, db = app.db.db, params?: Record<string, unknown>) =>
      contextOf(request, resource, urlName, { db, config: app.config, jobs: app.jobs }, params)

    /**
     * GET: a detail or a JSON list page by the read service (lib/api/read-service.ts); a CSV export or an
     * action's job here, with the reply it streams to, from the read cache when kept.
     */
    async function read(request: FastifyRequest, reply: FastifyReply, resource: Resource, urlName: string, id: number | undefined) {
      // A list's declared parameters, as the route's validator typed them (lib/api/query.ts).
      const params = id === undefined && resource.declares_query ? (request.query as Record<string, unknown>) : undefined
      const asked = { ...askedBy(request, reply), params }
      if (id !== undefined) return serve(reply, await reads.detail(resource, urlName, id, asked))
      const services = reads.servicesOf(resource)
      if (answersJson(context(request, resource, urlName, app.db.db, params), request, services))
        return serve(reply, await reads.list(resource, urlName, asked))
      const key = app.readCache.keyOf(request, resource, urlName)
      // A hit leaves as it was kept (plugins/http-cache.ts sends the representation).
      const kept = key === undefined ? undefined : app.readCache.lookup(request, key)
      if (kept) return serve(reply, kept)
      return reads.routed(resource, false, reply, (db, keepable) => {
        const recorded = key === undefined || !keepable ? db : app.readCache.begin(request, key, db)
        return answerList(context(request, resource, urlName, recorded, params), request, reply, services)
      })
    }

    /** The route's answer, once `admit` let it through and Fastify read its id and declared query. */
    async function handle(request: DispatchedRequest, reply: FastifyReply, resource: Resource, urlName: string, kind: UrlKind) {
      const method = effectiveMethod(request)
      if (kind === 'schema') return describeResource(resource, resourceOfTable)
      const { id } = request.params
      if (method === 'GET') return read(request, reply, resource, urlName, id)
      return answerWrite(context(request, resource, urlName), method, id, request, reply, { transactions, afterDelete })
    }

    await registerAll(app, handle)
  },
  // Encapsulated: its routes and hooks stay in its own context (the API's index is the service routes').
  { name: 'dispatcher', dependencies: ['db', 'auth', 'jobs', 'http-cache', 'reads'], encapsulate: true },
)

/** A request of a resource's URLs: `:id` is in a detail URL only, read as the row's pk by the route's validator. */
type DispatchedRequest = FastifyRequest<{ Params: { id?: number } }>
type Handler = (request: DispatchedRequest, reply: FastifyReply, resource: Resource, urlName: string, kind: UrlKind) => Promise<unknown>

/**
 * Every resource's routes. https://github.com/fastify/fastify-multipart serves the ones
 * that take files, in a context of their own: it adds three async hooks to each request of its context.
 */
async function registerAll(app: FastifyInstance, handle: Handler) {
  const { MAX_UPLOAD_BYTES, DATA_DIR } = app.config
  const takesFiles = resources.filter((r) => r.multipart)
  await app.register(async (uploads) => {
    // A file part goes to a spool file as it arrives, never into memory whole; removed after the answer
    // unless the upload moved it into place.
    const onFile = async (part: MultipartFile) => {
      ;(part as MultipartFile & { spooled: Spooled }).spooled = await spoolStream(DATA_DIR, part.file, MAX_UPLOAD_BYTES)
    }
    // The user's uploads in progress are counted before a byte of the body is read: past the limit, 429.
    const gate = app.uploadGate
    gate.countIn(uploads)
    await uploads.register(multipart, { attachFieldsToBody: true, onFile, limits: { fileSize: MAX_UPLOAD_BYTES, files: 2 } })
    uploads.addHook('onResponse', async (request) => {
      await Promise.all(spooledFiles(request.body).map(discard))
    })
    uploads.addHook('onClose', () => removeSpoolFolder(DATA_DIR))
    registerRoutes(uploads, gate.holding(handle), takesFiles)
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
        const handler = (request: DispatchedRequest, reply: FastifyReply) => handle(request, reply, resource, urlName, kind)
        const documented = kind === 'detail' && resource.kind === 'non_model' ? [] : allowedMethods(resource, kind)
        const admitted = (request: FastifyRequest<{ Params: { id?: string } }>) => admit(request, resource, urlName, kind)
        for (const method of documented) {
          app.route({
            method,
            url,
            handler,
            ...partsValidation(readersOf(resource, urlName, kind, method), admitted),
            // A body too large for JSON is answered with where a file of that size goes (plugins/errors.ts).
            ...(resource.multipart && method !== 'GET' ? { config: { takesFiles: true } } : {}),
            schema: routeSchema(resource, kind, method, hide, jobOf(resource.name) && jobResource),
          } as RouteOptions)
        }
        const rest = ALL_METHODS.filter((m) => !(documented as string[]).includes(m))
        // A method override may make a POST a PATCH: the id is read as on the documented routes.
        const params = kind === 'detail' ? { params: { type: 'object', properties: { id: { type: 'integer' } } } } : {}
        const validation = partsValidation(readersOf(resource, urlName, kind, 'POST'), admitted)
        if (rest.length) app.route({ method: rest, url, handler, ...validation, schema: { hide: true, ...params } } as RouteOptions)
      }
    }
  }
}
