// The web app for people at /app/ (web/): its files as they are, and the libraries it imports, from
// node_modules, under /app/vendor/. Nothing comes from a CDN; the pages' CSP allows this origin only.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import fastifyStatic from '@fastify/static'
import { PROJECT_ROOT } from '../lib/core/paths.js'

const MODULES = join(PROJECT_ROOT, 'node_modules')

/** A library module, its bare `preact` imports pointed at the vendored file (a browser resolves no bare names). */
const vendored = (file: string) => readFileSync(file, 'utf8').replace(/from\s*"preact"/g, 'from"/app/vendor/preact.mjs"')

/** No inline script or style, nothing from another origin, not framed. */
const APP_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'"

export default fp(
  async function webApp(app: FastifyInstance) {
    const vendor: Record<string, string> = {
      'preact.mjs': vendored(join(MODULES, 'preact/dist/preact.mjs')),
      'preact-hooks.mjs': vendored(join(MODULES, 'preact/hooks/dist/hooks.mjs')),
      'htm.mjs': vendored(join(MODULES, 'htm/dist/htm.mjs')),
    }
    app.addHook('onSend', (request, reply, payload, done) => {
      if (request.url.startsWith('/app/') || request.url === '/app') reply.header('content-security-policy', APP_CSP)
      done(null, payload)
    })
    app.get('/app/vendor/:file', { schema: { hide: true } }, async (request, reply) => {
      const text = vendor[(request.params as { file: string }).file]
      if (text === undefined) return reply.callNotFound()
      return reply.type('text/javascript; charset=utf-8').header('cache-control', 'public, max-age=3600').send(text)
    })
    // The page itself at /app/ (and /app): one file, read once.
    const page = readFileSync(join(PROJECT_ROOT, 'web', 'index.html'), 'utf8')
    app.get('/app/', { schema: { hide: true } }, async (_request, reply) => reply.type('text/html; charset=utf-8').send(page))
    await app.register(fastifyStatic, { root: join(PROJECT_ROOT, 'web'), prefix: '/app/', decorateReply: false, index: false })
  },
  { name: 'web-app', dependencies: ['protection'] },
)
