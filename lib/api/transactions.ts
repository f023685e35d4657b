// A write's transaction and what must hold before its answer leaves (resource-api §3 step 10): the
// caches this process keeps dropped, every other server's too (NOTIFY, confirmed), and the replicas in
// use caught up, so that the client's next request, wherever it lands, sees the change.
import { sql, type Transaction } from 'kysely'
import type { DB } from '../../schemas/index.js'
import type { Database } from '../data/database.js'
import { type Attribution, attributedTransaction } from '../data/attribution.js'
import { DATA_CHANNEL } from '../data/notified-cache.js'
import type { ReadReplicas } from '../data/replicas.js'
import type { Context } from './resource.js'

/** A cache a write makes stale: it drops what was read from `table`. */
export interface Droppable {
  drop(table?: string): void
}

/** How long a write waits for the other servers to say they dropped what it made stale. */
const WRITE_CONFIRM_MS = 2_000

/** A table's count of rows written, and whether it decides who a key authenticates as (sql/002's trigger). */
interface Written {
  table: string
  rows: number
  auth: boolean
}

/**
 * Rows written so far per table of this schema, as PostgreSQL's statistics count them (triggers'
 * writes included). The count also holds earlier transactions of the session not yet flushed to the
 * shared statistics (on PGlite, every one), so a transaction's own writes are the growth of the
 * count from its start to its end.
 */
async function rowsWritten(trx: Transaction<DB>): Promise<Written[]> {
  // The statistics functions over this schema's tables, not the view pg_stat_xact_user_tables, which
  // computes every column for every table of the database: a third of the time, twice per write.
  const { rows } = await sql<Written>`select c.relname as table, w.rows, exists (
      select 1 from pg_trigger g join pg_proc p on p.oid = g.tgfoid where g.tgrelid = c.oid and p.proname = 'rhizome_auth_changed') as auth
    from pg_class c
    cross join lateral (select (pg_stat_get_xact_tuples_inserted(c.oid) + pg_stat_get_xact_tuples_updated(c.oid)
      + pg_stat_get_xact_tuples_deleted(c.oid))::float8 as rows) w
    where c.relnamespace = current_schema()::regnamespace and c.relkind in ('r', 'm', 'p') and w.rows > 0`.execute(trx)
  return rows
}

/** The tables `work` wrote in `trx`, its result with them. */
async function noteWrites<T>(trx: Transaction<DB>, work: () => Promise<T>): Promise<{ result: T; changed: Written[] }> {
  const before = new Map((await rowsWritten(trx)).map((w) => [w.table, w.rows]))
  const result = await work()
  const changed = (await rowsWritten(trx)).filter((w) => w.rows > (before.get(w.table) ?? 0))
  return { result, changed }
}

export class Transactions {
  constructor(
    private readonly database: Database,
    /** The caches of what was read from tables (details, lists). */
    private readonly caches: Droppable[],
    /** Forgets every authentication kept (a write may change who a key authenticates as). */
    private readonly dropAuthentications: () => void,
    private readonly replicas: ReadReplicas | undefined,
  ) {}

  /** Runs `work` in one transaction, recorded as the requester's (datapoint_history); then makes it seen. */
  run<T>(ctx: Context, work: (ctx: Context) => Promise<T>): Promise<T> {
    const attribution = { via: 'api' as const, userId: ctx.user.id, requestId: ctx.requestId, lockTimeoutMs: this.database.lockTimeoutMs }
    return this.attributed(attribution, (trx) => work({ ...ctx, db: trx }))
  }

  /** Runs `work` in one transaction recorded as `attribution` says (an import through the pipeline: `job`); then makes it seen. */
  async attributed<T>(attribution: Attribution, work: (trx: Transaction<DB>) => Promise<T>): Promise<T> {
    const { result, changed } = await attributedTransaction(this.database.db, attribution, (trx) => noteWrites(trx, () => work(trx)))
    // Before the answer leaves, this process's caches drop what the change made stale, and keep the
    // rest: a colleague's upload does not send every cached read (and API key) back to the database.
    for (const { table } of changed) for (const cache of this.caches) cache.drop(table)
    if (changed.some((c) => c.auth)) this.dropAuthentications()
    // Read-your-writes through any process: the answer leaves once every other server has dropped what
    // the change made stale (lib/data/notifications.ts; at most WRITE_CONFIRM_MS when one does not answer).
    // The change is committed whatever happens here: a failure to confirm is not the write's.
    await this.database.confirmHeard(DATA_CHANNEL, WRITE_CONFIRM_MS, { othersOnly: true }).catch(() => [])
    await this.caughtUp()
    return result
  }

  /** Read-your-writes: resolves once the replicas in use have replayed what was committed (lib/data/replicas.ts). */
  async caughtUp(): Promise<void> {
    await this.replicas?.caughtUp()
  }
}
