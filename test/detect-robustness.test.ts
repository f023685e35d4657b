// What users expect of a detector beyond its training tweets: profanity in disguise is found, words
// that merely contain a bad string are not, and casing, spacing and an emoji do not move a score
// (classifier/lexicon.ts; served through POST /detect with the committed model).
import t from 'tap'
import { build } from './helper.js'
import { client } from './api.js'
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { LEXICON_VERSION, lexiconFeatures } from '../classifier/lexicon.js'
import { isListed } from '../classifier/disguises.js'
import { Encoder } from '../classifier/encoder.js'
import { DEFAULT_FEATURES, featuresOf, tokenize, TOKENIZER_VERSION } from '../classifier/tokenizer.js'
import { Detector } from '../classifier/detector.js'
import { MODEL_DIR } from '../classifier/paths.js'
import { initTf } from '../classifier/runtime.js'
import { holdsStrongProfanity, PROFANITY_FLOOR } from '../classifier/profanity.js'

const json = { 'content-type': 'application/json' }

async function detector(t: Parameters<typeof build>[0]) {
  const { app } = await build(t)
  const api = client(app)
  return async (text: string) => Number((await api.post('/detect', { text }, json)).body.result.offensive)
}

const DISGUISED = [
  'f*ck you',
  'this is sh1t',
  'you a$$hole',
  'f u c k off',
  'F.U.C.K this',
  'fuuuuuck this',
  'sh!t happens to losers like you',
  'shut up b!tch',
]
const BENIGN_SUBSTRINGS = [
  'Scunthorpe United won at home',
  'the assessment is due on Friday',
  'the pilot sat down in the cockpit',
  'a classic film from the fifties',
  'we met at the Cockburn Street cafe',
  'she passed the bass guitar exam',
]

t.test('obfuscated profanity is scored offensive', async (t) => {
  const p = await detector(t)
  for (const text of DISGUISED) t.ok((await p(text)) > 0.5, `offensive: ${text}`)
})

t.test('benign words holding a bad string are not', async (t) => {
  const p = await detector(t)
  for (const text of BENIGN_SUBSTRINGS) t.ok((await p(text)) < 0.5, `benign: ${text}`)
})

// Casual profanity in spellings cuss does not list (a dropped g, a plural in z, -in' forms): the words
// are rated strongly, so OLID's policy and a word list call each text offensive, whatever else it says.
const STRONGLY_PROFANE = [
  'my niggaz came thru for the party last night',
  "fuckin' finally home after a long shift, love y'all",
  'lmao that movie was shittin on everything',
  'finally friday, time to get wasted with my niggas',
]

t.test('a strongly profane text is served at least the profanity floor, whatever the rest of it says', async (t) => {
  const p = await detector(t)
  for (const text of STRONGLY_PROFANE) t.ok((await p(text)) >= PROFANITY_FLOOR, `at least ${PROFANITY_FLOOR}: ${text}`)
  for (const text of BENIGN_SUBSTRINGS) t.notOk(holdsStrongProfanity(text), `no strong word inside a word: ${text}`)
  // The floor is what holds them: the model alone lets some of them through.
  await initTf('wasm')
  const unfloored = (await Detector.load(MODEL_DIR)).scoreTexts(STRONGLY_PROFANE, { floor: false })
  t.ok(
    unfloored.some((score) => score < 0.5),
    `the model alone: ${unfloored.map((s) => s.toFixed(2)).join(', ')}`,
  )
})

t.test('casing, spacing and an emoji move a score by little or nothing', async (t) => {
  const p = await detector(t)
  for (const text of ['you are a wonderful person', 'you are a fucking idiot', 'what a lovely morning in the park', 'shut up you stupid loser']) {
    const base = await p(text)
    t.equal(await p(text.toUpperCase()), base, `casing: ${text}`)
    t.equal(await p(text.replace(/ /g, '   ').replace(/^/, '  ')), base, `white space: ${text}`)
    t.ok(Math.abs((await p(`${text} 😊`)) - base) < 0.1, `an emoji: ${text}`)
    t.equal((await p(`${text} 😊`)) > 0.5, base > 0.5, `an emoji does not flip the decision: ${text}`)
  }
})

t.test('the lexicon inputs read through disguises and never inside words', async (t) => {
  for (const text of DISGUISED) t.ok(lexiconFeatures(text)[2] > 0, `a listed word in ${text}`)
  for (const text of ['f*ck you', 'you a$$hole', 'f u c k off', 'fuuuuuck this']) t.equal(lexiconFeatures(text)[3], 1, `disguised: ${text}`)
  t.equal(lexiconFeatures('what the fuck')[3], 0, 'a plain word is not a disguise')
  for (const text of BENIGN_SUBSTRINGS) t.same(lexiconFeatures(text), [0, 0, 0, 0], `nothing listed in ${text}`)
  t.same(lexiconFeatures('a b c d e'), [0, 0, 0, 0], 'spaced letters that spell nothing listed')
})

t.test('training can leave listed words out of the learned features and keep them in the lexicon inputs', async (t) => {
  const encoder = new Encoder({ ...DEFAULT_FEATURES, dim: 16, lexicon: 4 })
  const text = 'shut up you f*cking idiot'
  const [whole] = encoder.encodeRows(text)
  const [masked] = encoder.encodeWithout(text, isListed)
  t.same(masked.lexicon, whole.lexicon, 'the lexicon inputs still read the whole text')
  t.equal(masked.lexicon![0], 1, 'a profane word is read')
  t.same(masked.ids, featuresOf(tokenize(text).filter((token) => !isListed(token))), 'the n-gram features of the other words only')
  t.not(masked.ids.length, whole.ids.length)
})

t.test('a model trained on other tokenizer or lexicon versions is refused, not served with wrong inputs', async (t) => {
  await initTf('wasm')
  const dir = mkdtempSync(join(tmpdir(), 'rhizome-model-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  for (const file of ['model.json', 'weights.bin', 'metadata.json', 'tokenizer.json', 'embeddings.bin', 'embeddings-vocab.json'])
    copyFileSync(join(MODEL_DIR, file), join(dir, file))
  const tokenizer = JSON.parse(readFileSync(join(dir, 'tokenizer.json'), 'utf8'))
  t.ok(await Detector.load(dir), 'the committed files load')
  writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify({ ...tokenizer, version: tokenizer.version - 1 }))
  await t.rejects(Detector.load(dir), {
    message: new RegExp(`trained on tokenizer version ${tokenizer.version - 1}; this code tokenizes as version ${TOKENIZER_VERSION}`),
  })
  writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify({ ...tokenizer, lexicon_version: LEXICON_VERSION - 1 }))
  await t.rejects(Detector.load(dir), {
    message: new RegExp(`trained on lexicon inputs version ${LEXICON_VERSION - 1}; this code computes version ${LEXICON_VERSION}`),
  })
})
