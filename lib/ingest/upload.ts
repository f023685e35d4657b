// Document upload (ingestion §1): validate, read the whole file through (in a worker thread, from the
// spool file it arrived in: lib/ingest/spool.ts), move it to its place, register it.
import { randomBytes } from 'node:crypto'
import { tmpdir } from 'node:os'
import { copyFile, mkdir, rename, unlink } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { sql, type Kysely } from 'kysely'
import type { DB } from '../../schemas/index.js'
import { validationError } from '../core/errors.js'
import type { ConflictPolicy, FileType } from './columns.js'
import { CONFLICT_POLICIES } from '../../schemas/source_doc.js'
import { emptyFile, fileKind, type FileKind } from './files.js'
import { checkFile } from './parse.js'
import type { TextEncoding } from './parse-task.js'

export { checkColumns, REQUIRED_COLUMNS, type ConflictPolicy, type FileType } from './columns.js'

export interface UploadInput {
  /** The file as it arrived (a spool file), moved to its place when stored unless `keep`. */
  path: string
  size: number
  /** A file of the caller's own (the CLI's argument): copied, never moved. */
  keep?: boolean
  /** Whose queue of parsing work it counts against (lib/core/worker-pool.ts). */
  owner: string
  title: string
  fileType: string
  dateOrder?: string
  /** Two different values for one cell inside the file: `last` (default), `first` or `reject`. */
  conflict?: string
  /** Multipart: the file part's name, for the extension when the title has none. */
  filename?: string
  /** XLSX_MAX_UNCOMPRESSED_BYTES (zip bombs). */
  maxUncompressed?: number
  /** A CSV's text encoding as named by the upload: `utf-8` (default) or `windows-1252`. */
  encoding?: string
}

export interface Upload {
  kind: FileKind
  header: string[]
  fileType: FileType
  dateOrder: string
  conflict: ConflictPolicy
  /** A CSV named in another encoding, written out as UTF-8: this file is the one stored (it is ours to move). */
  utf8Path?: string
}

/** The labels an upload may name its encoding by (WHATWG's for Windows-1252 include latin1 and iso-8859-1). */
const ENCODINGS: Record<string, TextEncoding> = {
  'utf-8': 'utf-8',
  utf8: 'utf-8',
  'windows-1252': 'windows-1252',
  cp1252: 'windows-1252',
  latin1: 'windows-1252',
  'iso-8859-1': 'windows-1252',
}

/** Everything that can be refused before anything is stored. */
export async function checkUpload(input: UploadInput): Promise<Upload> {
  if (input.fileType !== 'campaign' && input.fileType !== 'date') throw validationError('file_type', 'must be one of campaign, date')
  const dateOrder = input.dateOrder ?? 'MDY'
  if (!['MDY', 'DMY', 'YMD'].includes(dateOrder)) throw validationError('date_order', 'must be one of MDY, DMY, YMD')
  const conflict = (input.conflict ?? 'last') as ConflictPolicy
  if (!CONFLICT_POLICIES.includes(conflict)) throw validationError('conflict', `must be one of ${CONFLICT_POLICIES.join(', ')}`)
  // The title is a file name shown to people and used in downloads: no paths, no control characters.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
  if (/[/\\\u0000-\u001f\u007f]/.test(input.title)) {
    throw validationError('doc_title', 'must be a file name without path separators or control characters')
  }
  const encoding = input.encoding === undefined ? 'utf-8' : ENCODINGS[input.encoding.toLowerCase()]
  if (!encoding) throw validationError('encoding', 'must be one of utf-8, windows-1252')
  const kind = fileKind(input.title, input.filename)
  if (!input.size) throw emptyFile()
  // A file of the caller's own (the CLI's) gets its UTF-8 copy in the temporary folder, never beside it.
  const copyDir = input.keep ? tmpdir() : undefined
  const { header, utf8Path } = await checkFile(input.owner, {
    path: input.path,
    kind,
    fileType: input.fileType,
    maxUncompressed: input.maxUncompressed,
    encoding,
    copyDir,
  })
  return { kind, header, fileType: input.fileType, dateOrder, conflict, utf8Path }
}

/** Moves a file, by a copy where a rename cannot (another file system: the temporary folder). */
async function moveAcross(from: string, to: string) {
  try {
    await rename(from, to)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error
    await copyFile(from, to)
    await unlink(from)
  }
}

/** Stores the file under DATA_DIR and the document row; returns the new id. */
export async function storeUpload(db: Kysely<DB>, dataDir: string, input: UploadInput, upload: Upload, userId: number, now = new Date()): Promise<number> {
  const guid = randomBytes(20).toString('hex')
  const day = now.toISOString().slice(0, 10).split('-')
  const docfile = join('documents', day[0], day[1], day[2], `${guid}.${upload.kind}`)
  // `<title>-<epoch seconds>`, then -2, -3… if that exists (re-uploading the same file never collides).
  const base = `${input.title}-${Math.floor(now.getTime() / 1000)}`
  const taken = new Set(
    (
      await db
        .selectFrom('source_doc')
        .select('doc_title')
        .where((eb) => eb.or([eb('doc_title', '=', base), eb('doc_title', 'like', `${base.replace(/[\\%_]/g, '\\$&')}-%`)]))
        .execute()
    ).map((r) => r.doc_title),
  )
  let title = base
  for (let n = 2; taken.has(title); n++) title = `${base}-${n}`
  const { id } = await db
    .insertInto('source_doc')
    .values({
      doc_title: title,
      file_type: upload.fileType,
      date_order: upload.dateOrder,
      conflict: upload.conflict,
      docfile,
      file_header: JSON.stringify(upload.header),
      guid,
      created_by_id: userId,
      created_at: sql<string>`${now.toISOString()}::timestamptz`,
    })
    .returning('id')
    .executeTakeFirstOrThrow()
  const path = join(dataDir, docfile)
  await mkdir(dirname(path), { recursive: true })
  if (upload.utf8Path) await moveAcross(upload.utf8Path, path)
  else if (input.keep) await copyFile(input.path, path)
  else await rename(input.path, path)
  return id
}
