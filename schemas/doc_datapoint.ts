import { col, table } from './columns.js'

export const DocDatapoint = table(
  'doc_datapoint',
  {
    id: col.id(),
    document_id: col.fk('source_doc'),
    source_submission_id: col.fk('source_submission'),
    column_name: col.string({ maxLength: 255 }),
    indicator_id: col.fk('indicator'),
    location_id: col.fk('location'),
    campaign_id: col.fk('campaign', { nullable: true }),
    data_date: col.date({ nullable: true }),
    value: col.float(),
  },
  { references: 'declared only' },
)
