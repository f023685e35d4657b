// acceptance.md G (94–99) and detect.md: the detection service, its tokenizer and its model.
import { join } from 'node:path'
import { readFileSync } from 'node:fs'
import t from 'tap'
import { build } from './helper.js'
import { client } from './api.js'
import { asciiTokens, fnv1a, tokenize, featurize, windows, DEFAULT_FEATURES } from '../classifier/tokenizer.js'
import { Detector } from '../classifier/detector.js'
import { MicroBatcher } from '../classifier/batcher.js'
import { initTf, tf } from '../classifier/runtime.js'
import { loadDetector } from '../plugins/classifier.js'
import { NEEDS_OFFENSIVE_DATA, OFFENSIVE_DATA, hasOffensiveData, readJsonl, score } from '../classifier/data.js'
import { MODEL_DIR } from '../classifier/paths.js'
import { buildModel, buildTrainingModel, headLoss, predictWindows, toInputs } from '../classifier/model.js'
import { LEXICON_SIZE } from '../classifier/lexicon.js'
import { SparseForward } from '../classifier/forward.js'
import { Encoder } from '../classifier/encoder.js'
import { GloveSlice } from '../classifier/glove.js'
import { prng } from '../lib/core/prng.js'

const json = { 'content-type': 'application/json' }
const SCORE = /^(0|1)\.\d{6}$/

// acceptance.md 94
t.test('GET / lists the endpoints', async (t) => {
  const { app } = await build(t)
  const root = await client(app).get('/', {})
  t.equal(root.status, 200)
  t.same(root.body, {
    detect: '/detect',
    detect_batch: '/detect/batch',
    api: '/api/v1/',
    health: '/health',
    metrics: '/metrics',
    documentation: '/documentation',
    app: '/app/',
  })
  const health = await client(app).get('/health', {})
  t.same(health.body, { status: 'ok', database: 'ok', model: 'ok' })
})

// acceptance.md 95
t.test('POST /detect returns two decimal strings and the text unchanged', async (t) => {
  const { app } = await build(t)
  const text = 'Have a nice day 🌞  '
  const res = await client(app).post('/detect', { text }, json)
  t.equal(res.status, 200)
  t.same(Object.keys(res.body), ['result', 'text'])
  t.equal(res.body.text, text)
  t.same(Object.keys(res.body.result).sort(), ['not-offensive', 'offensive'])
  const { offensive, 'not-offensive': notOffensive } = res.body.result
  t.match(offensive, SCORE)
  t.match(notOffensive, SCORE)
  t.ok(Number(offensive) >= 0 && Number(offensive) <= 1)
  t.ok(Math.abs(Number(offensive) + Number(notOffensive) - 1) < 1e-9)
  const doc = await client(app).get('/documentation/json', {})
  t.ok(doc.body.paths['/detect'].post.requestBody, 'the route is in the OpenAPI document')
})

// acceptance.md 96
t.test('a text scores the same alone, concurrently (micro-batched) and in /detect/batch', async (t) => {
  const { app } = await build(t)
  const api = client(app)
  const text = 'you are such a clown, go away'
  const first = (await api.post('/detect', { text }, json)).body.result
  t.same((await api.post('/detect', { text }, json)).body.result, first)
  const detector = await app.detection.ready
  const others = ['I love this', 'what a stupid idea', 'meh', 'the weather is fine today '.repeat(40)]
  const concurrent = await Promise.all(Array.from({ length: 50 }, (_, i) => api.post('/detect', { text: i % 2 ? text : others[i % others.length] }, json)))
  for (const [i, res] of concurrent.entries()) if (i % 2) t.same(res.body.result, first, `concurrent request ${i}`)
  const batch = await api.post('/detect/batch', { texts: ['a', 'b'] }, json)
  const a = await api.post('/detect', { text: 'a' }, json)
  const b = await api.post('/detect', { text: 'b' }, json)
  t.same(batch.body, { results: [a.body, b.body] })
  t.ok(detector, 'the model loaded once for the process')
})

