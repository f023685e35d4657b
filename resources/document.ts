import { unlink } from 'node:fs/promises'
import { sql } from 'kysely'
import { join } from 'node:path'
import { SourceDoc } from '../schemas/source_doc.js'
import { type Context, defineResource, type Row } from '../lib/api/resource.js'
import { ApiError, validationError } from '../lib/core/errors.js'
import { checkUpload, storeUpload, type Upload, type UploadInput } from '../lib/ingest/upload.js'
import { discard, spoolBase64, type Spooled } from '../lib/ingest/spool.js'
import { checkRequiredFields } from '../lib/api/body.js'
import { assertOwnDocument } from '../lib/engine/access.js'
import { Param } from '../lib/api/query.js'
import { dynamic } from '../lib/api/crud.js'
import { materializeClaims, releaseClaims, rowsStoredBy } from '../lib/ingest/claims.js'
import { lockCampaignsOf } from '../lib/engine/campaign-locks.js'
import { lockDocument } from '../lib/ingest/actions.js'

/** A multipart file part, written to a spool file as it arrived (plugins/dispatcher.ts). */
interface FilePart extends Partial<Spooled> {
  filename?: string
}

const NOT_AFTER_UPLOAD = ['docfile', 'file_type', 'file_header', 'guid', 'created_by_id', 'encoding']

const PARAMS = { document_id: Param.integer("the document's id (the original client's name for it)") }

/** An upload read and checked (in a worker thread, before the write's transaction), to be stored. */
class CheckedUpload {
  constructor(
    readonly input: UploadInput,
    readonly upload: Upload,
  ) {}
}

/** Reads and checks the file of an upload's body; `spooled` is where it lies. */
async function checkFile(ctx: Context, body: Row, spooled: Spooled, filename: string | undefined) {
  const input: UploadInput = {
    ...spooled,
    owner: `user ${ctx.user.id}`,
    title: String(body.doc_title ?? ''),
    fileType: String(body.file_type),
    dateOrder: body.date_order === undefined ? undefined : String(body.date_order),
    conflict: body.conflict === undefined ? undefined : String(body.conflict),
    encoding: body.encoding === undefined ? undefined : String(body.encoding),
    filename,
    maxUncompressed: ctx.config.XLSX_MAX_UNCOMPRESSED_BYTES,
  }
  return new CheckedUpload(input, await checkUpload(input))
}

export default defineResource({
  name: 'document',
  aliases: ['source_doc'],
  schema: SourceDoc,
  writers: 'users',
  query_fields: ['id', 'doc_title', 'file_type', 'date_order', 'conflict', 'docfile', 'file_header', 'guid', 'created_by_id', 'created_at', 'processed'],
  synthetic: {
    // Whether the file was read (its transform ran): a reader who cannot see its jobs still learns that.
    processed: { kind: 'boolean', expression: sql`(t.ingest_stats is not null)` },
  },
  required_fields_for_post: ['docfile', 'doc_title', 'file_type'],
  ordering: ['-created_at'],
  params: PARAMS,
  // A file above BODY_LIMIT_BYTES comes as a multipart part, streamed to disk: a JSON body is parsed
  // whole on the heap, so its base64 docfile is bounded by the body limit (413 saying so).
  multipart: true,
  // Read by the upload only (lib/ingest/upload.ts): the stored file is UTF-8 whatever it came in.
  write_only: {
    encoding: {
      schema: {
        type: 'string',
        enum: ['utf-8', 'utf8', 'windows-1252', 'cp1252', 'latin1', 'iso-8859-1'],
        description:
          "A CSV's text encoding: `utf-8` (default; a line that is not is 400 `INVALID_UTF8`, naming it) or `windows-1252` (also `cp1252`, `latin1`, `iso-8859-1`; any letter case), stored as UTF-8",
      },
      columns: async () => ({}),
    },
  },
  hooks: {
    async list(ctx, query) {
      const id = ctx.params.document_id
      return { query: id === undefined ? query : query.where('t.id', '=', id) }
    },
    // POST is the upload (ingestion §1): decode, parse, store the file and the row; never echo the file.
    // The file is on disk from the start (a spool file) and read by a worker thread (lib/ingest/parse.ts)
    // before the write's transaction opens: the reading takes seconds, and no database.
    async prepareCreate(ctx, body) {
      const part = body.docfile as FilePart | string | undefined
      // Multipart: doc_title defaults to the file part's name.
      if (body.doc_title === undefined && part && typeof part === 'object') body = { ...body, doc_title: part.filename }
      checkRequiredFields(ctx.resource, body)
      for (const field of ['doc_title', 'file_type', 'date_order', 'conflict', 'encoding'])
        if (body[field] !== undefined && typeof body[field] !== 'string') throw validationError(field, 'must be a string')
      if (part === undefined || part === null || (typeof part !== 'string' && typeof part.path !== 'string'))
        throw validationError('docfile', 'must be base64 text or a file part')
      const { MAX_UPLOAD_BYTES, DATA_DIR } = ctx.config
      const spooled = typeof part === 'string' ? await spoolBase64(DATA_DIR, part, MAX_UPLOAD_BYTES) : (part as Spooled)
      // Files are moved into place when stored; what is left (a failed write) goes.
      const release = async () => {
        if (checked?.upload.utf8Path) await discard(checked.upload.utf8Path)
        await discard(spooled.path)
      }
      let checked: CheckedUpload | undefined
      try {
        checked = await checkFile(ctx, body, spooled, typeof part === 'string' ? undefined : part.filename)
      } catch (error) {
        await release()
        throw error
      }
      return { body: { ...body, docfile: checked }, release }
    },
    async create(ctx, body) {
      const checked = body.docfile
      if (!(checked instanceof CheckedUpload)) throw validationError('docfile', 'must be base64 text or a file part')
      return storeUpload(ctx.db, ctx.config.DATA_DIR, checked.input, checked.upload, ctx.user.id)
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
    async beforeDelete(ctx, row) {
      if (row.guid === 'data-entry') throw new ApiError(409, 'PROTECTED', 'The Data Entry document cannot be deleted')
      // What it holds is read from the rows (lib/ingest/claims.ts): the keys it holds by claim become
      // its rows (dependents, as its own are), those newer documents hold of its rows theirs. Its rows'
      // campaigns have no other writer meanwhile (lib/engine/campaign-locks.ts), and no step of its own
      // runs (one that has already written would wait for the campaigns this deletion holds).
      await lockDocument(dynamic(ctx), row.id as number)
      await lockCampaignsOf(dynamic(ctx), rowsStoredBy(sql.lit(Math.trunc(row.id as number))))
      await releaseClaims(dynamic(ctx), row.id as number)
      await materializeClaims(dynamic(ctx), rowsStoredBy(sql.lit(Math.trunc(row.id as number))))
    },
    async afterDelete(ctx, rows) {
      // The stored files go with their rows (a missing file is not an error).
      for (const row of rows) if (row.docfile) await unlink(join(ctx.config.DATA_DIR, row.docfile as string)).catch(() => {})
    },
  },
})
