// The answer of a write (resource-api §11): POST creates (or, naming an existing row's id, updates:
// the legacy form), PATCH updates, DELETE removes one row or, where declared, the rows matching one
// parameter. Each runs in one transaction.
import type { FastifyReply, FastifyRequest } from 'fastify'
import { badRequest, invalidValue, notFound } from '../core/errors.js'
import { isInt32, parseInteger } from '../core/values.js'
import { ensureObject } from './body.js'
import { createRow, deleteRow, deleteWhere, updateRow } from './crud.js'
import { encodingOf, multipartBody, parseCascade, parsePk } from './request.js'
import type { Context, Row } from './resource.js'
import type { Transactions } from './transactions.js'
import { idempotencyKeyOf, once, type WriteOutcome } from './idempotency.js'
import { assertIfMatch, assertNoRowTag, etagOfRow } from './preconditions.js'
import { writeAnswerText } from './answer-text.js'

/** What a write uses: the transactions service, and what the declarations do after a delete. */
export interface WriteDoors {
  transactions: Transactions
  /** What follows a delete of rows of a table, in its transaction (resources/registry.ts). */
  afterDelete(ctx: Context): (table: string, rows: Row[]) => Promise<void>
}

/** §11.3: a POST with a usable id is the legacy update. */
const isLegacyUpdate = (body: Row) => body.id !== undefined && body.id !== null && body.id !== '' && String(body.id) !== '-1'

/** The body of a POST, and its create's work done before the transaction (`prepareCreate`), if any. */
async function prepare(ctx: Context, request: FastifyRequest): Promise<{ body: Row; release?: () => Promise<void> }> {
  const body = multipartBody(ctx.resource, request) ?? ensureObject(request.body)
  const { prepareCreate } = ctx.resource.hooks
  if (!prepareCreate || isLegacyUpdate(body)) return { body }
  return prepareCreate(ctx, body)
}

/** A POST's outcome: 201 with the created row at its Location, or 200 for the legacy update. */
async function post(ctx: Context, request: FastifyRequest, body: Row): Promise<Outcome> {
  const encoding = encodingOf(request)
  const legacyId = body.id
  if (isLegacyUpdate(body)) {
    // §11.3: POST with a usable id is the legacy update.
    const pk = parseInteger(String(legacyId))
    if (pk === undefined) throw invalidValue('id', legacyId, 'integer')
    if (!isInt32(pk)) throw notFound(ctx.urlName, legacyId)
    return patch(ctx, request, pk, { ...body, id: undefined })
  }
  assertNoRowTag(ctx, request)
  const created = await createRow(ctx, { ...body, id: undefined }, encoding)
  return { status: 201, headers: { location: `/api/v1/${ctx.urlName}/${created.id}/` }, row: created }
}

/** A PATCH's outcome (or the legacy POST's): 200 with the row, once its If-Match (if any) holds. */
async function patch(ctx: Context, request: FastifyRequest, id: number, body: Row): Promise<Outcome> {
  await assertIfMatch(ctx, request, id)
  return { status: 200, headers: {}, row: await updateRow(ctx, id, body, encodingOf(request)) }
}

/** What a POST or PATCH answers: its status, headers and row. */
interface Outcome {
  status: number
  headers: Record<string, string>
  row: Row
}

/**
 * A write of a resource that takes retries (docs/decisions.md, "Retried writes"): the answer carries
 * the row's ETag, and with an Idempotency-Key it is kept and given again to a repeat.
 */
async function retryable(ctx: Context, request: FastifyRequest, reply: FastifyReply, doors: WriteDoors, write: (c: Context) => Promise<Outcome>) {
  const key = idempotencyKeyOf(request)
  const extra = Object.keys(ctx.resource.write_fields)
  const run = async (c: Context): Promise<WriteOutcome> => {
    const { status, headers, row } = await write(c)
    const stored = Object.fromEntries(Object.entries(row).filter(([name]) => !extra.includes(name)))
    return { status, headers: { ...headers, etag: etagOfRow(ctx.resource, stored) }, body: writeAnswerText(ctx.resource, row) }
  }
  const outcome = await doors.transactions.run(ctx, (c) => (key === undefined ? run(c) : once(c, request, key, () => run(c))))
  return reply.code(outcome.status).headers(outcome.headers).type('application/json; charset=utf-8').send(outcome.body)
}

async function remove(ctx: Context, id: number | undefined, request: FastifyRequest, reply: FastifyReply, doors: WriteDoors) {
  const cascade = parseCascade(ctx.query)
  const legacy = ctx.query.last('id')
  if (id !== undefined || (legacy !== undefined && legacy !== '')) {
    const pk = id ?? parsePk(ctx.urlName, legacy!)
    await doors.transactions.run(ctx, async (c) => {
      await assertIfMatch(c, request, pk)
      return deleteRow(c, pk, cascade, doors.afterDelete(c))
    })
    return reply.code(204).send()
  }
  const by = ctx.resource.list_delete_by.find((f) => ctx.query.has(f))
  if (!by) throw badRequest('LIST_DELETE_NOT_ALLOWED', 'Must Delete by ID only')
  assertNoRowTag(ctx, request)
  await doors.transactions.run(ctx, async (c) => doors.afterDelete(c)(ctx.resource.table!, await deleteWhere(c, by, c.query.last(by)!)))
  return reply.code(204).send()
}

/** The answer of POST, PATCH or DELETE; `id` is the row of a detail URL. */
export async function answerWrite(ctx: Context, method: string, id: number | undefined, request: FastifyRequest, reply: FastifyReply, doors: WriteDoors) {
  if (method === 'DELETE') return remove(ctx, id, request, reply, doors)
  const prepared = method === 'POST' ? await prepare(ctx, request) : undefined
  try {
    const write = (c: Context) => (prepared ? post(c, request, prepared.body) : patch(c, request, id!, ensureObject(request.body)))
    if (ctx.resource.retryable_writes) return await retryable(ctx, request, reply, doors, write)
    const { status, headers, row } = await doors.transactions.run(ctx, write)
    return reply.code(status).headers(headers).send(row)
  } finally {
    await prepared?.release?.()
  }
}
