import { col, table } from './columns.js'

export const SourceObjectMap = table(
  'source_object_map',
  {
    id: col.id(),
    content_type: col.string({ maxLength: 20, enum: ['indicator', 'location', 'campaign'] }),
    source_object_code: col.string({ maxLength: 255 }),
    // -1 = unmapped; otherwise an id of the content_type's table (validated, not a foreign key).
    master_object_id: col.integer({ default: -1 }),
    master_object_name: col.string({ maxLength: 255, nullable: true, readonly: true }),
    mapped_by_id: col.fk('auth_user', { nullable: true, onDelete: 'set null' }),
  },
  { unique: [['content_type', 'source_object_code']] },
)
