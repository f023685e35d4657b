// Detail GETs answered from memory: the representation as sent, per resource, id and what the
// requester may see. Any change to any table empties the cache (sql/004 notifies; this process's own
// writes drop it before their response leaves), so a read never returns what a committed change
// replaced once the notification has arrived (docs/decisions.md, "Detail cache").
import type { Database } from '../data/database.js'
import { DATA_CHANNEL, NotifiedCache } from '../data/notified-cache.js'
import { readDetail } from './crud.js'
import type { Context } from './resource.js'
import { type Representation, representationNow } from './representation.js'

// A bound on staleness should a change ever not notify (a table without the sql/004 trigger).
const TTL_MS = 60_000
const MAX_ENTRIES = 100_000

const JSON_TYPE = { 'content-type': 'application/json; charset=utf-8' }

export class DetailCache {
  readonly #cache: NotifiedCache<Representation>

  /** `maxBytes`: the JSON kept at most, in bytes; 0 turns the cache off. */
  constructor(maxBytes: number) {
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
    return this.#cache.listen(database, DATA_CHANNEL)
  }

  /** This process wrote: its next read must see the change. */
  drop(): void {
    this.#cache.drop()
  }

  /** Row `id`'s detail as it leaves, from memory when it is there (a volatile resource's: read each time). */
  async read(ctx: Context, id: number): Promise<Representation> {
    const { resource, user } = ctx
    const detail = async () => representationNow(JSON.stringify(await readDetail(ctx, id)), JSON_TYPE)
    if (resource.volatile) return detail()
    // What a requester may see of a row can depend on who they are (lib/engine/access.ts): a user whose
    // rows are limited gets entries of their own.
    const scope = user.is_superuser || (!user.restricted && !resource.row_filter) ? 'all' : `user ${user.id}`
    return (await this.#cache.remember(`${resource.name} ${id} ${scope}`, detail))!
  }
}
