// A worker thread's side of an export (lib/export/draw.ts): the file drawn here, off the event loop
// that answers requests. Its reads go back to that loop through `port` (typed reads as the requester,
// with the read cache: lib/export/draw.ts), their objects cloned across.
import type { MessagePort } from 'node:worker_threads'
import { ApiError } from '../core/errors.js'
import type { View, ViewReads } from './dashboard-data.js'
import { exportFile, type FileAsked } from './file.js'
import { webModules } from './web-modules.js'

export interface DrawTask {
  asked: FileAsked
  scope: string
  maxCharts: number
  port: MessagePort
}

/** A read the drawing asks for from its thread: a list, a detail, or a dashboard's data. */
export type ReadAsk = { list: string; query: ReadonlyArray<readonly [string, string]> } | { detail: string; id: number } | { dashboardData: number; view: View }

/** Its answer: the objects (structured-cloned across), or the error as data (an error's own fields do not cross threads). */
export type ReadAnswer = { value: unknown } | { error: { statusCode: number; code: string; message: string; details?: Record<string, unknown> } }

/** What comes back: the file, or the client's error as data (an error's own fields do not cross threads). */
export type DrawResult =
  | { file: { bytes: Uint8Array; mediaType: string; disposition: string } }
  | { error: { statusCode: number; code: string; message: string; details?: Record<string, unknown>; headers?: Record<string, string> } }

export default async function draw({ asked, scope, maxCharts, port }: DrawTask) {
  const waiting = new Map<number, (answer: ReadAnswer) => void>()
  let next = 0
  port.on('message', ({ id, ...answer }: { id: number } & ReadAnswer) => {
    waiting.get(id)?.(answer)
    waiting.delete(id)
  })
  const ask = <T>(question: ReadAsk) =>
    new Promise<T>((resolve, reject) => {
      const id = next++
      waiting.set(id, (answer) => {
        if ('value' in answer) return resolve(answer.value as T)
        const { statusCode, code, message, details } = answer.error
        reject(new ApiError(statusCode, code, message, details))
      })
      port.postMessage({ id, ask: question })
    })
  const reads: ViewReads = {
    list: (resource, query) => ask({ list: resource, query: query?.entries ?? [] }),
    detail: (resource, id) => ask({ detail: resource, id }),
    dashboardData: (id, view) => ask({ dashboardData: id, view }),
  }
  try {
    const file = await exportFile(await webModules(), reads, asked, scope, maxCharts)
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
