// What stands between an anonymous client and a password check (SECURITY.md, "Sign-in"): budgets of
// wrong passwords that an attacker cannot step around, and a gate that lets only a few scrypt hashes
// run at once, so that sign-in load never takes the CPU that authenticated reads need.
//
// The model, per window of RATE_LIMIT_WINDOW_MS:
// - an address (an IPv6 client by its /64) may make AUTH_FAILURE_MAX wrong tries, whatever the accounts
//   (spraying one password over many usernames is as limited as guessing one user's);
// - an account may receive AUTH_ACCOUNT_FAILURE_MAX wrong tries from all addresses together; past that
//   it is under attack, and only addresses without a wrong try in this window may still try it, so the
//   user, from any other address, still signs in;
// - every try is counted before its check (concurrent tries cannot overrun a budget) and given back
//   when the password was right.
// Counts are kept under digests, never the raw username, in stores whose size is bounded.
import { createHash } from 'node:crypto'
import { isIPv6 } from 'node:net'
import pLimit, { type LimitFunction } from 'p-limit'
import { ApiError } from '../core/errors.js'

interface Count {
  count: number
  resetAt: number
  /** An existing account's count: never evicted while its window runs. */
  pinned: boolean
}

/** Counts per key within a fixed window from each key's first count; at most `capacity` unpinned keys. */
export class WindowCounts {
  private readonly counts = new Map<string, Count>()

  constructor(
    private readonly windowMs: number,
    private readonly capacity: number,
  ) {}

  get size(): number {
    return this.counts.size
  }

  count(key: string, now = Date.now()): number {
    const entry = this.counts.get(key)
    return entry && entry.resetAt > now ? entry.count : 0
  }

  /** Seconds until `key`'s window ends (at least 1). */
  retryAfter(key: string, now = Date.now()): number {
    const entry = this.counts.get(key)
    return Math.max(1, Math.ceil(((entry?.resetAt ?? now) - now) / 1000))
  }

  add(key: string, delta: number, now = Date.now(), pinned = false): void {
    let entry = this.counts.get(key)
    if (!entry || entry.resetAt <= now) {
      if (delta <= 0) return
      if (!entry) this.makeRoom(now)
      entry = { count: 0, resetAt: now + this.windowMs, pinned }
      this.counts.set(key, entry)
    }
    entry.count = Math.max(0, entry.count + delta)
    entry.pinned ||= pinned
  }

  pin(key: string): void {
    const entry = this.counts.get(key)
    if (entry) entry.pinned = true
  }

  /**
   * Before a new key: ended windows go first; then, when still full, the unpinned key with the fewest
   * tries, the newest among equals: an attacker's fresh keys evict each other, not an older count.
   */
  private makeRoom(now: number): void {
    if (this.counts.size < this.capacity) return
    for (const [key, entry] of this.counts) if (entry.resetAt <= now) this.counts.delete(key)
    if (this.counts.size < this.capacity) return
    let smallest: string | undefined
    let fewest = Number.POSITIVE_INFINITY
    for (const [key, entry] of this.counts) {
      if (!entry.pinned && entry.count <= fewest) {
        smallest = key
        fewest = entry.count
      }
    }
    if (smallest !== undefined) this.counts.delete(smallest)
  }
}

/**
 * A body that carries passwords (a sign-in, a password change, a reset link's use) is read with a
 * limit of its own: its fields fit in a few hundred bytes, and nothing larger reaches a parser, a
 * counter or a hash (a 10 MB username was memory an anonymous client could fill).
 */
export const PASSWORD_BODY_LIMIT = 8 * 1024

/** At most `concurrency` runs at a time, `maxWaiting` more queued; beyond that, 429 at once. */
export class HashGate {
  // p-limit runs and queues; its queue has no bound, so the bound (and the 429 past it) is ours.
  readonly #limit: LimitFunction
  readonly #capacity: number

  constructor(concurrency: number, maxWaiting: number) {
    this.#limit = pLimit(concurrency)
    this.#capacity = concurrency + maxWaiting
  }

  run<T>(work: () => Promise<T>): Promise<T> {
    // Both counts move synchronously when a run is queued, so concurrent callers cannot overrun the bound.
    if (this.#limit.activeCount + this.#limit.pendingCount >= this.#capacity) {
      return Promise.reject(new ApiError(429, 'SIGN_IN_BUSY', 'Too many sign-ins at this moment; retry in 1 s', undefined, { 'retry-after': '1' }))
    }
    return this.#limit(work)
  }
}

/** A short digest for a counter's key: what is kept never grows with what a client sends. */
const digest = (text: string) => createHash('sha256').update(text).digest('base64url').slice(0, 22)

/** The client as budgets see it: an IPv4 address, or an IPv6 client by its /64 (one host has a whole /64). */
export function clientNetwork(ip: string): string {
  if (!isIPv6(ip) || ip.includes('.')) return ip.replace(/^::ffff:/i, '')
  const [head, tail = ''] = ip.toLowerCase().split('::')
  const left = head ? head.split(':') : []
  const right = tail ? tail.split(':') : []
  const groups = ip.includes('::') ? [...left, ...Array(8 - left.length - right.length).fill('0'), ...right] : left
  return `${groups
    .slice(0, 4)
    .map((g) => Number.parseInt(g || '0', 16).toString(16))
    .join(':')}::/64`
}

export interface SignInBudgets {
  windowMs: number
  /** Wrong passwords per address (any account) per window. */
  perAddress: number
  /** Wrong passwords per account (any address) per window before it is under attack. */
  perAccount: number
  /** Addresses and accounts remembered at most (existing accounts within their window are kept whatever). */
  capacity: number
}

const tooManyFailures = (seconds: number) =>
  new ApiError(429, 'TOO_MANY_AUTH_FAILURES', `Too many wrong passwords; retry in ${seconds} s`, undefined, { 'retry-after': String(seconds) })

/** One try, counted before its check: `right()` gives it back, `withdrawn()` too (it was never checked). */
export interface SignInTry {
  /** The account exists: its count is kept however many junk usernames come after. */
  accountExists(): void
  right(): void
  withdrawn(): void
}

export class SignInGuard {
  private readonly addresses: WindowCounts
  private readonly accounts: WindowCounts

  constructor(private readonly budgets: SignInBudgets) {
    this.addresses = new WindowCounts(budgets.windowMs, budgets.capacity)
    this.accounts = new WindowCounts(budgets.windowMs, budgets.capacity)
  }

  /** Counts a try of `username` from `ip`, or refuses it with 429 when a budget is spent. */
  admit(ip: string, username: string, now = Date.now()): SignInTry {
    const address = digest(clientNetwork(ip))
    const account = digest(username)
    const fromAddress = this.addresses.count(address, now)
    if (fromAddress >= this.budgets.perAddress) throw tooManyFailures(this.addresses.retryAfter(address, now))
    // Under attack, an address that has already guessed wrong in this window waits it out.
    if (this.accounts.count(account, now) >= this.budgets.perAccount && fromAddress > 0) {
      throw tooManyFailures(Math.min(this.accounts.retryAfter(account, now), this.addresses.retryAfter(address, now)))
    }
    this.addresses.add(address, 1, now)
    this.accounts.add(account, 1, now)
    const giveBack = () => {
      this.addresses.add(address, -1)
      this.accounts.add(account, -1)
    }
    return { accountExists: () => this.accounts.pin(account), right: giveBack, withdrawn: giveBack }
  }

  /** How many keys each store holds (bounded: tests and /metrics read it). */
  get remembered(): { addresses: number; accounts: number } {
    return { addresses: this.addresses.size, accounts: this.accounts.size }
  }
}
