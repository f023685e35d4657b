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

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route takes a file (an upload): a body too large for JSON is told to come as multipart. */
    takesFiles?: boolean
  }
}

/** A JSON body is parsed whole on the heap, so a file larger than the body limit comes as a streamed part. */
const asMultipart = (api: ApiError, error: FastifyError, request: FastifyRequest) =>
  error.code === 'FST_ERR_CTP_BODY_TOO_LARGE' && request.routeOptions.config?.takesFiles
    ? new ApiError(413, api.code, `${api.message}: send a larger file as multipart/form-data, its docfile a file part`)
    : api

export default fp(
  async function errors(app: FastifyInstance) {
    app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
      const api = asMultipart(
        toApiError(error, request.routeOptions.bodyLimit ?? app.initialConfig.bodyLimit, request.headers['content-type'], !request.user?.restricted),
        error,
        request,
      )
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
