// `upload <file> --type campaign|date [--map mapping.csv] [--date-order DMY]`: upload, transform, refresh
// and recompute in one transaction, then print the summary. Stages are shown as a progress bar on
// stderr when the file is large enough to wait for.
import { readFile } from 'node:fs/promises'
import { basename } from 'node:path'
import { parse } from 'csv-parse/sync'
import { sql, type Kysely } from 'kysely'
import type { DB } from '../schemas/index.js'
import type { Config } from '../lib/core/config.js'
import { checkUpload, storeUpload } from '../lib/ingest/upload.js'
import { ingest } from '../lib/ingest/actions.js'
import type { Document } from '../lib/ingest/transform.js'

const LARGE = 1024 * 1024

function progress(enabled: boolean, total: number) {
  let step = 0
  const started = Date.now()
  return (label: string) => {
    step++
    if (!enabled) return
    const width = 20
    const filled = Math.round((width * step) / total)
    process.stderr.write(`[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${step}/${total} ${label} (${((Date.now() - started) / 1000).toFixed(1)} s)\n`)
  }
}

/** content_type,source_object_code,master_object_id lines: upserted, names recomputed. */
async function applyMappings(db: Kysely<DB>, text: Buffer, userId: number): Promise<number> {
  const rows = parse(text, { columns: true, skip_empty_lines: true, trim: true }) as Array<Record<string, string>>
  for (const row of rows) {
    await db
      .insertInto('source_object_map')
      .values({ content_type: row.content_type, source_object_code: row.source_object_code, master_object_id: Number(row.master_object_id), mapped_by_id: userId })
      .onConflict((oc) => oc.columns(['content_type', 'source_object_code']).doUpdateSet({ master_object_id: Number(row.master_object_id), mapped_by_id: userId }))
      .execute()
  }
  await sql`update source_object_map m set master_object_name = case m.content_type
      when 'indicator' then (select short_name from indicator where id = m.master_object_id)
      when 'location' then (select name from location where id = m.master_object_id)
      else (select name from campaign where id = m.master_object_id) end`.execute(db)
  return rows.length
}

export async function uploadCommand(db: Kysely<DB>, config: Config, file: string, options: { type?: string; map?: string; dateOrder?: string }, print: (line: string) => void) {
  const bytes = await readFile(file)
  const step = progress(bytes.length >= LARGE && process.stderr.isTTY !== false, options.map ? 4 : 3)
  const input = { bytes, title: basename(file), fileType: options.type ?? '', dateOrder: options.dateOrder, maxUncompressed: config.XLSX_MAX_UNCOMPRESSED_BYTES }
  const upload = await checkUpload(input)
  step('read and checked')
  const admin = await db.selectFrom('auth_user').select('id').where('is_superuser', '=', true).orderBy('id').executeTakeFirstOrThrow()
  const stats = await db.transaction().execute(async (trx) => {
    if (options.map) {
      const n = await applyMappings(trx, await readFile(options.map), admin.id)
      step(`${n} mapping(s) applied`)
    }
    const id = await storeUpload(trx, config.DATA_DIR, input, upload, admin.id)
    step(`stored as document ${id}`)
    const doc = (await trx.selectFrom('source_doc').selectAll().where('id', '=', id).executeTakeFirstOrThrow()) as unknown as Document
    const runner = { id: admin.id, username: 'admin', is_superuser: true, restricted: false, metadata_editor: true, top_lvl_location_id: null, key_id: 0 }
    const result = await ingest(trx, doc, runner, config.DATA_DIR, true)
    step('transformed, refreshed, recomputed')
    return { document_id: id, ...result }
  })
  print(JSON.stringify(stats, null, 2))
}
