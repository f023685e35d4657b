// A cache that the database keeps honest: it forgets everything when a NOTIFY arrives on its channel
// (triggers send them on every change, whoever makes it: this process, another instance, the CLI or
// psql), and it caches nothing while that channel is not heard (before connecting, after a dropped
// connection), since changes made then would go unnoticed.
import type { Database } from './database.js'
import { cacheLookups } from '../core/metrics.js'

export interface NotifiedCacheOptions<V> {
  /** The cache's name in the metrics (`rhizome_cache_lookups_total{cache}`). */
  name: string
  /** Entries kept at most; the oldest goes first. 0 disables the cache. */
  maxEntries: number
  /** An entry older than this is not used (a bound on staleness should a change not notify). */
  ttlMs: number
  /** With `weigh`: the total weight kept at most (the oldest entries go first). */
  maxWeight?: number
  weigh?: (value: V) => number
}

export class NotifiedCache<V> {
  readonly #entries = new Map<string, { value: V; at: number; weight: number }>()
  readonly #options: NotifiedCacheOptions<V>
  #weight = 0
  #listening = false
  // Moves on at every drop: a value computed across a change is not stored.
  #generation = 0
  readonly #hits
  readonly #misses

  constructor(options: NotifiedCacheOptions<V>) {
    this.#options = options
    this.#hits = cacheLookups.labels(options.name, 'hit')
    this.#misses = cacheLookups.labels(options.name, 'miss')
  }

  /** Starts listening on `channel`; returns the function that stops. */
  async listen(database: Database, channel: string): Promise<() => Promise<void>> {
    return database.listen(
      channel,
      () => this.drop(),
      (listening) => {
        // Changes made while nobody listened are unknown: start clean either way.
        this.drop()
        this.#listening = listening
      },
    )
  }

  /** Forgets every entry (this process wrote: its next read must see the change). */
  drop(): void {
    this.#entries.clear()
    this.#weight = 0
    this.#generation++
  }

  /** The cached value of `key`, else `compute()`'s, stored unless a change raced with it. */
  async remember(key: string, compute: () => Promise<V | undefined>): Promise<V | undefined> {
    const hit = this.#entries.get(key)
    if (hit && Date.now() - hit.at < this.#options.ttlMs) {
      this.#hits.inc()
      return hit.value
    }
    this.#misses.inc()
    const before = this.#generation
    const value = await compute()
    if (value !== undefined && this.#listening && this.#generation === before) this.#store(key, value)
    return value
  }

  #store(key: string, value: V) {
    const { maxEntries, maxWeight = Infinity, weigh } = this.#options
    const weight = weigh ? weigh(value) : 0
    if (maxEntries === 0 || weight > maxWeight) return
    this.#remove(key)
    while (this.#entries.size >= maxEntries || this.#weight + weight > maxWeight) this.#remove(this.#entries.keys().next().value!)
    this.#entries.set(key, { value, at: Date.now(), weight })
    this.#weight += weight
  }

  #remove(key: string) {
    const entry = this.#entries.get(key)
    if (!entry) return
    this.#entries.delete(key)
    this.#weight -= entry.weight
  }

  get size(): number {
    return this.#entries.size
  }

  /** The total weight of the entries kept. */
  get weight(): number {
    return this.#weight
  }
}
