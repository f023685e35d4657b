// Public service routes: the endpoint listing at `/` and `/health`.
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { sql } from 'kysely'

export default fp(
  async function serviceRoutes(app: FastifyInstance) {
    app.get('/', { schema: { tags: ['service'], summary: 'Endpoint listing' } }, async () => ({
      ...(app.hasRoute({ method: 'POST', url: '/detect' }) ? { detect: '/detect', detect_batch: '/detect/batch' } : {}),
      api: '/api/v1/',
      health: '/health',
      documentation: '/documentation',
    }))

    app.get('/health', { schema: { tags: ['service'], summary: 'Database (and model) status; 503 when a part is down' } }, async (_request, reply) => {
      let database = 'ok'
      try {
        await sql`select 1`.execute(app.db.db)
      } catch {
        database = 'down'
      }
      const model = app.detection.status()
      const status = database === 'ok' && model === 'ok' ? 'ok' : 'down'
      return reply.code(status === 'ok' ? 200 : 503).send({ status, database, model })
    })
  },
  { name: 'service-routes', dependencies: ['db', 'classifier'] },
)
