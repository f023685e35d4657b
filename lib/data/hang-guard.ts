// A PostgreSQL server that stops answering (its processes stopped, its host frozen, packets dropped)
// neither refuses connections nor fails statements: the kernel keeps the sockets open and every query
// waits for ever, and with it every request. A server statement_timeout cannot help (the server is the
// one not running) and a client-side one would also cut a long transform that is working. So the
// server is asked `select 1` on a connection of its own every PING_INTERVAL_MS; a ping unanswered
// within `hangMs` marks the host hung: checkouts are refused at once and the connections in use are
// cut, so their requests end with 503 + Retry-After. The first answered ping clears it.
import type { Socket } from 'node:net'
import pg from 'pg'

/** The error a refused checkout and a cut statement carry: SQLSTATE class 08, a connection failure (lib/core/errors.ts). */
export class DatabaseHung extends Error {
  override name = 'DatabaseHung'
  readonly code = '08006'
  constructor(hangMs: number) {
    super(`The database did not answer within ${hangMs} ms`)
  }
}

const PING_INTERVAL_MS = 1_000

export interface HangGuardOptions {
  /** The host in use now (it changes after a failover). */
  url: () => string
  hangMs: number
  /** Session settings of the ping's connection (its search path does not matter). */
  client?: pg.ClientConfig
  /** Told when the host becomes hung and when it answers again (the log). */
  onChange?: (hung: boolean, detail: { url: string; error?: unknown }) => void
}

/** A client's socket: cut, its statement fails at once with "Connection terminated unexpectedly". */
const cut = (client: pg.ClientBase) => (client as unknown as { connection?: { stream?: Socket } }).connection?.stream?.destroy()

export class HangGuard {
  /** The host found hung, while it is; undefined when it answers. */
  #hungUrl: string | undefined
  #inUse = new Set<pg.ClientBase>()
  #waiters = new Set<(error: Error) => void>()
  #ping: pg.Client | undefined
  #pingUrl: string | undefined
  #timer: NodeJS.Timeout | undefined
  #stopped = false

  constructor(private readonly options: HangGuardOptions) {}

  start(): void {
    this.#schedule()
  }

  /** Whether the host in use is hung now. */
  get hung(): boolean {
    return this.#hungUrl !== undefined && this.#hungUrl === this.options.url()
  }

  /** Throws DatabaseHung while the host in use is hung. */
  check(): void {
    if (this.hung) throw new DatabaseHung(this.options.hangMs)
  }

  /** A pool checkout by `connect`, refused at once when the host is or becomes hung before it is done. */
  async checkout<T extends pg.ClientBase>(connect: () => Promise<T>): Promise<T> {
    this.check()
    const connecting = connect()
    let refuse: ((error: Error) => void) | undefined
    const refused = new Promise<never>((_, reject) => {
      refuse = reject
      this.#waiters.add(reject)
    })
    try {
      return await Promise.race([connecting, refused])
    } catch (error) {
      // The checkout was given up: a client it brings later goes straight back to the pool.
      connecting.then(
        (client) => (client as unknown as pg.PoolClient).release(),
        () => {},
      )
      throw error
    } finally {
      this.#waiters.delete(refuse!)
    }
  }

  /** A client handed out: cut should the host hang while it is in use. */
  track(client: pg.ClientBase): void {
    this.#inUse.add(client)
  }

  untrack(client: pg.ClientBase): void {
    this.#inUse.delete(client)
  }

  async stop(): Promise<void> {
    this.#stopped = true
    clearTimeout(this.#timer)
    await this.#ping?.end().catch(() => {})
  }

  #schedule(): void {
    if (this.#stopped) return
    this.#timer = setTimeout(() => void this.#check().finally(() => this.#schedule()), PING_INTERVAL_MS)
    this.#timer.unref()
  }

  async #check(): Promise<void> {
    const url = this.options.url()
    let timer: NodeJS.Timeout | undefined
    // Timers run before I/O in the event loop: after the loop was blocked past hangMs (a long
    // synchronous step), the timer fires first although the answer is waiting on the socket. One turn
    // through the I/O phase (setImmediate) before calling it late reads that answer first.
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => setImmediate(() => resolve('late')), this.options.hangMs)))
    const answer = this.#answer(url).then(
      () => 'ok' as const,
      (error: unknown) => ({ error }),
    )
    const outcome = await Promise.race([answer, late])
    clearTimeout(timer)
    if (outcome === 'ok') return this.#answered(url)
    // A refused connection or a failed statement is not a hang: requests fail fast by themselves then.
    if (outcome !== 'late') return this.#dropPing()
    this.#dropPing()
    if (this.#hungUrl === url) return
    this.#hungUrl = url
    this.options.onChange?.(true, { url })
    const error = new DatabaseHung(this.options.hangMs)
    for (const reject of this.#waiters) reject(error)
    for (const client of this.#inUse) cut(client)
  }

  #answered(url: string): void {
    if (this.#hungUrl !== url) return
    this.#hungUrl = undefined
    this.options.onChange?.(false, { url })
  }

  async #answer(url: string): Promise<void> {
    if (!this.#ping || this.#pingUrl !== url) {
      this.#dropPing()
      // No connect timeout of its own: a host that takes the connection and never answers (stopped just
      // before the ping's connection was made) is hung, and `late` says so; pg's timeout, firing at the
      // same moment, could settle first as an error, which reads as a refusal, not a hang.
      const client = new pg.Client({ ...this.options.client, connectionString: url })
      client.on('error', () => {
        if (this.#ping === client) this.#dropPing()
      })
      this.#ping = client
      this.#pingUrl = url
      await client.connect()
    }
    await this.#ping.query('select 1')
  }

  #dropPing(): void {
    const client = this.#ping
    this.#ping = undefined
    if (!client) return
    cut(client)
    client.end().catch(() => {})
  }
}
