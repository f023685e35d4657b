// The pieces of PostgreSQL's frontend/backend protocol the embedded database's socket needs
// (lib/data/pglite-socket.ts): framing what a client sends into messages, the few answers written
// here rather than by PGlite (the start-up, COPY FROM STDIN, errors), and finding the notifications in
// what PGlite answers. https://www.postgresql.org/docs/current/protocol-message-formats.html

/** A message a client sent: its type byte (0 for the untyped start-up packets) and its whole bytes. */
export interface ClientMessage {
  type: number
  bytes: Buffer
}

export const PROTOCOL_3 = 196608
export const SSL_REQUEST = 80877103
export const GSS_REQUEST = 80877104
export const CANCEL_REQUEST = 80877102

export const TYPE = {
  query: 'Q'.charCodeAt(0),
  sync: 'S'.charCodeAt(0),
  terminate: 'X'.charCodeAt(0),
  copyData: 'd'.charCodeAt(0),
  copyDone: 'c'.charCodeAt(0),
  copyFail: 'f'.charCodeAt(0),
  notification: 'A'.charCodeAt(0),
} as const

/** What a client sent that is not PostgreSQL's protocol: its connection is closed. */
export class ProtocolViolation extends Error {
  override name = 'ProtocolViolation'
}

// A start-up packet is small; no message is over 1 GB (PostgreSQL's own limits).
const MAX_STARTUP_BYTES = 10_000
const MAX_MESSAGE_BYTES = 1 << 30

/** Cuts what a client sends into messages; the first ones of a connection have no type byte. */
export class MessageReader {
  #buffer: Buffer = Buffer.alloc(0)
  #started = false

