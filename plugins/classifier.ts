// The detection service (detect.md): POST /detect and /detect/batch, scored by the committed TF.js
// model through the micro-batcher. The model loads in the background at start-up; until it is ready
// /detect answers 503 MODEL_NOT_READY and /health reports `model: "loading"`.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import fp from 'fastify-plugin'
import { ApiError } from '../lib/core/errors.js'
import { Detector, type DetectionResult } from '../classifier/detector.js'
import { MicroBatcher } from '../classifier/batcher.js'
import { initTf } from '../classifier/runtime.js'
import { MODEL_DIR } from '../classifier/paths.js'
import { errorSchema } from '../lib/api/openapi.js'
import { type Refusal, typeboxValidation } from '../lib/api/route-validation.js'
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

const Score = Type.String({ pattern: '^(0|1)\\.\\d{6}$' })
const Result = Type.Object({ result: Type.Object({ 'not-offensive': Score, offensive: Score }), text: Type.String() })

/** What the route's validator refused (lib/api/route-schemas.ts), in the API's words: a text too long is 413. */
function refusal({ keyword, field, value, params }: Refusal): ApiError {
  if (keyword === 'maxLength') return new ApiError(413, 'TEXT_TOO_LONG', `${field}: at most ${params.limit} characters (got ${codePoints(value as string)})`)
  if (keyword === 'maxItems') return new ApiError(413, 'TOO_MANY_TEXTS', `${field}: at most ${params.limit} items (got ${(value as unknown[]).length})`)
  if (keyword === 'required') return new ApiError(400, 'VALIDATION_ERROR', `${field}: required`)
  const expected = field === 'body' ? 'a JSON object' : field === 'texts' ? 'an array of strings' : 'a string'
  return new ApiError(400, 'VALIDATION_ERROR', `${field}: must be ${expected}`)
}

/** Only a JSON body is scored: a form or plain text is 415, not a text to read. */
function requireJson(request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void) {
  const type = (request.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase()
  done(type === 'application/json' ? undefined : new ApiError(415, 'UNSUPPORTED_MEDIA_TYPE', `Unsupported Media Type: ${type || 'none'}`))
}

const errors = { 400: errorSchema, 413: errorSchema, 415: errorSchema, 429: errorSchema, 503: errorSchema }

/** The routes' schemas: what Fastify validates each body by and serialises each answer from, and OpenAPI shows. */
const detectSchema = (config: Config) => ({
  tags: ['detection'],
  operationId: 'detect',
  security: [],
  summary: 'Score a text as offensive / not offensive',
  body: Type.Object({ text: Type.String({ maxLength: config.DETECT_MAX_CHARS }) }),
  response: { 200: Result, ...errors },
})
const batchSchema = (config: Config) => ({
  tags: ['detection'],
  operationId: 'detectBatch',
  security: [],
  summary: 'Score several texts; results in input order, each as POST /detect gives it',
  body: Type.Object({ texts: Type.Array(Type.String({ maxLength: config.DETECT_MAX_CHARS }), { maxItems: config.DETECT_MAX_BATCH }) }),
  response: { 200: Type.Object({ results: Type.Array(Result) }), ...errors },
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
    const routes = app.withTypeProvider<TypeBoxTypeProvider>()
    const validation = { preValidation: requireJson, ...typeboxValidation(refusal) }
    routes.post('/detect', { bodyLimit: 256 * 1024, config: { rateLimit }, ...validation, schema: detectSchema(config) }, async (request) => {
      const { text } = request.body
      const [result] = await detect([text])
      return { result, text }
    })

    routes.post(
      '/detect/batch',
      { bodyLimit: config.DETECT_MAX_BATCH * 40 * 1024, config: { rateLimit }, ...validation, schema: batchSchema(config) },
      async (request) => {
        const { texts } = request.body
        const results = await detect(texts)
        return { results: results.map((result, i) => ({ result, text: texts[i] })) }
      },
    )
  },
  { name: 'classifier', dependencies: ['config', 'protection'] },
)
