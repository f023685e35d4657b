// The API's error of any failure (resource-api §7): a client's mistake named in its 4xx, whatever threw it
// (the API, the database, Fastify's parsers); anything else a 500 that says nothing of the cause.
import type { FastifyError } from 'fastify'
import { ApiError, fromDatabaseError } from '../core/errors.js'

const MULTIPART_SYNTAX =
  /^(Multipart: Boundary not found|Unexpected end of multipart data|\w+ terminated early due to unexpected end of multipart data|Malformed part header)/

/** `revealValues`: whether a database error may quote the values it names (not to a restricted user). */
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
