// The detection model (detect.md §6): a bag of hashed n-gram features → embedding bag (weighted mean
// of feature vectors) → optional hidden layer → 2-way softmax (0 = not-offensive, 1 = offensive).
// Inputs per window: `ids` (feature ids, 0 = padding) and `weights` (1/n for the n real ids, else 0).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { tf } from './runtime.js'
import type { Window } from './tokenizer.js'

export interface Architecture {
  buckets: number
  dim: number
  hidden: number
  /** Padded feature slots per window. */
  length: number
  dropout: number
  /** L2 penalty on the feature vectors (0 = none). */
  l2: number
  /** Dimensions of the frozen word-vector input (0 = not used). */
  glove: number
}

export function buildModel(a: Architecture, seed: number): tf.LayersModel {
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
  let x = tf.layers.flatten().apply(bag) as tf.SymbolicTensor
  const inputs = [ids, weights]
  if (a.glove > 0) {
    const vector = tf.input({ shape: [a.glove], name: 'glove' })
    inputs.push(vector)
    x = tf.layers.concatenate().apply([x, vector]) as tf.SymbolicTensor
  }
  if (a.dropout > 0) x = tf.layers.dropout({ rate: a.dropout, seed }).apply(x) as tf.SymbolicTensor
  if (a.hidden > 0) {
    x = tf.layers.dense({ units: a.hidden, activation: 'relu', kernelInitializer: tf.initializers.glorotUniform({ seed }), name: 'hidden' }).apply(x) as tf.SymbolicTensor
  }
  const out = tf.layers.dense({ units: 2, activation: 'softmax', kernelInitializer: tf.initializers.glorotUniform({ seed: seed + 1 }), name: 'output' }).apply(x) as tf.SymbolicTensor
  return tf.model({ inputs, outputs: out })
}

/**
 * The model's input tensors for a batch of windows: feature ids padded/truncated to `a.length`, their
 * weights 1/√n (an L2-normalised bag), and the word vectors when the model reads them.
 */
export function toInputs(windows: Window[], a: Pick<Architecture, 'length' | 'glove'>): tf.Tensor2D[] {
  const { length } = a
  const ids = new Int32Array(windows.length * length)
  const weights = new Float32Array(windows.length * length)
  const vectors = new Float32Array(windows.length * a.glove)
  windows.forEach((window, row) => {
    const n = Math.min(window.ids.length, length)
    for (let j = 0; j < n; j++) {
      ids[row * length + j] = window.ids[j]
      weights[row * length + j] = 1 / Math.sqrt(n)
    }
    if (a.glove) vectors.set(window.vector!, row * a.glove)
  })
  const inputs = [tf.tensor2d(ids, [windows.length, length], 'int32'), tf.tensor2d(weights, [windows.length, length])]
  if (a.glove) inputs.push(tf.tensor2d(vectors, [windows.length, a.glove]))
  return inputs
}

/** Offensive probability of each window, from the model's softmax. */
export function predictWindows(model: tf.LayersModel, windows: Window[], a: Pick<Architecture, 'length' | 'glove'>): Float32Array {
  return tf.tidy(() => {
    const probabilities = model.predict(toInputs(windows, a)) as tf.Tensor2D
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
