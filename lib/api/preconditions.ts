// Conditional writes (RFC 9110 §13.1.1): a PATCH or DELETE with If-Match changes the row only if it is
// still the version the client read, on every resource. A row's entity tag is the one its detail GET
// carries (the strong ETag of its JSON, lib/api/representation.ts), so a client that read a row may
// send its ETag back as it came. A write with no one row as its target (a POST that creates, a DELETE
// of the rows matching a parameter) has no version to compare: If-Match there holds only as `*`.
import { sql } from 'kysely'
import type { FastifyRequest } from 'fastify'
import { ApiError } from '../core/errors.js'
import { readDetail } from './crud.js'
import { tagOfBody } from './representation.js'
import type { Context, Resource, Row } from './resource.js'
import { detailText } from './answer-text.js'
import { lockKey } from '../data/lock-keys.js'

/** A row's entity tag: its detail representation's. */
export const etagOfRow = (resource: Resource, row: Row) => tagOfBody(detailText(resource, row))

/** Whether the If-Match field holds `etag` (strong comparison; an encoded variant's tag names the same bytes). */
function matches(header: string, etag: string): boolean {
  if (header.trim() === '*') return true
  const bare = etag.slice(1, -1)
  return header.split(',').some((candidate) => {
    const tag = candidate.trim()
    return tag === etag || tag === `"${bare}-br"` || tag === `"${bare}-gzip"`
  })
}

/**
 * Checks If-Match against row `id` as it is now, in the write's transaction: conditional writes of one
 * row wait for each other (a transaction-scoped advisory lock), so two clients holding the same ETag
 * cannot both pass. 412 carries the current row (`details.current`) and its ETag.
 */
export async function assertIfMatch(ctx: Context, request: FastifyRequest, id: number): Promise<void> {
  const header = request.headers['if-match']
  if (header === undefined) return
  await sql`select pg_advisory_xact_lock(${lockKey(`row of ${ctx.resource.name}`, id)})`.execute(ctx.db)
  const current = await readDetail(ctx, id)
  const etag = etagOfRow(ctx.resource, current)
  if (matches(header, etag)) return
  throw new ApiError(412, 'PRECONDITION_FAILED', `${ctx.urlName} ${id} changed since the version named by If-Match`, { current }, { etag })
}

/**
 * If-Match on a write whose target is no one existing row: `*` holds (the collection is there), an
 * entity tag cannot name a version of it, so it is 412 rather than ignored.
 */
export function assertNoRowTag(ctx: Context, request: FastifyRequest): void {
  const header = request.headers['if-match']
  if (header === undefined || header.trim() === '*') return
  throw new ApiError(
    412,
    'PRECONDITION_FAILED',
    `If-Match names a version of one ${ctx.urlName}, and this write has no one existing row to compare it with (only If-Match: * holds here)`,
  )
}