  /** The complete messages `chunk` finishes; an incomplete one waits for the next chunk. */
  push(chunk: Buffer): ClientMessage[] {
    this.#buffer = this.#buffer.length ? Buffer.concat([this.#buffer, chunk]) : chunk
    const messages: ClientMessage[] = []
    for (;;) {
      const untyped = !this.#started
      const header = untyped ? 4 : 5
      if (this.#buffer.length < header) break
      const declared = this.#buffer.readInt32BE(untyped ? 0 : 1)
      if (untyped ? declared < 8 || declared > MAX_STARTUP_BYTES : declared < 4 || declared > MAX_MESSAGE_BYTES) {
        throw new ProtocolViolation(`a message of ${declared} bytes`)
      }
      const length = declared + (untyped ? 0 : 1)
      if (this.#buffer.length < length) break
      const bytes = this.#buffer.subarray(0, length)
      this.#buffer = this.#buffer.subarray(length)
      // A start-up packet ends the untyped part; SSL and GSS requests are answered 'N' and followed by one.
      if (untyped && bytes.length >= 8 && bytes.readInt32BE(4) === PROTOCOL_3) this.#started = true
      messages.push({ type: untyped ? 0 : bytes[0], bytes })
    }
    return messages
  }
}

const typed = (type: string, body: Buffer) => {
  const head = Buffer.alloc(5)
  head.write(type, 0, 'latin1')
  head.writeInt32BE(body.length + 4, 1)
  return Buffer.concat([head, body])
}
const int32 = (...values: number[]) => {
  const out = Buffer.alloc(values.length * 4)
  values.forEach((value, i) => out.writeInt32BE(value, i * 4))
  return out
}
const cstring = (text: string) => Buffer.from(`${text}\0`, 'utf8')

/** Sync: the end of an extended-protocol exchange (PGlite then commits an implicit transaction, or leaves an error's). */
export const SYNC = Buffer.from([TYPE.sync, 0, 0, 0, 4])

/**
 * What ends the exchange of a client gone before its Sync, as PostgreSQL's end of its session would:
 * a statement that fails (its error aborts the exchange's implicit transaction), then the Sync, which
 * rolls it back instead of committing it.
 */
export const ABANDON = Buffer.concat([typed('P', Buffer.from('\0-- the client went away\nabandon\0\0\0', 'utf8')), SYNC])

/** ReadyForQuery: 'I' idle, 'T' in a transaction, 'E' in a failed one. */
export const readyForQuery = (status: 'I' | 'T' | 'E') => typed('Z', Buffer.from(status, 'latin1'))

/** What a server says once a client has started: trusted, its settings, its key, ready. */
export function startupAnswer(backendId: number, settings: Record<string, string>): Buffer {
  return Buffer.concat([
    typed('R', int32(0)),
    ...Object.entries(settings).map(([name, value]) => typed('S', Buffer.concat([cstring(name), cstring(value)]))),
    typed('K', int32(backendId, 0)),
    readyForQuery('I'),
  ])
}

/** The parameters of a start-up packet (user, database, options…). */
export function startupParameters(message: Buffer): Record<string, string> {
  const parts = message.subarray(8).toString('utf8').split('\0')
  const parameters: Record<string, string> = {}
  for (let i = 0; i + 1 < parts.length && parts[i]; i += 2) parameters[parts[i]] = parts[i + 1]
  return parameters
}

/** The untyped request code of a packet before start-up (SSL, GSS, cancel) or the protocol version. */
export const requestCode = (message: Buffer) => message.readInt32BE(4)

/** The text of a simple Query message. */
export const queryText = (message: Buffer) => message.toString('utf8', 5, message.length - 1)

/** The payload of a CopyData message. */
export const copyPayload = (message: Buffer) => message.subarray(5)

/** A COPY that reads the client's rows, which PGlite cannot take over the protocol. */
export const COPY_FROM_STDIN = /^\s*copy\s[\s\S]*\sfrom\s+stdin\s*;?\s*$/i

/** CopyInResponse: send the rows (text format). */
export const copyInResponse = () => typed('G', Buffer.from([0, 0, 0]))

export const commandComplete = (tag: string) => typed('C', cstring(tag))

/** ErrorResponse from an error PGlite threw (its fields as node-postgres names them) or any other. */
export function errorResponse(error: unknown): Buffer {
  const e = error as Record<string, unknown>
  const fields: Array<[string, unknown]> = [
    ['S', e.severity ?? 'ERROR'],
    ['V', e.severity ?? 'ERROR'],
    ['C', e.code ?? 'XX000'],
    ['M', (error as Error)?.message ?? String(error)],
    ['D', e.detail],
    ['H', e.hint],
    ['s', e.schema],
    ['t', e.table],
    ['c', e.column],
    ['n', e.constraint],
  ]
  const body = fields
    .filter(([, value]) => typeof value === 'string' && value)
    .map(([key, value]) => Buffer.concat([Buffer.from(key, 'latin1'), cstring(value as string)]))
  return typed('E', Buffer.concat([...body, Buffer.from([0])]))
}

/**
 * Follows the messages in what PGlite answers, across chunks, and hands each NotificationResponse to
 * `onNotification`: PGlite is one session, so a NOTIFY is answered to whichever connection committed it.
 */
export class NotificationScanner {
  #header = Buffer.alloc(0)
  #type = 0
  #left = 0
  #body: Buffer[] = []

  constructor(private readonly onNotification: (channel: string, payload: string) => void) {}

  feed(chunk: Uint8Array): void {
    let at = 0
    while (at < chunk.length) {
      if (this.#left === 0) {
        const need = 5 - this.#header.length
        this.#header = Buffer.concat([this.#header, chunk.subarray(at, at + need)])
        at += Math.min(need, chunk.length - at)
        if (this.#header.length < 5) return
        this.#type = this.#header[0]
        this.#left = this.#header.readInt32BE(1) - 4
        this.#header = Buffer.alloc(0)
        this.#body = []
        if (this.#left === 0) continue
      }
      const take = Math.min(this.#left, chunk.length - at)
      if (this.#type === TYPE.notification) this.#body.push(Buffer.from(chunk.subarray(at, at + take)))
      at += take
      this.#left -= take
      if (this.#left === 0 && this.#type === TYPE.notification) {
        const [channel, payload] = Buffer.concat(this.#body).subarray(4).toString('utf8').split('\0')
        this.onNotification(channel, payload)
      }
    }
  }
}
