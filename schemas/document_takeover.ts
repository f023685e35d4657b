import { col, table } from './columns.js'

/** A document holding keys by claim, and since when: its last sync (sql/029, lib/ingest/claims.ts). */
export const DocumentTakeover = table('document_takeover', {
  document_id: col.fk('source_doc', { onDelete: 'cascade', primaryKey: true, unique: true }),
  synced_at: col.datetime(),
})
