// The embedded database as a PostgreSQL server on a Unix socket: node-postgres (the server's pool, the
// CLI) and psql connect to it as to any PostgreSQL. It runs in the database's own thread
// (lib/data/pglite-thread-worker.ts), so the statements run there and the server's event loop stays free.
//
// PGlite is one session. Connections take turns: each message goes to PGlite as it comes, and a
// connection holds the session from its first message to the end of its exchange (a Sync or a simple
// Query), and on to the end of its transaction when it opened one; the others wait their turn (no
// statement of theirs can land inside another's transaction). What PGlite cannot take over the
// protocol is done here: the start-up (trusted, the session already in UTC) and COPY FROM STDIN (its
// rows collected, then read by PGlite from `/dev/blob`). Notifications, which PGlite answers to
// whichever connection committed the NOTIFY, are handed to `onNotification`.
// @electric-sql/pglite-socket does the same turn-taking; it pins another PGlite release and six
// extension packages as peers, and does neither COPY nor notifications (docs/decisions.md).
import { createServer, type Server, type Socket } from 'node:net'
import type { PGlite } from '@electric-sql/pglite'
import {
  ABANDON,
  CANCEL_REQUEST,
  COPY_FROM_STDIN,
  type ClientMessage,
  commandComplete,
  copyInResponse,
  copyPayload,
  errorResponse,
  MessageReader,
  NotificationScanner,
  PROTOCOL_3,
  queryText,
  readyForQuery,
  requestCode,
  startupAnswer,
  TYPE,
} from './pg-wire.js'

/** What a client is told of the server at start-up (node-postgres and psql read these). */
const SERVER_SETTINGS = {
  server_version: '18.0',
  server_encoding: 'UTF8',
  client_encoding: 'UTF8',
  DateStyle: 'ISO, MDY',
  integer_datetimes: 'on',
  standard_conforming_strings: 'on',
  TimeZone: 'UTC',
}

/** Who holds the one session: connections wait in the order they asked. */
class SessionTurns {
  #holder: object | undefined
  #waiting: Array<{ connection: object; start: () => void }> = []

  constructor(private readonly onBusy: (busy: boolean) => void) {}

