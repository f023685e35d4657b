// Public service routes: the endpoint listing at `/` and `/health`.
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { sql } from 'kysely'
import { pendingMigrations } from '../lib/data/migrations.js'
import { failoverState } from '../lib/data/writable-host.js'
import { API_SECURITY, errorSchema } from '../lib/api/openapi.js'
import { resources } from '../resources/index.js'

/**
 * A probe answers within a second whatever the database does (a hung one answers nothing): its
 * database checks get this long, then count as down.
 */
const CHECK_WITHIN_MS = 700
/** A 503 says when to ask again, as the API's do (a restarted database, a failover). */
const RETRY_AFTER = '2'

/** `work`, or a rejection once `ms` have passed without its answer (the work itself goes on, unheard). */
function within<T>(ms: number, work: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)
  })
  return Promise.race([work(), late]).finally(() => clearTimeout(timer))
}

export default fp(
  async function serviceRoutes(app: FastifyInstance) {
    resourceIndex(app)
    endpointListing(app)

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
          summary: 'Database reachable (with several hosts: taking writes), migrations applied, model loaded, not shutting down; 503 otherwise',
          security: [],
        },
      },
      async (_request, reply) => {
        const checks: Record<string, string> = {
          database: 'ok',
          migrations: 'ok',
          model: app.detection.status(),
          shutting_down: app.shuttingDown ? 'yes' : 'no',
        }
        const started = performance.now()
        try {
          if (app.db.hung?.()) throw new Error('hung')
          // At work, the embedded database answers for itself; only this process's start migrates it.
          if (!databaseAtWork(app)) {
            const pending = await within(CHECK_WITHIN_MS, () => pendingMigrations(app.db))
            if (pending.length) checks.migrations = `pending: ${pending.join(', ')}`
          }
        } catch {
          checks.database = 'down'
          checks.migrations = 'unknown'
        }
        const { writable } = app.db
        if (writable?.several) {
          const left = Math.max(CHECK_WITHIN_MS - (performance.now() - started), 1)
          Object.assign(
            checks,
            await within(left, () => failoverState(app.db.db, writable)).catch(() => ({
              database_primary: writable.hostName(),
              takes_writes: 'unknown',
              synchronous_standby: 'unknown',
            })),
          )
        }
        // Several hosts: ready only while a write would succeed on the host in use.
        const writes = !writable?.several || checks.takes_writes === 'yes'
        const ready = checks.database === 'ok' && checks.migrations === 'ok' && checks.model === 'ok' && writes && !app.shuttingDown
        if (!ready) reply.header('retry-after', RETRY_AFTER)
        return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not ready', ...checks })
      },
    )

    app.get(
      '/health',
      { schema: { tags: ['service'], operationId: 'getHealth', summary: 'Database (and model) status; 503 when a part is down', security: [] } },
      async (_request, reply) => {
        let database = 'ok'
        try {
          if (app.db.hung?.()) throw new Error('hung')
          if (!databaseAtWork(app)) await within(CHECK_WITHIN_MS, () => sql`select 1`.execute(app.db.db))
        } catch {
          database = 'down'
        }
        const model = app.detection.status()
        const status = database === 'ok' && model === 'ok' ? 'ok' : 'down'
        if (status !== 'ok') reply.header('retry-after', RETRY_AFTER)
        return reply.code(status === 'ok' ? 200 : 503).send({ status, database, model })
      },
    )
  },
  { name: 'service-routes', dependencies: ['db', 'classifier'] },
)

/**
 * The embedded database's thread holds its one session for someone now (a statement runs, a
 * transaction is open): it is alive and working, which is what a health check asks, and a `select 1`
 * would only wait its turn behind that work. Its thread ending is `hung()`.
 */
const databaseAtWork = (app: FastifyInstance) => app.db.embedded?.busy() ?? false

/** `GET /`: the service's endpoints. */
function endpointListing(app: FastifyInstance) {
  app.get('/', { schema: { tags: ['service'], operationId: 'listEndpoints', summary: 'Endpoint listing', security: [] } }, async () => ({
    ...(app.hasRoute({ method: 'POST', url: '/detect' }) ? { detect: '/detect', detect_batch: '/detect/batch' } : {}),
    api: '/api/v1/',
    health: '/health',
    metrics: '/metrics',
    documentation: '/documentation',
    // The web app, where people sign in (absent from an app built without it).
    ...(app.hasRoute({ method: 'GET', url: '/app/' }) ? { app: '/app/' } : {}),
  }))
}

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
