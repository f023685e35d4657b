import { sql } from 'kysely'
import { Datapoint } from '../schemas/datapoint.js'
import { defineResource, type Context, type Row } from '../lib/api/resource.js'
import { STATUS_FIELD } from '../lib/datapoints/status.js'
import { LABEL_FIELD } from '../lib/datapoints/classes.js'
import { assertLocationPermitted } from '../lib/datapoints/location-selection.js'
import { ApiError } from '../lib/core/errors.js'
import { dynamic } from '../lib/api/crud.js'
import { DATE_DATAPOINT_META, DATE_DATAPOINT_PARAMS, grouped, rawSelection, rawWide } from '../lib/datapoints/date-reads.js'
import { dataEntrySubmission, dateKey } from '../lib/engine/data-entry.js'
import { lockCampaigns } from '../lib/engine/campaign-locks.js'
import { assertValueFits } from '../lib/engine/value-fit.js'

/** ingestion §9.2: a written row is a data entry: its key follows its fields, its source is the Data Entry submission. */
async function asDataEntry(ctx: Context, values: Row, existing?: Row): Promise<Row> {
  const row = { ...existing, ...values }
  if (values.location_id !== undefined) await assertLocationPermitted(ctx, row.location_id as number)
  if (typeof row.value === 'number' && typeof row.indicator_id === 'number') await assertValueFits(dynamic(ctx), row.indicator_id, row.value, 'date')
  // The date datapoints' one writer until commit, before the read it decides on (lib/engine/campaign-locks.ts).
  await lockCampaigns(dynamic(ctx), [null])
  const key = dateKey(row)
  const clash = await ctx.db.selectFrom('datapoint').select('id').where('unique_index', '=', key).executeTakeFirst()
  if (clash && clash.id !== existing?.id) {
    throw new ApiError(
      409,
      'UNIQUE_VIOLATION',
      `key: "location_id, indicator_id, data_date" with value: "${row.location_id}, ${row.indicator_id}, ${row.data_date}" already exists`,
    )
  }
  return {
    ...values,
    unique_index: key,
    source_submission_id: await dataEntrySubmission(dynamic(ctx)),
    precedence_at: sql`now()`,
  }
}

export default defineResource({
  name: 'date_datapoint',
  schema: Datapoint,
  writers: 'users',
  // Data entry from the field: a client resends what it could not confirm, and edits the version it read.
  retryable_writes: true,
  // Only date rows are ever read or written here; campaign rows belong to campaign_datapoint.
  scope: sql<boolean>`t.data_date is not null`,
  query_fields: ['id', 'indicator_id', 'location_id', 'data_date', 'value'],
  filtering: ['id', 'indicator_id', 'data_date', 'value'],
  detail_fields: ['id', 'indicator_id', 'location_id', 'campaign_id', 'data_date', 'value', 'source_submission_id', 'unique_index', 'created_at'],
  writable: ['indicator_id', 'location_id', 'data_date', 'value'],
  required_fields_for_post: ['indicator_id', 'location_id', 'data_date', 'value'],
  location_column: 'location_id',
  synthetic: { status: STATUS_FIELD, label: LABEL_FIELD },
  optional_fields: { status: 'with_status', label: 'with_labels' },
  meta_fields: DATE_DATAPOINT_META,
  modes: [grouped],
  params: DATE_DATAPOINT_PARAMS,
  hooks: {
    list: rawSelection,
    // The flat and discrete modes' export; the grouped mode has its own.
    wide: rawWide,
    beforeWrite: (ctx, values, existing) => asDataEntry(ctx, values, existing),
    beforeDelete: async (ctx) => lockCampaigns(dynamic(ctx), [null]),
  },
})
