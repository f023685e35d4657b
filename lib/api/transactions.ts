// A write's transaction and what must hold before its answer leaves (resource-api §3 step 10): the
// caches this process keeps dropped, every other server's too (NOTIFY, confirmed), and the replicas in
// use caught up, so that the client's next request, wherever it lands, sees the change.
import type { Database } from '../data/database.js'
import { attributedTransaction } from '../data/attribution.js'
import { DATA_CHANNEL } from '../data/notified-cache.js'
import type { ReadReplicas } from '../data/replicas.js'
import type { Context } from './resource.js'

/** A cache a write makes stale. */
export interface Droppable {
  drop(): void
}

/** How long a write waits for the other servers to say they dropped what it made stale. */
const WRITE_CONFIRM_MS = 2_000

export class Transactions {
  constructor(
    private readonly database: Database,
    private readonly caches: Droppable[],
    private readonly replicas: ReadReplicas | undefined,
  ) {}

  /** Runs `work` in one transaction, recorded as the requester's (datapoint_history); then makes it seen. */
  async run<T>(ctx: Context, work: (ctx: Context) => Promise<T>): Promise<T> {
    const attribution = { via: 'api' as const, userId: ctx.user.id, requestId: ctx.requestId, lockTimeoutMs: this.database.lockTimeoutMs }
    const result = await attributedTransaction(this.database.db, attribution, (trx) => work({ ...ctx, db: trx }))
    // The change is committed whatever happens next: a failure to confirm is not the write's.
    if (this.database.embedded) {
      // The embedded database's notifications of this change are in this process once its thread is
      // heard: each cache has then dropped what the change made stale (the tables it names, who a key
      // authenticates as) and keeps the rest, so a colleague's upload does not send every cached read
      // back to a database busy with that upload.
      await this.database.confirmHeard(DATA_CHANNEL, WRITE_CONFIRM_MS).catch(() => [])
    } else {
      // PostgreSQL's notifications reach this process on their own connection, in their own time: its
      // caches go whole before the answer leaves (a write may change who a key authenticates as). Then
      // read-your-writes through any process: the answer leaves once every other server has dropped
      // what the change made stale (lib/data/notifications.ts; at most WRITE_CONFIRM_MS).
      for (const cache of this.caches) cache.drop()
      await this.database.confirmHeard(DATA_CHANNEL, WRITE_CONFIRM_MS, { othersOnly: true }).catch(() => [])
    }
    await this.caughtUp()
    return result
  }

  /** Read-your-writes: resolves once the replicas in use have replayed what was committed (lib/data/replicas.ts). */
  async caughtUp(): Promise<void> {
    await this.replicas?.caughtUp()
  }
}
