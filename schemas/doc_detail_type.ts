import { col, table } from './columns.js'

export const DocDetailType = table('doc_detail_type', {
  id: col.id(),
  name: col.string({ maxLength: 255, unique: true }),
})
