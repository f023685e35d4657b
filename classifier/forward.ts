// The served forward pass of the model, in float64 JavaScript over the TF.js model's own weights.
// Only the ~200 feature rows and the few word vectors a window uses matter, so reading them directly
// (each folded once, below) costs microseconds where the wasm Gather of a padded [batch, 512]
// input costs ~0.3 ms per window. Windows are independent, so a text's score never depends on its
// batch (detect.md §5), and tests check this against tf predict.
import type { Architecture, Convolution } from './model.js'
import { usesMean } from './model.js'
import type { Window } from './tokenizer.js'
import type { tf } from './runtime.js'
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
 * The convolution over a window's word vectors. A unit's input at step t is Σ_j W_j · e(word t+j),
 * and every word vector is frozen: each (width k, offset j) reduces to a table of W_j · e(word) for
 * every word of the slice. A step then costs k additions of `filters` numbers.
 *
 * A word's rows are computed the first time a window uses it (~60 K multiply-adds), not at load:
 * all 20,325 words at once are ~1.2 G multiply-adds, seconds on 2 cores, and the model loads while the
 * server already answers, so one long synchronous stretch stalled every request and tripped the load
 * shedding (test/graceful.test.ts; test/detect.test.ts keeps it lazy). The numbers are the same
 * whenever they are computed.
 */
class FoldedConvolution {
  /** Per width: the bias, the kernel regrouped by input dimension and the [words × (k · filters)] table. */
  private readonly branches: Array<{ k: number; bias: Float32Array; byDimension: Float64Array; table: Float32Array }>
  /** 1 where a word's rows are in the tables. */
  private readonly folded: Uint8Array
  /** One word's row being computed (reused: serving is single-threaded). */
  private readonly row: Float64Array
  readonly size: number

  constructor(
    model: tf.LayersModel,
    private readonly conv: Convolution,
    private readonly glove: GloveSlice,
  ) {
    const { filters } = conv
    const d = glove.dimensions
    this.branches = conv.widths.map((k) => {
      const { kernel, bias } = dense(model, `conv${k}`)
      // kernel rows are (offset j, dimension i); regrouped as [i][(j, unit)], one pass over a word's
      // dimensions gives every offset's row at once.
      const stride = k * filters
      const byDimension = new Float64Array(d * stride)
      for (let j = 0; j < k; j++)
        for (let i = 0; i < d; i++) for (let f = 0; f < filters; f++) byDimension[i * stride + j * filters + f] = kernel[(j * d + i) * filters + f]
      return { k, bias, byDimension, table: new Float32Array(glove.size * stride) }
    })
    this.folded = new Uint8Array(glove.size)
    this.row = new Float64Array(Math.max(...conv.widths) * filters)
    this.size = filters * conv.widths.length
  }

  /** How many words have their rows computed. */
  get foldedWords(): number {
    return this.folded.reduce((n, built) => n + built, 0)
  }

  private fold(word: number): void {
    const d = this.glove.dimensions
    const vectors = this.glove.vectors
    const { row } = this
    for (const { k, byDimension, table } of this.branches) {
      const stride = k * this.conv.filters
      row.fill(0, 0, stride)
      for (let i = 0; i < d; i++) {
        const x = vectors[word * d + i]
        if (x === 0) continue
        const from = i * stride
        for (let u = 0; u < stride; u++) row[u] += x * byDimension[from + u]
      }
      table.set(row.subarray(0, stride), word * stride)
    }
    this.folded[word] = 1
  }

  /** The max-pooled ReLU units of every width, in the model's concatenation order, into `out` at `offset`. */
  apply(rows: number[], out: Float64Array, offset: number): void {
    const { filters, positions } = this.conv
    const n = Math.min(rows.length, positions)
    for (let p = 0; p < n; p++) if (!this.folded[rows[p]]) this.fold(rows[p])
    for (const { k, bias, table } of this.branches) {
      const stepCount = positions - k + 1
      const real = Math.min(stepCount, n)
      // Eight units at a time in local variables (2.5× faster here than an array of pre-activations);
      // the rest one by one. Same sums in the same order either way.
      let f = 0
      for (; f + 8 <= filters; f += 8) this.eightUnits(rows, n, k, bias, table, f, real < stepCount, real, out, offset + f)
      for (; f < filters; f++) out[offset + f] = this.unit(rows, n, k, bias[f], table, f, real < stepCount, real)
      offset += filters
    }
  }

