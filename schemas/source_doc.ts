import { col, table } from './columns.js'

export const CONFLICT_POLICIES = ['last', 'first', 'reject'] as const

export const SourceDoc = table('source_doc', {
  id: col.id(),
  doc_title: col.string({ unique: true }),
  file_type: col.string({ maxLength: 10, enum: ['campaign', 'date'] }),
  date_order: col.string({ maxLength: 3, enum: ['MDY', 'DMY', 'YMD'], default: 'MDY' }),
  // Two different values for one cell inside the file: the later line's, the earlier's, or neither.
  conflict: col.string({ maxLength: 6, enum: CONFLICT_POLICIES, default: 'last' }),
  docfile: col.string({ maxLength: 255, nullable: true }),
  file_header: col.json({ nullable: true }),
  guid: col.string({ maxLength: 255 }),
  created_by_id: col.fk('auth_user', { nullable: true, onDelete: 'set null' }),
  ingest_stats: col.json({ nullable: true, readonly: true }),
  created_at: col.createdAt(),
})
