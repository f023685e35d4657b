import { sql } from 'kysely'
import { DatapointWithComputed } from '../schemas/datapoint_with_computed.js'
import { defineResource, type Context } from '../lib/resource.js'
import { integerList, LOCATION_PARAMS, selectLocations } from '../lib/location-selection.js'
import { invalidValue } from '../lib/errors.js'
import { parseDate } from '../lib/values.js'

const IGNORED = { type: 'string' as const, help: 'accepted and ignored (front-end compatibility)' }

/** C (ingestion §8.1): campaign__in, else campaigns starting within [campaign_start, campaign_end]. */
async function campaignSet(ctx: Context): Promise<number[]> {
  if (ctx.query.has('campaign__in')) return [...new Set(integerList(ctx, 'campaign__in'))].sort((a, b) => a - b)
  const bound = (name: string, fallback: string) => {
    const text = ctx.query.last(name)
    if (text === undefined || text === '') return fallback
    if (!parseDate(text)) throw invalidValue(name, text, 'date YYYY-MM-DD')
    return text
  }
  const rows = await ctx.db
    .selectFrom('campaign')
    .select('id')
    .where('start_date', '>=', bound('campaign_start', '2000-01-01'))
    .where('start_date', '<=', bound('campaign_end', '2070-01-01'))
    .orderBy('id')
    .execute()
  return rows.map((r) => r.id)
}

export default defineResource({
  name: 'campaign_datapoint',
  schema: DatapointWithComputed,
  query_fields: ['id', 'indicator_id', 'campaign_id', 'location_id', 'value'],
  filtering: ['id', 'indicator_id', 'campaign_id', 'value'],
  GET_params_required: ['indicator__in'],
  location_column: 'location_id',
  methods: { list: ['GET'], detail: ['GET'] },
  params: {
    indicator__in: { type: 'integer_list', help: 'required: indicator ids' },
    campaign_start: { type: 'date', help: 'without campaign__in: campaigns starting on or after (default 2000-01-01)' },
    campaign_end: { type: 'date', help: 'without campaign__in: campaigns starting on or before (default 2070-01-01)' },
    ...LOCATION_PARAMS,
    chart_uuid: { type: 'string', help: 'echoed as meta.chart_uuid' },
    chart_type: IGNORED,
    group_by_time: IGNORED,
    cumulative: IGNORED,
    show_missing_data: IGNORED,
    source_name: IGNORED,
  },
  hooks: {
    // Reads the precomputed values of I × C × S (ingestion §8.1); nothing is aggregated at request time.
    async list(ctx, query) {
      const indicators = [...new Set(integerList(ctx, 'indicator__in'))]
      const campaigns = await campaignSet(ctx)
      const locations = await selectLocations(ctx, campaigns)
      const inList = (column: string, ids: number[]) => (ids.length ? sql<boolean>`${sql.ref(column)} in (${sql.join(ids)})` : sql<boolean>`false`)
      query = query.where(inList('t.indicator_id', indicators)).where(inList('t.campaign_id', campaigns))
      if (locations !== null) query = query.where(inList('t.location_id', locations))
      const chartUuid = ctx.query.last('chart_uuid')
      return {
        query,
        meta: {
          ...(chartUuid !== undefined ? { chart_uuid: chartUuid } : {}),
          location_ids: locations ?? [],
          indicator_ids: indicators,
          campaign_ids: campaigns,
        },
      }
    },
  },
})
