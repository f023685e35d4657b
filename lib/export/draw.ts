// An export drawn in a worker thread (lib/export/draw-task.ts): ECharts' SVG, resvg's raster and
// pdfkit's layout are tens to hundreds of milliseconds of CPU per file, which on the event loop would
// hold every other request. Here, on the loop, only the reads the drawing asks for are answered.
import { MessageChannel } from 'node:worker_threads'
import { ApiError } from '../core/errors.js'
import { siblingModule, WorkPool } from '../core/worker-pool.js'
import type { RawAnswer } from '../api/read-service.js'
import type { DrawResult } from './draw-task.js'
import type { FileAsked } from './file.js'

/** A worker's heap: a dashboard of MAX_CHARTS_PER_DASHBOARD charts drawn at 4,000 px fits well inside. */
const DRAW_HEAP_MB = 512

export const drawPool = new WorkPool('draw', siblingModule(import.meta.url, 'draw-task'), { heapMb: DRAW_HEAP_MB, retryAfterS: 2, what: 'exports' })

/** The file `asked`, drawn in the pool for `owner` (a user or a link); `read` answers its reads. */
export async function drawFile(owner: string, asked: FileAsked, scope: string, maxCharts: number, read: (path: string) => Promise<RawAnswer>) {
  const { port1, port2 } = new MessageChannel()
  port1.on('message', ({ id, path }: { id: number; path: string }) => {
    read(path).then(
      (answer) => port1.postMessage({ id, ...answer }),
      (error: Error) => port1.postMessage({ id, status: 500, payload: JSON.stringify({ code: 'READ_FAILED', message: error.message }) }),
    )
  })
  try {
    const result = await drawPool.run<DrawResult>(owner, { asked, scope, maxCharts, port: port2 }, [port2])
    if ('error' in result) {
      const { statusCode, code, message, details, headers } = result.error
      throw new ApiError(statusCode, code, message, details, headers)
    }
    const { bytes, mediaType, disposition } = result.file
    return { bytes: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), mediaType, disposition }
  } finally {
    port1.close()
  }
}