  /**
   * Unit f of width k: max over steps of ReLU(bias + Σ_j row j of word t+j) = max(0, the largest
   * pre-activation); steps past the last word read only zero vectors, so theirs is the bias.
   */
  private unit(rows: number[], n: number, k: number, bias: number, table: Float32Array, f: number, padded: boolean, real: number): number {
    const stride = k * this.conv.filters
    let best = padded && bias > 0 ? bias : 0
    for (let t = 0; t < real; t++) {
      let sum = bias
      for (let j = 0; j < k && t + j < n; j++) sum += table[rows[t + j] * stride + j * this.conv.filters + f]
      if (sum > best) best = sum
    }
    return best
  }

  /** `unit` for units f … f+7 at once. */
  private eightUnits(
    rows: number[],
    n: number,
    k: number,
    bias: Float32Array,
    table: Float32Array,
    f: number,
    padded: boolean,
    real: number,
    out: Float64Array,
    at: number,
  ): void {
    const filters = this.conv.filters
    const stride = k * filters
    const b0 = bias[f],
      b1 = bias[f + 1],
      b2 = bias[f + 2],
      b3 = bias[f + 3],
      b4 = bias[f + 4],
      b5 = bias[f + 5],
      b6 = bias[f + 6],
      b7 = bias[f + 7]
    let m0 = 0,
      m1 = 0,
      m2 = 0,
      m3 = 0,
      m4 = 0,
      m5 = 0,
      m6 = 0,
      m7 = 0
    if (padded) {
      m0 = Math.max(b0, 0)
      m1 = Math.max(b1, 0)
      m2 = Math.max(b2, 0)
      m3 = Math.max(b3, 0)
      m4 = Math.max(b4, 0)
      m5 = Math.max(b5, 0)
      m6 = Math.max(b6, 0)
      m7 = Math.max(b7, 0)
    }
    for (let t = 0; t < real; t++) {
      let s0 = b0,
        s1 = b1,
        s2 = b2,
        s3 = b3,
        s4 = b4,
        s5 = b5,
        s6 = b6,
        s7 = b7
      for (let j = 0; j < k && t + j < n; j++) {
        const i = rows[t + j] * stride + j * filters + f
        s0 += table[i]
        s1 += table[i + 1]
        s2 += table[i + 2]
        s3 += table[i + 3]
        s4 += table[i + 4]
        s5 += table[i + 5]
        s6 += table[i + 6]
        s7 += table[i + 7]
      }
      if (s0 > m0) m0 = s0
      if (s1 > m1) m1 = s1
      if (s2 > m2) m2 = s2
      if (s3 > m3) m3 = s3
      if (s4 > m4) m4 = s4
      if (s5 > m5) m5 = s5
      if (s6 > m6) m6 = s6
      if (s7 > m7) m7 = s7
    }
    out[at] = m0
    out[at + 1] = m1
    out[at + 2] = m2
    out[at + 3] = m3
    out[at + 4] = m4
    out[at + 5] = m5
    out[at + 6] = m6
    out[at + 7] = m7
  }
}

/**
 * Without a hidden layer the model is linear between its inputs' features and its softmax: the
 * offensive probability is σ(z1 − z0), and z1 − z0 is a weighted sum over the window's features, words
 * and convolution units. Each feature row and each word vector then reduces to ONE number (its dot
 * product with the difference of the two output columns), computed once at load: a window costs one
 * addition per feature and per word, plus the convolution.
 */
interface Folded {
  feature: Float64Array
  word?: Float64Array
  /** Output weight difference of each convolution unit. */
  unit?: Float64Array
  /** Output weight difference of each lexicon input. */
  lexicon?: Float64Array
  bias: number
}

export type ServedArchitecture = Pick<Architecture, 'length' | 'glove' | 'mean' | 'conv' | 'lexicon' | 'policy'>

export class SparseForward {
  private readonly embeddings: Float32Array
  private readonly dim: number
  private readonly mean: boolean
  readonly convolution?: FoldedConvolution
  /** The convolution's units of the window being scored (reused: serving is single-threaded). */
  private readonly units?: Float64Array
  private readonly hidden?: Dense
  private readonly output: Dense
  private readonly folded?: Folded

