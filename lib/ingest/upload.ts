// Document upload (ingestion §1): validate, decode, parse the whole file, store it, register it.
import { randomBytes } from 'node:crypto'
import { mkdir, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { sql, type Kysely } from 'kysely'
import type { DB } from '../../schemas/index.js'
import { ApiError, validationError } from '../core/errors.js'
import { CONFLICT_POLICIES } from '../../schemas/source_doc.js'
import { emptyFile, fileKind, readTable, unreadableFile, type FileKind, type Table } from './files.js'

export const REQUIRED_COLUMNS = { campaign: ['geocode', 'campaign'], date: ['geocode', 'data_date', 'unique_key'] } as const
export type FileType = keyof typeof REQUIRED_COLUMNS
export type ConflictPolicy = (typeof CONFLICT_POLICIES)[number]

/** 422 MISSING_COLUMN naming every absent role column (§3.1). */
export function checkColumns(fileType: FileType, header: string[]) {
  const missing = REQUIRED_COLUMNS[fileType].filter((c) => !header.includes(c))
  if (!missing.length) return
  const message = missing.length === 1 ? `${missing[0]} is a required column.` : `${missing.join(', ')} are required columns.`
  throw new ApiError(422, 'MISSING_COLUMN', message, { missing })
}

/** The bytes of a base64 `docfile` (data-URL prefix, whitespace, URL-safe alphabet, no padding allowed). */
export function decodeDocfile(text: string, maxBytes: number): Buffer {
  let payload = text
  if (payload.startsWith('data:')) payload = payload.includes(',') ? payload.slice(payload.indexOf(',') + 1) : ''
  payload = payload.replace(/\s+/g, '')
  if (Math.floor((payload.replace(/=+$/, '').length * 3) / 4) > maxBytes) {
    throw new ApiError(413, 'PAYLOAD_TOO_LARGE', `File is too large (limit ${maxBytes} bytes)`)
  }
  if (!payload) throw emptyFile()
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(payload) || payload.replace(/=+$/, '').length % 4 === 1) throw unreadableFile()
  const bytes = Buffer.from(payload.replace(/-/g, '+').replace(/_/g, '/'), 'base64')
  if (!bytes.length) throw emptyFile()
  return bytes
}

export interface UploadInput {
  bytes: Buffer
  title: string
  fileType: string
  dateOrder?: string
  /** Two different values for one cell inside the file: `last` (default), `first` or `reject`. */
  conflict?: string
  /** Multipart: the file part's name, for the extension when the title has none. */
  filename?: string
  /** XLSX_MAX_UNCOMPRESSED_BYTES (zip bombs). */
  maxUncompressed?: number
}

export interface Upload {
  kind: FileKind
  table: Table
  fileType: FileType
  dateOrder: string
  conflict: ConflictPolicy
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
  const kind = fileKind(input.title, input.filename)
  if (!input.bytes.length) throw emptyFile()
  const table = await readTable(kind, input.bytes, input.maxUncompressed)
  checkColumns(input.fileType, table.header)
  return { kind, table, fileType: input.fileType, dateOrder, conflict }
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
      file_header: JSON.stringify(upload.table.header),
      guid,
      created_by_id: userId,
      created_at: sql<string>`${now.toISOString()}::timestamptz`,
    })
    .returning('id')
    .executeTakeFirstOrThrow()
  const path = join(dataDir, docfile)
  await mkdir(dirname(path), { recursive: true })
  await writeFile(path, input.bytes)
  return id
}
