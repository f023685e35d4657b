// One error handler and one not-found handler for the whole app: every failure leaves as the standard
// body of resource-api §7, never with a stack trace.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { ApiError, fromDatabaseError } from '../lib/core/errors.js'
import { isApiPath } from '../lib/api/request.js'
import { byName } from '../resources/registry.js'

const MULTIPART_SYNTAX =
  /^(Multipart: Boundary not found|Unexpected end of multipart data|\w+ terminated early due to unexpected end of multipart data|Malformed part header)/

export function toApiError(error: FastifyError | Error, bodyLimit?: number, contentType?: string, revealValues = true): ApiError {
  if (error instanceof ApiError) return error
  const database = fromDatabaseError(error, { revealValues })
  if (database) return database
  const fastify = error as FastifyError
  switch (fastify.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE': {
      const type = (contentType ?? 'unknown').split(';')[0].trim()
      return new ApiError(415, 'UNSUPPORTED_MEDIA_TYPE', `Unsupported Media Type: ${type}`)
    }
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError(413, 'PAYLOAD_TOO_LARGE', `Request body is too large (limit ${bodyLimit ?? '?'} bytes)`)
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new ApiError(400, 'INVALID_JSON', 'Request is not valid JSON.')
    case 'FST_ERR_VALIDATION': {
      const message = fastify.message.replace(/^body\//, '').replace(/^body /, 'body: ')
      return new ApiError(400, 'VALIDATION_ERROR', message)
    }
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new ApiError(400, 'INVALID_CONTENT_LENGTH', 'Content-Length does not match the body')
  }
  // The multipart parser (busboy) throws plain errors for a body that does not follow its boundary.
  if (!fastify.statusCode && MULTIPART_SYNTAX.test(error.message)) {
    return new ApiError(400, 'INVALID_MULTIPART', `Malformed multipart/form-data body: ${error.message}`)
  }
  if (error instanceof SyntaxError && fastify.statusCode === 400) return new ApiError(400, 'INVALID_JSON', 'Request is not valid JSON.')
  const status = fastify.statusCode
  if (status && status >= 400 && status < 500) {
    return new ApiError(status, fastify.code ?? 'BAD_REQUEST', fastify.message)
  }
  return new ApiError(500, 'INTERNAL_ERROR', 'An internal error occurred')
}

export default fp(
  async function errors(app: FastifyInstance) {
    app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
      const api = toApiError(error, request.routeOptions.bodyLimit ?? app.initialConfig.bodyLimit, request.headers['content-type'], !request.user?.restricted)
      if (api.statusCode >= 500) request.log.error({ err: error }, 'request failed')
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
