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

  static load(dir: string): GloveSlice | undefined {
    const vocabFile = join(dir, 'embeddings-vocab.json')
    if (!existsSync(vocabFile)) return undefined
    const { dimensions, words } = JSON.parse(readFileSync(vocabFile, 'utf8')) as { dimensions: number; words: string[] }
    const bytes = readFileSync(join(dir, 'embeddings.bin'))
    const data = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength))
    return new GloveSlice(dimensions, new Map(words.map((w, i) => [w, i])), data)
  }

  mean(tokens: string[]): Float32Array {
    const sum = new Float64Array(this.dimensions)
    let n = 0
    for (const token of tokens) {
      const row = this.index.get(token)
      if (row === undefined) continue
      n++
      const offset = row * this.dimensions
      for (let j = 0; j < this.dimensions; j++) sum[j] += this.data[offset + j]
    }
    const out = new Float32Array(this.dimensions)
    if (n) for (let j = 0; j < this.dimensions; j++) out[j] = sum[j] / n
    return out
  }
}
