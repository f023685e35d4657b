// The detection model (detect.md §6): up to three inputs per window, concatenated into a 2-way softmax
// (0 = not-offensive, 1 = offensive):
// - a bag of hashed n-gram features → embedding bag (weighted mean of feature vectors), `dim` > 0;
//   inputs `ids` (feature ids, 0 = padding) and `weights` (1/√n for the n real ids, else 0);
// - the mean frozen GloVe vector of the window's words (`glove` > 0 and `mean`);
// - a convolution over the window's GloVe vectors in order (`conv`): for each width k, `filters`
//   ReLU units over every k consecutive words, max over positions (a CNN over pretrained embeddings).
//   The convolution is written as a Dense layer over the unfolded k-grams (input `words<k>`, shape
//   [positions − k + 1, k × glove]): the same function, and the wasm backend has no gradient kernel
//   for Conv1D (Conv2DBackpropFilter) while it has one for MatMul.
// - the text's lexicon inputs (`lexicon` > 0, lexicon.ts): how profane its words are by a word list;
// - a label-policy bit (`policy`), set during training for examples labelled under HASOC's broader
//   policy and 0 when serving: the model learns that policy's shift apart instead of moving its
//   decision towards it.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { tf } from './runtime.js'
import type { Window } from './tokenizer.js'
import type { GloveSlice } from './glove.js'

export interface Convolution {
  /** Window widths in words, one branch each. */
  widths: number[]
  /** ReLU units per width. */
  filters: number
  /** Word positions per window (the window size W): shorter windows are padded with zero vectors. */
  positions: number
}

export interface Architecture {
  buckets: number
  /** Dimensions of the feature bag (0 = no n-gram features). */
  dim: number
  hidden: number
  /** Padded feature slots per window. */
  length: number
  dropout: number
  /** L2 penalty on the feature vectors (0 = none). */
  l2: number
  /** Dimensions of the frozen word vectors (0 = not used). */
  glove: number
  /** The mean word vector as an input (default: whenever `glove` > 0). */
  mean?: boolean
  conv?: Convolution
  /** Lexicon inputs (lexicon.ts; 0 or absent = none). */
  lexicon?: number
  /** The lexicon inputs are dropped out with the learned features (default: they join after dropout). */
  lexiconDropout?: boolean
  /** The training-only label-policy input. */
  policy?: boolean
}

/** The mean word vector is an input of the model. */
export const usesMean = (a: Pick<Architecture, 'glove' | 'mean'>) => a.glove > 0 && a.mean !== false
/** The feature bag is an input of the model (files written before `dim` was recorded have one). */
export const usesBag = (a: { dim?: number }) => a.dim !== 0

export function buildModel(a: Architecture, seed: number): tf.LayersModel {
  return buildTrainingModel(a, seed).served
}

/** A training-only softmax head over the served head's features (never saved). */
export interface ExtraHead {
  name: string
  /** Its classes: its outputs follow the served head's two and the heads before it. */
  classes: number
}

/**
 * The served model and the model that is trained. With extra heads, the training model adds a
 * softmax for each beside the served one, over the same features: its output is the served head's
 * [p0, p1] followed by each extra head's probabilities, and a target over all of them trains each
 * head on its own columns (headLoss). Extra heads are never saved.
 */
