import { unlink } from 'node:fs/promises'
import { join } from 'node:path'
import { SourceDoc } from '../schemas/source_doc.js'
import { defineResource } from '../lib/api/resource.js'
import { ApiError, validationError } from '../lib/core/errors.js'
import { checkUpload, decodeDocfile, storeUpload } from '../lib/ingest/upload.js'
import { checkRequiredFields } from '../lib/api/body.js'
import { assertOwnDocument } from '../lib/engine/access.js'
import { Param, type QueryOf } from '../lib/api/query.js'

interface FilePart {
  filename?: string
  data: Buffer
}

const NOT_AFTER_UPLOAD = ['docfile', 'file_type', 'file_header', 'guid', 'created_by_id']

const PARAMS = { document_id: Param.integer("the document's id (the original client's name for it)") }

export default defineResource({
  name: 'document',
  aliases: ['source_doc'],
  schema: SourceDoc,
  writers: 'users',
  query_fields: ['id', 'doc_title', 'file_type', 'date_order', 'conflict', 'docfile', 'file_header', 'guid', 'created_by_id', 'created_at'],
  required_fields_for_post: ['docfile', 'doc_title', 'file_type'],
  ordering: ['-created_at'],
  params: PARAMS,
  multipart: true,
  // Room for a base64 body of MAX_UPLOAD_BYTES (ingestion §1).
  body_limit: (config) => Math.ceil((config.MAX_UPLOAD_BYTES * 4) / 3) + 1024 * 1024,
  hooks: {
    async list(ctx, query) {
      const id = (ctx.params as QueryOf<typeof PARAMS>).document_id
      return { query: id === undefined ? query : query.where('t.id', '=', id) }
    },
    // POST is the upload (ingestion §1): decode, parse, store the file and the row; never echo the file.
    async create(ctx, body) {
      const part = body.docfile as FilePart | string | undefined
      // Multipart: doc_title defaults to the file part's name.
      if (body.doc_title === undefined && part && typeof part === 'object') body = { ...body, doc_title: part.filename }
      checkRequiredFields(ctx.resource, body)
      if (part === undefined || part === null || (typeof part !== 'string' && !Buffer.isBuffer(part.data)))
        throw validationError('docfile', 'must be base64 text or a file part')
      const bytes = typeof part === 'string' ? decodeDocfile(part, ctx.config.MAX_UPLOAD_BYTES) : part.data
      if (bytes.length > ctx.config.MAX_UPLOAD_BYTES) {
        throw new ApiError(413, 'PAYLOAD_TOO_LARGE', `File is too large (limit ${ctx.config.MAX_UPLOAD_BYTES} bytes)`)
      }
      const input = {
        bytes,
        title: String(body.doc_title ?? ''),
        fileType: String(body.file_type),
        dateOrder: body.date_order === undefined ? undefined : String(body.date_order),
        conflict: body.conflict === undefined ? undefined : String(body.conflict),
        filename: typeof part === 'string' ? undefined : part.filename,
        maxUncompressed: ctx.config.XLSX_MAX_UNCOMPRESSED_BYTES,
      }
      const upload = await checkUpload(input)
      return storeUpload(ctx.db as never, ctx.config.DATA_DIR, input, upload, ctx.user.id)
    },
    async beforeWrite(ctx, values, existing) {
      if (!existing) return
      assertOwnDocument(ctx.user, existing as { id: number; created_by_id: number | null })
      for (const key of Object.keys(values)) if (NOT_AFTER_UPLOAD.includes(key)) throw validationError(key, 'cannot be changed after upload')
    },
    // Another user's ingest stats hold their rows' values (rejected cells, conflicts), whatever the location.
    async detail(ctx, row) {
      return ctx.user.restricted && row.created_by_id !== ctx.user.id ? { ...row, ingest_stats: null } : row
    },
    // Datapoints belong to a document through its submissions (resource-api §28).
    async dependents(ctx, id) {
      const row = await ctx.db
        .selectFrom('datapoint')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('source_submission_id', 'in', ctx.db.selectFrom('source_submission').select('id').where('document_id', '=', id))
        .executeTakeFirstOrThrow()
      return { datapoint: Number(row.n) }
    },
    async beforeDelete(_ctx, row) {
      if (row.guid === 'data-entry') throw new ApiError(409, 'PROTECTED', 'The Data Entry document cannot be deleted')
    },
    async afterDelete(ctx, rows) {
      // The stored files go with their rows (a missing file is not an error).
      for (const row of rows) if (row.docfile) await unlink(join(ctx.config.DATA_DIR, row.docfile as string)).catch(() => {})
    },
  },
})
