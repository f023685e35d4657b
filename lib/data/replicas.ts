// Read replicas (DATABASE_READ_URL): PostgreSQL streaming standbys that serve the reads that change
// nothing. Which reads go where, and why each rule holds, is in docs/decisions.md ("Read replicas"):
// - a replica is used while it answers and lags at most REPLICA_MAX_LAG_MS; it is checked every
//   REPLICA_CHECK_MS, skipped when down or behind, and used again once it has caught up;
// - read-your-writes: a write's answer leaves once every replica in use has replayed it (waited on up
//   to REPLICA_MAX_LAG_MS; one that has not is dropped until it catches up), so the next request, to
//   any process, reads it from whichever replica it is sent to;
// - the detail cache keeps a replica's row only if that replica had replayed past every change
//   notified so far (`mayCache`), so a notification can never be followed by a stale row kept.
import { sql, type Kysely } from 'kysely'
import type { DB } from '../../schemas/index.js'
import { createDatabase, type Database } from './database.js'
import { replicaReads } from '../core/metrics.js'

/** A WAL position (`16/B374D848`) as a number that orders like it. */
export function parseLsn(text: string | null): bigint {
  if (!text) return 0n
  const [high, low] = text.split('/')
  return (BigInt(`0x${high}`) << 32n) + BigInt(`0x${low}`)
}

interface Replica {
  name: string
  /** host:port/database: how processes name it to each other (their replica numbers may differ). */
  address: string
  database: Database
  /** Answering and within the lag bound at the last look. */
  healthy: boolean
  /** A WAL position this replica had replayed at least up to, when last asked. */
  replayed: bigint
}

/** Where a read goes: a replica's connections, or the primary's. */
export interface ReadTarget {
  db: Kysely<DB>
  /** `primary`, or `replica-<n>` (1-based, in DATABASE_READ_URL's order). */
  name: string
}

export interface ReplicaSettings {
  maxLagMs: number
  checkMs: number
}

export class ReadReplicas {
  private readonly replicas: Replica[]
  private next = 0
  private timer?: NodeJS.Timeout
  /** The primary's WAL position after the latest change notified; null while it is being read. */
  private fence: bigint | null = 0n
  private fenceVersion = 0
  private readingFence = false
  private unlisten?: () => Promise<void>

  private constructor(
    private readonly primary: Database,
    replicas: Array<{ name: string; address: string; database: Database }>,
    private readonly settings: ReplicaSettings,
  ) {
    this.replicas = replicas.map((r) => ({ ...r, healthy: false, replayed: 0n }))
  }

  /** Connects to each URL (a replica that is down now is used once it answers). */
  static async open(primary: Database, urls: string[], settings: ReplicaSettings): Promise<ReadReplicas> {
    const replicas = await Promise.all(
      urls.map(async (url, i) => ({ name: `replica-${i + 1}`, address: addressOf(url), database: await createDatabase({ url, poolSize: 10 }) })),
    )
    const set = new ReadReplicas(primary, replicas, settings)
    await set.check()
    set.timer = setInterval(() => void set.check(), settings.checkMs)
    set.timer.unref()
    // A replica one process found behind is dropped by every process at once, not at their next check.
    set.unlisten = await primary.listen(
      LAGGING_CHANNEL,
      (address) => set.lagging(address),
      () => {},
    )
    return set
  }

  get size(): number {
    return this.replicas.length
  }

  /** The primary's current WAL position. */
  private async primaryPosition(): Promise<bigint> {
    const { rows } = await sql<{ lsn: string }>`select pg_current_wal_lsn()::text as lsn`.execute(this.primary.db)
    return parseLsn(rows[0].lsn)
  }

  private async replayedBy(replica: Replica): Promise<{ replayed: bigint; idleMs: number }> {
    const { rows } = await sql<{ lsn: string | null; idle_ms: number | null }>`select pg_last_wal_replay_lsn()::text as lsn,
      (extract(epoch from now() - pg_last_xact_replay_timestamp()) * 1000)::float8 as idle_ms`.execute(replica.database.db)
    const replayed = parseLsn(rows[0].lsn)
    if (replayed > replica.replayed) replica.replayed = replayed
    return { replayed, idleMs: rows[0].idle_ms ?? 0 }
  }

