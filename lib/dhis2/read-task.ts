// A worker thread's side of reading data value sets (lib/dhis2/read.ts): DHIS2's CSV and ADX parsed off
// the event loop. A 2 MB ADX message takes a quarter of a second of CPU to read, and one whose elements
// carry 190,000 attributes nearly two: on the event loop, every other request would wait as long.
import { ApiError } from '../core/errors.js'
import type { TaskError } from '../ingest/parse-task.js'
import { valuesOfAdx } from './adx.js'
import { type DataValue, valuesOfCsv } from './data-values.js'

/** A data value set's body, and the format its Content-Type names. */
export interface ReadTask {
  format: 'csv' | 'adx'
  body: string
}

export default function read(task: ReadTask): DataValue[] | TaskError {
  try {
    return task.format === 'adx' ? valuesOfAdx(task.body) : valuesOfCsv(task.body)
  } catch (error) {
    if (!(error instanceof ApiError)) throw error
    const { statusCode, code, message, details } = error
    return { error: { statusCode, code, message, details } }
  }
}
