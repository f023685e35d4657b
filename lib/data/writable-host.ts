// Several PostgreSQL hosts in DATABASE_URL, in libpq's form as pg_auto_failover prints it
// (`postgres://h1:p1,h2:p2/db?target_session_attrs=read-write`): node-postgres connects to one host,
// so the one that accepts writes is found here by asking each, and found again when the one in use
// stops accepting them (a failover). The pool's connections, the cache listeners and the write
// confirmations all connect to `url()`. No failover logic of our own: the monitor promotes, we follow.
import { sql, type Kysely } from 'kysely'
import pg from 'pg'
import { isConnectionFailure } from '../core/errors.js'
import { databaseFailovers, secondsWithoutPrimary } from '../core/metrics.js'

/** The URL once per host, each in node-postgres' single-host form (libpq's session attribute dropped). */
export function hostUrls(url: string): string[] {
  const parts = /^(postgres(?:ql)?:\/\/)([^@/?#]*@)?([^/?#]*)(.*)$/.exec(url)
  if (!parts) return [url]
  const [, scheme, userinfo = '', hosts, rest] = parts
  const tail = rest.replace(/([?&])target_session_attrs=[^&]*&?/, '$1').replace(/[?&]$/, '')
  return hosts.split(',').map((host) => `${scheme}${userinfo}${host}${tail}`)
}

/** Connection failures, and a write answered by a standby (25006): this host does not take writes (any more). */
export function meansPrimaryLost(error: unknown): boolean {
  return isConnectionFailure(error) || (error as { code?: unknown } | undefined)?.code === '25006'
}

/** How long a search's answer stands: requests failing at once share one search, not one each. */
const SEARCH_INTERVAL_MS = 500
const PROBE_TIMEOUT_MS = 2_000
/**
 * How long a host the hang guard found hung, and no longer in use (a failover moved on), is left out
 * of searches: asking it would wait out PROBE_TIMEOUT_MS each time. The host in use is left out until
 * the guard hears it answer.
 */
const HUNG_WINDOW_MS = 10_000

export class WritableHost {
  readonly urls: string[]
  #current: string
  #search: Promise<string | undefined> | undefined
  #searchedAt = 0
  /** When the host in use was last found not to take writes, until one is found that does. */
  #lostSince: number | undefined
  #started = false
  /** Hosts the hang guard found hung, with when. */
  #hungAt = new Map<string, number>()

  constructor(url: string) {
    this.urls = hostUrls(url)
    this.#current = this.urls[0]
  }

  /** More than one host: failures send it looking for the writable one. */
  get several(): boolean {
    return this.urls.length > 1
  }

  /** The URL of the host believed writable now. */
  url(): string {
    return this.#current
  }

  /** A host other than the one in use: while no host takes writes, a standby still answers reads. */
  standbyUrl(): string {
    return this.urls.find((u) => u !== this.#current) ?? this.#current
  }

  /** `host:port` of the host in use (readiness shows it). */
  hostName(): string {
    return new URL(this.#current).host
  }

  /** The hang guard's word on `url`: hung (left out of searches, see HUNG_WINDOW_MS) or answering again. */
  markHung(url: string, hung: boolean): void {
    if (hung) this.#hungAt.set(url, Date.now())
    else this.#hungAt.delete(url)
  }

  /** Whether a search leaves `url` out: hung, in use or within its window. */
  #leftOut(url: string): boolean {
    const at = this.#hungAt.get(url)
    if (at === undefined) return false
    if (url === this.#current || Date.now() - at < HUNG_WINDOW_MS) return true
    this.#hungAt.delete(url)
    return false
  }

  /**
   * After a failure that `meansPrimaryLost`: asks every host but a hung one, the one in use last, whether it takes
   * writes; the first that does becomes the one in use. Resolves to it, or undefined when none does
   * (the monitor has not promoted a standby yet). Calls within SEARCH_INTERVAL_MS share one search.
   */
  find(): Promise<string | undefined> {
    if (!this.several) return Promise.resolve(this.#current)
    if (this.#started) this.#lostSince ??= Date.now()
    if (this.#search && Date.now() - this.#searchedAt < SEARCH_INTERVAL_MS) return this.#search
    this.#searchedAt = Date.now()
    this.#search = this.#searchHosts()
    return this.#search
  }

  async #searchHosts(): Promise<string | undefined> {
    // The first search, at start, finds where to begin: not a failover.
    const starting = !this.#started
    this.#started = true
    const order = [...this.urls.filter((u) => u !== this.#current), this.#current].filter((u) => !this.#leftOut(u))
    for (const url of order) {
      if (await takesWrites(url)) {
        if (url !== this.#current && !starting) databaseFailovers.inc()
        this.#current = url
        if (this.#lostSince !== undefined) secondsWithoutPrimary.inc((Date.now() - this.#lostSince) / 1000)
        this.#lostSince = undefined
        return url
      }
    }
    return undefined
  }
}

/** Whether the host answers and accepts writes: neither in recovery nor read-only by default (as a node being promoted is). */
export async function takesWrites(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: PROBE_TIMEOUT_MS, statement_timeout: PROBE_TIMEOUT_MS })
  client.on('error', () => {})
  try {
    await client.connect()
    const { rows } = await client.query(`select not pg_is_in_recovery() and current_setting('transaction_read_only') = 'off' as writable`)
    return rows[0].writable === true
  } catch {
    return false
  } finally {
    await client.end().catch(() => {})
  }
}

/**
 * What readiness says of a formation: the host in use, whether a write would succeed on it now
 * (`takes_writes`: asked through the pool the writes use, so no 200 while a failover leaves the
 * servers on a standby or a host still being promoted), and whether it has a synchronous standby now
 * (the role needs `pg_monitor` to read `sync_state`: deploy/auto-failover.sh's `role` grants it).
 */
export async function failoverState<T>(db: Kysely<T>, writable: WritableHost): Promise<Record<string, string>> {
  let standby = 'unknown'
  let takes = 'unknown'
  try {
    const { rows } = await sql<{
      writable: boolean
      n: number
    }>`select not pg_is_in_recovery() and current_setting('transaction_read_only') = 'off' as writable,
      (select count(*)::int from pg_stat_replication where sync_state in ('sync', 'quorum')) as n`.execute(db)
    takes = rows[0].writable ? 'yes' : 'no'
    standby = rows[0].n > 0 ? 'yes' : 'no'
  } catch {
    // the primary is being replaced: unknown
  }
  return { database_primary: writable.hostName(), takes_writes: takes, synchronous_standby: standby }
}
