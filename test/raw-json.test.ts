// lib/core/raw-json.ts: JSON text from PostgreSQL spliced into a response unparsed.
import t from 'tap'
import { holdsRawJson, RawJson, stringifyWithRaw } from '../lib/core/raw-json.js'

t.test('RawJson values are written as their text, wherever they are', async (t) => {
  const value = { objects: new RawJson('[{"a":1}, \n {"a":2}]'), meta: { ids: new RawJson('[3,4]'), n: 2 }, error: null }
  t.same(JSON.parse(stringifyWithRaw(value)), { objects: [{ a: 1 }, { a: 2 }], meta: { ids: [3, 4], n: 2 }, error: null })
  t.equal(stringifyWithRaw({ a: [1, 'x'] }), JSON.stringify({ a: [1, 'x'] }), 'without RawJson it is JSON.stringify')
})

t.test('a client value cannot spell the placeholder', async (t) => {
  // The placeholder carries a per-call random token: strings shaped like it stay strings.
  const echoed = ['raw-json:0', 'raw-json::0', '"raw-json:', '$&', '\u0001raw0\u0001']
  const text = stringifyWithRaw({ get_params: echoed, objects: new RawJson('[1]') })
  t.same(JSON.parse(text), { get_params: echoed, objects: [1] })
})

t.test('text with replacement patterns is inserted literally', async (t) => {
  t.same(JSON.parse(stringifyWithRaw({ s: new RawJson('"$& $1 $$"') })), { s: '$& $1 $$' })
})

t.test('holdsRawJson looks at the value and its own values', async (t) => {
  t.ok(holdsRawJson(new RawJson('1')))
  t.ok(holdsRawJson({ ids: new RawJson('[]') }))
  t.notOk(holdsRawJson({ ids: [1], nested: { deeper: new RawJson('[]') } }))
})
