// The answer of a list URL (resource-api §9, ingestion §10): the JSON envelope of a page, a CSV export (long,
// or wide), or, for an action, its result set or its job (`Prefer: respond-async`).
import type { FastifyReply, FastifyRequest } from 'fastify'
import { ApiError, badRequest } from '../core/errors.js'
import { holdsRawJson, RawJson, stringifyWithRaw } from '../core/raw-json.js'
import { filteredQuery, listPage, listRows } from './crud.js'
import { EXPORT_PAGE, sendCsv, sendWideCsv } from './csv-export.js'
import { parseFilters } from './filters.js'
import { pageLink, parseListParams, type ListParams } from './list-params.js'
import { MAX_LIMIT, RESERVED } from './query.js'
import { prefersAsync } from './request.js'
import type { Context, Row } from './resource.js'
import { submitJob, type Background } from './job-answer.js'
import type { Transactions } from './transactions.js'

type Filters = Array<[string, string[]]>

export const JSON_TYPE = 'application/json; charset=utf-8'

/** The services a list answer uses: the writes' transactions, and the resource's background form if it has one. */
export interface ListServices {
  transactions: Transactions
  /** The action queued as a job, answered 202 (`Prefer: respond-async`): resources that have one (resources/jobs.ts). */
  background?: Background
}

/**
 * A non-model action: one that only reads runs in a transaction of the request's database (a replica's,
 * its statements seen by the read cache); any other as a write, which drops the caches.
 */
async function runAction(ctx: Context, services: ListServices): Promise<Row[]> {
  const action = ctx.resource.action!
  if (ctx.resource.reads_only) return ctx.db.transaction().execute((trx) => action({ ...ctx, db: trx }))
  const forget = await ctx.resource.prepare?.(ctx)
  try {
    return await services.transactions.run(ctx, action)
  } finally {
    forget?.()
  }
}

/**
 * resource-api §9: the reserved parameters, then every name that is neither reserved nor declared is a filter (the
 * declared ones were read by the route's validator: lib/api/query.ts).
 */
export function readListRequest(ctx: Context, accept = ''): { params: ListParams; filters: Filters } {
  const { resource, query } = ctx
  const params = parseListParams(resource, query, accept.includes('text/csv') && !accept.includes('application/json'), ctx.params)
  const filters: Filters = []
  for (const name of query.names()) {
    if (RESERVED.includes(name) || resource.param_names.has(name)) continue
    if (resource.kind === 'non_model') throw badRequest('UNKNOWN_FILTER', `The '${name}' field does not allow filtering.`)
    filters.push([name, query.all(name)])
  }
  return { params, filters }
}

/** ingestion §10: the export of what the list would show, streamed page by page. */
async function answerCsv(ctx: Context, params: ListParams, filters: Filters, reply: FastifyReply, services: ListServices) {
  const { resource } = ctx
  if (resource.hooks.csv) {
    const { header, rows } = await resource.hooks.csv(ctx)
    return sendCsv(reply, ctx.urlName, header, rows.length, rows)
  }
  if (params.shape === 'wide') {
    // §10.2: the pivot of up to max_limit long rows, whatever limit/offset say.
    const filtered = filteredQuery(ctx, parseFilters(resource, filters, { secrets: ctx.user.is_superuser }))
    const wide = resource.modes.find((mode) => mode.when(ctx))?.wide ?? resource.hooks.wide!
    return sendWideCsv(reply, ctx.urlName, await wide(ctx, filtered))
  }
  if (resource.kind === 'non_model') {
    const rows = await runAction(ctx, services)
    return sendCsv(
      reply,
      ctx.urlName,
      params.fields,
      rows.length,
      rows.map((r) => params.fields.map((f) => r[f])),
    )
  }
  const first = await listRows(ctx, { ...params, limit: Math.min(params.limit, EXPORT_PAGE), filters })
  const columns = first.fields ?? params.fields
  const cells = (rows: Row[]) => rows.map((r) => columns.map((f) => r[f]))
  const read = async (offset: number, limit: number) => cells((await listRows(ctx, { ...params, offset, limit, filters })).rows)
  return sendCsv(reply, ctx.urlName, columns, first.total, cells(first.rows), read, { offset: params.offset, count: params.limit })
}

/**
 * The answer of GET on a list URL that is not a JSON page (lib/api/read-service.ts answers those): a CSV
 * export, or the job of an action asked for with `Prefer: respond-async`.
 */
export async function answerList(ctx: Context, request: FastifyRequest, reply: FastifyReply, services: ListServices) {
  const { params, filters } = readListRequest(ctx, request.headers.accept)
  if (params.format === 'csv' || params.shape === 'wide') return answerCsv(ctx, params, filters, reply, services)
  // What is left is a JSON page asked for as a job: `answersJson` gave every other JSON page to the read service.
  if (!services.background) throw new Error(`${ctx.urlName}: answerList was given a JSON page (the read service answers those)`)
  return submitJob(ctx, reply, services.background, services.transactions)
}

/** Whether a list GET is answered as a JSON page (else a CSV export or a job: `answerList`). */
export function answersJson(ctx: Context, request: FastifyRequest, services: ListServices): boolean {
  const { params } = readListRequest(ctx, request.headers.accept)
  return params.format === 'json' && params.shape === 'long' && !(services.background && prefersAsync(request))
}

/** A list's JSON page (resource-api §9): its objects and their meta, parts of them JSON that PostgreSQL wrote. */
export interface ListEnvelope {
  objects: Row[] | RawJson
  meta: Row
  error: null
}

/** A list's page as objects: what PostgreSQL wrote as text is parsed (the rest is objects already). */
export function listObjects(envelope: ListEnvelope): { objects: Row[]; meta: Row } {
  const plain = (value: unknown) => (value instanceof RawJson ? JSON.parse(value.text) : value)
  return { objects: plain(envelope.objects), meta: Object.fromEntries(Object.entries(envelope.meta).map(([name, value]) => [name, plain(value)])) }
}

/** The text of a list's page: JSON.stringify unless PostgreSQL wrote some of it already (the Fastify serializer of every route). */
export const listText = (envelope: ListEnvelope): string =>
  envelope.objects instanceof RawJson || holdsRawJson(envelope.meta) ? stringifyWithRaw(envelope) : JSON.stringify(envelope)

/** A list's JSON page (resource-api §9): its objects and their meta. */
export async function listEnvelope(ctx: Context, services: ListServices): Promise<ListEnvelope> {
  const { resource, query } = ctx
  const { params, filters } = readListRequest(ctx)
  if (params.format !== 'json') throw new ApiError(406, 'NOT_ACCEPTABLE', `${ctx.urlName}: a read composed into another is answered in JSON`)
  let objects: Row[] | RawJson
  let total: number
  let extras: Row = {}
  if (resource.kind === 'non_model') {
    objects = await runAction(ctx, services)
    total = objects.length
  } else {
    const page = await listPage(ctx, { ...params, limit: Math.min(params.limit, MAX_LIMIT), filters })
    ;({ total, meta: extras } = page)
    objects = 'json' in page ? page.json : page.rows
  }
  const { limit, offset } = params
  return {
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
}
