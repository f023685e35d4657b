import { col, table } from './columns.js'

/** Raw datapoints, from uploads and data entry (resource-api §27). */
export const Datapoint = table(
  'datapoint',
  {
    id: col.id(),
    indicator_id: col.fk('indicator'),
    location_id: col.fk('location'),
    campaign_id: col.fk('campaign', { nullable: true }),
    data_date: col.date({ nullable: true }),
    value: col.float({ nullable: true }),
    source_submission_id: col.fk('source_submission'),
    unique_index: col.string({ maxLength: 255, unique: true }),
    precedence_at: col.datetime(),
    created_at: col.createdAt(),
  },
  { references: 'by trigger' },
)
