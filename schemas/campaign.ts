import { col, table } from './columns.js'

export const Campaign = table(
  'campaign',
  {
    id: col.id(),
    name: col.string({ maxLength: 255 }),
    campaign_type_id: col.fk('campaign_type'),
    start_date: col.date(),
    end_date: col.date(),
    created_at: col.createdAt(),
  },
  { unique: [['campaign_type_id', 'start_date']] },
)
