// The served forward pass of the model, in float64 JavaScript over the TF.js model's own weights.
// The model is an embedding bag: only the ~200 feature rows a window uses matter, so reading them
// directly costs microseconds where the wasm Gather of a padded [batch, 512] input costs ~0.3 ms per
// window. Rows are independent, so a text's score never depends on its batch (detect.md §5), and a
// test checks this against tf predict.
import type { Architecture } from './model.js'
import type { Window } from './tokenizer.js'
import { tf } from './runtime.js'

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

export class SparseForward {
  private readonly embeddings: Float32Array
  private readonly dim: number
  private readonly hidden?: Dense
  private readonly output: Dense

  /** Sizes come from the weights themselves; `length` and `glove` from tokenizer.json. */
  constructor(
    model: tf.LayersModel,
    private readonly a: Pick<Architecture, 'length' | 'glove'>,
  ) {
    const [table] = model.getLayer('features').getWeights()
    this.embeddings = table.dataSync() as Float32Array
    this.dim = table.shape[1]!
    if (model.layers.some((layer) => layer.name === 'hidden')) this.hidden = dense(model, 'hidden')
    this.output = dense(model, 'output')
  }

  /** The offensive probability of one window. */
  probability(window: Window): number {
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
