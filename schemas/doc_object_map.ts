import { col, table } from './columns.js'

export const DocObjectMap = table(
  'doc_object_map',
  {
    id: col.id(),
    document_id: col.fk('source_doc'),
    source_object_map_id: col.fk('source_object_map'),
  },
  { unique: [['document_id', 'source_object_map_id']] },
)
