// The frozen GloVe slice (embeddings-vocab.json + embeddings.bin): the mean vector of a window's words
// is a second, dense input of the model. Words without a vector are skipped; no word gives zeros.
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

export class GloveSlice {
  private constructor(
    readonly dimensions: number,
    private readonly index: Map<string, number>,
    private readonly data: Float32Array,
  ) {}

  /** A slice from its words and their vectors, row after row (tests). */
  static of(words: string[], dimensions: number, data: Float32Array): GloveSlice {
    return new GloveSlice(dimensions, new Map(words.map((w, i) => [w, i])), data)
  }

  static load(dir: string): GloveSlice | undefined {
    const vocabFile = join(dir, 'embeddings-vocab.json')
    if (!existsSync(vocabFile)) return undefined
    const { dimensions, words } = JSON.parse(readFileSync(vocabFile, 'utf8')) as { dimensions: number; words: string[] }
    const bytes = readFileSync(join(dir, 'embeddings.bin'))
    const data = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength))
    return new GloveSlice(dimensions, new Map(words.map((w, i) => [w, i])), data)
  }

  /** The rows of the tokens that have a vector, in order (a repeated word counts each time). */
  rowsOf(tokens: string[]): number[] {
    const rows: number[] = []
    for (const token of tokens) {
      const row = this.index.get(token)
      if (row !== undefined) rows.push(row)
    }
    return rows
  }

  /** Writes row `row`'s vector into `out` at `offset`. */
  copyRow(row: number, out: Float32Array, offset: number): void {
    out.set(this.data.subarray(row * this.dimensions, (row + 1) * this.dimensions), offset)
  }

  /** Every vector, row after row (read-only: the folded convolution multiplies them all at load). */
  get vectors(): Float32Array {
    return this.data
  }

  /** The number of words with a vector. */
  get size(): number {
    return this.data.length / this.dimensions
  }

  meanOfRows(rows: number[]): Float32Array {
    const sum = new Float64Array(this.dimensions)
    for (const row of rows) {
      const offset = row * this.dimensions
      for (let j = 0; j < this.dimensions; j++) sum[j] += this.data[offset + j]
    }
    const out = new Float32Array(this.dimensions)
    if (rows.length) for (let j = 0; j < this.dimensions; j++) out[j] = sum[j] / rows.length
    return out
  }

  /** Every row's dot product with `weights` (one weight per dimension), in float64. */
  project(weights: Float64Array): Float64Array {
    const out = new Float64Array(this.data.length / this.dimensions)
    for (let row = 0; row < out.length; row++) {
      let sum = 0
      for (let j = 0; j < this.dimensions; j++) sum += this.data[row * this.dimensions + j] * weights[j]
      out[row] = sum
    }
    return out
  }
}
