// Data value sets read in a worker thread (lib/dhis2/read-task.ts), as uploads are (lib/ingest/parse.ts):
// a person's sets past the pool's queue are refused with 429, never queued behind everybody's.
import { ApiError } from '../core/errors.js'
import { siblingModule, WorkPool } from '../core/worker-pool.js'
import type { TaskError } from '../ingest/parse-task.js'
import type { DataValue } from './data-values.js'
import type { ReadTask } from './read-task.js'

/** A set is at most 2 MB of text: its values, read, take a few times that. */
const READ_HEAP_MB = 256

const readPool = new WorkPool('dhis2-read', siblingModule(import.meta.url, 'read-task'), { heapMb: READ_HEAP_MB, retryAfterS: 2, what: 'data value sets' })

/** The values of a CSV or ADX data value set `owner` sent; a 400 naming what cannot be read. */
export async function readDataValues(owner: string, task: ReadTask): Promise<DataValue[]> {
  const result = await readPool.run<DataValue[] | TaskError>(owner, task)
  if ('error' in result) {
    const { statusCode, code, message, details } = result.error
    throw new ApiError(statusCode, code, message, details)
  }
  return result
}
