// Renders of one dashboard at many widths: each width is a new drawing (a cache miss), so a client
// stepping through widths would draw without end. Per owner (a user or a shared link) and dashboard
// (or chart), only so many distinct widths are drawn per window; a width drawn in the window may be
// drawn again (its reads are shared through the read cache), a new one past the budget is 429.
import { ApiError } from '../core/errors.js'

interface Window {
  startedAt: number
  widths: Set<number>
}

export class WidthBudget {
  private readonly windows = new Map<string, Window>()

  constructor(
    private readonly widths: number,
    private readonly windowMs: number,
  ) {}

  /** Admits a drawing of `key` at `width`, or throws 429 with the seconds until the window ends. */
  admit(key: string, width: number, now = Date.now()) {
    let window = this.windows.get(key)
    if (!window || now - window.startedAt >= this.windowMs) {
      if (this.windows.size > 10_000) this.sweep(now)
      window = { startedAt: now, widths: new Set() }
      this.windows.set(key, window)
    }
    if (window.widths.has(width) || window.widths.size < this.widths) {
      window.widths.add(width)
      return
    }
    const seconds = Math.max(1, Math.ceil((window.startedAt + this.windowMs - now) / 1000))
    throw new ApiError(
      429,
      'TOO_MANY_WIDTHS',
      `This dashboard was drawn at ${this.widths} widths in the last ${Math.round(this.windowMs / 1000)} s (EXPORT_WIDTHS_PER_DASHBOARD): ask one of those, or retry in ${seconds} s`,
      { limit: this.widths, widths: [...window.widths].sort((a, b) => a - b) },
      { 'retry-after': String(seconds) },
    )
  }

  /** Windows that ended are dropped, so the map holds at most the owners drawing now. */
  private sweep(now: number) {
    for (const [key, window] of this.windows) if (now - window.startedAt >= this.windowMs) this.windows.delete(key)
  }
}
