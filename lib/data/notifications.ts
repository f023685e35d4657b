// LISTEN/NOTIFY on PostgreSQL: the listening connections of the caches, and confirmations that every
// listener has heard what was notified so far. Every listening connection names itself
// `rhizome-listen <channel> <scope> <id>` (pg_stat_activity shows it; the scope tells the processes of
// one schema from another's) and answers a `sync:<token>` notification on its channel, once it has
// handled every notification before it, with `<token> <id>` on `<channel>_ack`.
import { createHash, randomBytes } from 'node:crypto'
import pg from 'pg'

const LISTENER_NAME = 'rhizome-listen '
/** The payload of a confirmation's notifications: they name no change. */
export const SYNC_PREFIX = 'sync:'
const ackChannel = (channel: string) => `${channel}_ack`

/** The listeners of one schema (tests work each in its own): 8 hex characters of its name's hash. */
export const scopeOf = (searchPath: string | undefined) =>
  createHash('sha1')
    .update(searchPath ?? '')
    .digest('hex')
    .slice(0, 8)

/** The listeners of this process: a confirmation may leave them out (this process already dropped its caches). */
const ownListeners = new Set<string>()

/** A dedicated connection for LISTEN, re-established after failures (1 s, 2 s … up to 30 s apart). */
export async function listenWithReconnect(
  /** Where to connect now: after a failover, the new primary (lib/data/writable-host.ts). */
  url: () => string,
  scope: string,
  channel: string,
  onNotify: (payload: string) => void,
  onState: (listening: boolean) => void,
) {
  let stopped = false
  let client: pg.Client | undefined
  let delay = 1000
  // Acknowledgements one after another: pg's client runs one query at a time (a second one asked for
  // while the first runs is deprecated, and refused from pg 9).
  let acks: Promise<unknown> = Promise.resolve()
  const id = randomBytes(8).toString('hex')
  ownListeners.add(id)
  const connect = async (): Promise<void> => {
    if (stopped) return
    const next = new pg.Client({ connectionString: url(), application_name: `${LISTENER_NAME}${channel} ${scope} ${id}` })
    const lost = () => {
      if (client !== next) return
      client = undefined
      onState(false)
      if (!stopped) setTimeout(() => void connect(), delay).unref()
      delay = Math.min(delay * 2, 30_000)
    }
    next.on('error', lost)
    next.on('end', lost)
    next.on('notification', (message) => {
      if (message.channel !== channel) return
      const payload = message.payload ?? ''
      onNotify(payload)
      // Notifications arrive in commit order: by now every change notified before the sync is handled.
      if (payload.startsWith(SYNC_PREFIX)) {
        const ack = [ackChannel(channel), `${payload.slice(SYNC_PREFIX.length)} ${id}`]
        acks = acks.then(() => next.query('select pg_notify($1, $2)', ack)).catch(() => {})
      }
    })
    client = next
    try {
      await next.connect()
      await next.query(`LISTEN ${pg.escapeIdentifier(channel)}`)
      delay = 1000
      onState(true)
    } catch {
      lost()
    }
  }
  await connect()
  return async () => {
    stopped = true
    ownListeners.delete(id)
    const current = client
    client = undefined
    await current?.end().catch(() => {})
  }
}

export interface ConfirmOptions {
  /** Leave this process's listeners out: it dropped its caches itself (a write it answers). */
  othersOnly?: boolean
}

/**
 * Database.confirmHeard on PostgreSQL, over one connection kept for it: the listeners of the schema,
 * a sync notification, and their acknowledgements as they arrive. A write waits for it before its
 * answer leaves, so it costs a few round trips, and nothing when no other process listens.
 */
export class Confirmations {
  #client: Promise<pg.Client> | undefined
  /** The last query asked of the client: concurrent confirmations take turns (pg runs one query at a time). */
  #turn: Promise<unknown> = Promise.resolve()
  readonly #ackChannels = new Set<string>()
  readonly #waiting = new Map<string, (id: string) => void>()

  constructor(
    private readonly url: () => string,
    private readonly scope: string,
  ) {}

  #connect(): Promise<pg.Client> {
    const client = new pg.Client({ connectionString: this.url() })
    const forget = () => {
      this.#client = undefined
      this.#ackChannels.clear()
    }
    client.on('error', forget)
    client.on('end', forget)
    client.on('notification', (message) => {
      const [token, id] = (message.payload ?? '').split(' ')
      this.#waiting.get(token)?.(id)
    })
    return client.connect().then(
      () => client,
      (error) => {
        forget()
        throw error
      },
    )
  }

  /** `client.query`, once the queries asked before it have answered. */
  #query<R extends pg.QueryResultRow>(client: pg.Client, text: string, values?: unknown[]): Promise<pg.QueryResult<R>> {
    const result = this.#turn.then(() => client.query<R>(text, values))
    this.#turn = result.catch(() => {})
    return result
  }

  async #listeners(client: pg.Client, channel: string): Promise<Set<string>> {
    const prefix = `${LISTENER_NAME}${channel} ${this.scope} `
    const { rows } = await this.#query<{ name: string }>(
      client,
      'select application_name as name from pg_stat_activity where datname = current_database() and starts_with(application_name, $1)',
      [prefix],
    )
    return new Set(rows.map((r) => r.name.slice(prefix.length)))
  }

  async confirm(channel: string, timeoutMs: number, options: ConfirmOptions = {}): Promise<string[]> {
    this.#client ??= this.#connect()
    const client = await this.#client
    if (!this.#ackChannels.has(channel)) {
      await this.#query(client, `LISTEN ${pg.escapeIdentifier(ackChannel(channel))}`)
      this.#ackChannels.add(channel)
    }
    // A listener that connects after this list was read starts with nothing cached.
    const expected = await this.#listeners(client, channel)
    if (options.othersOnly) for (const id of ownListeners) expected.delete(id)
    if (!expected.size) return []
    const token = randomBytes(8).toString('hex')
    const confirmed = new Set<string>()
    let allHeard = () => {}
    const heard = new Promise<void>((resolve) => (allHeard = resolve))
    this.#waiting.set(token, (id) => {
      confirmed.add(id)
      if ([...expected].every((e) => confirmed.has(e))) allHeard()
    })
    try {
      await this.#query(client, 'select pg_notify($1, $2)', [channel, SYNC_PREFIX + token])
      const deadline = Date.now() + timeoutMs
      for (;;) {
        const waiting = [...expected].filter((id) => !confirmed.has(id))
        if (!waiting.length || Date.now() > deadline) return waiting
        await Promise.race([heard, new Promise((resolve) => setTimeout(resolve, 100))])
        if ([...expected].every((id) => confirmed.has(id))) return []
        // A listener gone meanwhile (its process stopped) has nothing left to drop.
        const present = await this.#listeners(client, channel)
        for (const id of expected) if (!present.has(id)) expected.delete(id)
      }
    } finally {
      this.#waiting.delete(token)
    }
  }

  async close(): Promise<void> {
    const client = this.#client
    this.#client = undefined
    if (client) await (await client.catch(() => undefined))?.end().catch(() => {})
  }
}
