import { col, table } from './columns.js'

export const SourceSubmission = table(
  'source_submission',
  {
    id: col.id(),
    document_id: col.fk('source_doc'),
    instance_guid: col.string({ maxLength: 255 }),
    row_number: col.integer(),
    data_date: col.date({ nullable: true }),
    location_code: col.string({ maxLength: 1000, default: '' }),
    campaign_code: col.string({ maxLength: 1000, default: '' }),
    submission_json: col.json(),
    process_status: col.string({
      maxLength: 25,
      enum: ['TO_PROCESS', 'PROCESSED', 'MISSING_LOCATION', 'MISSING_CAMPAIGN', 'MISSING_DATE', 'LOCATION_FORBIDDEN'],
      default: 'TO_PROCESS',
    }),
    created_at: col.createdAt(),
  },
  { unique: [['document_id', 'instance_guid']] },
)
