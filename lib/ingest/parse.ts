// Uploads read in a worker thread (lib/ingest/parse-task.ts): a 50 MB file takes seconds of CPU to
// parse, which on the event loop would hold every request for as long. An upload's check is refused
// past the owner's or the pool's queue (429); a transform waits its turn, as it runs in a job or in a
// request already bounded per document.
import { ApiError } from '../core/errors.js'
import { siblingModule, WorkPool, workerOutOfMemory } from '../core/worker-pool.js'
import type { ParseTask, TaskError } from './parse-task.js'
import type { TransformedRows } from './transform-rows.js'

/**
 * A parsing thread's heap. A CSV is read as a stream (its size does not count); what grows is the
 * transform's rows kept per key, which a file of distinct keys makes as large as the file.
 */
const PARSE_HEAP_MB = 1024

export const parsePool = new WorkPool('parse', siblingModule(import.meta.url, 'parse-task'), { heapMb: PARSE_HEAP_MB, retryAfterS: 5, what: 'uploads' })

const tooLarge = () =>
  new ApiError(422, 'FILE_TOO_LARGE_TO_READ', 'The file holds more distinct row keys than the parsing thread can keep in memory: split it into smaller files')

async function run<T>(owner: string, task: ParseTask, wait: boolean): Promise<T> {
  let result: T | TaskError
  try {
    result = await parsePool.run<T | TaskError>(owner, task, [], { wait })
  } catch (error) {
    if (workerOutOfMemory(error)) throw tooLarge()
    throw error
  }
  if (result && typeof result === 'object' && 'error' in result) {
    const { statusCode, code, message, details } = (result as TaskError).error
    throw new ApiError(statusCode, code, message, details)
  }
  return result as T
}

/** An upload's file read through and checked; its header and data rows. */
export const checkFile = (owner: string, task: Omit<Extract<ParseTask, { op: 'check' }>, 'op'>) =>
  run<{ header: string[]; rows: number; utf8Path?: string }>(owner, { op: 'check', ...task }, false)

/** The transform's in-memory phase of a stored file. */
export const transformFile = (owner: string, task: Omit<Extract<ParseTask, { op: 'transform' }>, 'op'>) =>
  run<TransformedRows>(owner, { op: 'transform', ...task }, true)
