import { sql } from 'kysely'
import { DatapointHistory } from '../schemas/datapoint_history.js'
import { defineResource } from '../lib/api/resource.js'
import { LOCATION_PARAMS, locationSelection } from '../lib/datapoints/location-selection.js'

const { location_id__in, location_id, location_depth, location_type } = LOCATION_PARAMS

/**
 * Every change of a raw value (sql/012), oldest first: read-only for everyone, inside their subtree.
 * `location_id` is the location selection's (alone: that location; with location_depth or
 * location_type: its descendants), not a plain filter.
 */
export default defineResource({
  name: 'datapoint_history',
  schema: DatapointHistory,
  methods: { list: ['GET'], detail: ['GET'] },
  writers: 'superusers',
  location_column: 'location_id',
  ordering: ['id'],
  filtering: [
    'id',
    'change',
    'datapoint_id',
    'unique_index',
    'indicator_id',
    'campaign_id',
    'data_date',
    'value_before',
    'value_after',
    'document_id',
    'via',
    'user_id',
    'job_id',
    'request_id',
    'reverted_document_id',
    'changed_at',
  ],
  params: { location_id__in, location_id, location_depth, location_type },
  description: 'Every change of a raw datapoint value: before and after, whose value, who, through what, when.',
  hooks: {
    async list(ctx, query) {
      const selection = await locationSelection(ctx)
      return { query: selection.sql ? query.where(sql<boolean>`t.location_id in (${selection.sql})`) : query }
    },
  },
})
