// A clean stop (server.ts on SIGTERM/SIGINT): `app.drain()` refuses new requests with the API's 503
// and waits for the ones in flight, before close() closes the database, which their reads still need.
// Requests injected in the process (the tests' `app.inject`) are let through.
import { Socket } from 'node:net'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { ApiError } from '../lib/core/errors.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Refuses new requests and resolves once those in flight have answered (or after `timeoutMs`). */
    drain: (timeoutMs: number) => Promise<{ waitedFor: number; left: number }>
    /** True from the start of drain() or close(): /health/ready answers 503. */
    readonly shuttingDown: boolean
  }
}

/** Seconds a client is told to wait: long enough for a restart, or for a proxy to pick another server. */
export const SHUTDOWN_RETRY_AFTER_S = 5

const refused = () =>
  new ApiError(503, 'SHUTTING_DOWN', `Server is shutting down; retry in ${SHUTDOWN_RETRY_AFTER_S} s`, undefined, {
    'retry-after': String(SHUTDOWN_RETRY_AFTER_S),
    connection: 'close',
  })

/** A request from a client's connection, as opposed to one injected in the process. */
const fromClient = (request: FastifyRequest) => request.raw.socket instanceof Socket

export default fp(
  async function shutdown(app: FastifyInstance) {
    let stopping = false
    const running = new Set<FastifyRequest>()
    let wake: (() => void) | undefined
    app.decorate('shuttingDown', {
      getter: () => stopping,
    })
    // Callback-style hooks: they run on every request, and an async hook costs a promise each time.
    app.addHook('onRequest', (request, _reply, done) => {
      // Probes keep answering for themselves (/health/ready says it is shutting down).
      if (stopping && fromClient(request) && !request.url.startsWith('/health')) return done(refused())
      running.add(request)
      done()
    })
    const answered = (request: FastifyRequest) => {
      if (running.delete(request) && running.size === 0) wake?.()
    }
    app.addHook('onResponse', (request, _reply, done) => {
      answered(request)
      done()
    })
    // A client that leaves is not waited for here; its handler still is, by close() (plugins/db.ts).
    app.addHook('onRequestAbort', (request, done) => {
      answered(request)
      done()
    })
    app.addHook('preClose', (done) => {
      stopping = true
      done()
    })
    app.decorate('drain', (timeoutMs: number) => {
      stopping = true
      const waitedFor = running.size
      if (waitedFor === 0) return Promise.resolve({ waitedFor, left: 0 })
      return new Promise((resolve) => {
        const timer = setTimeout(() => resolve({ waitedFor, left: running.size }), timeoutMs)
        wake = () => {
          clearTimeout(timer)
          resolve({ waitedFor, left: 0 })
        }
      })
    })
  },
  { name: 'shutdown', dependencies: ['config', 'errors'] },
)
