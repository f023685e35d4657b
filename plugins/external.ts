// Third-party plugins with their options, one place.
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import cors from '@fastify/cors'
import sensible from '@fastify/sensible'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'

export default fp(
  async function external(app: FastifyInstance) {
    // https://github.com/fastify/fastify-cors — preflight answered with 204, no credentials needed.
    const origin = app.config.CORS_ORIGIN === '*' ? '*' : app.config.CORS_ORIGIN.split(',').map((o) => o.trim())
    await app.register(cors, { origin, strictPreflight: false, methods: ['GET', 'POST', 'PATCH', 'DELETE', 'OPTIONS'] })
    // https://github.com/fastify/fastify-sensible
    await app.register(sensible)
    // https://github.com/fastify/fastify-swagger — OpenAPI generated from the route schemas.
    await app.register(swagger, {
      openapi: {
        openapi: '3.0.3',
        info: {
          title: 'rhizome-api',
          description: 'Immunisation-campaign data API (/api/v1/) and text offensiveness detection (/detect).',
          version: '1.0.0',
        },
        // Relative: the document describes whichever server serves it.
        servers: [{ url: '/', description: 'this server' }],
        components: {
          securitySchemes: {
            apiKey: { type: 'apiKey', in: 'header', name: 'Authorization', description: '`ApiKey <username>:<key>` or `Bearer <key>`' },
          },
        },
      },
    })
    // https://github.com/fastify/fastify-swagger-ui — UI at /documentation, JSON at /documentation/json.
    await app.register(swaggerUi, {
      routePrefix: '/documentation',
      staticCSP: true,
      transformStaticCSP: (header) => header.replace(/\s*upgrade-insecure-requests;?/, ''),
    })
  },
  { name: 'external', dependencies: ['config'] },
)
