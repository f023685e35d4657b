// A worker thread's side of reading uploads (lib/ingest/parse.ts): the upload's check and the
// transform's in-memory phase, off the event loop that answers requests.
import { randomUUID } from 'node:crypto'
import { unlink } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import { ApiError } from '../core/errors.js'
import type { FileKind } from './files.js'
import { firstNonUtf8Line, readRows, transcodeToUtf8 } from './rows.js'
import { transformRows, type TransformRowsTask } from './transform-rows.js'
import { checkColumns, type FileType } from './columns.js'

/** A CSV's text encoding as the upload names it: UTF-8 unless it says Windows-1252. */
export type TextEncoding = 'utf-8' | 'windows-1252'

export type ParseTask =
  | { op: 'check'; path: string; kind: FileKind; fileType: FileType; maxUncompressed?: number; encoding?: TextEncoding; copyDir?: string }
  | ({ op: 'transform' } & TransformRowsTask)

/** The client's error as data: an error's own fields do not cross threads. */
export type TaskError = { error: { statusCode: number; code: string; message: string; details?: Record<string, unknown> } }

/**
 * A CSV named UTF-8 (the default) must be UTF-8: a line that is not is refused by its number, never
 * read as another encoding and stored as junk codes. One named Windows-1252 is written out as UTF-8
 * (`utf8Path`, beside the spool file), which is what is then read and stored.
 */
async function utf8Csv(task: Extract<ParseTask, { op: 'check' }>): Promise<string | undefined> {
  if (task.kind !== 'csv') return undefined
  if (task.encoding === 'windows-1252') {
    const utf8Path = join(task.copyDir ?? dirname(task.path), `${basename(task.path)}.${process.pid}.${randomUUID()}.utf-8`)
    await transcodeToUtf8(task.path, utf8Path, 'windows-1252')
    return utf8Path
  }
  const line = await firstNonUtf8Line(task.path)
  if (line === undefined) return undefined
  throw new ApiError(
    400,
    'INVALID_UTF8',
    `Line ${line} of the file is not valid UTF-8: save the file as UTF-8, or name its encoding in the upload (encoding: windows-1252)`,
    { line },
  )
}

/**
 * Every row read and checked (§2: header, columns, formulas), nothing kept: the header, the row count,
 * and the file's UTF-8 copy when it was written out in another encoding.
 */
async function check(task: Extract<ParseTask, { op: 'check' }>) {
  let header: string[] = []
  const utf8Path = await utf8Csv(task)
  try {
    const rows = await readRows(
      utf8Path ?? task.path,
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
    return { header, rows, utf8Path }
  } catch (error) {
    // A refused file leaves no copy behind (an accepted one is the caller's to move or remove).
    if (utf8Path) await unlink(utf8Path).catch(() => {})
    throw error
  }
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
