// A worker thread's side of an export (lib/export/draw.ts): the file drawn here, off the event loop
// that answers requests. Its reads go back to that loop through `port` (in-process requests as the
// requester, with the read cache), answered as text and parsed here.
import type { MessagePort } from 'node:worker_threads'
import { ApiError } from '../core/errors.js'
import type { Answer } from '../api/read-service.js'
import { exportFile, type FileAsked } from './file.js'
import { webModules } from './web-modules.js'

export interface DrawTask {
  asked: FileAsked
  scope: string
  maxCharts: number
  port: MessagePort
}

/** What comes back: the file, or the client's error as data (an error's own fields do not cross threads). */
export type DrawResult =
  | { file: { bytes: Uint8Array; mediaType: string; disposition: string } }
  | { error: { statusCode: number; code: string; message: string; details?: Record<string, unknown>; headers?: Record<string, string> } }

export default async function draw({ asked, scope, maxCharts, port }: DrawTask) {
  const waiting = new Map<number, (answer: Answer) => void>()
  let next = 0
  port.on('message', ({ id, status, payload }: { id: number; status: number; payload: string }) => {
    waiting.get(id)?.({ status, body: JSON.parse(payload) })
    waiting.delete(id)
  })
  const read = (path: string) =>
    new Promise<Answer>((resolve) => {
      const id = next++
      waiting.set(id, resolve)
      port.postMessage({ id, path })
    })
  try {
    const file = await exportFile(await webModules(), read, asked, scope, maxCharts)
    // A copy of exactly its bytes: a view would carry its whole buffer across (a Buffer may be a pool's slice).
    return { file: { ...file, bytes: new Uint8Array(file.bytes) } } satisfies DrawResult
  } catch (error) {
    if (!(error instanceof ApiError)) throw error
    const { statusCode, code, message, details, headers } = error
    return { error: { statusCode, code, message, details, headers } } satisfies DrawResult
  } finally {
    port.close()
  }
}
