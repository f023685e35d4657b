// Protection against abuse and overload (SECURITY.md), one place: security headers, per-client rate
// limits, and load shedding when the event loop is saturated. The limits themselves are configuration
// (README "Configuration"); the routes opt in through `config.rateLimit` (see plugins/classifier.ts),
// and plugins/auth.ts counts failed authentications with `app.authFailures`.
import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import helmet, { type HelmetOptions } from 'helmet'
import type { IncomingMessage, ServerResponse } from 'node:http'
import rateLimit from '@fastify/rate-limit'
import { LagMonitor } from '../lib/api/lag-monitor.js'
import { listSetting, type Config } from '../lib/core/config.js'
import { ApiError } from '../lib/core/errors.js'
import { parseAuthorization } from '../lib/data/auth.js'

type RateLimitResult = Awaited<ReturnType<ReturnType<FastifyInstance['createRateLimit']>>>

declare module 'fastify' {
  interface FastifyInstance {
    /** Failed authentications per client: peek before checking a key, count each failure. */
    authFailures: {
      /** The client's state, or undefined when no client can be locked out (no failure within a window). */
      peek(request: FastifyRequest): Promise<RateLimitResult | undefined>
      record(request: FastifyRequest): Promise<RateLimitResult>
    }
  }
}

const PRESSURE_RETRY_AFTER_S = 5

/**
 * The headers helmet sets, computed once. They do not depend on the request (no CSP nonces), and
 * building helmet's middleware per request (what @fastify/helmet does) cost a tenth of the CPU of a
 * small GET (bench/README.md).
 */
export function securityHeaders(options: HelmetOptions): Record<string, string> {
  const headers: Record<string, string> = {}
  const response = {
    setHeader: (name: string, value: string) => void (headers[name.toLowerCase()] = value),
    removeHeader: (name: string) => void delete headers[name.toLowerCase()],
  }
  let done = false
  helmet(options)({} as IncomingMessage, response as unknown as ServerResponse, () => void (done = true))
  if (!done || !headers['content-security-policy']) throw new Error('helmet did not produce its headers synchronously')
  return headers
}

export default fp(
  async function protection(app: FastifyInstance) {
    const config = app.config
    // https://helmetjs.github.io — the usual headers on every answer. The swagger UI pages bring their
    // own content-security-policy (staticCSP in plugins/external.ts), set after these.
    // TLS ends in front of the service (SECURITY.md): no upgrade-insecure-requests, which would send
    // the docs page's own assets to https on a plain-HTTP deployment.
    const headers = securityHeaders({ contentSecurityPolicy: { directives: { upgradeInsecureRequests: null } } })
    app.addHook('onRequest', (request, reply, done) => {
      reply.headers(headers)
      reply.header('x-request-id', request.id)
      done()
    })

    // https://github.com/fastify/fastify-rate-limit — off by default; a route opts in with
    // `config: { rateLimit: … }`. Loopback (the benchmarks, a co-located service) is on the allow list
    // unless RATE_LIMIT_ALLOWLIST says otherwise.
    await app.register(rateLimit, {
      global: false,
      max: config.RATE_LIMIT_DETECT_MAX,
      timeWindow: config.RATE_LIMIT_WINDOW_MS,
      allowList: listSetting(config.RATE_LIMIT_ALLOWLIST),
      errorResponseBuilder: (_request: FastifyRequest, context) =>
        new ApiError(
          429,
          'RATE_LIMITED',
          `Rate limit exceeded: at most ${context.max} requests per ${context.after}; retry in ${Math.ceil(context.ttl / 1000)} s`,
        ),
    })
    // No allow list here: a wrong key is a wrong key wherever it comes from. A client's window starts
    // at a failure, so none can be refused once a whole window has passed since the last failure of
    // any client: until then the limiter is not asked (14–23 µs of every authenticated request in CPU
    // profiles, bench/README.md "Datapoint reads").
    // Counted per client address and the username the key is presented for, so one user guessing
    // keys does not lock out the others behind the same address (a NAT, a proxy); `Bearer` keys name
    // no user and share the address's count.
    const failureLimit = app.createRateLimit({
      max: config.AUTH_FAILURE_MAX,
      timeWindow: config.RATE_LIMIT_WINDOW_MS,
      allowList: [],
      keyGenerator: (request) => `${request.ip} ${parseAuthorization(request.headers.authorization)?.username ?? ''}`,
    })
    let lastFailureAt = -Infinity
    app.decorate('authFailures', {
      peek: async (request: FastifyRequest) =>
        Date.now() - lastFailureAt < config.RATE_LIMIT_WINDOW_MS ? failureLimit(request, { increment: false }) : undefined,
      record: (request: FastifyRequest) => {
        lastFailureAt = Date.now()
        return failureLimit(request)
      },
    })

    limitSilence(app, config)
    shedLoad(app, config)
  },
  { name: 'protection', dependencies: ['config', 'errors'] },
)

