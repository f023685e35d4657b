// HTTP's own signals around the answer (RFC 9110): 406 for an Accept header that none of a route's
// media types satisfies (each route's are the `content` of its documented 2xx answers, JSON when they
// name none), where a client asking for XML was answered JSON with 200. (WWW-Authenticate on 401:
// plugins/errors.ts.)
import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify'
import fp from 'fastify-plugin'
import Negotiator from 'negotiator'
import { ApiError } from '../lib/core/errors.js'
import { errorSchema } from '../lib/api/openapi.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The media types the route answers with (set at registration from its schema). */
    produces?: string[]
  }
}

type Schema = { hide?: boolean; response?: Record<string, unknown> }

/**
 * What a route answers with: its documented 2xx media types, JSON when they name none; undefined for
 * a route the document does not describe (the web app's files, the documentation's own).
 */
export function producedBy(route: Pick<RouteOptions, 'schema'>): string[] | undefined {
  const schema = route.schema as Schema | undefined
  if (!schema || schema.hide) return undefined
  const types = new Set<string>()
  for (const [status, answer] of Object.entries(schema.response ?? {})) {
    if (!/^2/.test(status)) continue
    const content = (answer as { content?: Record<string, unknown> }).content
    for (const type of content ? Object.keys(content) : ['application/json']) types.add(type)
  }
  return types.size ? [...types] : ['application/json']
}

/**
 * The route's answers as the document lists them: its own, the 406 every described route may give,
 * and, where it lists no success, the OpenAPI plugin's default 200 (which it adds only to a route
 * that lists no answer at all).
 */
function documented(schema: Schema): Record<string, unknown> {
  const response = { ...(schema.response ?? {}) }
  if (!Object.keys(response).some((status) => /^2/.test(status))) response[200] = { description: 'Default Response' }
  response[406] ??= { description: 'Accept names none of the media types this route answers with', ...errorSchema }
  return response
}

function notAcceptable(request: FastifyRequest, produces: string[]) {
  return new ApiError(
    406,
    'NOT_ACCEPTABLE',
    `Accept: ${String(request.headers.accept).slice(0, 200)} names none of what this route answers with: ${produces.join(', ')}`,
    { available: produces },
  )
}

export default fp(
  async function negotiation(app: FastifyInstance) {
    app.addHook('onRoute', (route) => {
      const produces = producedBy(route)
      if (!produces) return
      route.config = { ...(route.config ?? {}), produces }
      // The OpenAPI plugin reads the schema after this hook.
      route.schema = { ...route.schema, response: documented(route.schema as Schema) }
    })
    // Callback-style: it runs on every request.
    app.addHook('onRequest', (request, _reply, done) => {
      const accept = request.headers.accept
      const produces = request.routeOptions.config?.produces
      if (!accept || !produces || new Negotiator({ headers: { accept } }).mediaType(produces)) return done()
      done(notAcceptable(request, produces))
    })
  },
  { name: 'negotiation', dependencies: ['errors'] },
)
