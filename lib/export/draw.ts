// An export drawn in a worker thread (lib/export/draw-task.ts): ECharts' SVG, resvg's raster and
// pdfkit's layout are tens to hundreds of milliseconds of CPU per file, which on the event loop would
// hold every other request. Here, on the loop, only the reads the drawing asks for are answered.
import { MessageChannel } from 'node:worker_threads'
import { ApiError } from '../core/errors.js'
import { siblingModule, WorkPool } from '../core/worker-pool.js'
import { QueryParams } from '../api/query-params.js'
import type { ViewReads } from './dashboard-data.js'
import type { DrawResult, ReadAnswer, ReadAsk } from './draw-task.js'
import type { FileAsked } from './file.js'

/** A worker's heap: a dashboard of MAX_CHARTS_PER_DASHBOARD charts drawn at 4,000 px fits well inside. */
const DRAW_HEAP_MB = 512

export const drawPool = new WorkPool('draw', siblingModule(import.meta.url, 'draw-task'), { heapMb: DRAW_HEAP_MB, retryAfterS: 2, what: 'exports' })

function answerOf(reads: ViewReads, ask: ReadAsk): Promise<unknown> {
  if ('list' in ask) return reads.list(ask.list, new QueryParams(ask.query))
  if ('detail' in ask) return reads.detail(ask.detail, ask.id)
  return reads.dashboardData(ask.dashboardData, ask.view)
}

/** The file `asked`, drawn in the pool for `owner` (a user or a link); `reads` answers its reads. */
export async function drawFile(owner: string, asked: FileAsked, scope: string, maxCharts: number, reads: ViewReads) {
  const { port1, port2 } = new MessageChannel()
  port1.on('message', ({ id, ask }: { id: number; ask: ReadAsk }) => {
    answerOf(reads, ask).then(
      (value) => port1.postMessage({ id, value } satisfies { id: number } & ReadAnswer),
      (error: Error) => {
        const { statusCode, code, message, details } = error instanceof ApiError ? error : new ApiError(500, 'READ_FAILED', error.message)
        port1.postMessage({ id, error: { statusCode, code, message, details } } satisfies { id: number } & ReadAnswer)
      },
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
