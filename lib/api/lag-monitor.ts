// Event-loop lag over a moving window (plugins/protection.ts sheds load on it). A timer asks to run
// every `interval`; how late it runs is the lag the process's requests see. The loop is saturated
// when every sample of the last `windowMs` lagged more than `maxLagMs` and there were at least three:
// a single stall, however long, yields one late sample and never counts as load.
import { eventLoopLag } from '../core/metrics.js'

const MIN_SAMPLES = 3

export class LagMonitor {
  private readonly interval: number
  private samples: Array<{ at: number; lag: number }> = []
  private timer: NodeJS.Timeout | undefined
  private expected = 0

  constructor(
    private readonly maxLagMs: number,
    private readonly windowMs: number,
  ) {
    // Often enough for several samples per window, never more than every 10 ms.
    this.interval = Math.max(10, Math.min(1000, Math.floor(maxLagMs / 2), Math.floor(windowMs / (MIN_SAMPLES + 1))))
  }

  start(): void {
    if (this.timer) return
    this.expected = performance.now() + this.interval
    this.timer = setInterval(() => this.sample(), this.interval)
    this.timer.unref()
  }

  stop(): void {
    clearInterval(this.timer)
    this.timer = undefined
  }

  private sample(): void {
    const now = performance.now()
    const lag = Math.max(0, now - this.expected)
    this.samples.push({ at: now, lag })
    eventLoopLag.set(lag / 1000)
    this.expected = now + this.interval
    while (this.samples.length && this.samples[0].at < now - this.windowMs) this.samples.shift()
  }

  saturated(): boolean {
    const now = performance.now()
    let count = 0
    for (const { at, lag } of this.samples) {
      if (at < now - this.windowMs) continue
      if (lag <= this.maxLagMs) return false
      count++
    }
    return count >= MIN_SAMPLES
  }
}
