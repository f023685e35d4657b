// A cache that the database keeps honest: it forgets what a NOTIFY on its channel names (triggers send
// one on every change, naming the table, whoever makes it: this process, another instance, the CLI or
// psql), and it caches nothing while that channel is not heard (before connecting, after a dropped
// connection), since changes made then would go unnoticed.
import type { Database } from './database.js'
import { cacheBytes, cacheEvictions, cacheLookups } from '../core/metrics.js'

/** The channel sql/004 and sql/011 notify on every change, with the table's name. */
export const DATA_CHANNEL = 'rhizome_data'

export interface NotifiedCacheOptions<V> {
  /** The cache's name in the metrics (`rhizome_cache_lookups_total{cache}`). */
  name: string
  /** Entries kept at most; the least recently used goes first (as CLOCK approximates it). 0 disables the cache. */
  maxEntries: number
  /** An entry older than this is not used (a bound on staleness should a change not notify). */
  ttlMs: number
  /** With `weigh`: the total weight kept at most (the least recently used entries go first). */
  maxWeight?: number
  weigh?: (value: V) => number
}

interface Entry<V> {
  value: V
  at: number
  weight: number
  /** Used since eviction last passed over it (CLOCK: it gets another round before it goes). */
  used: boolean
  /** The tables the value was read from; absent: it may depend on any table. */
  tables?: ReadonlySet<string>
}

/** The moment a computation starts: a value is stored only if no change was heard since. */
export type Generation = number

export class NotifiedCache<V> {
  readonly #entries = new Map<string, Entry<V>>()
  readonly #options: NotifiedCacheOptions<V>
  #weight = 0
  #listening = false
  // Moves on at every drop: a value computed across a change is not stored.
  #generation = 0
  readonly #hits
  readonly #misses
  readonly #evictions

  constructor(options: NotifiedCacheOptions<V>) {
    this.#options = options
    this.#hits = cacheLookups.labels(options.name, 'hit')
    this.#misses = cacheLookups.labels(options.name, 'miss')
    this.#evictions = cacheEvictions.labels(options.name)
    cacheBytes.register(options.name, this)
  }

  /**
   * Starts listening on `channel`; returns the function that stops. `tableOf` reads a notification:
   * the table it names (its entries go), undefined (every entry goes) or null (it concerns none).
   */
  async listen(database: Database, channel: string, tableOf: (payload: string) => string | undefined | null = () => undefined): Promise<() => Promise<void>> {
    const stop = await database.listen(
      channel,
      (payload) => {
        const table = tableOf(payload)
        if (table !== null) this.drop(table)
      },
      (listening) => {
        // Changes made while nobody listened are unknown: start clean either way.
        this.drop()
        this.#listening = listening
      },
    )
    return async () => {
      await stop()
      this.#listening = false
      this.drop()
    }
  }

  /**
   * Forgets the entries read from `table`, and those that may depend on any table; every entry when
   * no table is named (this process wrote: its next read must see the change).
   */
  drop(table?: string): void {
    this.#generation++
    if (table === undefined) {
      this.#entries.clear()
      this.#weight = 0
      return
    }
    for (const [key, entry] of this.#entries) if (!entry.tables || entry.tables.has(table)) this.#remove(key)
  }

  /** The value kept for `key`, if any (counted as a hit or a miss). */
  get(key: string): V | undefined {
    const entry = this.#entries.get(key)
    if (entry && Date.now() - entry.at < this.#options.ttlMs) {
      this.#hits.inc()
      // Marked, not moved: reordering the map on every hit cost the detail GET measurably.
      entry.used = true
      return entry.value
    }
    this.#misses.inc()
    return undefined
  }

  /** Call before computing a value that `set` will store. */
  begin(): Generation {
    return this.#generation
  }

  /** Keeps `value` unless a change was heard since `since` or the channel is not heard. */
  set(key: string, value: V, since: Generation, tables?: ReadonlySet<string>): void {
    if (!this.#listening || this.#generation !== since) return
    const { maxEntries, maxWeight = Infinity, weigh } = this.#options
    const weight = weigh ? weigh(value) : 0
    if (maxEntries === 0 || weight > maxWeight) return
    this.#remove(key)
    while (this.#entries.size >= maxEntries || this.#weight + weight > maxWeight) this.#evictOne()
    this.#entries.set(key, { value, at: Date.now(), weight, tables, used: false })
    this.#weight += weight
  }

  /** The cached value of `key`, else `compute()`'s, stored unless a change raced with it. */
  async remember(key: string, compute: () => Promise<V | undefined>): Promise<V | undefined> {
    const hit = this.get(key)
    if (hit !== undefined) return hit
    const since = this.begin()
    const value = await compute()
    if (value !== undefined) this.set(key, value, since)
    return value
  }

  /**
   * Least recently used out first, as the CLOCK algorithm approximates it: the oldest entry goes unless
   * it was used since it was last passed over; then it is moved to the newest end, unmarked.
   */
  #evictOne() {
    for (const [key, entry] of this.#entries) {
      this.#entries.delete(key)
      if (entry.used) {
        entry.used = false
        this.#entries.set(key, entry)
        continue
      }
      this.#weight -= entry.weight
      this.#evictions.inc()
      return
    }
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