export function buildTrainingModel(a: Architecture, seed: number, extraHeads: ExtraHead[] = []): { served: tf.LayersModel; trained: tf.LayersModel } {
  const inputs: tf.SymbolicTensor[] = []
  const parts: tf.SymbolicTensor[] = []
  if (usesBag(a)) {
    const ids = tf.input({ shape: [a.length], dtype: 'int32', name: 'ids' })
    const weights = tf.input({ shape: [a.length], name: 'weights' })
    const vectors = tf.layers
      .embedding({
        inputDim: a.buckets + 1,
        outputDim: a.dim,
        embeddingsInitializer: tf.initializers.randomUniform({ minval: -0.05, maxval: 0.05, seed }),
        embeddingsRegularizer: a.l2 > 0 ? tf.regularizers.l2({ l2: a.l2 }) : undefined,
        name: 'features',
      })
      .apply(ids) as tf.SymbolicTensor
    const column = tf.layers.reshape({ targetShape: [a.length, 1] }).apply(weights) as tf.SymbolicTensor
    // Weighted sum over the feature axis: [B, L, 1] · [B, L, dim] → [B, 1, dim].
    const bag = tf.layers.dot({ axes: 1 }).apply([column, vectors]) as tf.SymbolicTensor
    inputs.push(ids, weights)
    parts.push(tf.layers.flatten().apply(bag) as tf.SymbolicTensor)
  }
  if (usesMean(a)) {
    const vector = tf.input({ shape: [a.glove], name: 'glove' })
    inputs.push(vector)
    parts.push(vector)
  }
  for (const k of a.conv?.widths ?? []) {
    const words = tf.input({ shape: [a.conv!.positions - k + 1, k * a.glove], name: `words${k}` })
    const units = tf.layers
      .dense({ units: a.conv!.filters, activation: 'relu', kernelInitializer: tf.initializers.glorotUniform({ seed: seed + 10 + k }), name: `conv${k}` })
      .apply(words) as tf.SymbolicTensor
    inputs.push(words)
    parts.push(tf.layers.globalMaxPooling1d({ name: `maxpool${k}` }).apply(units) as tf.SymbolicTensor)
  }
  // The side inputs join after dropout: dropping the policy bit would label a HASOC example as
  // TweetEval's policy, and dropping the lexicon inputs teaches the model to trust them less (which
  // `lexiconDropout` asks for). Either way they follow the learned features in the output's rows.
  const side: tf.SymbolicTensor[] = []
  if (a.lexicon) {
    const lexicon = tf.input({ shape: [a.lexicon], name: 'lexicon' })
    inputs.push(lexicon)
    if (a.lexiconDropout) parts.push(lexicon)
    else side.push(lexicon)
  }
  if (a.policy) {
    const policy = tf.input({ shape: [1], name: 'policy' })
    inputs.push(policy)
    side.push(policy)
  }
  let x = parts.length > 1 ? (tf.layers.concatenate().apply(parts) as tf.SymbolicTensor) : parts[0]
  if (a.dropout > 0) x = tf.layers.dropout({ rate: a.dropout, seed }).apply(x) as tf.SymbolicTensor
  if (side.length) x = tf.layers.concatenate({ name: 'with_side_inputs' }).apply([x, ...side]) as tf.SymbolicTensor
  if (a.hidden > 0) {
    x = tf.layers
      .dense({ units: a.hidden, activation: 'relu', kernelInitializer: tf.initializers.glorotUniform({ seed }), name: 'hidden' })
      .apply(x) as tf.SymbolicTensor
  }
  const out = tf.layers
    .dense({ units: 2, activation: 'softmax', kernelInitializer: tf.initializers.glorotUniform({ seed: seed + 1 }), name: 'output' })
    .apply(x) as tf.SymbolicTensor
  const served = tf.model({ inputs, outputs: out })
  if (!extraHeads.length) return { served, trained: served }
  const extra = extraHeads.map(
    (head, i) =>
      tf.layers
        .dense({ units: head.classes, activation: 'softmax', kernelInitializer: tf.initializers.glorotUniform({ seed: seed + 2 + i }), name: head.name })
        .apply(x) as tf.SymbolicTensor,
  )
  return { served, trained: tf.model({ inputs, outputs: tf.layers.concatenate({ name: 'all_heads' }).apply([out, ...extra]) as tf.SymbolicTensor }) }
}

/**
 * Cross-entropy of the labelled heads' softmaxes: targets over every head's outputs, for each head
 * that labels the example one-hot or a distribution (a teacher's, when distilling), zero elsewhere;
 * −Σ target · log p, the sum over those heads of −log p of the label's column for one-hot targets.
 */
export function headLoss(targets: tf.Tensor, probabilities: tf.Tensor): tf.Tensor {
  return tf.tidy(() => tf.neg(tf.mean(tf.sum(tf.mul(targets, tf.log(tf.clipByValue(probabilities, 1e-7, 1))), 1))))
}

export type InputShape = Pick<Architecture, 'length' | 'glove' | 'mean' | 'conv' | 'lexicon' | 'policy'> & { dim?: number }

/**
 * The model's input tensors for a batch of windows: feature ids padded/truncated to `a.length`, their
 * weights 1/√n (an L2-normalised bag); the mean word vector; and for each convolution width the
 * unfolded k-grams of the window's word vectors (from its `rows`, zero-padded to `positions`).
 */
