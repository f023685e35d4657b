import { DatapointWithComputed } from '../schemas/datapoint_with_computed.js'
import { defineResource, type Context, type Row } from '../lib/api/resource.js'
import { STATUS_FIELD } from '../lib/datapoints/status.js'
import { COVERAGE_FIELD } from '../lib/datapoints/coverage.js'
import { classCounts, LABEL_FIELD } from '../lib/datapoints/classes.js'
import { assertLocationPermitted } from '../lib/datapoints/location-selection.js'
import { ApiError, validationError } from '../lib/core/errors.js'
import { checkRequiredFields, coerceBody } from '../lib/api/body.js'
import { dynamic } from '../lib/api/crud.js'
import {
  CAMPAIGN_DATAPOINT_FIELDS,
  CAMPAIGN_DATAPOINT_META,
  CAMPAIGN_DATAPOINT_PARAMS,
  campaignSet,
  campaignWide,
  columnChart,
  selectCampaignRows,
} from '../lib/datapoints/campaign-reads.js'
import { campaignKey, enterCampaignValue, recomputeEntry } from '../lib/engine/data-entry.js'
import { assertValueFits } from '../lib/engine/value-fit.js'
import { lockCampaigns } from '../lib/engine/campaign-locks.js'
import { assertNotBlocked, entryCheck, findViolations, reported } from '../lib/engine/validation.js'
import { CAP } from '../lib/ingest/transform.js'
import { VALIDATION_SCHEMA } from './validation_result.js'

/** The raw datapoint behind a computed row, if there is one (from an upload or a data entry). */
const rawOf = (ctx: Context, row: Row) => ctx.db.selectFrom('datapoint').select('id').where('unique_index', '=', campaignKey(row)).executeTakeFirst()

/**
 * The violations at the entry's location and campaign, once recomputed (docs/decisions.md, "Validation
 * rules"): a block rule over its indicator refuses it (422, the transaction rolls back).
 */
async function validated(ctx: Context, entry: { location_id: number; campaign_id: number; indicator_id: number }) {
  const found = await findViolations(dynamic(ctx), { ...entryCheck(entry), limit: CAP })
  assertNotBlocked(found)
  return { validation: reported(found) }
}

export default defineResource({
  name: 'campaign_datapoint',
  schema: DatapointWithComputed,
  writers: 'users',
  // Data entry from the field: a client resends what it could not confirm, and edits the version it read.
  retryable_writes: true,
  query_fields: CAMPAIGN_DATAPOINT_FIELDS,
  filtering: ['id', 'indicator_id', 'campaign_id', 'value'],
  required_fields_for_post: ['campaign_id', 'indicator_id', 'location_id', 'value'],
  location_column: 'location_id',
  synthetic: { status: STATUS_FIELD, coverage: COVERAGE_FIELD, label: LABEL_FIELD },
  optional_fields: { status: 'with_status', coverage: 'with_coverage', label: 'with_labels' },
  meta_fields: CAMPAIGN_DATAPOINT_META,
  write_fields: { validation: VALIDATION_SCHEMA },
  modes: [classCounts(campaignSet), columnChart],
  params: CAMPAIGN_DATAPOINT_PARAMS,
  hooks: {
    list: selectCampaignRows,
    wide: campaignWide,

    // Data entry (ingestion §9.1): the value goes into the raw table under the Data Entry submission,
    // then the totals above it are recomputed, so it survives the next agg_refresh and wins as raw values do.
    async create(ctx, body, encoding) {
      checkRequiredFields(ctx.resource, body)
      const entry = coerceBody(ctx.resource, body, encoding) as { indicator_id: number; location_id: number; campaign_id: number; value: number }
      await assertLocationPermitted(ctx, entry.location_id)
      await assertValueFits(dynamic(ctx), entry.indicator_id, entry.value, 'campaign')
      // The campaign's one writer until commit, before the read it decides on (lib/engine/campaign-locks.ts).
      await lockCampaigns(dynamic(ctx), [entry.campaign_id])
      if (await rawOf(ctx, entry)) {
        throw new ApiError(
          409,
          'UNIQUE_VIOLATION',
          `key: "location_id, indicator_id, campaign_id" with value: "${entry.location_id}, ${entry.indicator_id}, ${entry.campaign_id}" already exists`,
        )
      }
      await enterCampaignValue(dynamic(ctx), entry)
      await recomputeEntry(dynamic(ctx), entry)
      const row = await ctx.db
        .selectFrom('datapoint_with_computed')
        .select('id')
        .where('location_id', '=', entry.location_id)
        .where('indicator_id', '=', entry.indicator_id)
        .where('campaign_id', '=', entry.campaign_id)
        .executeTakeFirstOrThrow()
      return { id: row.id, once: await validated(ctx, entry) }
    },
    async update(ctx, existing, body, encoding) {
      // Only the value may change; the key fields may be echoed back unchanged (GET → edit → PATCH).
      const values = coerceBody({ ...ctx.resource, writable: ['value'] }, body, encoding, existing)
      const key = existing as { indicator_id: number; location_id: number; campaign_id: number }
      if (!('value' in values)) return validated(ctx, key)
      if (values.value === null) throw validationError('value', 'may not be null')
      await assertValueFits(dynamic(ctx), key.indicator_id, values.value as number, 'campaign')
      await lockCampaigns(dynamic(ctx), [key.campaign_id])
      await enterCampaignValue(dynamic(ctx), { ...key, value: values.value as number })
      await recomputeEntry(dynamic(ctx), key)
      return validated(ctx, key)
    },
    async remove(ctx, existing) {
      await lockCampaigns(dynamic(ctx), [existing.campaign_id as number])
      const raw = await rawOf(ctx, existing)
      if (!raw) {
        throw new ApiError(409, 'NOT_RAW', `campaign_datapoint ${existing.id} is aggregated or calculated: delete the values it is computed from`)
      }
      await ctx.db.deleteFrom('datapoint').where('id', '=', raw.id).execute()
      await recomputeEntry(dynamic(ctx), existing as { campaign_id: number; location_id: number; indicator_id: number })
    },
  },
})
