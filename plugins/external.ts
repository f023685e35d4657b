// Third-party plugins with their options, one place.
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import cookie from '@fastify/cookie'
import cors from '@fastify/cors'
import sensible from '@fastify/sensible'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import { ERROR_ENVELOPE, equivalentPaths } from '../lib/api/openapi.js'
import { resources } from '../resources/index.js'

export default fp(
  async function external(app: FastifyInstance) {
    // https://github.com/fastify/fastify-cors — preflight answered with 204, no credentials needed.
    const origin = app.config.CORS_ORIGIN === '*' ? '*' : app.config.CORS_ORIGIN.split(',').map((o) => o.trim())
    await app.register(cors, { origin, strictPreflight: false, methods: ['GET', 'POST', 'PATCH', 'DELETE', 'OPTIONS'] })
    // https://github.com/fastify/fastify-sensible — reply.vary, which the HTTP cache's answers use: it
    // appends to Vary, where a header() would replace the Origin that CORS set.
    await app.register(sensible)
    // https://github.com/fastify/fastify-cookie — the session cookie of people signed in (plugins/session.ts).
    await app.register(cookie)
    // https://github.com/fastify/fastify-swagger — OpenAPI generated from the route schemas. Shared
    // schemas (the error envelope) become components named by their $id.
    app.addSchema(ERROR_ENVELOPE)
    await app.register(swagger, {
      refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
      // The original names and the slash-less forms, as references to the paths they answer like.
      transformObject: (documentObject) => {
        if (!('openapiObject' in documentObject)) return documentObject.swaggerObject
        const { openapiObject } = documentObject
        const aliases = resources.flatMap((r) => r.aliases.map((alias) => ({ alias, canonical: r.name })))
        return { ...openapiObject, paths: equivalentPaths(openapiObject.paths ?? {}, aliases) } as typeof openapiObject
      },
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
            sessionCookie: {
              type: 'apiKey',
              in: 'cookie',
              name: 'rhizome_session',
              description:
                'Set by `POST /api/v1/session/` (`__Host-rhizome_session` behind TLS). A request that changes something with it must come from this origin (`Origin`).',
            },
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
