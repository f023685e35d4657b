// `npm run train [-- --design <name>] [--compare] [--dry-run] [--out <dir>] [--seed <n>]`: trains the detection model
// on TweetEval train (and HASOC's training part where the design says), chooses the epoch and the
// decision threshold on TweetEval val only, and writes classifier/model/ (or `--out`, a directory that
// then holds a whole loadable model, for comparing a candidate before it replaces the committed one).
// `--compare` trains every design and records the table in metrics.json (the chosen design is saved).
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { basename, join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { initTf, tf } from './runtime.js'
import { buildTrainingModel, type ExtraHead, headLoss, predictWindows, saveModel, toInputs, usesMean, type Architecture } from './model.js'
import { DEFAULT_FEATURES, TOKENIZER_VERSION, tokenize, type FeatureConfig, type Window } from './tokenizer.js'
import { Encoder } from './encoder.js'
import { GloveSlice } from './glove.js'
import { needOffensiveData, OFFENSIVE_DATA, readJsonl, score, type Example } from './data.js'
import { MODEL_DIR } from './paths.js'
import { Detector, logit } from './detector.js'
import { prng } from '../lib/core/prng.js'
import { LEXICON_FEATURES, LEXICON_SIZE, LEXICON_VERSION } from './lexicon.js'
import { isListed } from './disguises.js'
import { hasocTraining, validationSplits } from './splits.js'
import { OLID_CLASSES, olidClasses } from './olid.js'

export interface Design {
  name: string
  description: string
  features: FeatureConfig
  architecture: Omit<Architecture, 'buckets'>
  epochs: number
  learningRate: number
  /** The text's lexicon inputs (lexicon.ts). */
  lexicon?: boolean
  /**
   * HASOC's training part (splits.ts; never its out-of-domain folds) added to TweetEval train:
   * `marked` with the label-policy input set (model.ts), `head` through a second softmax over the same
   * features (not saved; model.ts buildTrainingModel), `plain` as if labelled like TweetEval.
   */
  hasoc?: 'marked' | 'head' | 'plain'
  /** The share of HASOC's training windows drawn afresh for each epoch (default all of them). */
  hasocShare?: number
  /**
   * Each training text that holds a listed word is trained on a second time with those words left out
   * of its n-gram, word-vector and convolution features (its lexicon inputs unchanged): what a listed
   * word says must then also be learned by the lexicon inputs, which read every listed word, also the
   * ones the training tweets never used.
   */
  maskListed?: boolean
  /**
   * A training-only head reads OLID's finer label of each TweetEval training tweet (not offensive,
   * untargeted, targeted at an individual, a group, other; olid.ts), so that who an insult is aimed at
   * shapes the shared features too.
   */
  olidHead?: boolean
}

const BAG = { dim: 16, hidden: 0, length: 512, dropout: 0.2, l2: 0, glove: 0 }
const CNN_ONLY = {
  dim: 0,
  hidden: 0,
  length: 0,
  dropout: 0.5,
  l2: 0,
  glove: 100,
  mean: false,
  conv: { widths: [2, 3, 4], filters: 64, positions: DEFAULT_FEATURES.window },
}
/** bag+glove+cnn's settings, which the designs built on it share. */
const BAG_GLOVE_CNN = {
  features: DEFAULT_FEATURES,
  architecture: { ...BAG, glove: 100, dropout: 0.3, conv: CNN_ONLY.conv },
  epochs: 4,
  learningRate: 0.001,
}

export const DESIGNS: Design[] = [
  {
    name: 'bag-linear',
    description: 'FastText-like: word 1-2-grams + char 3-5-grams hashed to 2^17, 16-d embedding bag (1/√n), dropout 0.2, softmax',
    features: DEFAULT_FEATURES,
    architecture: BAG,
    epochs: 4,
    learningRate: 0.002,
  },
  {
    name: 'words-only',
    description: 'bag-linear without character n-grams (word 1-2-grams only)',
    features: { ...DEFAULT_FEATURES, charNgrams: [] },
    architecture: { ...BAG, length: 256 },
    epochs: 4,
    learningRate: 0.002,
  },
  {
    name: 'bag+glove',
    description: 'bag-linear concatenated with the mean frozen GloVe 100-d vector of the window, softmax',
    features: DEFAULT_FEATURES,
    architecture: { ...BAG, glove: 100 },
    epochs: 4,
    learningRate: 0.002,
  },
  {
    name: 'bag+glove-mlp',
    description: 'bag+glove with dropout 0.3 and a Dense(32, relu) hidden layer',
    features: DEFAULT_FEATURES,
    architecture: { ...BAG, glove: 100, hidden: 32, dropout: 0.3 },
    epochs: 4,
    learningRate: 0.002,
  },
  {
    name: 'bag+glove+hasoc',
    description: 'bag+glove trained on TweetEval train plus HASOC 2019 and 2020 training parts as if labelled alike (a broader label policy)',
    features: DEFAULT_FEATURES,
    architecture: { ...BAG, glove: 100 },
    epochs: 4,
    learningRate: 0.002,
    hasoc: 'plain',
  },
  {
    name: 'cnn',
    description:
      "CNN over the window's frozen GloVe 100-d word vectors: 64 ReLU filters for each of 2, 3 and 4 consecutive words, max over positions, dropout 0.5, softmax (no n-gram features)",
    features: DEFAULT_FEATURES,
    architecture: { ...CNN_ONLY },
    epochs: 4,
    learningRate: 0.001,
  },
  {
    name: 'bag+glove+cnn-32',
    description: 'bag+glove+cnn with 32 filters per width',
    features: DEFAULT_FEATURES,
    architecture: { ...BAG, glove: 100, dropout: 0.3, conv: { ...CNN_ONLY.conv, filters: 32 } },
    epochs: 4,
    learningRate: 0.001,
  },
  {
    name: 'bag+glove+cnn-23',
    description: 'bag+glove+cnn with 32 filters for each of 2 and 3 words',
    features: DEFAULT_FEATURES,
    architecture: { ...BAG, glove: 100, dropout: 0.3, conv: { ...CNN_ONLY.conv, filters: 32, widths: [2, 3] } },
    epochs: 4,
    learningRate: 0.001,
  },
  { name: 'bag+glove+cnn', description: 'bag+glove and the cnn branches in one softmax, dropout 0.3', ...BAG_GLOVE_CNN },
  {
    name: 'bag+glove+cnn+lex',
    description: 'bag+glove+cnn with the lexicon inputs (cuss ratings read through disguises) in the same softmax',
    ...BAG_GLOVE_CNN,
    lexicon: true,
  },
  {
    name: 'bag+glove+cnn+lex-masked',
    description:
      'bag+glove+cnn+lex, each text with a listed word trained on twice: as written, and with its listed words left out of all but the lexicon inputs',
    ...BAG_GLOVE_CNN,
    lexicon: true,
    maskListed: true,
  },
  {
    name: 'bag+glove+cnn+hasoc',
    description: "bag+glove+cnn trained with HASOC's training parts marked by the label-policy input",
    ...BAG_GLOVE_CNN,
    hasoc: 'marked',
  },
  {
    name: 'bag+glove+cnn+lex+hasoc',
    description: "bag+glove+cnn+lex trained with HASOC's training parts marked by the label-policy input",
    ...BAG_GLOVE_CNN,
    lexicon: true,
    hasoc: 'marked',
  },
  {
    name: 'bag+glove+cnn+lex+hasoc/2',
    description: "bag+glove+cnn+lex+hasoc drawing half of HASOC's training windows afresh each epoch (TweetEval weighs twice as much)",
    ...BAG_GLOVE_CNN,
    lexicon: true,
    hasoc: 'marked',
    hasocShare: 0.5,
  },
  {
    name: 'bag+glove+cnn+lex+hasoc-head',
    description:
      "bag+glove+cnn+lex trained with HASOC's training parts through a second softmax head (its label policy) over the same features; the served head learns from TweetEval only",
    ...BAG_GLOVE_CNN,
    lexicon: true,
    hasoc: 'head',
  },
  {
    name: 'bag+glove+cnn+lex+hasoc-head/2',
    description: "bag+glove+cnn+lex+hasoc-head drawing half of HASOC's training windows afresh each epoch",
    ...BAG_GLOVE_CNN,
    lexicon: true,
    hasoc: 'head',
    hasocShare: 0.5,
  },
  {
    name: 'bag+glove+cnn+lex+hasoc-head/2-drop5',
    description: 'bag+glove+cnn+lex+hasoc-head/2 with dropout 0.5 on the learned features instead of 0.3',
    ...BAG_GLOVE_CNN,
    architecture: { ...BAG_GLOVE_CNN.architecture, dropout: 0.5 },
    lexicon: true,
    hasoc: 'head',
    hasocShare: 0.5,
  },
  {
    name: 'bag+glove+cnn+lex+hasoc-head/2-l2',
    description: 'bag+glove+cnn+lex+hasoc-head/2 with an L2 penalty of 1e-5 on the n-gram feature vectors',
    ...BAG_GLOVE_CNN,
    architecture: { ...BAG_GLOVE_CNN.architecture, l2: 1e-5 },
    lexicon: true,
    hasoc: 'head',
    hasocShare: 0.5,
  },
  {
    name: 'bag+glove+cnn+lex+hasoc-head/2-lexdrop',
    description:
      'bag+glove+cnn+lex+hasoc-head/2 with the lexicon inputs dropped out with the learned features (as in the model shipped before the tokenizer version 2)',
    ...BAG_GLOVE_CNN,
    architecture: { ...BAG_GLOVE_CNN.architecture, lexiconDropout: true },
    lexicon: true,
    hasoc: 'head',
    hasocShare: 0.5,
  },
  {
    name: 'bag+glove+cnn+lex+hasoc-head/2+olid-head',
    description:
      "bag+glove+cnn+lex+hasoc-head/2 with a third training-only head reading OLID's target of each TweetEval training tweet (none, untargeted, individual, group, other)",
    ...BAG_GLOVE_CNN,
    lexicon: true,
    hasoc: 'head',
    hasocShare: 0.5,
    olidHead: true,
  },
  {
    name: 'bag+glove+cnn+lex+hasoc/4',
    description: "bag+glove+cnn+lex+hasoc drawing a quarter of HASOC's training windows afresh each epoch",
    ...BAG_GLOVE_CNN,
    lexicon: true,
    hasoc: 'marked',
    hasocShare: 0.25,
  },
]

export const SEED = 20161126
/** How often an epoch the model is scored on val (and kept when best). */
const CHECKS_PER_EPOCH = 2

/**
 * Every window of a text is a training example with the text's label (and label policy); with
 * `maskListed`, a text's listed words are also left out once (Design.maskListed).
 */
function windowsOf(examples: Array<Example & { policy?: number }>, encoder: Encoder, maskListed = false) {
  const windows: Window[] = []
  const labels: number[] = []
  /** The example each window comes from. */
  const owners: number[] = []
  const add = (e: Example & { policy?: number }, encoded: Window[], owner: number) => {
    for (const w of encoded) {
      windows.push(e.policy ? { ...w, policy: e.policy } : w)
      labels.push(e.label)
      owners.push(owner)
    }
  }
  examples.forEach((e, i) => {
    add(e, encoder.encode(e.text), i)
    if (maskListed && encoder.features.lexicon && e.text && tokenize(e.text).some(isListed)) add(e, encoder.encodeWithout(e.text, isListed), i)
  })
  return { windows, labels, owners }
}

/** A text's offensive probability: the maximum over its windows (detect.md §4). */
export function textProbabilities(model: tf.LayersModel, texts: string[], encoder: Encoder, a: Architecture): number[] {
  const windows: Window[] = []
  const owner: number[] = []
  texts.forEach((text, i) => encoder.encode(text).forEach((w) => (windows.push(w), owner.push(i))))
  const result = new Array<number>(texts.length).fill(0)
  for (let start = 0; start < windows.length; start += 256) {
    const p = predictWindows(model, windows.slice(start, start + 256), a, encoder.glove)
    p.forEach((value, j) => (result[owner[start + j]] = Math.max(result[owner[start + j]], value)))
  }
  return result
}

/** The threshold on the model's probability that maximises val macro-F1 (a grid of 0.01). */
function bestThreshold(labels: number[], probabilities: number[]) {
  let best = { threshold: 0.5, macro_f1: -1 }
  for (let t = 0.1; t <= 0.9; t += 0.01) {
    const threshold = Math.round(t * 100) / 100
    const { macro_f1 } = score(labels, probabilities, threshold)
    if (macro_f1 > best.macro_f1) best = { threshold, macro_f1 }
  }
  return best
}

/** The architecture a design trains: its own, with the lexicon and label-policy inputs it asks for. */
export const architectureOf = (design: Design): Architecture => ({
  ...design.architecture,
  buckets: design.features.buckets,
  ...(design.lexicon ? { lexicon: LEXICON_SIZE } : {}),
  ...(design.hasoc === 'marked' ? { policy: true } : {}),
})

/**
 * Distillation: a teacher's offensive probability for every TweetEval training text (an ensemble's,
 * `teacherProbabilities`), mixed into the labels as (1 − alpha) · teacher + alpha · label.
 */
export interface Distillation {
  probabilities: number[]
  alpha: number
}

/** The TweetEval training texts, as every design trains on them. */
export const tweetEvalTraining = (): Example[] => readJsonl(join(OFFENSIVE_DATA, 'tweeteval', 'train.jsonl'))

/** Each extra head's first column in the training model's output (the served head's two come first), and the width. */
function headColumns(extraHeads: ExtraHead[]) {
  const firstColumn = new Map<ExtraHead, number>()
  let width = 2
  for (const head of extraHeads) {
    firstColumn.set(head, width)
    width += head.classes
  }
  return { firstColumn, width }
}

/** The out-of-domain folds' macro-F1, with the epoch and threshold chosen on TweetEval val. */
function outOfDomainScores(model: tf.LayersModel, encoder: Encoder, architecture: Architecture, threshold: number) {
  const ood: Record<string, number> = {}
  for (const [name, examples] of Object.entries(validationSplits())) {
    if (name === 'tweeteval-val') continue
    const probabilities = textProbabilities(
      model,
      examples.map((e) => e.text),
      encoder,
      architecture,
    )
    ood[name] = round(
      score(
        examples.map((e) => e.label),
        probabilities,
        threshold,
      ).macro_f1,
    )
  }
  return ood
}

/**
 * The training model's extra heads and each window's targets over its outputs. `labels` and `owners`:
 * every window's label and text (TweetEval's first, the `first` of them; HASOC's after).
 */
function trainingTargets(
  design: Design,
  tweetEval: Example[],
  { labels, owners, first }: { labels: number[]; owners: number[]; first: number },
  distillation?: Distillation,
) {
  // Training-only heads: HASOC's labels through a head of their own, OLID's finer labels through another.
  const hasocHead = design.hasoc === 'head' ? { name: 'output_second_policy', classes: 2 } : undefined
  const olidHead = design.olidHead ? { name: 'output_olid_target', classes: OLID_CLASSES.length } : undefined
  const extraHeads = [hasocHead, olidHead].filter((head): head is ExtraHead => head !== undefined)
  const { firstColumn, width } = headColumns(extraHeads)
  const olidClassOf = olidHead ? olidClasses(tweetEval) : []
  const soft = extraHeads.length > 0 || distillation !== undefined
  /**
   * A window's targets over the training model's outputs: a TweetEval window's served-head label (or
   * its mix with the teacher's) and its OLID class; a HASOC window's label on its own head, if any.
   */
  const targetsOf = (i: number) => {
    const row = new Array<number>(width).fill(0)
    if (i >= first) {
      row[(hasocHead ? firstColumn.get(hasocHead)! : 0) + labels[i]] = 1
      return row
    }
    const p = distillation ? distillation.alpha * labels[i] + (1 - distillation.alpha) * distillation.probabilities[owners[i]] : labels[i]
    row[0] = 1 - p
    row[1] = p
    const olidClass = olidHead ? olidClassOf[owners[i]] : -1
    if (olidHead && olidClass >= 0) row[firstColumn.get(olidHead)! + olidClass] = 1
    return row
  }
  return { extraHeads, soft, width, targetsOf }
}

export async function trainDesign(design: Design, log: (line: string) => void, seed = SEED, distillation?: Distillation) {
  const tweetEval: Example[] = tweetEvalTraining()
  const hasoc = design.hasoc ? hasocTraining().map((e) => ({ ...e, policy: design.hasoc === 'marked' ? 1 : 0 })) : []
  const val = readJsonl(join(OFFENSIVE_DATA, 'tweeteval', 'val.jsonl'))
  const architecture = architectureOf(design)
  const encoder = new Encoder(
    { ...design.features, dim: architecture.dim, lexicon: architecture.lexicon },
    architecture.glove ? GloveSlice.load(MODEL_DIR) : undefined,
  )
  if (architecture.glove && !encoder.glove) throw new Error('the GloVe slice is missing: run classifier/extract-glove.ts first')
  const tweetEvalWindows = windowsOf(tweetEval, encoder, design.maskListed)
  const hasocWindows = windowsOf(hasoc, encoder, design.maskListed)
  const windows = [...tweetEvalWindows.windows, ...hasocWindows.windows]
  const labels = [...tweetEvalWindows.labels, ...hasocWindows.labels]
  const first = tweetEvalWindows.windows.length
  const { extraHeads, soft, width, targetsOf } = trainingTargets(design, tweetEval, { labels, owners: tweetEvalWindows.owners, first }, distillation)
  const { served: model, trained } = buildTrainingModel(architecture, seed, extraHeads)
  trained.compile({ optimizer: tf.train.adam(design.learningRate), loss: soft ? headLoss : 'sparseCategoricalCrossentropy' })
  const random = prng(seed)
  // Every epoch trains on all of TweetEval's windows, and on HASOC's or a fresh draw of `hasocShare` of them.
  const hasocPerEpoch = Math.round(hasocWindows.windows.length * (design.hasocShare ?? 1))
  const valLabels = val.map((e) => e.label)
  const valProbabilities = () =>
    textProbabilities(
      model,
      val.map((e) => e.text),
      encoder,
      architecture,
    )
  let best = { epoch: 0, threshold: 0.5, macro_f1: -1, weights: [] as tf.Tensor[] }
  for (let epoch = 1; epoch <= design.epochs; epoch++) {
    const hasocDrawn = shuffle(
      Array.from({ length: hasocWindows.windows.length }, (_, i) => first + i),
      random,
    ).slice(0, hasocPerEpoch)
    const order = shuffle([...Array.from({ length: first }, (_, i) => i), ...hasocDrawn], random)
    const started = Date.now()
    let loss = 0
    // Val is scored CHECKS_PER_EPOCH times an epoch: the best model often falls between two epochs'
    // ends (val rises for one to two epochs, then falls).
    const batches = Math.ceil(order.length / 64)
    const checks = new Set(Array.from({ length: CHECKS_PER_EPOCH }, (_, c) => Math.round(((c + 1) * batches) / CHECKS_PER_EPOCH)))
    for (let b = 1; b <= batches; b++) {
      const batch = order.slice((b - 1) * 64, b * 64)
      const inputs = toInputs(
        batch.map((i) => windows[i]),
        architecture,
        encoder.glove,
      )
      const y = soft
        ? tf.tensor2d(batch.map(targetsOf), [batch.length, width])
        : tf.tensor1d(
            batch.map((i) => labels[i]),
            'float32',
          )
      loss += ((await trained.trainOnBatch(inputs, y)) as number) * batch.length
      tf.dispose([...inputs, y])
      if (!checks.has(b)) continue
      const at = round(epoch - 1 + b / batches, 2)
      const chosen = bestThreshold(valLabels, valProbabilities())
      log(
        `${design.name} epoch ${at}: loss ${(loss / Math.min(b * 64, order.length)).toFixed(4)}, val macro-F1 ${chosen.macro_f1.toFixed(4)} at t=${chosen.threshold} (${((Date.now() - started) / 1000).toFixed(1)} s)`,
      )
      if (chosen.macro_f1 > best.macro_f1) {
        tf.dispose(best.weights)
        best = { epoch: at, ...chosen, weights: trained.getWeights().map((w) => w.clone()) }
      }
    }
  }
  trained.setWeights(best.weights)
  tf.dispose(best.weights)
  const probabilities = valProbabilities()
  const ood = outOfDomainScores(model, encoder, architecture, best.threshold)
  log(`${design.name}: out-of-domain folds ${JSON.stringify(ood)}`)
  return {
    model,
    architecture,
    epoch: best.epoch,
    threshold: best.threshold,
    scores: score(valLabels, probabilities, best.threshold),
    ood,
    trainExamples: tweetEval.length + hasoc.length,
    trainWindows: windows.length,
  }
}

/**
 * The teacher of a distillation: for every TweetEval training text, the ensemble of `dirs` (models of
 * one design trained with different seeds): their served logits (each calibrated to its threshold,
 * without the profanity floor) averaged.
 */
async function teacherProbabilities(dirs: string[]): Promise<number[]> {
  const texts = tweetEvalTraining().map((e) => e.text)
  const sum = new Float64Array(texts.length)
  for (const dir of dirs) (await Detector.load(dir)).scoreTexts(texts, { floor: false }).forEach((p, i) => (sum[i] += logit(p)))
  return Array.from(sum, (total) => 1 / (1 + Math.exp(-total / dirs.length)))
}

async function main() {
  const { values } = parseArgs({
    options: {
      design: { type: 'string', default: 'bag+glove+cnn+lex+hasoc-head/2' },
      compare: { type: 'boolean', default: false },
      'dry-run': { type: 'boolean', default: false },
      out: { type: 'string', default: MODEL_DIR },
      seed: { type: 'string', default: String(SEED) },
      teacher: { type: 'string' },
      alpha: { type: 'string', default: '0.5' },
    },
  })
  const backend = await initTf('wasm', console.log)
  console.log(`TF.js backend: ${backend}`)
  const chosenName = values.design!
  const seed = Number(values.seed)
  if (!Number.isSafeInteger(seed)) throw new Error(`--seed must be an integer (got ${values.seed})`)
  const designs = values.compare ? DESIGNS : DESIGNS.filter((d) => d.name === chosenName)
  if (!designs.length) throw new Error(`unknown design ${chosenName}; known: ${DESIGNS.map((d) => d.name).join(', ')}`)
  const teachers = values.teacher ? values.teacher.split(',').map((dir) => resolve(dir)) : []
  const alpha = Number(values.alpha)
  if (!(alpha >= 0 && alpha <= 1)) throw new Error(`--alpha must be between 0 and 1 (got ${values.alpha})`)
  const distillation = teachers.length ? { probabilities: await teacherProbabilities(teachers), alpha } : undefined
  const ablations: Record<string, unknown>[] = []
  let chosen: Awaited<ReturnType<typeof trainDesign>> | undefined
  let chosenDesign: Design | undefined
  for (const design of designs) {
    const started = Date.now()
    const result = await trainDesign(design, console.log, seed, distillation)
    const seconds = (Date.now() - started) / 1000
    const parameters = result.model.countParams()
    ablations.push({
      design: design.name,
      description: design.description,
      seed,
      val_macro_f1: round(result.scores.macro_f1),
      ood_macro_f1: result.ood,
      epoch: result.epoch,
      threshold: result.threshold,
      parameters,
      weights_mb: round((parameters * 4) / 1e6, 1),
      train_seconds: Math.round(seconds),
    })
    if (design.name === chosenName) {
      chosen = result
      chosenDesign = design
    } else result.model.dispose()
  }
  if (!chosen || !chosenDesign) throw new Error(`design ${chosenName} was not trained`)
  if (values['dry-run']) {
    console.log(JSON.stringify(ablations, null, 2))
    console.log(`dry run: ${MODEL_DIR} left as it was`)
    return
  }
  const out = resolve(values.out!)
  mkdirSync(out, { recursive: true })
  // A candidate directory gets the GloVe slice too, so that it loads like the committed model.
  if (out !== MODEL_DIR) for (const file of ['embeddings.bin', 'embeddings-vocab.json']) copyFileSync(join(MODEL_DIR, file), join(out, file))
  await saveModel(chosen.model, out)
  writeJson(join(out, 'tokenizer.json'), tokenizerOf(chosenDesign, chosen.architecture))
  writeJson(join(out, 'metadata.json'), metadataOf(chosenDesign, chosen, { seed, teachers, alpha, backend }))
  writeJson(join(out, 'metrics.json'), {
    split: 'tweeteval/val.jsonl',
    ood_macro_f1: chosen.ood,
    decision: 'offensive > 0.5 on the served (calibrated) score',
    val_macro_f1: round(chosen.scores.macro_f1),
    accuracy: round(chosen.scores.accuracy),
    offensive: roundAll(chosen.scores.offensive),
    not_offensive: roundAll(chosen.scores.not_offensive),
    confusion: chosen.scores.confusion,
    threshold: chosen.threshold,
    ablations: mergedAblations(ablations, out),
  })
  console.log(`saved ${chosenDesign.name}: val macro-F1 ${chosen.scores.macro_f1.toFixed(4)} → ${out}`)
}

const writeJson = (path: string, value: unknown) => writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`)

/** tokenizer.json: how a text becomes the model's inputs, as the detector reads them when it loads. */
function tokenizerOf(design: Design, architecture: Architecture) {
  return {
    version: TOKENIZER_VERSION,
    normalisation: 'NFKC, HTML entities, "" → ", drop OLID URL, lower case, <url>, @user, leading rt, disguised listed words written plainly (disguises.ts)',
    token_regex: "v1: <url> | @user | [\\p{L}\\p{N}_']+ | \\p{Extended_Pictographic} | runs of one punctuation character",
    hash: 'FNV-1a 32-bit over UTF-8, modulo buckets, + 1 (0 = padding)',
    ...design.features,
    length: architecture.length,
    dim: architecture.dim,
    glove: architecture.glove,
    mean: usesMean(architecture),
    ...(architecture.conv ? { conv: architecture.conv } : {}),
    ...(architecture.lexicon ? { lexicon: architecture.lexicon, lexicon_version: LEXICON_VERSION, lexicon_features: LEXICON_FEATURES } : {}),
    ...(architecture.policy ? { policy: true } : {}),
  }
}

/** metadata.json: what was trained, on what, how it was chosen and how its score is served. */
function metadataOf(
  design: Design,
  chosen: Awaited<ReturnType<typeof trainDesign>>,
  { seed, teachers, alpha, backend }: { seed: number; teachers: string[]; alpha: number; backend: string },
) {
  const t = chosen.threshold
  return {
    model_version: 1,
    design: design.name,
    description: design.description,
    architecture: chosen.architecture,
    training_data: [
      'tweeteval/train.jsonl',
      ...(design.hasoc
        ? [
            `hasoc2019_en and hasoc2020_en train, without their out-of-domain folds (classifier/splits.ts)${design.hasoc === 'marked' ? ', marked by the label-policy input (1 in training, 0 when serving)' : design.hasoc === 'head' ? ', labelled through a second softmax head over the same features (not saved)' : ''}`,
          ]
        : []),
      ...(design.olidHead
        ? [
            'olid/olid-training-v1.0.tsv sub-task B/C labels of the TweetEval training tweets only (classifier/olid.ts), through a training-only head (not saved)',
          ]
        : []),
    ],
    training_examples: chosen.trainExamples,
    training_windows: chosen.trainWindows,
    deduplication: 'TweetEval train only (OLID, which holds the same tweets, at most for their finer labels); no val text is trained on',
    selection: 'epoch and threshold chosen on TweetEval val (macro-F1)',
    seed,
    ...(teachers.length
      ? { distilled_from: { models: teachers.map((dir) => basename(dir)), alpha, target: '(1 - alpha) * teacher + alpha * label, TweetEval texts' } }
      : {}),
    epochs_trained: design.epochs,
    best_epoch: chosen.epoch,
    learning_rate: design.learningRate,
    optimizer: `adam, batch 64, cross-entropy${teachers.length ? ' against the mixed targets' : ''}`,
    threshold: t,
    calibration: `served p = sigmoid(logit(p_model) - logit(${t})), so offensive > 0.5 is exactly p_model > ${t}`,
    features: [
      ...(chosen.architecture.dim ? ['hashed word n-grams', 'hashed character n-grams within word boundaries'] : []),
      ...(usesMean(chosen.architecture) ? ['mean frozen GloVe 100-d vector of the window words (embeddings.bin)'] : []),
      ...(chosen.architecture.conv ? ["convolution over the window words' frozen GloVe 100-d vectors in order (embeddings.bin)"] : []),
      ...(chosen.architecture.lexicon ? [`lexicon inputs of the text: ${LEXICON_FEATURES.join(', ')} (classifier/lexicon.ts, cuss ratings)`] : []),
    ],
    libraries: { '@tensorflow/tfjs': tf.version.tfjs, backend },
    created_at: new Date().toISOString(),
  }
}

/**
 * The comparison table of metrics.json: this run's rows, and for designs it did not train their row
 * from the previous metrics.json, so retraining one design does not drop the table.
 */
function mergedAblations(trained: Record<string, unknown>[], out: string): Record<string, unknown>[] {
  const file = join(existsSync(join(out, 'metrics.json')) ? out : MODEL_DIR, 'metrics.json')
  const previous = existsSync(file) ? ((JSON.parse(readFileSync(file, 'utf8')).ablations ?? []) as Record<string, unknown>[]) : []
  const rows = new Map(previous.map((row) => [row.design, row]))
  for (const row of trained) rows.set(row.design, row)
  return DESIGNS.flatMap((design) => (rows.has(design.name) ? [rows.get(design.name)!] : []))
}

/** Fisher–Yates, in place, with the seeded generator. */
function shuffle<T>(items: T[], random: () => number): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1))
    ;[items[i], items[j]] = [items[j], items[i]]
  }
  return items
}

const round = (n: number, digits = 4) => Math.round(n * 10 ** digits) / 10 ** digits
const roundAll = (o: Record<string, number>) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, round(v)]))

if (process.argv[1]?.endsWith('train.ts') || process.argv[1]?.endsWith('train.js')) {
  needOffensiveData('train')
  main().catch((error) => {
    console.error(error)
    process.exit(1)
  })
}
