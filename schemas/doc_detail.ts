import { col, table } from './columns.js'

export const DocDetail = table(
  'doc_detail',
  {
    id: col.id(),
    document_id: col.fk('source_doc'),
    doc_detail_type_id: col.fk('doc_detail_type'),
    doc_detail_value: col.string({ maxLength: 255 }),
  },
  { unique: [['document_id', 'doc_detail_type_id']] },
)
