// A cache that the database keeps honest: it forgets what a NOTIFY on its channel names (triggers send
// one on every change, naming the table, whoever makes it: this process, another instance, the CLI or
// psql), and it caches nothing while that channel is not heard (before connecting, after a dropped
// connection), since changes made then would go unnoticed.
import { sql } from 'kysely'
import { LRUCache } from 'lru-cache'
import { SYNC_PREFIX } from './notifications.js'
import type { Database } from './database.js'
import { cacheBytes, cacheEvictions, cacheLookups } from '../core/metrics.js'

/** The channel sql/004 and sql/011 notify on every change, with the table's name. */
export const DATA_CHANNEL = 'rhizome_data'

/**
 * Reads a DATA_CHANNEL notification (sql/011: `schema.table`) for `listen`: the table of this process's
 * schema it names, null when it concerns none of ours, undefined when it may concern any. Until the
 * schema is known (read once the database answers), a change of that table in any schema counts.
 */
export function changedTableIn(database: Database): (payload: string) => string | undefined | null {
  let schema = database.searchPath?.split(',')[0].trim()
  if (schema === undefined) {
    sql<{ name: string }>`select current_schema() as name`.execute(database.db).then(
      ({ rows }) => (schema = rows[0].name),
      () => {},
    )
  }
  return (payload) => {
    const dot = payload.indexOf('.')
    // A payload that names no table (a listener's sync, a notification of an older trigger) may concern any.
    if (dot < 0) return payload.startsWith(SYNC_PREFIX) ? null : undefined
    return schema === undefined || payload.slice(0, dot) === schema ? payload.slice(dot + 1) : null
  }
}

export interface NotifiedCacheOptions<V> {
  /** The cache's name in the metrics (`rhizome_cache_lookups_total{cache}`). */
  name: string
  /** Entries kept at most; the least recently used goes first. 0 disables the cache. */
  maxEntries: number
  /** An entry older than this is not used (a bound on staleness should a change not notify). */
  ttlMs: number
  /** With `weigh`: the total weight kept at most (the least recently used entries go first). */
  maxWeight?: number
  weigh?: (value: V) => number
}

interface Entry<V> {
  value: V
  /** The tables the value was read from; absent: it may depend on any table. */
  tables?: ReadonlySet<string>
}

/** The moment a computation starts: a value is stored only if no change was heard since. */
export type Generation = number

export class NotifiedCache<V> {
  // Bounds, recency and expiry are lru-cache's; what is ours is forgetting on notification. Made at
  // the first value kept: lru-cache preallocates maxEntries slots, which most processes' caches
  // (a CLI run, a worker) never use.
  #entries: LRUCache<string, Entry<V>> | undefined
  readonly #makeEntries: (() => LRUCache<string, Entry<V>>) | undefined
  #listening = false
  // Moves on at every drop: a value computed across a change of what it was read from is not stored.
  #generation = 0
  /** The generation of the last drop of everything. */
  #wholeDropAt = 0
  /** Each table's last drop (a value read from it and computed across that drop is not stored). */
  readonly #tableDropAt = new Map<string, Generation>()
  readonly #hits
  readonly #misses

  constructor(options: NotifiedCacheOptions<V>) {
    const { name, maxEntries, ttlMs, maxWeight, weigh } = options
    this.#hits = cacheLookups.labels(name, 'hit')
    this.#misses = cacheLookups.labels(name, 'miss')
    const evictions = cacheEvictions.labels(name)
    if (maxEntries > 0) {
      this.#makeEntries = () =>
        new LRUCache<string, Entry<V>>({
          max: maxEntries,
          ttl: ttlMs,
          // lru-cache takes only positive weights; a value heavier than maxSize is not stored.
          ...(weigh && maxWeight !== undefined && { maxSize: maxWeight, sizeCalculation: (entry) => Math.max(1, weigh(entry.value)) }),
          dispose: (_entry, _key, reason) => {
            if (reason === 'evict') evictions.inc()
          },
        })
    }
    cacheBytes.register(name, this)
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
    if (table === undefined) this.#wholeDropAt = this.#generation
    else this.#tableDropAt.set(table, this.#generation)
    const entries = this.#entries
    // Every write of this process and every NOTIFY lands here: lru-cache's clear() rewrites all of its
    // preallocated slots (maxEntries of them) however few are in use, so an empty cache skips it.
    if (!entries || entries.size === 0) return
    if (table === undefined) {
      entries.clear()
      return
    }
    const stale: string[] = []
    for (const [key, entry] of entries.entries()) if (!entry.tables || entry.tables.has(table)) stale.push(key)
    for (const key of stale) entries.delete(key)
  }

  /** The value kept for `key`, if any (counted as a hit or a miss). */
  get(key: string): V | undefined {
    const entry = this.#entries?.get(key)
    if (entry) {
      this.#hits.inc()
      return entry.value
    }
    this.#misses.inc()
    return undefined
  }

  /** Call before computing a value that `set` will store. */
  begin(): Generation {
    return this.#generation
  }

  /**
   * Keeps `value` unless a change of what it was read from (`tables`; absent: anything) was heard since
   * `since`, or the channel is not heard. A change of another table does not keep it out: under a
   * steady stream of writes, a read would otherwise never be kept.
   */
  set(key: string, value: V, since: Generation, tables?: ReadonlySet<string>): void {
    if (!this.#listening || !this.#makeEntries || this.#changedSince(since, tables)) return
    this.#entries ??= this.#makeEntries()
    this.#entries.set(key, { value, tables })
  }

  #changedSince(since: Generation, tables: ReadonlySet<string> | undefined): boolean {
    if (this.#generation === since) return false
    if (!tables || this.#wholeDropAt > since) return true
    for (const table of tables) if ((this.#tableDropAt.get(table) ?? 0) > since) return true
    return false
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

  get size(): number {
    return this.#entries?.size ?? 0
  }

  /** The total weight of the entries kept (0 without `weigh`). */
  get weight(): number {
    return this.#entries?.calculatedSize ?? 0
  }
}
