// Authentication of every /api/v1 request (resource-api §5): `ApiKey user:key` or `Bearer key`.
import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { findUserByKey, parseAuthorization, touchKey, type AuthUser } from '../lib/auth.js'
import { ApiError } from '../lib/errors.js'

declare module 'fastify' {
  interface FastifyRequest {
    user?: AuthUser
  }
}

export const isApiPath = (url: string) => url === '/api/v1' || url.startsWith('/api/v1/') || url.startsWith('/api/v1?')

export default fp(
  async function auth(app: FastifyInstance) {
    app.decorateRequest('user', undefined)
    app.addHook('onRequest', async (request: FastifyRequest) => {
      if (request.method === 'OPTIONS' || !isApiPath(request.url)) return
      const credentials = parseAuthorization(request.headers.authorization)
      if (!credentials) throw new ApiError(401, 'UNAUTHENTICATED', 'Authentication required')
      const user = await findUserByKey(app.db.db, credentials)
      if (!user) throw new ApiError(401, 'UNAUTHENTICATED', 'Invalid API key')
      request.user = user
      await touchKey(app.db.db, user)
    })
  },
  { name: 'auth', dependencies: ['db'] },
)
