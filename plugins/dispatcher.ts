// The one dispatcher of resource-api §3: every declaration in resources/ becomes its routes here
// (list, detail, schema; canonical name and aliases), all served by the same handler.
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify'
import fp from 'fastify-plugin'
import multipart from '@fastify/multipart'
import { ApiError, badRequest, invalidValue, isReplicaFailure, notFound, validationError } from '../lib/core/errors.js'
import { QueryParams } from '../lib/api/query-params.js'
import { parseListParams, pageLink, RESERVED } from '../lib/api/list-params.js'
import { createRow, deleteRow, deleteWhere, filteredQuery, listPage, listRows, MAX_LIMIT, readDetail, updateRow } from '../lib/api/crud.js'
import { parseFilters } from '../lib/api/filters.js'
import { EXPORT_PAGE, sendCsv, sendWideCsv } from '../lib/api/csv-export.js'
import { ensureObject } from '../lib/api/body.js'
import { describeResource } from '../lib/api/schema-doc.js'
import { bodyContent, detailSchema, errorSchema, listSchema, querystringSchema } from '../lib/api/openapi.js'
import { parseBoolean, parseInteger, isInt32 } from '../lib/core/values.js'
import { checkParams } from '../lib/api/params.js'
import type { BodyEncoding, Context, Method, Resource, Row } from '../lib/api/resource.js'
import { resources } from '../resources/index.js'
import { recomputeCampaign } from '../lib/engine/recompute.js'
import { NotifiedCache } from '../lib/data/notified-cache.js'
import { holdsRawJson, RawJson, stringifyWithRaw } from '../lib/core/raw-json.js'
import { assertMayDelete, assertMayWrite } from '../lib/engine/access.js'
import type { JobKind } from '../lib/data/job-queue.js'
import jobResource from '../resources/job.js'

type UrlKind = 'list' | 'detail' | 'schema'
const ALL_METHODS = ['GET', 'POST', 'PATCH', 'DELETE', 'PUT'] as const
const WRITES = new Set(['POST', 'PATCH', 'DELETE'])
// A bound on staleness should a change ever not notify (a table without the sql/004 trigger).
const DETAIL_CACHE_TTL_MS = 60_000
const DETAIL_CACHE_MAX_ENTRIES = 100_000

export const byName = new Map<string, Resource>()
for (const resource of resources) for (const name of [resource.name, ...resource.aliases]) byName.set(name, resource)
const byTable = new Map<string, Resource>()
for (const resource of resources) if (resource.table && !byTable.has(resource.table)) byTable.set(resource.table, resource)

export const resourceOfTable = (table: string) => byTable.get(table)?.name

function allowedMethods(resource: Resource, kind: UrlKind): Method[] {
  return kind === 'schema' ? ['GET'] : resource.methods[kind]
}

function effectiveMethod(request: FastifyRequest): string {
  const override = request.headers['x-http-method-override']
  if (request.method === 'POST' && typeof override === 'string') {
    const method = override.toUpperCase()
    if (method === 'PATCH' || method === 'DELETE') return method
  }
  return request.method
}

function encodingOf(request: FastifyRequest): BodyEncoding {
  const type = request.headers['content-type'] ?? ''
  return type.startsWith('application/x-www-form-urlencoded') || type.startsWith('multipart/form-data') ? 'form' : 'json'
}

interface MultipartPart {
  type: 'file' | 'field'
  fieldname: string
  filename?: string
  value?: unknown
  _buf?: Buffer
}

/** A multipart body as a plain object: text fields by value, file parts as {filename, data}. */
function multipartBody(resource: Resource, request: FastifyRequest): Row | undefined {
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
    body[name] = part.type === 'file' ? { filename: part.filename, data: part._buf ?? Buffer.alloc(0) } : part.value
  }
  return body
}

/** `<pk>` on detail URLs: an integer, else 400; outside int32 it cannot exist (404). */
function parsePk(ctx: Context, text: string): number {
  if (!/^-?\d+$/.test(text)) throw badRequest('INVALID_ID', `Invalid id : ${text}`)
  const id = Number(text)
  if (!isInt32(id)) throw notFound(ctx.urlName, text)
  return id
}

/** Whether the request's `Prefer` header (RFC 7240) asks for `respond-async`. */
export function prefersAsync(request: FastifyRequest): boolean {
  const header = request.headers.prefer
  const values = Array.isArray(header) ? header : header ? [header] : []
  return values.some((value) => value.split(',').some((preference) => preference.split(/[;=]/)[0].trim().toLowerCase() === 'respond-async'))
}

