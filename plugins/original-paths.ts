// The original front-end called its export at the root, `/export_file/?type=…&path=…`; here it is an
// API route under /api/v1/. The root path answers 308 to that route with the same query, so the
// original's links and export button still get their file: a browser follows with its cookie, and
// the route checks credentials as every API route does. Not in the OpenAPI document: it is no route
// of this API, only the way to one.
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'

export default fp(
  async function originalPaths(app: FastifyInstance) {
    app.get('/export_file/', { schema: { hide: true } }, async (request, reply) => {
      const query = request.url.indexOf('?')
      return reply.redirect(`/api/v1/export_file/${query === -1 ? '' : request.url.slice(query)}`, 308)
    })
  },
  { name: 'original-paths', dependencies: ['export-file'] },
)
