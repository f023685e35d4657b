// List reads answered from memory (docs/decisions.md, "Read cache"): every list GET of a model
// resource, the datapoint reads in every mode, location and geo selections, all_meta and short CSV
// exports keep the representation they sent, keyed by the normalised request and by what the requester
// may see. An entry remembers the tables its statements named (lib/data/table-recorder.ts) and is
// dropped when the database notifies a change to one of them (sql/011), whoever made it; this
// process's own writes drop everything before their answer leaves.
import type { FastifyRequest } from 'fastify'
import type { Kysely } from 'kysely'
import type { DB } from '../../schemas/index.js'
import type { AuthUser } from '../data/auth.js'
import type { Database } from '../data/database.js'
import { changedTableIn, DATA_CHANNEL, type Generation, NotifiedCache } from '../data/notified-cache.js'
import { TableRecorder } from '../data/table-recorder.js'
import type { QueryParams } from './query-params.js'
import { type Representation, sizeOf } from './representation.js'
import { prefersAsync, rawQueryOf } from './request.js'
import type { Resource } from './resource.js'

// A bound on staleness should a change ever not notify (a table without the sql/004 trigger).
const TTL_MS = 10 * 60_000
const MAX_ENTRIES = 100_000
/** A CSV export is kept when it is this long at most (it was read whole before it was sent). */
export const CACHED_EXPORT_ROWS = 10_000

/** A read being computed: where its answer goes, and the tables its statements name. */
export interface PendingRead {
  key: string
  since: Generation
  recorder: TableRecorder
}

/**
 * Who sees the same answer. Superusers share theirs; users whose rows are limited (a location
 * responsibility, a row filter) get entries of their own, keyed also by their root so that a moved
 * responsibility never meets its old answers; every other user shares one.
 */
export function scopeOf(user: AuthUser, resource: Resource): string {
  const roles = `${user.is_superuser ? 's' : ''}${user.metadata_editor ? 'm' : ''}`
  const personal = !user.is_superuser && (user.restricted || resource.row_filter)
  return `${roles} ${personal ? `user ${user.id}` : 'shared'} root ${user.top_lvl_location_id}`
}

/** Parameters in name order (a name's values keep their order: `id__in=1&id__in=2` is a list). */
function canonicalQuery(query: QueryParams): string {
  const entries = [...query.entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  return new URLSearchParams(entries as Array<[string, string]>).toString()
}

export class ReadCache {
  readonly #cache: NotifiedCache<Representation>
  readonly #knownTables: ReadonlySet<string>
  readonly #enabled: boolean
  readonly #pending = new WeakMap<FastifyRequest, PendingRead>()

  /** `maxBytes`: the answers kept at most, every encoding counted; 0 turns the cache off. */
  constructor(maxBytes: number, knownTables: Iterable<string>) {
    this.#cache = new NotifiedCache<Representation>({
      name: 'read',
      maxEntries: maxBytes > 0 ? MAX_ENTRIES : 0,
      maxWeight: maxBytes,
      weigh: sizeOf,
      ttlMs: TTL_MS,
    })
    this.#knownTables = new Set(knownTables)
    this.#enabled = maxBytes > 0
  }

  /** Starts hearing the changes of the schema this process works in (sql/011: `schema.table`). */
  async listen(database: Database): Promise<() => Promise<void>> {
    return this.#cache.listen(database, DATA_CHANNEL, changedTableIn(database))
  }

  /** This process wrote `table` (absent: anything): its next read must see the change. */
  drop(table?: string): void {
    this.#cache.drop(table)
  }

  /** The key of a list GET whose answer may be kept, else undefined. */
  keyOf(request: FastifyRequest, resource: Resource, urlName: string): string | undefined {
    // A job request is answered 202 with a new job each time, never from memory.
    if (prefersAsync(request)) return undefined
    const accept = request.headers.accept ?? ''
    const format = accept.includes('text/csv') && !accept.includes('application/json') ? 'csv' : 'json'
    return this.keyFor(request.user!, resource, urlName, format, rawQueryOf(request))
  }

  /** The key of `user`'s list read of `resource` in `format` (the Accept header's choice), else undefined. */
  keyFor(user: AuthUser, resource: Resource, urlName: string, format: 'json' | 'csv', query: QueryParams): string | undefined {
    if (!this.#enabled) return undefined
    const cacheable = resource.kind === 'model' ? !resource.volatile : resource.reads_only
    if (!cacheable) return undefined
    return `${urlName}\n${scopeOf(user, resource)}\n${format}\n${canonicalQuery(query)}`
  }

  /**
   * The key of a read composed of other reads (a dashboard's data: `name`, its path), answered to
   * whoever sees `resource`'s rows as `user` does; undefined when nothing is kept.
   */
  keyOfComposed(user: AuthUser, name: string, resource: Resource, query: QueryParams): string | undefined {
    if (!this.#enabled) return undefined
    return `${name}\n${scopeOf(user, resource)}\njson\n${canonicalQuery(query)}`
  }

  /**
   * The kept answer of `key` (it leaves with `serve`, lib/api/representation.ts). A request with
   * `Cache-Control: no-cache` is computed afresh (RFC 9111 §5.2.1.4), and its answer kept.
   */
  lookup(request: FastifyRequest, key: string): Representation | undefined {
    if (request.headers['cache-control']?.includes('no-cache')) return undefined
    return this.get(key)
  }

  /** The kept answer of `key`, if any. */
  get(key: string): Representation | undefined {
    return this.#cache.get(key)
  }

  /**
   * A miss: `db` as the read should use it (its tables noted), and the read to `store` once answered. A
   * read whose statements do not go through `db` (a composed read) names no table: any change drops it.
   */
  start(key: string, db?: Kysely<DB>): { read: PendingRead; db?: Kysely<DB> } {
    const recorder = new TableRecorder(this.#knownTables)
    return { read: { key, since: this.#cache.begin(), recorder }, db: db?.withPlugin(recorder) }
  }

  /** A miss answered through a reply: its answer is stored when it leaves (plugins/http-cache.ts). */
  begin(request: FastifyRequest, key: string, db: Kysely<DB>): Kysely<DB> {
    const started = this.start(key, db)
    this.#pending.set(request, started.read)
    return started.db!
  }

  /** The read this request is computing for the cache, if any. */
  pendingFor(request: FastifyRequest): PendingRead | undefined {
    return this.#pending.get(request)
  }

  /** Keeps the answer of a pending read (unless a change was heard while it was computed). */
  store(pending: PendingRead, representation: Representation): void {
    // A read that named no table (none recorded) may depend on any.
    const tables = pending.recorder.tables.size ? pending.recorder.tables : undefined
    this.#cache.set(pending.key, representation, pending.since, tables)
  }
}
