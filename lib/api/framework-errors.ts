// The errors Fastify and Node's HTTP parser answer before a route runs, in the API's own error shape
// (resource-api §7: statusCode, error, code, message, request_id), instead of their bare bodies.
import { randomUUID } from 'node:crypto'
import type { Socket } from 'node:net'
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { ApiError } from '../core/errors.js'

/** A request Node could not parse: too many header bytes (431), too slow (408), or no HTTP (400). */
function parserError(error: NodeJS.ErrnoException, maxHeaderBytes: number): ApiError {
  if (error.code === 'HPE_HEADER_OVERFLOW') {
    return new ApiError(431, 'HEADERS_TOO_LARGE', `The request's headers are too large (limit ${maxHeaderBytes} bytes in all)`)
  }
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') return new ApiError(408, 'REQUEST_TIMEOUT', 'The request did not arrive whole in time')
  return new ApiError(400, 'MALFORMED_REQUEST', 'The request is not well-formed HTTP/1.1')
}

/**
 * Fastify's `clientErrorHandler`: answers on the socket itself (there is no request object yet) and
 * closes it, as Node does, with the API's body and a request id of its own.
 */
export function clientErrorHandler(maxHeaderBytes: number) {
  return (error: NodeJS.ErrnoException, socket: Socket) => {
    if (error.code === 'ECONNRESET' || socket.destroyed) return
    const api = parserError(error, maxHeaderBytes)
    const id = randomUUID()
    const body = JSON.stringify({ ...api.body(), request_id: id })
    if (socket.writable) {
      socket.write(
        `HTTP/1.1 ${api.statusCode} ${api.body().error}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
          `Content-Type: application/json; charset=utf-8\r\nX-Request-Id: ${id}\r\nConnection: close\r\n\r\n${body}`,
      )
    }
    socket.destroy()
  }
}

/** Fastify's `frameworkErrors`: a path that is no URL (a bad percent-encoding) or a parameter too long. */
export function frameworkErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  const api =
    error.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? new ApiError(414, 'PARAMETER_TOO_LONG', 'A path parameter of the request is too long')
      : new ApiError(400, 'INVALID_URL', 'The request path is not a valid URL (a malformed percent-encoding)')
  reply
    .code(api.statusCode)
    .type('application/json; charset=utf-8')
    .header('x-request-id', request.id)
    .send({ ...api.body(), request_id: request.id })
}
