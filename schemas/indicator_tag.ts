import { col, table } from './columns.js'

export const IndicatorTag = table('indicator_tag', {
  id: col.id(),
  tag_name: col.string({ maxLength: 255 }),
  parent_tag_id: col.fk('indicator_tag', { nullable: true }),
})
