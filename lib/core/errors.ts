// One error type for every client-facing failure, and the mapping of database errors (resource-api §7).
import { STATUS_CODES } from 'node:http'

export class ApiError extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: string,
    message: string,
    readonly details?: Record<string, unknown>,
    readonly headers?: Record<string, string>,
  ) {
    super(message)
  }

  body() {
    return {
      statusCode: this.statusCode,
      error: STATUS_CODES[this.statusCode] ?? 'Error',
      code: this.code,
      message: this.message,
      ...(this.details ? { details: this.details } : {}),
    }
  }
}

export const badRequest = (code: string, message: string, details?: Record<string, unknown>) => new ApiError(400, code, message, details)

export const invalidValue = (param: string, value: unknown, expected: string) =>
  badRequest('INVALID_VALUE', `Invalid value for ${param}: ${JSON.stringify(String(value))} (expected ${expected})`)

export const validationError = (field: string, reason: string) =>
  badRequest('VALIDATION_ERROR', `${field}: ${reason}`, { errors: [{ field, message: reason }] })

export const notFound = (resource: string, id: unknown) => new ApiError(404, 'NOT_FOUND', `No ${resource} object found for id : ${id}`)

export const forbidden = (message: string, code = 'FORBIDDEN') => new ApiError(403, code, message)

/** The fields of a database error (node-postgres and PGlite alike) that the API reads. */
interface PgError {
  code?: string
  detail?: string
  column?: string
  constraint?: string
  table?: string
}

// node-postgres' own errors (no SQLSTATE) when the server connection goes away mid-request.
const LOST_CONNECTION = /^(Connection terminated|Client has encountered a connection error|timeout exceeded when trying to connect)/
// Retry-After: a restarted server or a failover to the standby (seconds, deploy/auto-failover.sh).
const unavailable = () => new ApiError(503, 'DATABASE_UNAVAILABLE', 'Database unavailable', undefined, { 'retry-after': '2' })
// A lock the write needs stayed held past DATABASE_LOCK_TIMEOUT_MS (55P03), or a statement was cancelled (57014):
// nothing was written, and the same request can succeed once the other work is done.
const busy = () =>
  new ApiError(503, 'DATABASE_BUSY', 'The database is busy with other work on the same data; nothing was changed, retry', undefined, { 'retry-after': '5' })

const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENOTFOUND', '57P01', '57P02', '57P03'])

/** The server could not be reached, went away, or is shutting down or starting. */
export function isConnectionFailure(error: unknown): boolean {
  const code = (error as PgError | undefined)?.code
  if (typeof code === 'string') return CONNECTION_CODES.has(code) || code.startsWith('08')
  return LOST_CONNECTION.test((error as Error)?.message ?? '')
}

/**
 * A read that a replica could not answer for reasons of its own, which the primary can: its
 * connection failed or it is shutting down, or (40001) a conflict with the recovery it is replaying.
 */
export function isReplicaFailure(error: unknown): boolean {
  return isConnectionFailure(error) || (error as PgError | undefined)?.code === '40001'
}

/** A unique-key violation (SQLSTATE 23505). */
export const isUniqueViolation = (error: unknown) => (error as PgError | undefined)?.code === '23505'

/**
 * Maps a database error to an ApiError by SQLSTATE, or returns undefined for anything unexpected.
 * Column and value texts come from PostgreSQL's DETAIL: `Key (a, b)=(1, 2) already exists.`
 * `revealValues: false` (a restricted requester): a unique key's clash names its columns only, since
 * the row it clashes with may lie outside their subtree.
 */
export function fromDatabaseError(error: unknown, { revealValues = true } = {}): ApiError | undefined {
  const pg = error as PgError
  const code = pg?.code
  if (typeof code !== 'string') return LOST_CONNECTION.test((error as Error)?.message ?? '') ? unavailable() : undefined
  const key = /Key \((.+)\)=\((.*)\)/.exec(pg.detail ?? '')
  switch (code) {
    case '23505': {
      const [cols, vals] = key ? [key[1], key[2]] : [pg.constraint ?? '?', '?']
      return new ApiError(
        409,
        'UNIQUE_VIOLATION',
        revealValues ? `key: "${cols}" with value: "${vals}" already exists` : `key: "${cols}" with this value already exists`,
      )
    }
    case '23503': {
      const table = /table "([^"]+)"/.exec(pg.detail ?? '')?.[1] ?? 'row'
      const message = key ? `${key[1]}: no ${table} with id ${key[2]}` : 'a referenced row does not exist'
      return badRequest('FOREIGN_KEY_VIOLATION', message)
    }
    case '23502':
      return badRequest('NOT_NULL_VIOLATION', `${pg.column ?? 'a column'} may not be null`)
    case '23514':
      return badRequest('VALIDATION_ERROR', `${pg.constraint ?? 'a check constraint'} violated`)
    case '22003':
      return badRequest('VALIDATION_ERROR', 'a number is out of range')
    case '22P02':
    case '22007':
    case '22008':
      return badRequest('VALIDATION_ERROR', 'a value has an invalid format')
  }
  if (code.startsWith('08') || CONNECTION_CODES.has(code)) return unavailable()
  // 40P01: two writers waited for each other (lib/engine/campaign-locks.ts says when); one is undone.
  if (code === '55P03' || code === '57014' || code === '40P01') return busy()
  // A write reached a standby: the primary changed (a failover) and this connection was made before.
  if (code === '25006') return unavailable()
  return undefined
}
