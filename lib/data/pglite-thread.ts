// The embedded database on a thread of its own (lib/data/pglite-thread-worker.ts): its statements run
// there, so a long one (a transform's, an export's read) no longer holds the event loop that answers
// every request. The server reaches it as PostgreSQL, through node-postgres on its Unix socket, which
// sits in the data directory under PostgreSQL's own name (`psql -h DATA_DIR` connects); an in-memory
// database's socket is in a private temporary directory.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { Worker } from 'node:worker_threads'
import type { ThreadData, ThreadMessage, ThreadRequest } from './pglite-thread-worker.js'

/** The port in the socket's name: PostgreSQL's default, so psql needs only `-h`. */
export const SOCKET_PORT = 5432
// A Unix socket's path is at most 107 bytes on Linux.
const MAX_SOCKET_PATH = 100

type Request = ThreadRequest extends infer R ? (R extends { id: number } ? Omit<R, 'id'> : never) : never

export class DatabaseThreadError extends Error {
  override name = 'DatabaseThreadError'
  constructor(
    message: string,
    readonly code?: string,
  ) {
    super(message)
  }
}

export class PGliteThread {
  readonly #worker: Worker
  readonly #busy: Int32Array
  readonly #answers = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>()
  readonly #listeners = new Map<string, Set<(payload: string) => void>>()
  readonly #ownDir: string | undefined
  #nextId = 1
  #exited = false

  private constructor(
    worker: Worker,
    busy: SharedArrayBuffer,
    readonly socketDir: string,
    ownDir: string | undefined,
  ) {
    this.#worker = worker
    this.#busy = new Int32Array(busy)
    this.#ownDir = ownDir
    worker.on('message', (message: ThreadMessage) => this.#receive(message))
    worker.on('exit', () => {
      this.#exited = true
      for (const { reject } of this.#answers.values()) reject(new DatabaseThreadError('the database thread has ended'))
      this.#answers.clear()
      if (this.#ownDir) rmSync(this.#ownDir, { recursive: true, force: true })
    })
  }

  /**
   * Starts PGlite on its thread over `dataDir` (absent: in memory), from `loadDataDir` when given, its
   * socket in `socketDir` (absent, or too long a path for a socket: a private temporary directory).
   */
  static async start(options: { dataDir?: string; loadDataDir?: Blob; socketDir?: string }): Promise<PGliteThread> {
    // Absolute: the driver reads a host that does not start with "/" as a name to look up (DATA_DIR's default is ./.data).
    let socketDir = options.socketDir && resolve(options.socketDir)
    let ownDir: string | undefined
    if (!socketDir || join(socketDir, `.s.PGSQL.${SOCKET_PORT}`).length > MAX_SOCKET_PATH) socketDir = ownDir = mkdtempSync(join(tmpdir(), 'rhizome-db-'))
    const busy = new SharedArrayBuffer(4)
    const loadDataDir = options.loadDataDir && (await options.loadDataDir.arrayBuffer())
    const data: ThreadData = { dataDir: options.dataDir, loadDataDir, socketPath: join(socketDir, `.s.PGSQL.${SOCKET_PORT}`), busy }
    const worker = new Worker(...threadEntry(data))
    // As PGlite in the process did, the thread alone does not keep the process alive.
    worker.unref()
    const thread = new PGliteThread(worker, busy, socketDir, ownDir)
    await new Promise<void>((resolve, reject) => {
      const started = (message: ThreadMessage) => {
        if (message.type === 'ready') resolve()
        else if (message.type === 'failed') reject(new DatabaseThreadError(message.error.message, message.error.code))
        else return
        worker.off('message', started)
      }
      worker.on('message', started)
      worker.once('error', reject)
      worker.once('exit', () => reject(new DatabaseThreadError('the database thread ended while it started')))
    })
    return thread
  }

  /** node-postgres' connection string for the socket. */
  url(): string {
    return `postgresql://rhizome@localhost/rhizome?host=${encodeURIComponent(this.socketDir)}&port=${SOCKET_PORT}`
  }

  /** A connection holds the session now (a statement runs or a transaction is open). Read without asking the thread. */
  busy(): boolean {
    return Atomics.load(this.#busy, 0) === 1
  }

  /** The thread has ended (closed, or PGlite failed): nothing will answer. */
  get ended(): boolean {
    return this.#exited
  }

  async listen(channel: string, onNotify: (payload: string) => void): Promise<() => Promise<void>> {
    let listeners = this.#listeners.get(channel)
    if (!listeners) {
      this.#listeners.set(channel, (listeners = new Set()))
      await this.#request({ type: 'listen', channel })
    }
    listeners.add(onNotify)
    return async () => {
      listeners.delete(onNotify)
      if (listeners.size || this.#listeners.get(channel) !== listeners) return
      this.#listeners.delete(channel)
      if (!this.#exited) await this.#request({ type: 'unlisten', channel })
    }
  }

  /**
   * Resolves once every notification the thread has seen so far has been handed to its listeners: the
   * thread posts each as it passes, and messages from a thread arrive in order.
   */
  async heard(): Promise<void> {
    await this.#request({ type: 'ping' })
  }

  /** The data directory as a tar file, of one moment (a checkpoint first, while no statement runs). */
  async dump(compression: 'none' | 'gzip'): Promise<Blob> {
    const bytes = (await this.#request({ type: 'dump', compression })) as ArrayBuffer
    return new Blob([bytes])
  }

  async close(): Promise<void> {
    if (this.#exited) return
    const exited = new Promise((resolve) => this.#worker.once('exit', resolve))
    await this.#request({ type: 'close' }).catch(() => {})
    this.#worker.ref()
    await exited
  }

  #request(request: Request): Promise<unknown> {
    if (this.#exited) return Promise.reject(new DatabaseThreadError('the database thread has ended'))
    const id = this.#nextId++
    // A request waited on keeps the process alive until answered (a close finishes writing).
    this.#worker.ref()
    return new Promise((resolve, reject) => {
      this.#answers.set(id, { resolve, reject })
      this.#worker.postMessage({ ...request, id })
    })
  }

  #receive(message: ThreadMessage): void {
    if (message.type === 'notification') {
      for (const listener of this.#listeners.get(message.channel) ?? []) listener(message.payload)
    } else if (message.type === 'answer') {
      const waiting = this.#answers.get(message.id)
      this.#answers.delete(message.id)
      if (!this.#answers.size) this.#worker.unref()
      if (message.error) waiting?.reject(new DatabaseThreadError(message.error.message, message.error.code))
      else waiting?.resolve(message.result)
    }
  }
}

/** The thread's module; under tsx (tests, `npm run dev`) through lib/core/ts-worker.mjs, which registers it there. */
function threadEntry(data: ThreadData): [URL, { workerData: unknown }] {
  const file = new URL(`./pglite-thread-worker${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url)
  if (!file.pathname.endsWith('.ts')) return [file, { workerData: data }]
  return [new URL('../core/ts-worker.mjs', import.meta.url), { workerData: { ...data, module: file.href } }]
}