function parseCascade(query: QueryParams): boolean {
  const text = query.last('cascade')
  if (text === undefined || text === '') return false
  const value = parseBoolean(text)
  if (value === undefined) throw invalidValue('cascade', text, 'boolean')
  return value
}

export default fp(
  async function dispatcher(app: FastifyInstance) {
    // https://github.com/fastify/fastify-multipart — uploads only (resources that declare `multipart`).
    await app.register(multipart, { attachFieldsToBody: true, limits: { fileSize: app.config.MAX_UPLOAD_BYTES, files: 2 } })

    const context = (request: FastifyRequest, resource: Resource, urlName: string, db = app.db.db): Context => ({
      db,
      user: request.user!,
      query: QueryParams.fromUrl(request.url),
      config: app.config,
      resource,
      urlName,
      jobs: app.jobs,
    })

    /**
     * Runs `work` in one transaction (§3 step 10). A write may change who a key authenticates as; the
     * cache is dropped before the response leaves, so the client's next request sees the change.
     */
    const inTransaction = async <T>(ctx: Context, work: (ctx: Context) => Promise<T>) => {
      const result = await app.db.db.transaction().execute((trx) => work({ ...ctx, db: trx }))
      app.dropAuthCache()
      details.drop()
      // Read-your-writes: the answer leaves once the replicas in use have the change (lib/data/replicas.ts).
      await app.replicas?.caughtUp()
      return result
    }

    /**
     * Detail GETs answer from memory: the representation as sent, per resource, id and what the
     * requester may see. Any change to any table empties the cache (sql/004 notifies; this process's
     * own writes drop it before their response leaves), so a read never returns what a committed change
     * replaced once the notification has arrived (decisions.md, "Detail cache").
     */
    const details = new NotifiedCache<string>({
      name: 'detail',
      maxEntries: app.config.DETAIL_CACHE_BYTES > 0 ? DETAIL_CACHE_MAX_ENTRIES : 0,
      maxWeight: app.config.DETAIL_CACHE_BYTES,
      weigh: (json) => json.length,
      ttlMs: DETAIL_CACHE_TTL_MS,
    })
    const unlisten = await details.listen(app.db, 'rhizome_data')
    app.addHook('onClose', () => unlisten())
    const cachedDetail = async (ctx: Context, id: number, reply: FastifyReply) => {
      const { resource, user } = ctx
      if (resource.volatile) return readDetail(ctx, id)
      // What a requester may see of a row can depend on who they are (lib/engine/access.ts): a user whose
      // rows are limited gets entries of their own.
      const scope = user.is_superuser || (!user.restricted && !resource.row_filter) ? 'all' : `user ${user.id}`
      const json = await details.remember(`${resource.name} ${id} ${scope}`, async () => JSON.stringify(await readDetail(ctx, id)))
      return reply.type('application/json; charset=utf-8').send(json)
    }

    /**
     * afterDelete hooks of whichever resource owns a table that lost rows; and campaigns that lost raw
     * datapoints are recomputed, still in the same transaction (resource-api §11.5).
     */
    const afterDelete = (ctx: Context) => async (table: string, rows: Row[]) => {
      for (const resource of resources) {
        if (resource.table === table && resource.hooks.afterDelete) await resource.hooks.afterDelete({ ...ctx, resource }, rows)
      }
      if (table === 'datapoint') {
        const campaigns = new Set(rows.map((r) => r.campaign_id).filter((c): c is number => typeof c === 'number'))
        for (const campaign of campaigns) await recomputeCampaign(ctx.db as never, campaign)
      }
    }

    async function list(ctx: Context, request: FastifyRequest, reply: FastifyReply) {
      const { resource, query } = ctx
      const byId = resource.required_unless_id && (query.has('id') || query.has('id__in'))
      const missing = byId ? [] : resource.GET_params_required.filter((p) => !query.has(p))
      if (missing.length) {
        throw new ApiError(400, 'MISSING_REQUIRED_PARAMETER', `Missing required parameter ${missing.join(', ')}`, { missing })
      }
      checkParams(resource, query)
      const accept = request.headers.accept ?? ''
      const params = parseListParams(resource, query, accept.includes('text/csv') && !accept.includes('application/json'))
      const filters: Array<[string, string[]]> = []
      for (const name of query.names()) {
        if ((RESERVED as readonly string[]).includes(name) || name in resource.params) continue
        if (resource.kind === 'non_model') throw badRequest('UNKNOWN_FILTER', `The '${name}' field does not allow filtering.`)
        filters.push([name, query.all(name)])
      }

      if (params.format === 'csv' && resource.hooks.csv) {
        const { header, rows } = await resource.hooks.csv(ctx)
        return sendCsv(reply, ctx.urlName, header, rows.length, rows)
      }
      if (params.shape === 'wide') {
        // §10.2: the pivot of up to max_limit long rows, whatever limit/offset say.
        return sendWideCsv(reply, ctx.urlName, await resource.hooks.wide!(ctx, filteredQuery(ctx, parseFilters(resource, filters, { secrets: ctx.user.is_superuser }))))
      }
      if (params.format === 'csv') {
        if (resource.kind === 'non_model') {
          const rows = await inTransaction(ctx, resource.action!)
          return sendCsv(reply, ctx.urlName, params.fields, rows.length, rows.map((r) => params.fields.map((f) => r[f])))
        }
        const first = await listRows(ctx, { ...params, limit: Math.min(params.limit, EXPORT_PAGE), filters })
        const columns = first.fields ?? params.fields
        const cells = (rows: Row[]) => rows.map((r) => columns.map((f) => r[f]))
        const read = async (offset: number, limit: number) => cells((await listRows(ctx, { ...params, offset, limit, filters })).rows)
        return sendCsv(reply, ctx.urlName, columns, first.total, cells(first.rows), read, { offset: params.offset, count: params.limit })
      }
      let objects: Row[] | RawJson
      let total: number
      let extras: Row = {}
      if (resource.job_params && prefersAsync(request)) return submitJob(ctx, reply)
      if (resource.kind === 'non_model') {
        objects = await inTransaction(ctx, resource.action!)
        total = objects.length
      } else {
        const page = await listPage(ctx, { ...params, limit: Math.min(params.limit, MAX_LIMIT), filters })
        ;({ total, meta: extras } = page)
        objects = 'json' in page ? page.json : page.rows
      }
      const { limit, offset } = params
      const envelope = {
        objects,
        meta: {
          limit,
          offset,
          total_count: total,
          next: offset + limit < total ? pageLink(ctx.urlName, query, limit, offset + limit) : null,
          previous: offset > 0 ? pageLink(ctx.urlName, query, limit, Math.max(0, offset - limit)) : null,
          get_params: query.lastValues(),
          top_lvl_location_id: ctx.user.top_lvl_location_id,
          ...extras,
        },
        error: null,
      }
      if (!(envelope.objects instanceof RawJson) && !holdsRawJson(envelope.meta)) return envelope
      return reply.type('application/json; charset=utf-8').send(stringifyWithRaw(envelope))
    }

    /**
     * The asynchronous form of an action (RFC 7240 `Prefer: respond-async`): checked as the action
     * would be, queued, answered 202 with the job (the one already queued or running for the same
     * document or campaign, if there is one).
     */
    async function submitJob(ctx: Context, reply: FastifyReply) {
      const params = await ctx.resource.job_params!(ctx)
      const { id } = await app.db.db.transaction().execute((trx) => app.jobs.submit(trx, ctx.resource.name as JobKind, params, ctx.user.id))
      app.jobs.wake()
      await app.replicas?.caughtUp()
      const job = await app.db.db.selectFrom('job_state').select(jobResource.detail_fields as never[]).where('id', '=', id).executeTakeFirstOrThrow()
      return reply.code(202).header('location', `/api/v1/job/${id}/`).header('preference-applied', 'respond-async').send(job)
    }

    async function handle(request: FastifyRequest, reply: FastifyReply, resource: Resource, urlName: string, kind: UrlKind) {
      const method = effectiveMethod(request)
      // Reads that change nothing go to a replica when there are any (lib/data/replicas.ts); a detail
      // the cache may keep only to one that has replayed every change notified so far.
      const readsOnly = method === 'GET' && kind !== 'schema' && resource.kind === 'model'
      const target = readsOnly && app.replicas ? (kind === 'detail' && !resource.volatile ? app.replicas.cacheableRead() : app.replicas.read()) : undefined
      if (target) reply.header('x-database', target.name)
      const ctx = context(request, resource, urlName, target?.db)
      if (kind === 'detail' && resource.kind === 'non_model') {
        throw new ApiError(404, 'NOT_FOUND', `No ${urlName} object found for id : ${(request.params as Row).id}`)
      }
      const allowed = allowedMethods(resource, kind)
      if (!(allowed as string[]).includes(method)) {
        throw new ApiError(405, 'METHOD_NOT_ALLOWED', `Method ${method} not allowed on ${request.url.split('?')[0]}`, undefined, {
          allow: allowed.join(', '),
        })
      }
      const user = request.user!
      if (kind === 'schema') return describeResource(resource, resourceOfTable)
      if (method === 'DELETE') assertMayDelete(user, resource)
      if (WRITES.has(method)) assertMayWrite(user, resource, 'modify')
      else if (resource.kind === 'non_model') assertMayWrite(user, resource, 'run')

      const id = kind === 'detail' ? parsePk(ctx, (request.params as { id: string }).id) : undefined
      const encoding = encodingOf(request)
      switch (method) {
        case 'GET': {
          const read = (c: Context) => (id === undefined ? list(c, request, reply) : cachedDetail(c, id, reply))
          if (!target || target.name === 'primary') return read(ctx)
          try {
            return await read(ctx)
          } catch (error) {
            // A replica that went down (or conflicts with its recovery): the primary answers instead.
            if (reply.sent || !isReplicaFailure(error)) throw error
            app.replicas!.drop(target.name)
            reply.header('x-database', 'primary')
            return read({ ...ctx, db: app.db.db })
          }
        }
        case 'POST': {
          const body = multipartBody(resource, request) ?? ensureObject(request.body)
          const legacyId = body.id
          if (legacyId !== undefined && legacyId !== null && legacyId !== '' && String(legacyId) !== '-1') {
            // §11.3: POST with a usable id is the legacy update.
            const pk = parseInteger(String(legacyId))
            if (pk === undefined) throw invalidValue('id', legacyId, 'integer')
            if (!isInt32(pk)) throw notFound(urlName, legacyId)
            return inTransaction(ctx, (c) => updateRow(c, pk, { ...body, id: undefined }, encoding))
          }
          const created = await inTransaction(ctx, (c) => createRow(c, { ...body, id: undefined }, encoding))
          return reply.code(201).header('location', `/api/v1/${urlName}/${created.id}/`).send(created)
        }
        case 'PATCH':
          return inTransaction(ctx, (c) => updateRow(c, id!, ensureObject(request.body), encoding))
        case 'DELETE': {
          const cascade = parseCascade(ctx.query)
          const legacy = ctx.query.last('id')
          if (id !== undefined || (legacy !== undefined && legacy !== '')) {
            const pk = id ?? parsePk(ctx, legacy!)
            await inTransaction(ctx, (c) => deleteRow(c, pk, cascade, afterDelete(c)))
            return reply.code(204).send()
          }
          const by = resource.list_delete_by.find((f) => ctx.query.has(f))
          if (!by) throw badRequest('LIST_DELETE_NOT_ALLOWED', 'Must Delete by ID only')
          await inTransaction(ctx, async (c) => afterDelete(c)(resource.table!, await deleteWhere(c, by, c.query.last(by)!)))
          return reply.code(204).send()
        }
      }
      throw new Error(`unreachable method ${method}`)
    }

    // Schemas document the routes; the dispatcher validates bodies and queries itself (§11.1, §8).
    const documentOnly = {
      validatorCompiler: () => (data: unknown) => ({ value: data }),
      serializerCompiler: () => (data: unknown) => JSON.stringify(data),
    }

    for (const resource of resources) {
      for (const urlName of [resource.name, ...resource.aliases]) {
        const hide = urlName !== resource.name
        const tags = [resource.name]
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
            app.route({ method, url, handler, ...documentOnly, ...(bodyLimit ? { bodyLimit } : {}), schema: routeSchema(resource, kind, method, hide, tags) } as RouteOptions)
          }
          const rest = ALL_METHODS.filter((m) => !(documented as string[]).includes(m))
          if (rest.length) app.route({ method: rest, url, handler, ...documentOnly, schema: { hide: true } } as RouteOptions)
        }
      }
    }

    app.get('/api/v1/', { schema: { tags: ['api'], operationId: 'listResources', summary: 'Every resource with its list and schema URLs', security: [{ apiKey: [] }], response: { 401: errorSchema } } }, async () => {
      const names = resources.map((r) => r.name).sort()
      return Object.fromEntries(names.map((n) => [n, { list_endpoint: `/api/v1/${n}/`, schema: `/api/v1/${n}/schema/` }]))
    })
  },
  { name: 'dispatcher', dependencies: ['db', 'auth', 'jobs'] },
)

