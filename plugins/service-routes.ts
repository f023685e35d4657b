// Public service routes: the endpoint listing at `/` and `/health`.
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { sql } from 'kysely'
import { pendingMigrations } from '../lib/data/migrations.js'
import { failoverState } from '../lib/data/writable-host.js'
import { API_SECURITY, errorSchema } from '../lib/api/openapi.js'
import { resources } from '../resources/index.js'

export default fp(
  async function serviceRoutes(app: FastifyInstance) {
    resourceIndex(app)
    app.get('/', { schema: { tags: ['service'], operationId: 'listEndpoints', summary: 'Endpoint listing', security: [] } }, async () => ({
      ...(app.hasRoute({ method: 'POST', url: '/detect' }) ? { detect: '/detect', detect_batch: '/detect/batch' } : {}),
      api: '/api/v1/',
      health: '/health',
      metrics: '/metrics',
      documentation: '/documentation',
    }))

    let closing = false
    app.addHook('preClose', (done) => {
      closing = true
      done()
    })

    // Liveness: the process answers (never shed, plugins/protection.ts). A failure means restart it.
    app.get('/health/live', { schema: { tags: ['service'], operationId: 'getLiveness', summary: 'The process answers', security: [] } }, async () => ({
      status: 'ok',
    }))

    // Readiness: send it traffic. A failure means route around it for now.
    app.get(
      '/health/ready',
      {
        schema: {
          tags: ['service'],
          operationId: 'getReadiness',
          summary: 'Database reachable, migrations applied, model loaded, not shutting down; 503 otherwise',
          security: [],
        },
      },
      async (_request, reply) => {
        const checks: Record<string, string> = { database: 'ok', migrations: 'ok', model: app.detection.status(), shutting_down: closing ? 'yes' : 'no' }
        try {
          const pending = await pendingMigrations(app.db)
          if (pending.length) checks.migrations = `pending: ${pending.join(', ')}`
        } catch {
          checks.database = 'down'
          checks.migrations = 'unknown'
        }
        if (app.db.writable?.several) Object.assign(checks, await failoverState(app.db.db, app.db.writable))
        const ready = checks.database === 'ok' && checks.migrations === 'ok' && checks.model === 'ok' && !closing
        return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not ready', ...checks })
      },
    )

    app.get(
      '/health',
      { schema: { tags: ['service'], operationId: 'getHealth', summary: 'Database (and model) status; 503 when a part is down', security: [] } },
      async (_request, reply) => {
        let database = 'ok'
        try {
          await sql`select 1`.execute(app.db.db)
        } catch {
          database = 'down'
        }
        const model = app.detection.status()
        const status = database === 'ok' && model === 'ok' ? 'ok' : 'down'
        return reply.code(status === 'ok' ? 200 : 503).send({ status, database, model })
      },
    )
  },
  { name: 'service-routes', dependencies: ['db', 'classifier'] },
)

/** The API's index: every resource with its list and schema URLs. */
function resourceIndex(app: FastifyInstance) {
  app.get(
    '/api/v1/',
    {
      schema: {
        tags: ['api'],
        operationId: 'listResources',
        summary: 'Every resource with its list and schema URLs',
        security: API_SECURITY,
        response: { 401: errorSchema },
      },
    },
    async () => {
      const names = resources.map((r) => r.name).sort()
      return Object.fromEntries(names.map((n) => [n, { list_endpoint: `/api/v1/${n}/`, schema: `/api/v1/${n}/schema/` }]))
    },
  )
}
