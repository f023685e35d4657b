// Prometheus metrics (lib/core/metrics.ts) at GET /metrics: every answer's duration by method, route
// pattern and status, and whatever the layers record. Open unless METRICS_TOKEN is set, then it needs
// `Authorization: Bearer <token>` (a deployment reachable from outside sets it, or keeps /metrics to
// its proxy's internal network).
import { createHash, timingSafeEqual } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { httpDuration, registry } from '../lib/core/metrics.js'
import { ApiError } from '../lib/core/errors.js'
import { errorSchema } from '../lib/api/openapi.js'

// Compared as SHA-256 digests: always 32 bytes each, so the comparison takes the same time whatever was
// sent (a token's length is not revealed) and never throws (timingSafeEqual refuses buffers of
// different byte lengths, which a non-ASCII token of the right character count is).
const digest = (text: string) => createHash('sha256').update(text).digest()
const sameSecret = (given: string, expected: Buffer) => timingSafeEqual(digest(given), expected)

export default fp(
  async function metrics(app: FastifyInstance) {
    if (app.config.METRICS === '0') return
    // Callback-style: it runs on every answer, and an async hook costs a promise each time.
    app.addHook('onResponse', (request, reply, done) => {
      httpDuration.observe({ method: request.method, route: request.routeOptions.url ?? 'unmatched', status_code: reply.statusCode }, reply.elapsedTime / 1000)
      done()
    })
  },
  { name: 'metrics', dependencies: ['config'] },
)

/**
 * The /metrics route, registered after the OpenAPI plugin so that the document describes it (the
 * timing hook above comes first, to time every answer).
 */
export const metricsRoute = fp(
  async function metricsRoute(app: FastifyInstance) {
    if (app.config.METRICS === '0') return
    const token = app.config.METRICS_TOKEN
    const expectedDigest = token ? digest(token) : undefined
    app.get(
      '/metrics',
      {
        schema: {
          tags: ['service'],
          operationId: 'getMetrics',
          summary: 'Prometheus metrics (Bearer METRICS_TOKEN when set)',
          security: [],
          response: {
            200: { description: 'The Prometheus text format', content: { [registry.contentType]: { schema: { type: 'string' } } } },
            401: { description: 'METRICS_TOKEN is set and the request does not carry it', ...errorSchema },
          },
        },
      },
      async (request, reply) => {
        if (token) {
          const given = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '')?.[1]
          if (!given || !sameSecret(given, expectedDigest!)) {
            throw new ApiError(401, 'UNAUTHENTICATED', 'Metrics need Authorization: Bearer <METRICS_TOKEN>', undefined, {
              'www-authenticate': 'Bearer realm="metrics"',
            })
          }
        }
        return reply.type(registry.contentType).send(await registry.metrics())
      },
    )
  },
  { name: 'metrics-route', dependencies: ['metrics', 'external'] },
)
