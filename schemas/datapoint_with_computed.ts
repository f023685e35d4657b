import { col, table } from './columns.js'

export const DatapointWithComputed = table(
  'datapoint_with_computed',
  {
    id: col.id(),
    indicator_id: col.fk('indicator'),
    location_id: col.fk('location'),
    campaign_id: col.fk('campaign'),
    value: col.float(),
  },
  { unique: [['campaign_id', 'location_id', 'indicator_id']], references: 'declared only' },
)