  /**
   * Every replica's state: healthy when it answers and has replayed what the primary had written
   * before the look, or replays what it receives within the bound (the time since its last replayed
   * transaction, while it is behind).
   */
  async check(): Promise<void> {
    let primary: bigint
    try {
      primary = await this.primaryPosition()
    } catch {
      return // the primary is down: reads fail over to nothing; /health says so
    }
    await Promise.all(
      this.replicas.map(async (replica) => {
        try {
          const { replayed, idleMs } = await withTimeout(this.replayedBy(replica), this.settings.checkMs)
          replica.healthy = replayed >= primary || idleMs <= this.settings.maxLagMs
        } catch {
          replica.healthy = false
        }
      }),
    )
  }

  /** A replica in use (round robin), or the primary when none is. */
  read(): ReadTarget {
    for (let i = 0; i < this.replicas.length; i++) {
      const replica = this.replicas[(this.next + i) % this.replicas.length]
      if (replica.healthy) {
        this.next = (this.next + i + 1) % this.replicas.length
        replicaReads.inc({ target: 'replica' })
        return { db: replica.database.db, name: replica.name }
      }
    }
    replicaReads.inc({ target: 'primary' })
    return { db: this.primary.db, name: 'primary' }
  }

  /**
   * A read whose answer the detail cache may keep: from a replica only if that replica is known to
   * have replayed past every change notified so far; otherwise from the primary.
   */
  cacheableRead(): ReadTarget {
    const fence = this.fence
    const fresh = fence === null ? [] : this.replicas.filter((r) => r.healthy && r.replayed >= fence)
    if (!fresh.length) {
      replicaReads.inc({ target: 'primary' })
      return { db: this.primary.db, name: 'primary' }
    }
    const replica = fresh[this.next++ % fresh.length]
    replicaReads.inc({ target: 'replica' })
    return { db: replica.database.db, name: replica.name }
  }

  /** Whether what `name` answers now may be kept by a cache: it has replayed every change notified so far. */
  fresh(name: string): boolean {
    if (name === 'primary') return true
    const fence = this.fence
    const replica = this.replicas.find((r) => r.name === name)
    return fence !== null && replica !== undefined && replica.replayed >= fence
  }

  /** A read on `name` failed for reasons of its own: skipped until a check finds it answering again. */
  drop(name: string): void {
    const replica = this.replicas.find((r) => r.name === name)
    if (replica) replica.healthy = false
  }

  /** A change was notified: replica rows are cacheable again once a replica has replayed past it. */
  changed(): void {
    this.fence = null
    this.fenceVersion++
    if (this.readingFence) return
    // One read of the primary's position at a time; notifications meanwhile are covered by one more.
    this.readingFence = true
    void (async () => {
      try {
        for (;;) {
          const version = this.fenceVersion
          const position = await this.primaryPosition()
          if (version === this.fenceVersion) return void (this.fence = position)
        }
      } catch {
        // the primary is unreachable: the fence stays unknown, details are read from the primary
      } finally {
        this.readingFence = false
      }
    })()
  }

  /**
   * Read-your-writes: waits until every replica in use has replayed the primary's position (just
   * after a commit), at most REPLICA_MAX_LAG_MS; a replica that has not is dropped until a check finds
   * it caught up.
   */
  async caughtUp(): Promise<void> {
    const inUse = this.replicas.filter((r) => r.healthy)
    if (!inUse.length) return
    const target = await this.primaryPosition()
    const deadline = Date.now() + this.settings.maxLagMs
    const behind: Replica[] = []
    await Promise.all(
      inUse.map(async (replica) => {
        for (let wait = 1; replica.replayed < target; wait = Math.min(wait * 2, 20)) {
          if (Date.now() >= deadline) return void behind.push(replica)
          await new Promise((resolve) => setTimeout(resolve, wait))
          try {
            await this.replayedBy(replica)
          } catch {
            return void behind.push(replica)
          }
        }
      }),
    )
    for (const replica of behind) {
      replica.healthy = false
      await sql`select pg_notify(${LAGGING_CHANNEL}, ${replica.address})`.execute(this.primary.db)
    }
  }

  /** Another process found the replica at `address` behind: skipped until a check finds it caught up. */
  private lagging(address: string): void {
    for (const replica of this.replicas) if (replica.address === address) replica.healthy = false
  }

  async close(): Promise<void> {
    clearInterval(this.timer)
    await this.unlisten?.()
    await Promise.all(this.replicas.map((r) => r.database.close()))
  }
}

const LAGGING_CHANNEL = 'rhizome_replica_lagging'

const addressOf = (url: string) => {
  const { host, pathname } = new URL(url)
  return `${host}${pathname}`
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('timed out')), ms))),
  ])
}
