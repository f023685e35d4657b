// HTTP caching of every GET (docs/decisions.md, "Read cache"): strong ETags and 304 for a client that
// holds the answer, br or gzip by Accept-Encoding, Cache-Control and Vary; and the read cache that the
// dispatcher answers list GETs from (lib/api/read-cache.ts), filled here as answers leave.
import type { Readable } from 'node:stream'
import { buffer } from 'node:stream/consumers'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { tables } from '../schemas/index.js'
import { isApiPath } from '../lib/api/request.js'
import { CACHED_EXPORT_ROWS, type PendingRead, ReadCache } from '../lib/api/read-cache.js'
import {
  answerShort,
  answerWith,
  COMPRESS_MIN_BYTES,
  type Encoding,
  type Representation,
  representationOf,
  servedFor,
  streamWith,
} from '../lib/api/representation.js'

declare module 'fastify' {
  interface FastifyInstance {
    readCache: ReadCache
  }
}

/** Answers anyone may cache (they hold nothing of a user): revalidated, as they change with a release. */
const PUBLIC_ROUTES = new Set(['/', '/documentation/json', '/documentation/yaml'])
const BOTH: Encoding[] = ['br', 'gzip']
/** The headers that describe an answer's bytes, kept with a cached one. */
const DESCRIBING = ['content-type', 'content-disposition', 'x-total-count']

const isStream = (payload: unknown): payload is Readable => typeof (payload as Readable | null)?.pipe === 'function'

function describing(reply: FastifyReply): Record<string, string> {
  const headers: Record<string, string> = {}
  for (const name of DESCRIBING) {
    const value = reply.getHeader(name)
    if (value !== undefined) headers[name] = String(value)
  }
  return headers
}

export default fp(
  async function httpCache(app: FastifyInstance) {
    const reads = new ReadCache(app.config.READ_CACHE_BYTES, Object.keys(tables))
    const unlisten = await reads.listen(app.db)
    app.addHook('onClose', () => unlisten())
    app.decorate('readCache', reads)

    // The public answers (the endpoint listing, the OpenAPI document: 400 KB) are the same bytes at every
    // request until a release: prepared once, so nobody can make this process compress them at will.
    const publicAnswers = new Map<string, { text: string; representation: Representation }>()

    /** The payload of a 200 GET: its kept representation, or one prepared (and kept when it was a cacheable miss). */
    async function prepare(request: FastifyRequest, reply: FastifyReply, payload: unknown, pending: PendingRead | undefined) {
      if (isStream(payload)) {
        // A short export was read whole before it was sent: it is kept like any answer; a long one streams.
        if (!pending || Number(reply.getHeader('x-total-count')) > CACHED_EXPORT_ROWS) return streamWith(request, reply, payload)
        payload = await buffer(payload)
      }
      if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return payload
      const route = PUBLIC_ROUTES.has(request.routeOptions.url ?? '') && typeof payload === 'string' ? request.routeOptions.url! : undefined
      const known = route === undefined ? undefined : publicAnswers.get(route)
      if (known && known.text === payload) return answerWith(request, reply, known.representation)
      const representation = await representationOf(Buffer.from(payload), describing(reply), pending || route ? BOTH : [])
      if (route) publicAnswers.set(route, { text: payload as string, representation })
      if (pending) reads.store(pending, representation)
      return answerWith(request, reply, representation)
    }

    // Who is signed in carries the outbox key (plugins/session.ts): never written to a browser's disk cache.
    const NOT_STORED = new Set(['/api/v1/session/'])
    // Callback-style, and synchronous for a hit and a short answer (a detail): this runs on every GET.
    app.addHook('onSend', (request, reply, payload, done) => {
      const readable = request.method === 'GET' || request.method === 'HEAD'
      // A read that asks no credentials (a shared link's) answers anyone who has its URL the same.
      const anonymous = readable && request.routeOptions.config?.credentials === 'none'
      const api = isApiPath(request.url) && !anonymous
      // Authenticated answers: every use revalidated, never stored by a shared cache; who asks (a key or
      // a session cookie) and what they accept decide the answer.
      if (api) reply.header('cache-control', NOT_STORED.has(request.routeOptions.url ?? '') ? 'no-store' : 'private, no-cache')
      // Whatever its status (a 401, a 406, the cookie-less 204 of who is signed in): who asks and what
      // they accept decide the answer. Appended to what is there already (@fastify/cors's Origin).
      if (readable && api) reply.vary(['Authorization', 'Cookie', 'Accept', 'Accept-Encoding'])
      if (!readable || reply.statusCode !== 200 || !(api || anonymous || PUBLIC_ROUTES.has(request.routeOptions.url ?? ''))) return done(null, payload)
      // Public: a shared cache may keep it, and asks again at every use (a revoked link stops at once).
      if (!api) {
        reply.header('cache-control', 'public, no-cache')
        reply.vary('Accept-Encoding')
      }
      const served = servedFor(request)
      const pending = served ? undefined : reads.pendingFor(request)
      const short = !served && !pending && typeof payload === 'string' && payload.length < COMPRESS_MIN_BYTES
      const answer = served ? answerWith(request, reply, served) : short ? answerShort(request, reply, payload) : prepare(request, reply, payload, pending)
      if (!(answer instanceof Promise)) return done(null, answer)
      answer.then(
        (ready) => done(null, ready),
        (error) => done(error),
      )
    })
  },
  { name: 'http-cache', dependencies: ['config', 'db', 'external'] },
)
