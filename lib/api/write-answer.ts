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

/** What a write uses: the transactions service, and what the declarations do after a delete. */
export interface WriteDoors {
  transactions: Transactions
  /** What follows a delete of rows of a table, in its transaction (resources/registry.ts). */
  afterDelete(ctx: Context): (table: string, rows: Row[]) => Promise<void>
}

async function post(ctx: Context, request: FastifyRequest, reply: FastifyReply, doors: WriteDoors) {
  const body = multipartBody(ctx.resource, request) ?? ensureObject(request.body)
  const encoding = encodingOf(request)
  const legacyId = body.id
  if (legacyId !== undefined && legacyId !== null && legacyId !== '' && String(legacyId) !== '-1') {
    // §11.3: POST with a usable id is the legacy update.
    const pk = parseInteger(String(legacyId))
    if (pk === undefined) throw invalidValue('id', legacyId, 'integer')
    if (!isInt32(pk)) throw notFound(ctx.urlName, legacyId)
    return doors.transactions.run(ctx, (c) => updateRow(c, pk, { ...body, id: undefined }, encoding))
  }
  const created = await doors.transactions.run(ctx, (c) => createRow(c, { ...body, id: undefined }, encoding))
  return reply.code(201).header('location', `/api/v1/${ctx.urlName}/${created.id}/`).send(created)
}

async function remove(ctx: Context, id: number | undefined, reply: FastifyReply, doors: WriteDoors) {
  const cascade = parseCascade(ctx.query)
  const legacy = ctx.query.last('id')
  if (id !== undefined || (legacy !== undefined && legacy !== '')) {
    const pk = id ?? parsePk(ctx, legacy!)
    await doors.transactions.run(ctx, (c) => deleteRow(c, pk, cascade, doors.afterDelete(c)))
    return reply.code(204).send()
  }
  const by = ctx.resource.list_delete_by.find((f) => ctx.query.has(f))
  if (!by) throw badRequest('LIST_DELETE_NOT_ALLOWED', 'Must Delete by ID only')
  await doors.transactions.run(ctx, async (c) => doors.afterDelete(c)(ctx.resource.table!, await deleteWhere(c, by, c.query.last(by)!)))
  return reply.code(204).send()
}

/** The answer of POST, PATCH or DELETE; `detailId` is the row of a detail URL. */
export async function answerWrite(ctx: Context, method: string, detailId: string | undefined, request: FastifyRequest, reply: FastifyReply, doors: WriteDoors) {
  const id = detailId === undefined ? undefined : parsePk(ctx, detailId)
  if (method === 'PATCH') return doors.transactions.run(ctx, (c) => updateRow(c, id!, ensureObject(request.body), encodingOf(request)))
  if (method === 'POST') return post(ctx, request, reply, doors)
  return remove(ctx, id, reply, doors)
}