t.test('micro-batching: concurrent windows share forward passes; the queue is bounded', async (t) => {
  const calls: number[] = []
  const batcher = new MicroBatcher((windows) => (calls.push(windows.length), new Float32Array(windows.length).fill(0.25)), {
    maxBatch: 8,
    waitMs: 2,
    maxQueue: 20,
  })
  const window = { ids: [1] }
  const results = await Promise.all(Array.from({ length: 12 }, () => batcher.score([window])))
  t.same(calls, [8, 4], 'a full batch at once, the rest after the wait')
  t.ok(results.every((r) => r[0] === 0.25))
  const long = await batcher.score(Array.from({ length: 11 }, () => window))
  t.equal(long.length, 11, 'a request spanning several batches is answered when all are done')
  await t.rejects(batcher.score(Array.from({ length: 21 }, () => window)), { statusCode: 503, code: 'OVERLOADED' })
  t.same(await batcher.score([]), new Float32Array(0))
})

// acceptance.md 97
t.test('detection refuses bad bodies and texts over the limits with 4xx', async (t) => {
  const { app } = await build(t)
  const api = client(app)
  t.match((await api.post('/detect', {}, json)).body, { statusCode: 400, code: 'VALIDATION_ERROR', message: 'text: required' })
  t.match((await api.post('/detect', { text: 123 }, json)).body, { statusCode: 400, message: 'text: must be a string' })
  t.match((await api.post('/detect', '{"text":', json)).body, { statusCode: 400, code: 'INVALID_JSON' })
  t.match((await api.post('/detect', '[1]', json)).body, { statusCode: 400, code: 'VALIDATION_ERROR' })
  t.match((await api.post('/detect', 'text=hi', { 'content-type': 'text/plain' })).body, { statusCode: 415, code: 'UNSUPPORTED_MEDIA_TYPE' })
  t.equal((await api.post('/detect', 'text=hi', { 'content-type': 'application/x-www-form-urlencoded' })).status, 415)
  const tooLong = await api.post('/detect', { text: 'a'.repeat(10_001) }, json)
  t.equal(tooLong.status, 413)
  t.match(tooLong.body, { code: 'TEXT_TOO_LONG', message: 'text: at most 10000 characters (got 10001)' })
  t.equal((await api.post('/detect', { text: '😀'.repeat(10_000) }, json)).status, 200, 'code points, not UTF-16 units')
  t.match((await api.post('/detect', { text: '😀'.repeat(10_001) }, json)).body, {
    code: 'TEXT_TOO_LONG',
    message: 'text: at most 10000 characters (got 10001)',
  })
  t.match(
    (await api.post('/detect', { text: '\ud800'.repeat(10_001) }, json)).body,
    { code: 'TEXT_TOO_LONG', message: 'text: at most 10000 characters (got 10001)' },
    'a lone surrogate is one character',
  )
  t.equal((await api.post('/detect', { text: 'a'.repeat(10_000) }, json)).status, 200)
  for (const text of ['', '   \n\t ']) {
    const res = await api.post('/detect', { text }, json)
    t.equal(res.status, 200)
    t.equal(res.body.text, text)
    t.match(res.body.result.offensive, SCORE)
  }
  const many = await api.post('/detect/batch', { texts: Array.from({ length: 257 }, () => 'a') }, json)
  t.match(many.body, { statusCode: 413, code: 'TOO_MANY_TEXTS', message: 'texts: at most 256 items (got 257)' })
  t.match((await api.post('/detect/batch', { texts: ['a', 1] }, json)).body, { statusCode: 400, message: 'texts/1: must be a string' })
  t.match((await api.post('/detect/batch', { texts: 'a' }, json)).body, { statusCode: 400, code: 'VALIDATION_ERROR' })
  t.same((await api.post('/detect/batch', { texts: [] }, json)).body, { results: [] })
  const huge = await api.post('/detect', JSON.stringify({ text: 'a'.repeat(300_000) }), json)
  t.match(huge.body, { statusCode: 413, code: 'PAYLOAD_TOO_LARGE' })
})

