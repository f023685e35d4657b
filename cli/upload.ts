// `upload <file> --type campaign|date [--map mapping.csv] [--date-order DMY] [--conflict reject]`: upload, transform, refresh
// and recompute in one transaction, in this process, then print the summary. The pipeline's progress is
// drawn on stderr (cli/progress-bar.ts).
import { readFile, stat } from 'node:fs/promises'
import { basename } from 'node:path'
import { parse } from 'csv-parse/sync'
import { sql, type Kysely } from 'kysely'
import type { DB } from '../schemas/index.js'
import type { Config } from '../lib/core/config.js'
import { checkUpload, storeUpload } from '../lib/ingest/upload.js'
import { ingest } from '../lib/ingest/actions.js'
import type { Document } from '../lib/ingest/transform.js'
import { progressBar } from './progress-bar.js'
import { attribute } from '../lib/data/attribution.js'

/** content_type,source_object_code,master_object_id lines: upserted, names recomputed. */
async function applyMappings(db: Kysely<DB>, text: Buffer, userId: number): Promise<number> {
  const rows = parse(text, { columns: true, skip_empty_lines: true, trim: true }) as Array<Record<string, string>>
  for (const row of rows) {
    await db
      .insertInto('source_object_map')
      .values({
        content_type: row.content_type,
        source_object_code: row.source_object_code,
        master_object_id: Number(row.master_object_id),
        mapped_by_id: userId,
      })
      .onConflict((oc) =>
        oc.columns(['content_type', 'source_object_code']).doUpdateSet({ master_object_id: Number(row.master_object_id), mapped_by_id: userId }),
      )
      .execute()
  }
  await sql`update source_object_map m set master_object_name = case m.content_type
      when 'indicator' then (select short_name from indicator where id = m.master_object_id)
      when 'location' then (select name from location where id = m.master_object_id)
      else (select name from campaign where id = m.master_object_id) end`.execute(db)
  return rows.length
}

export async function uploadCommand(
  db: Kysely<DB>,
  config: Config,
  file: string,
  options: { type?: string; map?: string; dateOrder?: string; conflict?: string; encoding?: string },
  print: (line: string) => void,
) {
  const input = {
    path: file,
    size: (await stat(file)).size,
    keep: true,
    owner: 'cli',
    title: basename(file),
    fileType: options.type ?? '',
    dateOrder: options.dateOrder,
    conflict: options.conflict,
    encoding: options.encoding,
    maxUncompressed: config.XLSX_MAX_UNCOMPRESSED_BYTES,
  }
  const upload = await checkUpload(input)
  const admin = await db.selectFrom('auth_user').select('id').where('is_superuser', '=', true).orderBy('id').executeTakeFirstOrThrow()
  const bar = progressBar()
  const stats = await db
    .transaction()
    .execute(async (trx) => {
      await attribute(trx, { via: 'cli', userId: admin.id })
      if (options.map) await applyMappings(trx, await readFile(options.map), admin.id)
      const id = await storeUpload(trx, config.DATA_DIR, input, upload, admin.id)
      const doc = (await trx.selectFrom('source_doc').selectAll().where('id', '=', id).executeTakeFirstOrThrow()) as unknown as Document
      const runner = { id: admin.id, username: 'admin', is_superuser: true, restricted: false, metadata_editor: true, top_lvl_location_id: null, key_id: 0 }
      const result = await ingest(trx, doc, runner, config.DATA_DIR, true, (stage, done, total, place) => bar.update({ stage, done, total, ...place }))
      return { document_id: id, ...result }
    })
    .finally(() => bar.stop())
  print(JSON.stringify(stats, null, 2))
}