export function toInputs(windows: Window[], a: InputShape, glove?: GloveSlice): tf.Tensor[] {
  const inputs: tf.Tensor[] = []
  if (usesBag(a)) {
    const { length } = a
    const ids = new Int32Array(windows.length * length)
    const weights = new Float32Array(windows.length * length)
    windows.forEach((window, row) => {
      const n = Math.min(window.ids.length, length)
      for (let j = 0; j < n; j++) {
        ids[row * length + j] = window.ids[j]
        weights[row * length + j] = 1 / Math.sqrt(n)
      }
    })
    inputs.push(tf.tensor2d(ids, [windows.length, length], 'int32'), tf.tensor2d(weights, [windows.length, length]))
  }
  if (usesMean(a)) {
    const vectors = new Float32Array(windows.length * a.glove)
    windows.forEach((window, row) => vectors.set(window.vector!, row * a.glove))
    inputs.push(tf.tensor2d(vectors, [windows.length, a.glove]))
  }
  if (a.conv) {
    if (!glove) throw new Error('a convolution over word vectors needs the GloVe slice')
    const { positions } = a.conv
    const d = a.glove
    for (const k of a.conv.widths) {
      const steps = positions - k + 1
      const grams = new Float32Array(windows.length * steps * k * d)
      windows.forEach((window, b) => {
        const rows = window.rows!.slice(0, positions)
        // Step t reads words t … t+k−1; words past the window's end are zero vectors.
        for (let t = 0; t < Math.min(steps, rows.length); t++) {
          for (let j = 0; j < k && t + j < rows.length; j++) glove.copyRow(rows[t + j], grams, ((b * steps + t) * k + j) * d)
        }
      })
      inputs.push(tf.tensor3d(grams, [windows.length, steps, k * d]))
    }
  }
  if (a.lexicon) {
    const size = a.lexicon
    const values = new Float32Array(windows.length * size)
    windows.forEach((window, row) => values.set(window.lexicon!, row * size))
    inputs.push(tf.tensor2d(values, [windows.length, size]))
  }
  if (a.policy)
    inputs.push(
      tf.tensor2d(
        Float32Array.from(windows, (w) => w.policy ?? 0),
        [windows.length, 1],
      ),
    )
  return inputs
}

/** Offensive probability of each window, from the model's softmax. */
export function predictWindows(model: tf.LayersModel, windows: Window[], a: InputShape, glove?: GloveSlice): Float32Array {
  return tf.tidy(() => {
    const probabilities = model.predict(toInputs(windows, a, glove)) as tf.Tensor2D
    return probabilities.slice([0, 1], [-1, 1]).dataSync() as Float32Array
  })
}

/** Writes model.json + weights.bin (the tfjs-node layout), without tfjs-node. */
export async function saveModel(model: tf.LayersModel, dir: string): Promise<void> {
  await model.save(
    tf.io.withSaveHandler(async (artifacts) => {
      mkdirSync(dir, { recursive: true })
      const data = Array.isArray(artifacts.weightData) ? tf.io.concatenateArrayBuffers(artifacts.weightData) : artifacts.weightData!
      writeFileSync(join(dir, 'weights.bin'), Buffer.from(data))
      writeFileSync(
        join(dir, 'model.json'),
        JSON.stringify({
          modelTopology: artifacts.modelTopology,
          format: artifacts.format,
          generatedBy: artifacts.generatedBy,
          convertedBy: artifacts.convertedBy,
          weightsManifest: [{ paths: ['./weights.bin'], weights: artifacts.weightSpecs }],
        }),
      )
      return { modelArtifactsInfo: tf.io.getModelArtifactsInfoForJSON(artifacts) }
    }),
  )
}

export async function loadModel(modelJson: string): Promise<tf.LayersModel> {
  const json = JSON.parse(readFileSync(modelJson, 'utf8'))
  const weights = readFileSync(join(dirname(modelJson), json.weightsManifest[0].paths[0]))
  return tf.loadLayersModel(
    tf.io.fromMemory({
      modelTopology: json.modelTopology,
      weightSpecs: json.weightsManifest[0].weights,
      weightData: weights.buffer.slice(weights.byteOffset, weights.byteOffset + weights.byteLength),
    }),
  )
}
