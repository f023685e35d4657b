// The web app for people at /app/ (web/): its files as they are, and the libraries it imports, from
// node_modules, under /app/vendor/. Nothing comes from a CDN; the pages' CSP allows this origin only.
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { brotliCompressSync, constants } from 'node:zlib'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import fastifyStatic from '@fastify/static'
import { PROJECT_ROOT } from '../lib/core/paths.js'

const MODULES = join(PROJECT_ROOT, 'node_modules')

/**
 * Each module as text, brotli-compressed once when first asked for (ECharts is 1 MB as text, 311 KB
 * compressed, 27 ms of compression: not paid at every process start, nor by processes that never serve the app).
 */
function withBrotli(files: Record<string, string>) {
  const quality = { params: { [constants.BROTLI_PARAM_QUALITY]: 5 } }
  return new Map(
    Object.entries(files).map(([name, text]) => {
      let compressed: Buffer | undefined
      return [name, { text, br: () => (compressed ??= brotliCompressSync(text, quality)) }]
    }),
  )
}

/** The page's import map, the one inline script it has: allowed by its hash, nothing else inline. */
function importMapHash(page: string) {
  const map = /<script type="importmap">([\s\S]*?)<\/script>/.exec(page)
  if (!map) throw new Error('web/index.html has no import map')
  return `'sha256-${createHash('sha256').update(map[1]).digest('base64')}'`
}

/** No inline script but the import map, no inline style, nothing from another origin, not framed. */
const appCsp = (page: string) =>
  `default-src 'self'; script-src 'self' ${importMapHash(page)}; style-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'`

export default fp(
  async function webApp(app: FastifyInstance) {
    const vendor = withBrotli({
      'preact.mjs': readFileSync(join(MODULES, 'preact/dist/preact.mjs'), 'utf8'),
      'preact-hooks.mjs': readFileSync(join(MODULES, 'preact/hooks/dist/hooks.mjs'), 'utf8'),
      'htm.mjs': readFileSync(join(MODULES, 'htm/dist/htm.mjs'), 'utf8'),
      'echarts.mjs': readFileSync(join(MODULES, 'echarts/dist/echarts.esm.min.mjs'), 'utf8'),
    })
    // The page itself at /app/ (and /app): one file, read once.
    const page = readFileSync(join(PROJECT_ROOT, 'web', 'index.html'), 'utf8')
    const csp = appCsp(page)
    app.addHook('onSend', (request, reply, payload, done) => {
      if (request.url.startsWith('/app/') || request.url === '/app') reply.header('content-security-policy', csp)
      done(null, payload)
    })
    app.get<{ Params: { file: string } }>('/app/vendor/:file', { schema: { hide: true } }, async (request, reply) => {
      const file = vendor.get(request.params.file)
      if (file === undefined) return reply.callNotFound()
      reply.type('text/javascript; charset=utf-8').header('cache-control', 'public, max-age=3600')
      reply.vary('Accept-Encoding')
      if (/\bbr\b/.test(String(request.headers['accept-encoding'] ?? ''))) return reply.header('content-encoding', 'br').send(file.br())
      return reply.send(file.text)
    })
    app.get('/app/', { schema: { hide: true } }, async (_request, reply) => reply.type('text/html; charset=utf-8').send(page))
    await app.register(fastifyStatic, { root: join(PROJECT_ROOT, 'web'), prefix: '/app/', decorateReply: false, index: false })
  },
  { name: 'web-app', dependencies: ['protection', 'external'] },
)
