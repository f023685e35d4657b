// A worker thread's side of reading uploads (lib/ingest/parse.ts): the upload's check and the
// transform's in-memory phase, off the event loop that answers requests.
import { ApiError } from '../core/errors.js'
import type { FileKind } from './files.js'
import { readRows } from './rows.js'
import { transformRows, type TransformRowsTask } from './transform-rows.js'
import { checkColumns, type FileType } from './columns.js'

export type ParseTask = { op: 'check'; path: string; kind: FileKind; fileType: FileType; maxUncompressed?: number } | ({ op: 'transform' } & TransformRowsTask)

/** The client's error as data: an error's own fields do not cross threads. */
export type TaskError = { error: { statusCode: number; code: string; message: string; details?: Record<string, unknown> } }

/** Every row read and checked (§2: header, columns, formulas), nothing kept: the header and the row count. */
async function check(task: Extract<ParseTask, { op: 'check' }>) {
  let header: string[] = []
  const rows = await readRows(
    task.path,
    task.kind,
    {
      header(names) {
        header = names
        checkColumns(task.fileType, names)
      },
      row() {},
    },
    task.maxUncompressed,
  )
  return { header, rows }
}

export default async function parse(task: ParseTask) {
  try {
    return task.op === 'check' ? await check(task) : await transformRows(task)
  } catch (error) {
    if (!(error instanceof ApiError)) throw error
    const { statusCode, code, message, details } = error
    return { error: { statusCode, code, message, details } } satisfies TaskError
  }
}
