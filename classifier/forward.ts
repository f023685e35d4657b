// The served forward pass of the model, in float64 JavaScript over the TF.js model's own weights.
// The model is an embedding bag: only the ~200 feature rows a window uses matter, so reading them
// directly (each folded to one number, below) costs microseconds where the wasm Gather of a padded
// [batch, 512] input costs ~0.3 ms per window. Rows are independent, so a text's score never depends
// on its batch (detect.md §5), and tests check this against tf predict.
import type { Architecture } from './model.js'
import type { Window } from './tokenizer.js'
import { tf } from './runtime.js'
import type { GloveSlice } from './glove.js'

interface Dense {
  kernel: Float32Array
  bias: Float32Array
  inputs: number
  units: number
}

function dense(model: tf.LayersModel, name: string): Dense {
  const [kernel, bias] = model.getLayer(name).getWeights()
  const [inputs, units] = kernel.shape as [number, number]
  return { kernel: kernel.dataSync() as Float32Array, bias: bias.dataSync() as Float32Array, inputs, units }
}

function apply(layer: Dense, x: Float64Array, relu: boolean): Float64Array {
  const out = new Float64Array(layer.units)
  for (let u = 0; u < layer.units; u++) {
    let sum = layer.bias[u]
    for (let i = 0; i < layer.inputs; i++) sum += x[i] * layer.kernel[i * layer.units + u]
    out[u] = relu && sum < 0 ? 0 : sum
  }
  return out
}

/**
 * Without a hidden layer the model is linear up to its softmax: the offensive probability is
 * σ(z1 − z0), and z1 − z0 is a weighted sum over the window's features and words. Each feature row and
 * each word vector then reduces to ONE number (its dot product with the difference of the two output
 * columns), computed once at load: a window costs one addition per feature and per word.
 */
interface Folded {
  feature: Float64Array
  word?: Float64Array
  bias: number
}

export class SparseForward {
  private readonly embeddings: Float32Array
  private readonly dim: number
  private readonly hidden?: Dense
  private readonly output: Dense
  private readonly folded?: Folded

  /** Sizes come from the weights themselves; `length` and `glove` from tokenizer.json. */
  constructor(
    model: tf.LayersModel,
    private readonly a: Pick<Architecture, 'length' | 'glove'>,
    glove?: GloveSlice,
  ) {
    const [table] = model.getLayer('features').getWeights()
    this.embeddings = table.dataSync() as Float32Array
    this.dim = table.shape[1]!
    if (model.layers.some((layer) => layer.name === 'hidden')) this.hidden = dense(model, 'hidden')
    this.output = dense(model, 'output')
    if (!this.hidden && this.output.units === 2) this.folded = this.fold(glove)
  }

  private fold(glove?: GloveSlice): Folded {
    const { kernel, bias } = this.output
    const delta = (input: number) => kernel[input * 2 + 1] - kernel[input * 2]
    const featureWeights = Float64Array.from({ length: this.dim }, (_, k) => delta(k))
    const feature = new Float64Array(this.embeddings.length / this.dim)
    for (let row = 0; row < feature.length; row++) {
      let sum = 0
      for (let k = 0; k < this.dim; k++) sum += this.embeddings[row * this.dim + k] * featureWeights[k]
      feature[row] = sum
    }
    const word = this.a.glove && glove ? glove.project(Float64Array.from({ length: this.a.glove }, (_, k) => delta(this.dim + k))) : undefined
    return { feature, word, bias: bias[1] - bias[0] }
  }

  /** The offensive probability of one window. */
  probability(window: Window): number {
    const { folded } = this
    if (folded && (window.rows || !this.a.glove)) {
      const n = Math.min(window.ids.length, this.a.length)
      let features = 0
      for (let j = 0; j < n; j++) features += folded.feature[window.ids[j]]
      let words = 0
      const rows = window.rows ?? []
      if (folded.word) for (const row of rows) words += folded.word[row]
      const z = folded.bias + (n ? features / Math.sqrt(n) : 0) + (rows.length ? words / rows.length : 0)
      return 1 / (1 + Math.exp(-z))
    }
    return this.unfolded(window)
  }

  /** The layer-by-layer pass (a hidden layer, or a window that carries its mean vector). */
  private unfolded(window: Window): number {
    const { dim } = this
    const { length, glove } = this.a
    const x = new Float64Array(dim + glove)
    const n = Math.min(window.ids.length, length)
    const weight = n ? 1 / Math.sqrt(n) : 0
    // Padding slots (id 0, weight 0) contribute nothing, exactly as in the TF.js graph.
    for (let j = 0; j < n; j++) {
      const row = window.ids[j] * dim
      for (let k = 0; k < dim; k++) x[k] += this.embeddings[row + k] * weight
    }
    if (glove) for (let k = 0; k < glove; k++) x[dim + k] = window.vector![k]
    const logits = apply(this.output, this.hidden ? apply(this.hidden, x, true) : x, false)
    return 1 / (1 + Math.exp(logits[0] - logits[1]))
  }

  predict(windows: Window[]): Float32Array {
    return Float32Array.from(windows, (w) => this.probability(w))
  }
}
