// The embedded database's thread: PGlite and its socket (lib/data/pglite-socket.ts), and the few
// requests the process sends it directly (LISTEN, a dump of the data directory, a round trip, close).
// Started by lib/data/pglite-thread.ts; what it is given is in `workerData`.
import { rmSync } from 'node:fs'
import { parentPort, workerData } from 'node:worker_threads'
import { PGlite } from '@electric-sql/pglite'
import { PGliteSocketServer } from './pglite-socket.js'

export interface ThreadData {
  dataDir?: string
  /** The data directory to start from (a template, a restored backup), as bytes. */
  loadDataDir?: ArrayBuffer
  socketPath: string
  /** One Int32: 1 while a connection or request holds the session. */
  busy: SharedArrayBuffer
}

export type ThreadRequest =
  | { id: number; type: 'listen'; channel: string }
  | { id: number; type: 'unlisten'; channel: string }
  | { id: number; type: 'dump'; compression: 'none' | 'gzip' }
  | { id: number; type: 'ping' }
  | { id: number; type: 'close' }

export type ThreadMessage =
  | { type: 'ready' }
  | { type: 'failed'; error: { message: string; code?: string } }
  | { type: 'notification'; channel: string; payload: string }
  | { type: 'answer'; id: number; result?: unknown; error?: { message: string; code?: string } }

const data = workerData as ThreadData
const port = parentPort!
const post = (message: ThreadMessage, transfer: ArrayBuffer[] = []) => port.postMessage(message, transfer)
const busy = new Int32Array(data.busy)

async function start() {
  const pglite = await PGlite.create({ dataDir: data.dataDir, loadDataDir: data.loadDataDir && new Blob([data.loadDataDir]) })
  await pglite.exec(`set TimeZone to 'UTC'`)
  const notify = (channel: string, payload: string) => post({ type: 'notification', channel, payload })
  const server = new PGliteSocketServer(pglite, { onNotification: notify, onBusy: (held) => Atomics.store(busy, 0, held ? 1 : 0) })
  // A socket left by a process that ended without closing (the data directory's lock says none runs now).
  rmSync(data.socketPath, { force: true })
  await server.listen(data.socketPath)
  const unlistens = new Map<string, () => Promise<void>>()

  const answer = async (request: ThreadRequest): Promise<{ result?: unknown; transfer?: ArrayBuffer[] }> => {
    switch (request.type) {
      case 'listen':
        // PGlite's own listen(): it also hears the notifications of its query(), which COPY uses.
        if (!unlistens.has(request.channel))
          unlistens.set(request.channel, await server.exclusive(() => pglite.listen(request.channel, (payload) => notify(request.channel, payload))))
        return {}
      case 'unlisten':
        await server.exclusive(async () => unlistens.get(request.channel)?.())
        unlistens.delete(request.channel)
        return {}
      case 'dump': {
        // Every committed change in the data files first: the dump is of one moment, taken while no statement runs.
        const bytes = await server.exclusive(async () => {
          await pglite.exec('checkpoint')
          return (await pglite.dumpDataDir(request.compression)).arrayBuffer()
        })
        return { result: bytes, transfer: [bytes] }
      }
      case 'ping':
        return {}
      case 'close':
        await server.close()
        await pglite.close()
        rmSync(data.socketPath, { force: true })
        return {}
    }
  }

  port.on('message', (request: ThreadRequest) => {
    answer(request).then(
      ({ result, transfer }) => {
        post({ type: 'answer', id: request.id, result }, transfer)
        if (request.type === 'close') port.close()
      },
      (error: Error & { code?: string }) => post({ type: 'answer', id: request.id, error: { message: error.message, code: error.code } }),
    )
  })
  post({ type: 'ready' })
}

start().catch((error: Error & { code?: string }) => {
  post({ type: 'failed', error: { message: error.message, code: error.code } })
  port.close()
})
