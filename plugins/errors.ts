// One error handler and one not-found handler for the whole app: every failure leaves as the standard
// body of resource-api §7, never with a stack trace.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { ApiError } from '../lib/core/errors.js'
import { toApiError } from '../lib/api/error-answer.js'
import { isApiPath } from '../lib/api/request.js'
import { byName } from '../resources/registry.js'

/** The schemes the API takes (README, "Authentication"): an API key, or the key alone as a bearer token. */
export const AUTHENTICATE = 'ApiKey realm="rhizome-api", Bearer realm="rhizome-api"'

export default fp(
  async function errors(app: FastifyInstance) {
    app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
      const api = toApiError(error, request.routeOptions.bodyLimit ?? app.initialConfig.bodyLimit, request.headers['content-type'], !request.user?.restricted)
      if (api.statusCode >= 500) request.log.error({ err: error }, 'request failed')
      // A 401 names the schemes that would be accepted (RFC 9110 §11.6.1), unless its error names its own.
      if (api.statusCode === 401) reply.header('www-authenticate', AUTHENTICATE)
      reply
        .code(api.statusCode)
        .headers(api.headers ?? {})
        .type('application/json; charset=utf-8')
        .send({ ...api.body(), request_id: request.id })
    })

    app.setNotFoundHandler(async (request: FastifyRequest, reply: FastifyReply) => {
      const path = request.url.split('?')[0]
      let error = new ApiError(404, 'NOT_FOUND', `Route ${request.method} ${path} not found`)
      if (isApiPath(request.url)) {
        // Known resources are routed; an unrouted first segment is an unknown resource.
        const name = path.slice('/api/v1/'.length).split('/')[0]
        if (name && !byName.has(name)) error = new ApiError(404, 'UNKNOWN_RESOURCE', `Unknown resource: ${name}`)
      }
      reply.code(404).send({ ...error.body(), request_id: request.id })
    })
  },
  { name: 'errors' },
)
