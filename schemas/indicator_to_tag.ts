import { col, table } from './columns.js'

export const IndicatorToTag = table(
  'indicator_to_tag',
  {
    id: col.id(),
    indicator_id: col.fk('indicator'),
    indicator_tag_id: col.fk('indicator_tag'),
  },
  { unique: [['indicator_id', 'indicator_tag_id']] },
)