  /** Sizes come from the weights themselves; the inputs' shapes from tokenizer.json. */
  constructor(
    model: tf.LayersModel,
    private readonly a: ServedArchitecture,
    private readonly glove?: GloveSlice,
  ) {
    const bag = model.layers.find((layer) => layer.name === 'features')
    const [table] = bag ? bag.getWeights() : []
    this.embeddings = table ? (table.dataSync() as Float32Array) : new Float32Array(0)
    this.dim = table ? table.shape[1]! : 0
    this.mean = usesMean(a)
    if (a.conv) {
      if (!glove) throw new Error('the model convolves word vectors: the GloVe slice is missing')
      this.convolution = new FoldedConvolution(model, a.conv, glove)
      this.units = new Float64Array(this.convolution.size)
    }
    if (model.layers.some((layer) => layer.name === 'hidden')) this.hidden = dense(model, 'hidden')
    this.output = dense(model, 'output')
    if (!this.hidden && this.output.units === 2) this.folded = this.fold(glove)
  }

  /** Where the convolution units start in the concatenated input of the output layer. */
  private get unitsOffset() {
    return this.dim + (this.mean ? this.a.glove : 0)
  }

  /** Where the lexicon inputs start; the label-policy input follows them, 0 when serving. */
  private get lexiconOffset() {
    return this.unitsOffset + (this.convolution?.size ?? 0)
  }

  /** The output layer's input size. */
  private get inputs() {
    return this.lexiconOffset + (this.a.lexicon ?? 0) + (this.a.policy ? 1 : 0)
  }

  private fold(glove?: GloveSlice): Folded {
    const { kernel, bias } = this.output
    const delta = (input: number) => kernel[input * 2 + 1] - kernel[input * 2]
    const featureWeights = Float64Array.from({ length: this.dim }, (_, k) => delta(k))
    const feature = new Float64Array(this.embeddings.length / Math.max(this.dim, 1))
    for (let row = 0; row < feature.length; row++) {
      let sum = 0
      for (let k = 0; k < this.dim; k++) sum += this.embeddings[row * this.dim + k] * featureWeights[k]
      feature[row] = sum
    }
    const word = this.mean && glove ? glove.project(Float64Array.from({ length: this.a.glove }, (_, k) => delta(this.dim + k))) : undefined
    const unit = this.convolution ? Float64Array.from({ length: this.convolution.size }, (_, u) => delta(this.unitsOffset + u)) : undefined
    const lexicon = this.a.lexicon ? Float64Array.from({ length: this.a.lexicon }, (_, i) => delta(this.lexiconOffset + i)) : undefined
    return { feature, word, unit, lexicon, bias: bias[1] - bias[0] }
  }

  /** The offensive probability of one window. */
  probability(window: Window): number {
    const { folded } = this
    if (folded && (window.rows || !this.a.glove)) {
      const n = this.dim ? Math.min(window.ids.length, this.a.length) : 0
      let features = 0
      for (let j = 0; j < n; j++) features += folded.feature[window.ids[j]]
      let words = 0
      const rows = window.rows ?? []
      if (folded.word) for (const row of rows) words += folded.word[row]
      let z = folded.bias + (n ? features / Math.sqrt(n) : 0) + (rows.length ? words / rows.length : 0)
      if (this.convolution && folded.unit) {
        const units = this.units!
        this.convolution.apply(rows, units, 0)
        for (let u = 0; u < units.length; u++) z += units[u] * folded.unit[u]
      }
      if (folded.lexicon) for (let i = 0; i < folded.lexicon.length; i++) z += window.lexicon![i] * folded.lexicon[i]
      return 1 / (1 + Math.exp(-z))
    }
    return this.unfolded(window)
  }

  /** The layer-by-layer pass (a hidden layer, or a window that carries its mean vector but no rows). */
  private unfolded(window: Window): number {
    const { dim } = this
    const { length, glove } = this.a
    const x = new Float64Array(this.inputs)
    const n = dim ? Math.min(window.ids.length, length) : 0
    const weight = n ? 1 / Math.sqrt(n) : 0
    // Padding slots (id 0, weight 0) contribute nothing, exactly as in the TF.js graph.
    for (let j = 0; j < n; j++) {
      const row = window.ids[j] * dim
      for (let k = 0; k < dim; k++) x[k] += this.embeddings[row + k] * weight
    }
    if (this.mean) {
      const vector = window.vector ?? this.glove!.meanOfRows(window.rows!)
      for (let k = 0; k < glove; k++) x[dim + k] = vector[k]
    }
    if (this.convolution) this.convolution.apply(window.rows!, x, this.unitsOffset)
    for (let i = 0; i < (this.a.lexicon ?? 0); i++) x[this.lexiconOffset + i] = window.lexicon![i]
    const logits = apply(this.output, this.hidden ? apply(this.hidden, x, true) : x, false)
    return 1 / (1 + Math.exp(logits[0] - logits[1]))
  }

  predict(windows: Window[]): Float32Array {
    return Float32Array.from(windows, (w) => this.probability(w))
  }
}