/** Slow clients and shutdown: how long a socket may stay silent, and idle sockets closed on close(). */
function limitSilence(app: FastifyInstance, config: Config) {
  // CONNECTION_TIMEOUT_MS limits silence on a socket (app.ts). Once a request has arrived whole, the
  // silence is the server's own (a long transform_upload): the limit is lifted until the answer has
  // gone, then set again for the idle connection (test/protection.test.ts). Injected requests have a
  // socket without timeouts.
  if (config.CONNECTION_TIMEOUT_MS > 0) {
    app.addHook('preHandler', (request, _reply, done) => {
      request.raw.socket?.setTimeout?.(0)
      done()
    })
  }
  // Once close() has begun, a keep-alive connection whose request was in flight becomes idle only
  // after close() closed the idle ones; left open, it held close() until its timeout (60 s on
  // PostgreSQL in test/graceful.test.ts). It is closed as soon as its answer has gone.
  let closing = false
  app.addHook('preClose', (done) => {
    closing = true
    done()
  })
  app.addHook('onResponse', (request, _reply, done) => {
    if (closing) setImmediate(() => app.server.closeIdleConnections())
    else if (config.CONNECTION_TIMEOUT_MS > 0) request.raw.socket?.setTimeout?.(config.CONNECTION_TIMEOUT_MS)
    done()
  })
}

/** Load shedding (MAX_EVENT_LOOP_DELAY_MS, PRESSURE_WINDOW_MS). */
function shedLoad(app: FastifyInstance, config: Config) {
  // Load shedding: 503 with Retry-After while the event loop is saturated, so a process past its
  // capacity answers some requests quickly instead of every one too late. Saturation is sustained
  // lag: every sample of the last PRESSURE_WINDOW_MS (at least three) above MAX_EVENT_LOOP_DELAY_MS.
  // One stall (a long synchronous step, a GC pause, start-up) is not load and never sheds. Liveness
  // is never shed: a saturated process is still alive.
  if (config.MAX_EVENT_LOOP_DELAY_MS > 0) {
    const monitor = new LagMonitor(config.MAX_EVENT_LOOP_DELAY_MS, config.PRESSURE_WINDOW_MS)
    // Armed when the app is ready: listen() makes it ready after server.ts's start-up work (the
    // demo data, the model), and an app answering injected requests is ready too.
    app.addHook('onReady', (done) => {
      monitor.start()
      done()
    })
    app.addHook('onClose', (_instance, done) => {
      monitor.stop()
      done()
    })
    app.addHook('onRequest', (request, _reply, done) => {
      if (!monitor.saturated() || request.url === '/health/live') return done()
      done(
        new ApiError(503, 'UNDER_PRESSURE', `Server is overloaded (eventLoopDelay); retry in ${PRESSURE_RETRY_AFTER_S} s`, undefined, {
          'retry-after': String(PRESSURE_RETRY_AFTER_S),
        }),
      )
    })
  }
}
