// A read made of other reads (a dashboard's data, an export): each one an in-process request through
// the API's own routes, with the caller's credentials, so with the same rights, read cache and answers.
import { randomBytes } from 'node:crypto'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { ApiError } from '../core/errors.js'
import type { AuthUser } from '../data/auth.js'

export type Answer = { status: number; body: Record<string, unknown> }
export type Reader = (path: string) => Promise<Answer>

/** The body of a 200 read, else the read's own error (a 404 stays a 404, a 403 a 403). */
export async function bodyOf(read: Reader, path: string): Promise<Record<string, unknown>> {
  const { status, body } = await read(path)
  if (status === 200) return body
  throw new ApiError(status, String(body.code ?? 'READ_FAILED'), String(body.message ?? `${path}: ${status}`))
}

/**
 * The request headers an inner read carries: who asks (a key, a cookie, or the identity a composing
 * read gave it, which a read composed inside it keeps), and the request's id for the logs.
 */
const FORWARDED = ['authorization', 'cookie', 'x-rhizome-inner-reader', 'x-request-id'] as const

/** Reads `path` (under /api/v1) as `request`'s caller: its status and parsed body. */
export function readerAs(app: FastifyInstance, request: FastifyRequest, headers: Record<string, string> = {}) {
  const forwarded = Object.fromEntries(FORWARDED.flatMap((name) => (request.headers[name] ? [[name, String(request.headers[name])]] : [])))
  return async (path: string): Promise<Answer> => {
    const res = await app.inject({ method: 'GET', url: `/api/v1${path}`, headers: { ...forwarded, ...headers }, remoteAddress: request.ip })
    return { status: res.statusCode, body: res.json() }
  }
}

/**
 * The header naming the identity an in-process read runs as, when it is not the caller's own (a shared
 * link's reader): 192 random bits that exist only while the composing request reads, and never leave
 * the process, so no client can present one.
 */
export const INNER_READER_HEADER = 'x-rhizome-inner-reader'
const innerReaders = new Map<string, AuthUser>()

/** The identity of an in-process read's header, if it names a live one (plugins/auth.ts). */
export const innerReaderOf = (nonce: string) => innerReaders.get(nonce)

/** Runs `work` with headers under which in-process reads authenticate as `reader`. */
export async function readingAs<T>(reader: AuthUser, work: (headers: Record<string, string>) => Promise<T>): Promise<T> {
  const nonce = randomBytes(24).toString('base64url')
  innerReaders.set(nonce, reader)
  try {
    return await work({ [INNER_READER_HEADER]: nonce })
  } finally {
    innerReaders.delete(nonce)
  }
}
