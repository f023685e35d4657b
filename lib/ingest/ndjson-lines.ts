// The transform's rows as the worker thread hands them back (lib/ingest/transform-rows.ts): NDJSON
// bytes, off the JavaScript heap, decoded a slice of lines at a time. A document of a million row keys
// is never a million objects on the server's heap at once (docs/decisions.md, "A transform in slices").
import { setImmediate as turn } from 'node:timers/promises'

const NEWLINE = 10

export class NdjsonLines<T> {
  private readonly decoder = new TextDecoder()

  private constructor(
    private readonly bytes: Uint8Array,
    /** Where each line starts; line i ends where line i + 1 starts, less its newline. */
    private readonly starts: Int32Array,
  ) {}

  /** The lines of `bytes`, found between turns of the event loop (a 100 MB buffer is scanned in slices). */
  static async of<T>(bytes: Uint8Array): Promise<NdjsonLines<T>> {
    let starts = new Int32Array(1024)
    let count = 0
    for (let start = 0; start < bytes.length; count++) {
      if (count === starts.length) {
        const grown = new Int32Array(starts.length * 2)
        grown.set(starts)
        starts = grown
      }
      starts[count] = start
      const end = bytes.indexOf(NEWLINE, start)
      start = end < 0 ? bytes.length : end + 1
      if (count % 50_000 === 0) await turn()
    }
    return new NdjsonLines<T>(bytes, starts.slice(0, count))
  }

  get length(): number {
    return this.starts.length
  }

  /** Line `index`, parsed. */
  at(index: number): T {
    const start = this.starts[index]
    const end = index + 1 < this.starts.length ? this.starts[index + 1] - 1 : this.bytes.length
    return JSON.parse(this.decoder.decode(this.bytes.subarray(start, end))) as T
  }

  /** Lines `from` to `to` (excluded), parsed. */
  slice(from: number, to: number): T[] {
    const items: T[] = []
    for (let i = from; i < Math.min(to, this.length); i++) items.push(this.at(i))
    return items
  }
}
