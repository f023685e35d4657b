import { col, table } from './columns.js'

const CHANGES = ['insert', 'update', 'delete'] as const
const VIAS = ['api', 'job', 'cli', 'demo', 'sql'] as const

/**
 * Every change of a raw value (sql/012), written by the database's triggers: append-only, readable by
 * everyone within their subtree, written by nobody through the API. The ids are plain integers: the
 * history outlives the rows it names.
 */
export const DatapointHistory = table('datapoint_history', {
  id: col.id(),
  change: col.string({ maxLength: 6, enum: CHANGES }),
  datapoint_id: col.integer(),
  unique_index: col.string({ maxLength: 255 }),
  location_id: col.integer(),
  indicator_id: col.integer(),
  campaign_id: col.integer({ nullable: true }),
  data_date: col.date({ nullable: true }),
  value_before: col.float({ nullable: true }),
  value_after: col.float({ nullable: true }),
  /** The document of the value written (insert, update) or removed (delete); the Data Entry document for typed values. */
  document_id: col.integer({ nullable: true }),
  source_submission_id: col.integer({ nullable: true }),
  source_submission_id_before: col.integer({ nullable: true }),
  precedence_at_before: col.datetime({ nullable: true }),
  via: col.string({ maxLength: 8, enum: VIAS }),
  user_id: col.integer({ nullable: true }),
  job_id: col.integer({ nullable: true }),
  request_id: col.string({ maxLength: 255, nullable: true }),
  /** Set on the changes a revert made: the document it reverted. */
  reverted_document_id: col.integer({ nullable: true }),
  changed_at: col.createdAt(),
})