// acceptance.md 98
t.test('obvious cases land on the right side, also at the end of a long text', async (t) => {
  const { app } = await build(t)
  const api = client(app)
  const p = async (text: string) => Number((await api.post('/detect', { text }, json)).body.result.offensive)
  for (const benign of ['I love sunny days with my family', 'Thank you so much for your help today!', 'The meeting is moved to 3pm on Thursday']) {
    t.ok((await p(benign)) < 0.5, `benign: ${benign}`)
  }
  for (const insult of ['you are a fucking idiot', 'shut up you stupid bitch', 'what a pathetic loser you are, asshole']) {
    t.ok((await p(insult)) > 0.5, `offensive: ${insult}`)
  }
  const benignParagraph = 'We walked along the river and talked about the garden, the new library and our plans for the summer. '
  let long = ''
  while (long.length < 9000) long += benignParagraph
  long = long.slice(0, 9000)
  t.ok((await p(long)) < 0.5, 'the long benign text alone is benign')
  t.ok((await p(`${long} you are a fucking idiot`)) > 0.5, 'an insult at the end of 9,000 characters is found (windows, max)')
})

t.test('tokenizer: golden tokens and feature ids', async (t) => {
  t.same(tokenize('@USER RT You are a FUCKING idiot!!! &amp; #MAGA 😡😡 https://t.co/x URL ""quoted"" don\'t'), [
    '@user',
    'rt',
    'you',
    'are',
    'a',
    'fucking',
    'idiot',
    '!!!',
    '&',
    '#',
    'maga',
    '😡',
    '😡',
    '<url>',
    '"',
    'quoted',
    '"',
    "don't",
  ])
  t.same(tokenize('RT @someone: Ｆｕｌｌ　ｗｉｄｔｈ &#39;x&#x27; www.example.com'), ['@user', ':', 'full', 'width', "'x'", '<url>'])
  t.same(tokenize(''), [])
  t.equal(fnv1a(''), 0x811c9dc5)
  t.equal(fnv1a('a'), 0xe40c292c)
  t.equal(fnv1a('foobar'), 0xbf9cf968)
  const ids = featurize('hello world')[0]
  t.same(ids.slice(0, 3), [
    (fnv1a('w1:hello') % DEFAULT_FEATURES.buckets) + 1,
    (fnv1a('w1:world') % DEFAULT_FEATURES.buckets) + 1,
    (fnv1a('w2:hello world') % DEFAULT_FEATURES.buckets) + 1,
  ])
  t.ok(ids.every((id) => id >= 1 && id <= DEFAULT_FEATURES.buckets))
  // The features are defined on strings (`w<n>:…`, `c:<chars>`); the served code hashes incrementally.
  const reference = (tokens: string[], config = DEFAULT_FEATURES) => {
    const ids = new Set<number>()
    const add = (f: string) => ids.size < config.maxFeatures && ids.add((fnv1a(f) % config.buckets) + 1)
    for (const n of config.wordNgrams) for (let i = 0; i + n <= tokens.length; i++) add(`w${n}:${tokens.slice(i, i + n).join(' ')}`)
    for (const token of tokens) {
      if (!/^[\p{L}\p{N}_']+$/u.test(token)) continue
      const chars = [...`<${token}>`]
      for (const n of config.charNgrams) for (let i = 0; i + n <= chars.length; i++) add(`c:${chars.slice(i, i + n).join('')}`)
    }
    return [...ids]
  }
  for (const text of ['Ｆｕｌｌ width 😡 naïve café', 'you are a fucking idiot', "@user #MAGA lol!!! don't", 'x'.repeat(300)]) {
    t.same(featurize(text)[0], reference(tokenize(text)), text.slice(0, 30))
  }
  // Other n-gram orders, tokens longer than the reused scratch buffers, astral and lone surrogates.
  const other = { ...DEFAULT_FEATURES, charNgrams: [2, 6, 7], maxFeatures: 100_000 }
  for (const text of [`${'é'.repeat(500)} 😀😀😀x`, 'ab\ud800cd \udc00 中文字符', `${'w'.repeat(40)} ${'z'.repeat(2000)}`]) {
    t.same(featurize(text, other)[0], reference(tokenize(text), other), text.slice(0, 12))
  }
  // The id is the hash modulo the buckets: by masking for a power of two (the shipped 2^17), by
  // division otherwise.
  for (const buckets of [1000, 1 << 20, 2]) {
    const config = { ...DEFAULT_FEATURES, buckets }
    for (const text of ['you are a fucking idiot', 'Ｆｕｌｌ width 😡 naïve café']) {
      const ids = featurize(text, config)[0]
      t.same(ids, reference(tokenize(text), config), `${buckets} buckets: ${text.slice(0, 12)}`)
      t.ok(ids.every((id) => id >= 1 && id <= buckets))
    }
  }
  // ASCII texts are read by character codes: the same tokens as the regular expression, on edge cases
  // and on random strings of the characters that matter to it.
  const TOKEN = /<url>|@user|[\p{L}\p{N}_']+|\p{Extended_Pictographic}|([^\s\p{L}\p{N}_'])\1*/gu
  const alphabet = " \t\n\r\v\f<>url@sea_'!!..,aZ09#&*$\x00\x1f\x7f-"
  const random = prng(3)
  const samples = ['<url><url>', '<<url>>', '@@user', 'x@userx', "don't__stop", '!!!???', '<ur', '@use', '']
  for (let i = 0; i < 20_000; i++)
    samples.push(Array.from({ length: Math.floor(random() * 24) }, () => alphabet[Math.floor(random() * alphabet.length)]).join(''))
  const differing = samples.filter((text) => JSON.stringify(asciiTokens(text)) !== JSON.stringify(text.match(TOKEN) ?? []))
  t.same(differing, [], 'ASCII reading equals the regular expression')
  t.equal(asciiTokens('café'), undefined, 'a text with another character is left to the regular expression')
  t.same(tokenize('naïve café 😡'), ['naïve', 'café', '😡'])
  const tokens = Array.from({ length: 100 }, (_, i) => `t${i}`)
  const w = windows(tokens)
  t.same(
    w.map((x) => x[0]),
    ['t0', 't32', 't36'],
    'stride 32, the last window aligned to the end',
  )
  t.ok(w.every((x) => x.length === 64))
})

t.test('the custom UnsortedSegmentSum kernel equals the stock one-hot computation', async (t) => {
  await initTf('wasm')
  for (const backend of ['wasm', 'cpu']) {
    await tf.setBackend(backend)
    const x = tf.randomUniform([40, 3], -1, 1, 'float32', 7)
    const ids = tf.tensor1d(
      Array.from({ length: 40 }, (_, i) => (i * 7) % 50),
      'int32',
    )
    const custom = tf.unsortedSegmentSum(x, ids, 50)
    const stock = tf.matMul(tf.oneHot(ids, 50).toFloat(), x, true, false)
    t.ok(tf.max(tf.abs(tf.sub(custom, stock))).dataSync()[0] < 1e-6, backend)
    tf.dispose([x, ids, custom, stock])
  }
  await tf.setBackend('wasm')
})

// acceptance.md 99
t.test(
  'the served model passes its quality gate on TweetEval val and scores as evaluated',
  { skip: !hasOffensiveData() && NEEDS_OFFENSIVE_DATA },
  async (t) => {
    const detector: Detector = await loadDetector()
    const metrics = JSON.parse(readFileSync(join(MODEL_DIR, 'metrics.json'), 'utf8'))
    const val = readJsonl(join(OFFENSIVE_DATA, 'tweeteval', 'val.jsonl'))
    const scores = detector.scoreTexts(val.map((e) => e.text))
    const { macro_f1 } = score(
      val.map((e) => e.label),
      scores,
      0.5,
    )
    t.ok(macro_f1 >= 0.7, `val macro-F1 ${macro_f1.toFixed(4)} ≥ 0.70`)
    t.ok(Math.abs(macro_f1 - metrics.val_macro_f1) <= 0.005, `within 0.005 of metrics.json (${metrics.val_macro_f1})`)
    const { app } = await build(t)
    const sample = val.slice(0, 40)
    const served = await client(app).post('/detect/batch', { texts: sample.map((e) => e.text) }, json)
    served.body.results.forEach((r: { result: { offensive: string } }, i: number) => {
      t.equal(r.result.offensive, Detector.format(scores[i]).offensive, `val text ${i}: the service gives the evaluation's score`)
    })
  },
)

t.test('the served float64 forward pass equals TF.js predict on the model graph', { skip: !hasOffensiveData() && NEEDS_OFFENSIVE_DATA }, async (t) => {
  const detector = await loadDetector()
  const texts = readJsonl(join(OFFENSIVE_DATA, 'tweeteval', 'val.jsonl'))
    .slice(0, 200)
    .map((e) => e.text)
  const windows = texts.flatMap((text) => detector.windowsOf(text))
  const served = detector.scoreWindows(windows)
  const graph = detector.predictWithTf(windows)
  let worst = 0
  served.forEach((p, i) => (worst = Math.max(worst, Math.abs(p - graph[i]))))
  t.ok(worst < 1e-5, `max difference ${worst}`)
  const alone = detector.scoreWindows([windows[7]])[0]
  t.equal(alone, served[7], 'a window scores the same alone and in a batch')
})

t.test('the folded forward pass (one number per feature and word) equals TF.js predict, without shared data', async (t) => {
  const detector = await loadDetector()
  const texts = ['you are a stupid idiot', 'what a lovely day with my family 🙏', '', '   ', '@user @user URL', `${'word '.repeat(300)}moron`]
  const windows = texts.flatMap((text) => detector.windowsOf(text))
  t.ok(
    windows.every((w) => w.rows && !w.vector),
    'served windows carry word rows, not mean vectors',
  )
  const served = detector.scoreWindows(windows)
  const graph = detector.predictWithTf(windows)
  let worst = 0
  served.forEach((p, i) => (worst = Math.max(worst, Math.abs(p - graph[i]))))
  t.ok(worst < 1e-5, `max difference ${worst} over ${windows.length} windows`)
})

t.test('every architecture the trainer builds is served by the folded pass exactly as TF.js predicts it', async (t) => {
  await initTf('wasm')
  // A tiny slice of 8-dimensional word vectors and windows of every shape the convolution meets: no
  // word, fewer words than a width, a full window, and words missing from the slice (skipped).
  const words = ['you', 'are', 'a', 'stupid', 'idiot', 'lovely', 'day', 'with', 'family']
  const random = prng(7)
  const dims = 8
  const glove = GloveSlice.of(
    words,
    dims,
    Float32Array.from({ length: words.length * dims }, () => random() * 2 - 1),
  )
  const features = { ...DEFAULT_FEATURES, window: 6, stride: 3 }
  const texts = [
    '',
    'you',
    'you are',
    'you are a stupid idiot',
    'a lovely day with family',
    'zzz qqq you',
    'you are a stupid idiot with a lovely family day you',
    'f*ck you, a$$hole',
    'what the fuck is this shit',
  ]
  // 10 units: eight served together, two one by one (forward.ts).
  const conv = { widths: [2, 3], filters: 10, positions: features.window }
  // Dropout (inactive when predicting) moves the side inputs after the learned features' dropout layer.
  const shippedKind = { dim: 4, hidden: 0, length: 32, dropout: 0.3, l2: 0, glove: dims, conv, lexicon: LEXICON_SIZE, policy: true }
  const designs = {
    'cnn only': { dim: 0, hidden: 0, length: 0, dropout: 0, l2: 0, glove: dims, mean: false, conv },
    'bag + mean + cnn': { dim: 4, hidden: 0, length: 32, dropout: 0, l2: 0, glove: dims, conv },
    'bag + mean + cnn, hidden layer': { dim: 4, hidden: 3, length: 32, dropout: 0, l2: 0, glove: dims, conv },
    'bag + mean': { dim: 4, hidden: 0, length: 32, dropout: 0, l2: 0, glove: dims },
    'bag + mean + cnn + lexicon + label policy, dropout (the shipped kind)': shippedKind,
    'the same, the lexicon inputs dropped out with the learned features': { ...shippedKind, lexiconDropout: true },
    'bag + mean + lexicon, hidden layer': { dim: 4, hidden: 3, length: 32, dropout: 0, l2: 0, glove: dims, lexicon: LEXICON_SIZE },
  }
  for (const [name, design] of Object.entries(designs)) {
    const architecture = { ...design, buckets: 64 }
    const model = buildModel(architecture, 11)
    // Random weights everywhere (a fresh model's biases are zero, which would hide a bias mistake).
    model.setWeights(
      model.getWeights().map((w) =>
        tf.tensor(
          Float32Array.from({ length: w.size }, () => random() - 0.5),
          w.shape,
        ),
      ),
    )
    const encoder = new Encoder({ ...features, buckets: 64, dim: design.dim, lexicon: 'lexicon' in design ? design.lexicon : undefined }, glove)
    const windows = texts.flatMap((text) => encoder.encodeRows(text))
    const served = new SparseForward(model, architecture, glove).predict(windows)
    const graph = predictWindows(
      model,
      windows.map((w) => encoder.withVector(w)),
      architecture,
      glove,
    )
    let worst = 0
    served.forEach((p, i) => (worst = Math.max(worst, Math.abs(p - graph[i]))))
    t.ok(worst < 1e-5, `${name}: max difference ${worst} over ${windows.length} windows`)
    t.ok(
      served.some((p) => Math.abs(p - served[0]) > 1e-3),
      `${name}: the windows do not all score the same`,
    )
    model.dispose()
  }
})

t.test('a second softmax head for another label policy trains the shared features and is not served', async (t) => {
  await initTf('wasm')
  const architecture = { dim: 4, hidden: 0, length: 8, dropout: 0.3, l2: 0, glove: 0, buckets: 64, lexicon: LEXICON_SIZE }
  const { served, trained } = buildTrainingModel(architecture, 3, [{ name: 'output_second_policy', classes: 2 }])
  t.ok(
    trained.layers.some((layer) => layer.name === 'output_second_policy'),
    'the training model has the second head',
  )
  t.notOk(
    served.layers.some((layer) => layer.name === 'output_second_policy'),
    'the served model does not',
  )
  const encoder = new Encoder({ ...DEFAULT_FEATURES, buckets: 64, dim: 4, lexicon: LEXICON_SIZE })
  const windows = ['you are a stupid idiot', 'a lovely day'].flatMap((text) => encoder.encode(text))
  const both = tf.tidy(() => (trained.predict(toInputs(windows, architecture)) as tf.Tensor).arraySync() as number[][])
  const servedP = predictWindows(served, windows, architecture)
  both.forEach((row, i) => t.ok(Math.abs(row[1] - servedP[i]) < 1e-6, `window ${i}: the served head is the first two outputs`))
  // The loss reads the labelled head only: -log p of the label's column.
  const labels = tf.oneHot([1, 2], 4).toFloat()
  const loss = headLoss(labels, tf.tensor2d(both)).dataSync()[0]
  t.ok(Math.abs(loss - -(Math.log(both[0][1]) + Math.log(both[1][2])) / 2) < 1e-5, `loss ${loss}`)
  // A teacher's distribution (distillation): the cross-entropy against it, −Σ target · log p.
  const soft = headLoss(tf.tensor2d([[0.3, 0.7, 0, 0]]), tf.tensor2d([both[0]])).dataSync()[0]
  t.ok(Math.abs(soft - -(0.3 * Math.log(both[0][0]) + 0.7 * Math.log(both[0][1]))) < 1e-5, `soft-target loss ${soft}`)
  const before = served.getLayer('features').getWeights()[0].dataSync().slice()
  trained.compile({ optimizer: tf.train.adam(0.05), loss: headLoss })
  await trained.trainOnBatch(toInputs(windows, architecture), tf.oneHot([3, 2], 4).toFloat())
  const after = served.getLayer('features').getWeights()[0].dataSync()
  t.ok(
    after.some((v, i) => v !== before[i]),
    'a second-head label moves the shared features the served head reads',
  )
})

t.test('several training-only heads: a window labelled on two heads is trained on the sum of their cross-entropies', async (t) => {
  await initTf('wasm')
  const architecture = { dim: 4, hidden: 0, length: 8, dropout: 0, l2: 0, glove: 0, buckets: 64 }
  const heads = [
    { name: 'output_second_policy', classes: 2 },
    { name: 'output_olid_target', classes: 5 },
  ]
  const { served, trained } = buildTrainingModel(architecture, 3, heads)
  t.same(
    served.layers.filter((layer) => layer.name.startsWith('output')).map((layer) => layer.name),
    ['output'],
    'only the served head is in the served model',
  )
  const encoder = new Encoder({ ...DEFAULT_FEATURES, buckets: 64, dim: 4 })
  const windows = encoder.encode('you are a stupid idiot')
  const all = tf.tidy(() => (trained.predict(toInputs(windows, architecture)) as tf.Tensor).arraySync() as number[][])[0]
  t.equal(all.length, 9, 'the served head, then two and five columns')
  for (const [from, to] of [
    [0, 2],
    [2, 4],
    [4, 9],
  ])
    t.ok(Math.abs(all.slice(from, to).reduce((a, b) => a + b, 0) - 1) < 1e-5, `columns ${from}–${to - 1} are one softmax`)
  // Offensive on the served head and "targeted at a group" (class 3) on the OLID head.
  const target = [0, 1, 0, 0, 0, 0, 0, 1, 0]
  const loss = headLoss(tf.tensor2d([target]), tf.tensor2d([all])).dataSync()[0]
  t.ok(Math.abs(loss - -(Math.log(all[1]) + Math.log(all[7]))) < 1e-5, `loss ${loss}`)
})

t.test("a word's convolution rows are computed when a window first uses it, not at load", async (t) => {
  // Regression: computed for all 20,325 words at load, the shipped model's tables held the event loop
  // for ~2.5 s after the server was listening, and a request in flight was shed with 503 UNDER_PRESSURE.
  await initTf('wasm')
  const random = prng(3)
  const words = Array.from({ length: 1000 }, (_, i) => `w${i}`)
  const glove = GloveSlice.of(
    words,
    8,
    Float32Array.from({ length: words.length * 8 }, () => random() - 0.5),
  )
  const architecture = {
    buckets: 64,
    dim: 0,
    hidden: 0,
    length: 0,
    dropout: 0,
    l2: 0,
    glove: 8,
    mean: false,
    conv: { widths: [2, 3], filters: 4, positions: 6 },
  }
  const model = buildModel(architecture, 5)
  const forward = new SparseForward(model, architecture, glove)
  t.equal(forward.convolution!.foldedWords, 0, 'nothing is computed at load')
  const encoder = new Encoder({ ...DEFAULT_FEATURES, window: 6, stride: 3, dim: 0 }, glove)
  const first = forward.predict(encoder.encodeRows('w1 w2 w1 w3'))
  t.equal(forward.convolution!.foldedWords, 3, 'a window computes the rows of its distinct words')
  t.same(forward.predict(encoder.encodeRows('w1 w2 w1 w3')), first, 'and scores the same once they are kept')
  model.dispose()
})
