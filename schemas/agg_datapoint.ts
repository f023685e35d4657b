import { col, table } from './columns.js'

export const AggDatapoint = table(
  'agg_datapoint',
  {
    id: col.id(),
    indicator_id: col.fk('indicator'),
    location_id: col.fk('location'),
    campaign_id: col.fk('campaign'),
    value: col.float(),
    is_raw: col.boolean(),
  },
  { unique: [['campaign_id', 'location_id', 'indicator_id']], references: 'declared only' },
)
