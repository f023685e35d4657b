// The detection service (detect.md): POST /detect and /detect/batch, scored by the committed TF.js
// model through the micro-batcher. The model loads in the background at start-up; until it is ready
// /detect answers 503 MODEL_NOT_READY and /health reports `model: "loading"`.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { ApiError } from '../lib/core/errors.js'
import { Detector, type DetectionResult } from '../classifier/detector.js'
import { MicroBatcher } from '../classifier/batcher.js'
import { initTf } from '../classifier/runtime.js'
import { MODEL_DIR } from '../classifier/paths.js'
import { errorSchema } from '../lib/api/openapi.js'
import { documentOnly } from '../lib/api/route-schemas.js'
import { detectTexts } from '../lib/core/metrics.js'
import type { Config } from '../lib/core/config.js'

declare module 'fastify' {
  interface FastifyInstance {
    detection: { status(): 'ok' | 'loading' | 'down'; ready: Promise<Detector> }
  }
}

// One model per process: loading it is the expensive part, and it is read-only afterwards.
let loading: Promise<Detector> | undefined
export function loadDetector(log: (message: string) => void = () => {}): Promise<Detector> {
  loading ??= initTf('wasm', log).then(() => Detector.load(MODEL_DIR))
  return loading
}

/** Characters (code points) of `text`; a lone surrogate counts as one, as `[...text]` counts it. */
function codePoints(text: string): number {
  let n = 0
  for (let i = 0; i < text.length; i++, n++) {
    const c = text.charCodeAt(i)
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) i++
  }
  return n
}

const resultSchema = {
  type: 'object',
  properties: {
    result: {
      type: 'object',
      properties: { 'not-offensive': { type: 'string', pattern: '^(0|1)\\.\\d{6}$' }, offensive: { type: 'string', pattern: '^(0|1)\\.\\d{6}$' } },
      required: ['not-offensive', 'offensive'],
    },
    text: { type: 'string' },
  },
  required: ['result', 'text'],
}

/** A text to score: a string of at most `maxChars` characters (code points). */
function checkText(value: unknown, field: string, maxChars: number): string {
  if (value === undefined) throw new ApiError(400, 'VALIDATION_ERROR', `${field}: required`)
  if (typeof value !== 'string') throw new ApiError(400, 'VALIDATION_ERROR', `${field}: must be a string`)
  // The limit counts characters (code points). A string no longer than the limit in UTF-16 units
  // is within it, so only longer ones are counted (instead of spreading every text into an array
  // of one string per character).
  const length = value.length <= maxChars ? value.length : codePoints(value)
  if (length > maxChars) throw new ApiError(413, 'TEXT_TOO_LONG', `${field}: at most ${maxChars} characters (got ${length})`)
  return value
}

/** The body of a detection request: a JSON object. */
function jsonObject(request: FastifyRequest): Record<string, unknown> {
  const type = (request.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase()
  if (type !== 'application/json') throw new ApiError(415, 'UNSUPPORTED_MEDIA_TYPE', `Unsupported Media Type: ${type || 'none'}`)
  const body = request.body
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new ApiError(400, 'VALIDATION_ERROR', 'body: must be a JSON object')
  return body as Record<string, unknown>
}

const errors = { 400: errorSchema, 413: errorSchema, 415: errorSchema, 429: errorSchema, 503: errorSchema }

/** The OpenAPI descriptions of /detect and /detect/batch. */
const detectSchema = (config: Config) => ({
  tags: ['detection'],
  operationId: 'detect',
  security: [],
  summary: 'Score a text as offensive / not offensive',
  body: { type: 'object', required: ['text'], properties: { text: { type: 'string', maxLength: config.DETECT_MAX_CHARS } } },
  response: { 200: resultSchema, ...errors },
})
const batchSchema = (config: Config) => ({
  tags: ['detection'],
  operationId: 'detectBatch',
  security: [],
  summary: 'Score several texts; results in input order, each as POST /detect gives it',
  body: { type: 'object', required: ['texts'], properties: { texts: { type: 'array', items: { type: 'string' }, maxItems: config.DETECT_MAX_BATCH } } },
  response: { 200: { type: 'object', properties: { results: { type: 'array', items: resultSchema } }, required: ['results'] }, ...errors },
})

export default fp(
  async function classifier(app: FastifyInstance) {
    const config = app.config
    let detector: Detector | undefined
    let failed = false
    const ready = loadDetector((m) => app.log.warn(m))
    ready.then(
      (d) => (detector = d),
      (error) => {
        failed = true
        app.log.error({ err: error }, 'detection model failed to load')
      },
    )
    app.decorate('detection', { status: () => (detector ? 'ok' : failed ? 'down' : 'loading'), ready })
    const batcher = new MicroBatcher((windows) => detector!.scoreWindows(windows), {
      maxBatch: config.DETECT_MICROBATCH_MAX,
      waitMs: config.DETECT_MICROBATCH_WAIT_MS,
      maxQueue: config.DETECT_QUEUE_MAX,
    })

    const modelReady = () => {
      if (!detector) {
        if (failed) throw new ApiError(500, 'INTERNAL_ERROR', 'An internal error occurred')
        throw new ApiError(503, 'MODEL_NOT_READY', 'Model is loading, retry shortly', undefined, { 'retry-after': '1' })
      }
      return detector
    }

    /** Every text's result; the windows of all texts go through the micro-batcher together. */
    async function detect(texts: string[]): Promise<DetectionResult[]> {
      const model = modelReady()
      const perText = texts.map((t) => model.windowsOf(t))
      const scores = await batcher.score(perText.flat())
      detectTexts.inc(texts.length)
      let offset = 0
      return perText.map((windows) => {
        let p = 0
        for (let j = 0; j < windows.length; j++) p = Math.max(p, scores[offset + j])
        offset += windows.length
        return Detector.format(model.served(windows, p))
      })
    }

    const rateLimit = { max: config.RATE_LIMIT_DETECT_MAX, timeWindow: config.RATE_LIMIT_WINDOW_MS }
    app.post(
      '/detect',
      { bodyLimit: 256 * 1024, config: { rateLimit }, ...documentOnly, schema: detectSchema(config) },
      async (request: FastifyRequest, reply: FastifyReply) => {
        const text = checkText(jsonObject(request).text, 'text', config.DETECT_MAX_CHARS)
        const [result] = await detect([text])
        return reply.send({ result, text })
      },
    )

    app.post(
      '/detect/batch',
      { bodyLimit: config.DETECT_MAX_BATCH * 40 * 1024, config: { rateLimit }, ...documentOnly, schema: batchSchema(config) },
      async (request: FastifyRequest) => {
        const texts = jsonObject(request).texts
        if (texts === undefined) throw new ApiError(400, 'VALIDATION_ERROR', 'texts: required')
        if (!Array.isArray(texts)) throw new ApiError(400, 'VALIDATION_ERROR', 'texts: must be an array of strings')
        if (texts.length > config.DETECT_MAX_BATCH) {
          throw new ApiError(413, 'TOO_MANY_TEXTS', `texts: at most ${config.DETECT_MAX_BATCH} items (got ${texts.length})`)
        }
        const checked = texts.map((t, i) => checkText(t, `texts/${i}`, config.DETECT_MAX_CHARS))
        const results = await detect(checked)
        return { results: results.map((result, i) => ({ result, text: checked[i] })) }
      },
    )
  },
  { name: 'classifier', dependencies: ['config', 'protection'] },
)
