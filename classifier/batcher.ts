// Dynamic micro-batching (detect.md §5): windows of concurrent requests share one forward pass. A batch
// runs as soon as `maxBatch` windows wait, or `waitMs` after the first arrived, whichever comes first.
import { ApiError } from '../lib/core/errors.js'
import { detectBatchWindows, detectInference } from '../lib/core/metrics.js'
import type { Window } from './tokenizer.js'

interface Pending {
  windows: Window[]
  scores: Float32Array
  remaining: number
  resolve: (scores: Float32Array) => void
  reject: (error: unknown) => void
}

export interface BatcherOptions {
  maxBatch: number
  waitMs: number
  maxQueue: number
}

export class MicroBatcher {
  private queue: Array<{ request: Pending; index: number }> = []
  private timer: NodeJS.Timeout | undefined
  batches = 0

  constructor(
    private readonly forward: (windows: Window[]) => Float32Array,
    private readonly options: BatcherOptions,
  ) {}

  get pending(): number {
    return this.queue.length
  }

  /** The score of every window, once all of them went through a forward pass. */
  score(windows: Window[]): Promise<Float32Array> {
    if (this.queue.length + windows.length > this.options.maxQueue) {
      return Promise.reject(new ApiError(503, 'OVERLOADED', 'Too many pending requests, retry shortly', undefined, { 'retry-after': '1' }))
    }
    if (!windows.length) return Promise.resolve(new Float32Array(0))
    return new Promise((resolve, reject) => {
      const request: Pending = { windows, scores: new Float32Array(windows.length), remaining: windows.length, resolve, reject }
      windows.forEach((_, index) => this.queue.push({ request, index }))
      if (this.queue.length >= this.options.maxBatch) this.flushSoon(0)
      else if (!this.timer) this.flushSoon(this.options.waitMs)
    })
  }

  private flushSoon(delay: number) {
    if (this.timer) clearTimeout(this.timer)
    this.timer = delay ? setTimeout(() => this.flush(), delay) : (setImmediate(() => this.flush()) as unknown as NodeJS.Timeout)
  }

  private flush() {
    this.timer = undefined
    const batch = this.queue.splice(0, this.options.maxBatch)
    if (this.queue.length) this.flushSoon(this.queue.length >= this.options.maxBatch ? 0 : this.options.waitMs)
    if (!batch.length) return
    this.batches++
    detectBatchWindows.observe(batch.length)
    try {
      const endTimer = detectInference.startTimer()
      const scores = this.forward(batch.map(({ request, index }) => request.windows[index]))
      endTimer()
      batch.forEach(({ request, index }, j) => {
        request.scores[index] = scores[j]
        if (--request.remaining === 0) request.resolve(request.scores)
      })
    } catch (error) {
      for (const { request } of batch) request.reject(error)
    }
  }
}
