// A read made of other reads (a dashboard's data, an export): each one an in-process request through
// the API's own routes, with the caller's credentials, so with the same rights, read cache and answers.
import type { FastifyInstance, FastifyRequest } from 'fastify'

export type Answer = { status: number; body: Record<string, unknown> }

/** The request headers an inner read carries: who asks, and the request's id for the logs. */
const FORWARDED = ['authorization', 'cookie', 'x-request-id'] as const

/** Reads `path` (under /api/v1) as `request`'s caller: its status and parsed body. */
export function readerAs(app: FastifyInstance, request: FastifyRequest, headers: Record<string, string> = {}) {
  const forwarded = Object.fromEntries(FORWARDED.flatMap((name) => (request.headers[name] ? [[name, String(request.headers[name])]] : [])))
  return async (path: string): Promise<Answer> => {
    const res = await app.inject({ method: 'GET', url: `/api/v1${path}`, headers: { ...forwarded, ...headers }, remoteAddress: request.ip })
    return { status: res.statusCode, body: res.json() }
  }
}
