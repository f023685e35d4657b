// Request bodies (resource-api §11.1): JSON (an empty body is {}), urlencoded (repeated keys become
// arrays). Anything else is refused with 415, which is why text/plain's default parser is removed.
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import formbody from '@fastify/formbody'
import { ApiError } from '../lib/errors.js'

export default fp(
  async function bodyParsers(app: FastifyInstance) {
    app.removeAllContentTypeParsers()
    app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
      const text = body as string
      if (text.trim() === '') return done(null, {})
      try {
        done(null, JSON.parse(text))
      } catch {
        done(new ApiError(400, 'INVALID_JSON', 'Request is not valid JSON.'), undefined)
      }
    })
    // https://github.com/fastify/fastify-formbody
    await app.register(formbody)
  },
  { name: 'body-parsers' },
)