  async take(connection: object): Promise<void> {
    if (this.#holder === connection) return
    if (!this.#holder) {
      this.#holder = connection
      this.onBusy(true)
      return
    }
    await new Promise<void>((start) => this.#waiting.push({ connection, start }))
  }

  give(connection: object): void {
    if (this.#holder !== connection) {
      this.#waiting = this.#waiting.filter((w) => w.connection !== connection)
      return
    }
    const next = this.#waiting.shift()
    this.#holder = next?.connection
    if (next) next.start()
    else this.onBusy(false)
  }

  holds(connection: object): boolean {
    return this.#holder === connection
  }
}

class Connection {
  /** Inside an extended-protocol exchange: messages sent since the last Sync. */
  midExchange = false
  readonly #reader = new MessageReader()
  readonly #messages: ClientMessage[] = []
  #wake: (() => void) | undefined
  #closed = false

  constructor(
    readonly socket: Socket,
    readonly id: number,
  ) {
    socket.setNoDelay(true)
    socket.on('data', (chunk) => {
      try {
        this.#messages.push(...this.#reader.push(chunk))
      } catch {
        // Not the protocol (a length that cannot be): nothing more is read from it.
        socket.destroy()
      }
      this.#wake?.()
    })
    const end = () => {
      this.#closed = true
      this.#wake?.()
    }
    socket.on('close', end)
    socket.on('error', end)
  }

  /** The next message, or undefined once the client has gone. */
  async next(): Promise<ClientMessage | undefined> {
    while (!this.#messages.length) {
      // Nothing more to answer before the client speaks again.
      this.flush()
      if (this.#closed) return undefined
      await new Promise<void>((wake) => (this.#wake = wake))
      this.#wake = undefined
    }
    return this.#messages.shift()
  }

  /** Held until `flush`: an exchange's answers leave in one write, not one per message. */
  write(bytes: Uint8Array): void {
    if (this.socket.destroyed) return
    if (!this.socket.writableCorked) this.socket.cork()
    this.socket.write(bytes)
  }

  /** Sends what `write` held: at the end of an exchange, and whenever the client is to speak next. */
  flush(): void {
    while (this.socket.writableCorked) this.socket.uncork()
  }
}

export class PGliteSocketServer {
  readonly #server: Server
  readonly #turns: SessionTurns
  readonly #scanner: NotificationScanner
  readonly #connections = new Set<Connection>()
  #nextId = 1

  constructor(
    readonly pglite: PGlite,
    options: { onNotification: (channel: string, payload: string) => void; onBusy: (busy: boolean) => void },
  ) {
    this.#turns = new SessionTurns(options.onBusy)
    this.#scanner = new NotificationScanner(options.onNotification)
    this.#server = createServer((socket) => {
      const connection = new Connection(socket, this.#nextId++)
      this.#connections.add(connection)
      this.#serve(connection)
        .catch(() => connection.socket.destroy())
        .finally(() => this.#connections.delete(connection))
    })
  }

  listen(path: string): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#server.once('error', reject)
      this.#server.listen(path, () => resolve())
    })
  }

  /** Runs `work` on the session when no connection holds it (a dump, a LISTEN). */
  async exclusive<T>(work: () => Promise<T>): Promise<T> {
    const turn = {}
    await this.#turns.take(turn)
    try {
      return await work()
    } finally {
      this.#turns.give(turn)
    }
  }

  async close(): Promise<void> {
    for (const connection of this.#connections) connection.socket.destroy()
    await new Promise<void>((resolve) => this.#server.close(() => resolve()))
  }

  async #serve(connection: Connection): Promise<void> {
    try {
      for (let message = await connection.next(); message; message = await connection.next()) {
        if (message.type === 0) {
          if (!this.#startUp(connection, message.bytes)) break
          continue
        }
        if (message.type === TYPE.terminate) break
        await this.#turns.take(connection)
        if (message.type === TYPE.query && COPY_FROM_STDIN.test(queryText(message.bytes))) await this.#copyIn(connection, queryText(message.bytes))
        else await this.#execute(connection, message.bytes)
        const ended = message.type === TYPE.sync || message.type === TYPE.query
        connection.midExchange = !ended
        // The end of an exchange: the session is free again unless this connection's transaction is open,
        // and free before the client reads its answer (a client that then asks `busy()` is not told of its own work).
        if (ended && !this.pglite.isInTransaction()) this.#turns.give(connection)
        if (ended) connection.flush()
      }
    } finally {
      connection.socket.destroy()
      if (this.#turns.holds(connection)) {
        // A client gone inside an exchange: it is rolled back and ended (ABANDON), so the next holder's
        // statements neither commit it nor are skipped after its error; the answers go nowhere.
        if (connection.midExchange) await this.pglite.execProtocolRawStream(ABANDON, { onRawData: () => {} }).catch(() => {})
        // A client gone inside its transaction: nothing of it stays.
        if (this.pglite.isInTransaction()) await this.pglite.exec('rollback').catch(() => {})
      }
      this.#turns.give(connection)
    }
  }

  /** Answers the packets before start-up; false when the connection is to close (a cancel request). */
  #startUp(connection: Connection, packet: Buffer): boolean {
    const code = requestCode(packet)
    if (code === PROTOCOL_3) connection.write(startupAnswer(connection.id, SERVER_SETTINGS))
    else if (code === CANCEL_REQUEST) return false
    // SSL and GSS encryption: not on a local socket.
    else connection.write(Buffer.from('N'))
    return true
  }

  #execute(connection: Connection, message: Uint8Array): Promise<void> {
    return this.pglite.execProtocolRawStream(message, {
      onRawData: (data) => {
        // A view of PGlite's memory: copied before the socket queues it.
        const bytes = Buffer.from(data)
        this.#scanner.feed(bytes)
        connection.write(bytes)
      },
    })
  }

  /** COPY … FROM STDIN: takes the client's rows, then has PGlite read them as `/dev/blob`. */
  async #copyIn(connection: Connection, statement: string): Promise<void> {
    connection.write(copyInResponse())
    const pieces: Buffer[] = []
    let failed: Error | undefined
    for (;;) {
      const message = await connection.next()
      if (!message) return
      if (message.type === TYPE.copyData) pieces.push(copyPayload(message.bytes))
      else if (message.type === TYPE.copyDone) break
      else if (message.type === TYPE.copyFail) {
        failed = Object.assign(new Error('COPY from stdin failed: the client gave up'), { code: '57014' })
        break
      }
    }
    try {
      if (failed) throw failed
      const result = await this.pglite.query(statement.replace(/\sfrom\s+stdin\s*;?\s*$/i, ` from '/dev/blob'`), [], {
        blob: new Blob(pieces as Uint8Array<ArrayBuffer>[]),
      })
      connection.write(commandComplete(`COPY ${result.affectedRows ?? 0}`))
      connection.write(readyForQuery(this.pglite.isInTransaction() ? 'T' : 'I'))
    } catch (error) {
      connection.write(errorResponse(error))
      connection.write(readyForQuery(this.pglite.isInTransaction() ? 'E' : 'I'))
    }
  }
}
