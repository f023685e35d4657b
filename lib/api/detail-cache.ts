// Detail GETs answered from memory: the representation as sent, per resource, id and what the
// requester may see. A change to a table a detail was read from drops it (sql/004 notifies, naming the
// table; this process's own writes drop what they changed before their response leaves), so a read never
// returns what a committed change replaced once the notification has arrived, and a colleague's
// upload does not send everyone's detail reads to the database (docs/decisions.md, "Detail cache").
import type { Database } from '../data/database.js'
import { changedTableIn, DATA_CHANNEL, NotifiedCache } from '../data/notified-cache.js'
import { TableRecorder } from '../data/table-recorder.js'
import { readDetail } from './crud.js'
import { detailText } from './answer-text.js'
import type { Context, Row } from './resource.js'
import { scopeOf } from './read-cache.js'
import { type Representation, representationNow } from './representation.js'

// A bound on staleness should a change ever not notify (a table without the sql/004 trigger).
const TTL_MS = 60_000
const MAX_ENTRIES = 100_000

const JSON_TYPE = { 'content-type': 'application/json; charset=utf-8' }

export class DetailCache {
  readonly #cache: NotifiedCache<Representation>
  readonly #knownTables: ReadonlySet<string>

  /** `maxBytes`: the JSON kept at most, in bytes; 0 turns the cache off. `knownTables`: the schema's tables. */
  constructor(maxBytes: number, knownTables: Iterable<string>) {
    this.#knownTables = new Set(knownTables)
    this.#cache = new NotifiedCache<Representation>({
      name: 'detail',
      maxEntries: maxBytes > 0 ? MAX_ENTRIES : 0,
      maxWeight: maxBytes,
      weigh: (representation) => representation.body.length,
      ttlMs: TTL_MS,
    })
  }

  /** Starts hearing the database's change notifications; returns the function that stops. */
  listen(database: Database): Promise<() => Promise<void>> {
    return this.#cache.listen(database, DATA_CHANNEL, changedTableIn(database))
  }

  /** This process wrote `table` (absent: anything): its next read must see the change. */
  drop(table?: string): void {
    this.#cache.drop(table)
  }

  /** Row `id`'s detail as it leaves, from memory when it is there (a volatile resource's: read each time). */
  async read(ctx: Context, id: number): Promise<Representation> {
    return (await this.#readKept(ctx, id)).representation
  }

  /** Row `id`'s detail as an object (a read inside the process): the row read, or the kept bytes parsed. */
  async readObject(ctx: Context, id: number): Promise<Row> {
    const { representation, row } = await this.#readKept(ctx, id)
    return row ?? JSON.parse(representation.body.toString())
  }

  /** Row `id`'s detail as it leaves, and the row where it was read now rather than kept. */
  async #readKept(ctx: Context, id: number): Promise<{ representation: Representation; row?: Row }> {
    const { resource, user } = ctx
    const detail = async (context: Context) => {
      const row = await readDetail(context, id)
      return { representation: representationNow(detailText(context.resource, row), JSON_TYPE), row }
    }
    if (resource.volatile) return detail(ctx)
    // What a requester may see of a row can depend on who they are (lib/engine/access.ts): a user whose
    // rows are limited gets entries of their own, keyed also by her root, as the list cache keys them
    // (her restriction reaches the statement as values: a moved responsibility drops no table of it).
    const key = `${resource.name} ${id} ${scopeOf(user, resource)}`
    const kept = this.#cache.get(key)
    if (kept) return { representation: kept }
    const since = this.#cache.begin()
    // The tables its statements name (joins and hooks included) are what can change it.
    const recorder = new TableRecorder(this.#knownTables)
    const read = await detail({ ...ctx, db: ctx.db.withPlugin(recorder) })
    this.#cache.set(key, read.representation, since, recorder.tables.size ? recorder.tables : undefined)
    return read
  }
}