/** `transform_upload` → `TransformUpload`: the resource's part of an operationId. */
const pascal = (name: string) => name.split('_').map((w) => w[0].toUpperCase() + w.slice(1)).join('')
const plural = (name: string) => (/(s|_meta)$/.test(name) ? name : name.endsWith('y') ? `${name.slice(0, -1)}ies` : `${name}s`)

/** The answers every route of the dispatcher may give besides its own (resource-api §7, SECURITY.md). */
function errorResponses(resource: Resource, method: Method) {
  const errors: Record<number, unknown> = { 400: errorSchema, 401: errorSchema, 403: errorSchema, 404: errorSchema, 405: errorSchema, 429: errorSchema, 503: errorSchema }
  if (method !== 'GET') Object.assign(errors, { 409: errorSchema, 413: errorSchema, 415: errorSchema })
  // Uploads refuse files they cannot read; the pipeline's actions the documents they cannot process.
  if (resource.multipart || resource.kind === 'non_model') errors[422] = errorSchema
  return errors
}

function routeSchema(resource: Resource, kind: UrlKind, method: Method, hide: boolean, tags: string[]) {
  const errors = errorResponses(resource, method)
  const name = pascal(resource.name)
  const base = { hide, tags, security: [{ apiKey: [] }] }
  if (kind === 'schema') {
    return { ...base, operationId: `describe${name}`, summary: `Describe ${resource.name}`, response: { 200: { type: 'object', additionalProperties: true }, 401: errorSchema, 429: errorSchema, 503: errorSchema } }
  }
  if (kind === 'list') {
    if (method === 'GET') {
      const csv = resource.kind === 'model' ? { 'text/csv': { schema: { type: 'string', description: '`format=csv`: the rows as CSV (RFC 4180), a header line first' } } } : {}
      // Steps that also run in the background: `Prefer: respond-async` answers 202 with the job.
      const background = resource.job_params
        ? {
            headers: { type: 'object', properties: { prefer: { type: 'string', description: '`respond-async` (RFC 7240): queue the step as a background job and answer 202 with it' } } },
            202: {
              description: 'Queued (or already queued or running for the same document or campaign): the job, at `Location`',
              headers: { location: { type: 'string', description: '/api/v1/job/<id>/' }, 'preference-applied': { type: 'string', enum: ['respond-async'] } },
              content: { 'application/json': { schema: detailSchema(jobResource) } },
            },
          }
        : undefined
      return {
        ...base,
        operationId: resource.kind === 'model' ? `list${pascal(plural(resource.name))}` : `run${name}`,
        summary: resource.kind === 'model' ? `List ${resource.name}` : `Run ${resource.name}`,
        querystring: querystringSchema(resource),
        ...(background ? { headers: background.headers } : {}),
        response: { 200: { content: { 'application/json': { schema: listSchema(resource) }, ...csv } }, ...(background ? { 202: background[202] } : {}), ...errors },
      }
    }
    if (method === 'POST') {
      // §11.3: a POST whose body names an existing row's id updates it (the original front-end's form), answering 200.
      const update = resource.methods.detail.includes('PATCH')
        ? { 200: { description: 'The legacy update: the body named an existing row by `id`', content: { 'application/json': { schema: detailSchema(resource) } } } }
        : {}
      return {
        ...base,
        operationId: `create${name}`,
        summary: `Create ${resource.name}${update[200] ? ' (or update the row named by id)' : ''}`,
        body: bodyContent(resource, true),
        response: { ...update, 201: detailSchema(resource), ...errors },
      }
    }
    const by = ['id', ...resource.list_delete_by]
    return {
      ...base,
      operationId: `delete${pascal(plural(resource.name))}Where`,
      summary: `Delete ${resource.name} by ?${by.join(' or ?')} (superuser)`,
      querystring: { type: 'object', properties: Object.fromEntries(by.map((f) => [f, { type: f === 'id' ? 'integer' : 'string' }])) },
      response: { 204: { type: 'null' }, ...errors },
    }
  }
  const params = { type: 'object', properties: { id: { type: 'integer' } } }
  if (method === 'GET') return { ...base, operationId: `get${name}`, summary: `Read one ${resource.name}`, params, response: { 200: detailSchema(resource), ...errors } }
  if (method === 'PATCH') return { ...base, operationId: `update${name}`, summary: `Update one ${resource.name}`, params, body: bodyContent(resource, false), response: { 200: detailSchema(resource), ...errors } }
  return { ...base, operationId: `delete${name}`, summary: `Delete one ${resource.name} (superuser; ?cascade=true)`, params, response: { 204: { type: 'null' }, ...errors } }
}
