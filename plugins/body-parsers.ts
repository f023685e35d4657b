// Request bodies (resource-api §11.1): JSON (an empty body is {}), urlencoded (repeated keys become
// arrays). Anything else is refused with 415, which is why text/plain's default parser is removed.
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { ApiError } from '../lib/core/errors.js'
import { assertPercentEncodedUtf8 } from '../lib/api/query-params.js'
import { jsonDepth } from '../lib/core/json-depth.js'

/** Repeated form keys become arrays (a field given twice is then refused by name, lib/api/body.ts). */
function groupRepeated(params: URLSearchParams): Map<string, string | string[]> {
  const fields = new Map<string, string | string[]>()
  for (const [key, value] of params) {
    const seen = fields.get(key)
    fields.set(key, seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value])
  }
  return fields
}

// `fatal`: bytes that are not UTF-8 are refused, not turned into U+FFFD and stored.
const utf8 = new TextDecoder('utf-8', { fatal: true })

const tooDeep = (what: string, limit: number) =>
  new ApiError(400, 'JSON_TOO_DEEP', `${what} nests objects and arrays deeper than ${limit} levels (JSON_MAX_DEPTH)`, { limit })

export default fp(
  async function bodyParsers(app: FastifyInstance) {
    const maxDepth = app.config.JSON_MAX_DEPTH
    // A field may carry JSON as text (chart_json, a dashboard's rows in a form), parsed when its
    // column is read: its nesting counts on its own. Only text that starts as JSON does is read
    // (a /detect text or a title is not scanned a second time).
    const tooDeepField = (fields: Iterable<[string, unknown]>) => {
      for (const [name, value] of fields) {
        if ([value].flat().some((v) => typeof v === 'string' && /^\s*[[{]/.test(v) && jsonDepth(v, maxDepth) > maxDepth)) return name
      }
    }
    // Compressed bodies are not decoded here; reading them as plain text would store garbage.
    app.addHook('preParsing', async (request) => {
      const encoding = request.headers['content-encoding']
      if (encoding && encoding.trim().toLowerCase() !== 'identity') {
        throw new ApiError(415, 'UNSUPPORTED_CONTENT_ENCODING', `Unsupported Content-Encoding: ${encoding}`)
      }
    })
    app.removeAllContentTypeParsers()
    app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => {
      let text: string
      try {
        text = utf8.decode(body as Buffer)
      } catch {
        return done(new ApiError(400, 'INVALID_UTF8', 'Request body is not valid UTF-8'), undefined)
      }
      if (text.trim() === '') return done(null, {})
      if (jsonDepth(text, maxDepth) > maxDepth) return done(tooDeep('The request body', maxDepth), undefined)
      let parsed: unknown
      try {
        parsed = JSON.parse(text)
      } catch {
        return done(new ApiError(400, 'INVALID_JSON', 'Request is not valid JSON.'), undefined)
      }
      const deepField = parsed !== null && typeof parsed === 'object' ? tooDeepField(Object.entries(parsed)) : undefined
      done(deepField ? tooDeep(`Field ${deepField}`, maxDepth) : null, deepField ? undefined : parsed)
    })
    app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => {
      try {
        assertPercentEncodedUtf8(body as string, 'Form body')
      } catch (error) {
        return done(error as Error, undefined)
      }
      const fields = groupRepeated(new URLSearchParams(body as string))
      const deepField = tooDeepField(fields)
      done(deepField ? tooDeep(`Form field ${deepField}`, maxDepth) : null, deepField ? undefined : Object.fromEntries(fields))
    })
  },
  { name: 'body-parsers', dependencies: ['config'] },
)
