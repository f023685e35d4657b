import { sql } from 'kysely'
import { DatapointWithComputed } from '../schemas/datapoint_with_computed.js'
import { defineResource, type ReadMode, type Context, type ListQuery, type Row } from '../lib/api/resource.js'
import { locationSelection, assertLocationPermitted } from '../lib/api/location-selection.js'
import { integerList } from '../lib/api/params.js'
import { ApiError, validationError } from '../lib/core/errors.js'
import { checkRequiredFields, coerceBody } from '../lib/api/body.js'
import { dynamic, withMeta } from '../lib/api/crud.js'
import { DATAPOINT_META, DATAPOINT_PARAMS, datapointMeta, dateParam, IGNORED, indicatorSet, inList, pivot } from '../lib/api/datapoint-reads.js'
import { campaignKey, enterCampaignValue } from '../lib/engine/data-entry.js'
import { recomputeCampaign } from '../lib/engine/recompute.js'

/** C (ingestion §8.1): campaign__in, else campaigns starting within [campaign_start, campaign_end]. */
async function campaignSet(ctx: Context): Promise<number[]> {
  if (ctx.query.has('campaign__in')) return [...new Set(integerList(ctx, 'campaign__in'))].sort((a, b) => a - b)
  const rows = await ctx.db
    .selectFrom('campaign')
    .select('id')
    .where('start_date', '>=', dateParam(ctx, ['campaign_start', 'start_date'], '2000-01-01')!)
    .where('start_date', '<=', dateParam(ctx, ['campaign_end', 'end_date'], '2070-01-01')!)
    .orderBy('id')
    .execute()
  return rows.map((r) => r.id)
}

/** I × C × S of the request (ingestion §8.1): the precomputed rows, nothing aggregated now. */
async function selected(ctx: Context, query: ListQuery) {
  const indicators = indicatorSet(ctx)
  const campaigns = await campaignSet(ctx)
  const locations = await locationSelection(ctx, campaigns)
  query = query.where(inList('t.indicator_id', indicators)).where(inList('t.campaign_id', campaigns))
  if (locations.sql) query = query.where(sql<boolean>`t.location_id in (${locations.sql})`)
  return { query, indicators, campaigns, locations }
}

/** The rows and the meta extras; meta.location_ids is read while the main statement runs, as JSON text. */
async function select(ctx: Context, query: ListQuery) {
  const { query: rows, indicators, campaigns, locations } = await selected(ctx, query)
  const meta = async () => datapointMeta(ctx, { location_ids: await locations.idsJson(), indicator_ids: indicators, campaign_ids: campaigns })
  return { query: rows, meta }
}

const FIELDS = ['id', 'indicator_id', 'campaign_id', 'location_id', 'value'] as const

/**
 * Densification (chart_type=ColumnChart): the Cartesian product of the location, indicator and
 * campaign ids present in the rows, missing combinations as null rows; paginated after densifying.
 */
async function densified(ctx: Context, rows: ListQuery, page: { limit: number; offset: number; order: Array<{ field: string; desc: boolean }> }) {
  const r = rows.select(['t.id', 't.indicator_id', 't.campaign_id', 't.location_id', 't.value'])
  const dense = dynamic(ctx)
    .with('r', () => r)
    .selectFrom(sql`(select distinct location_id from r)`.as('l'))
    .crossJoin(sql`(select distinct indicator_id from r)`.as('i'))
    .crossJoin(sql`(select distinct campaign_id from r)`.as('c'))
    .leftJoin('r', (join) =>
      join.onRef('r.location_id', '=', 'l.location_id').onRef('r.indicator_id', '=', 'i.indicator_id').onRef('r.campaign_id', '=', 'c.campaign_id'),
    )
    .select(['r.id', 'i.indicator_id', 'c.campaign_id', 'l.location_id', 'r.value', sql<number>`count(*) over ()`.as('__total')])
  const column = (field: string) => (field === 'id' || field === 'value' ? `r.${field}` : `${field.slice(0, 1)}.${field}`)
  // Without order_by: (location, indicator, campaign). The dispatcher's trailing `id` tie-breaker is
  // not needed here: the three ids identify a dense row.
  const explicit = ctx.query.has('order_by') ? page.order.filter((o) => (FIELDS as readonly string[]).includes(o.field)) : []
  let query = dense
  for (const { field, desc } of explicit) query = query.orderBy(column(field), desc ? 'desc' : 'asc')
  query = query.orderBy('l.location_id').orderBy('i.indicator_id').orderBy('c.campaign_id')
  const result = (await query.limit(page.limit).offset(page.offset).execute()) as Row[]
  const total = result.length ? Number(result[0].__total) : 0
  for (const row of result) delete row.__total
  return { rows: result, total }
}

/** chart_type=ColumnChart: every location × indicator × campaign, a combination without a value as a row without id and value. */
const columnChart: ReadMode = {
  when: (ctx) => ctx.query.last('chart_type') === 'ColumnChart',
  params: { chart_type: { type: 'string', help: 'ColumnChart: add null rows for missing (location, indicator, campaign) combinations' } },
  rowSchema: {
    type: 'object',
    properties: {
      id: { type: 'integer', nullable: true },
      indicator_id: { type: 'integer' },
      campaign_id: { type: 'integer' },
      location_id: { type: 'integer' },
      value: { type: 'number', nullable: true },
    },
    required: ['id', 'indicator_id', 'campaign_id', 'location_id', 'value'],
    description: 'chart_type=ColumnChart: a location × indicator × campaign without a value',
  },
  async read(ctx, page, filtered) {
    const { query, meta } = await select(ctx, filtered)
    const [dense, extras] = await withMeta(densified(ctx, query, page), meta)
    return { ...dense, meta: extras }
  },
}

/** The raw datapoint behind a computed row, if there is one (from an upload or a data entry). */
const rawOf = (ctx: Context, row: Row) => ctx.db.selectFrom('datapoint').select('id').where('unique_index', '=', campaignKey(row)).executeTakeFirst()

export default defineResource({
  name: 'campaign_datapoint',
  schema: DatapointWithComputed,
  writers: 'users',
  query_fields: [...FIELDS],
  filtering: ['id', 'indicator_id', 'campaign_id', 'value'],
  GET_params_required: ['indicator__in'],
  required_fields_for_post: ['campaign_id', 'indicator_id', 'location_id', 'value'],
  location_column: 'location_id',
  meta_fields: { ...DATAPOINT_META, campaign_ids: { type: 'array', items: { type: 'integer' }, description: 'the campaigns read, ascending' } },
  modes: [columnChart],
  params: {
    ...DATAPOINT_PARAMS,
    campaign_start: { type: 'date', help: 'without campaign__in: campaigns starting on or after (default 2000-01-01)' },
    campaign_end: { type: 'date', help: 'without campaign__in: campaigns starting on or before (default 2070-01-01)' },
    start_date: { type: 'date', help: 'alias of campaign_start (the original front-end sends it)' },
    end_date: { type: 'date', help: 'alias of campaign_end (the original front-end sends it)' },
    group_by_time: IGNORED,
  },
  hooks: {
    list: select,
    async wide(ctx, filtered) {
      const { query, indicators } = await selected(ctx, filtered)
      const long = query.select(['t.location_id', 't.indicator_id', 't.campaign_id', 't.value']).orderBy('t.id')
      return pivot(ctx, long, indicators, { column: 'campaign_id', named: { table: 'campaign', as: 'campaign', orderBy: 'start_date' } })
    },

    // Data entry (ingestion §9.1): the value goes into the raw table under the Data Entry submission,
    // then the campaign is recomputed, so it survives the next agg_refresh and wins as raw values do.
    async create(ctx, body, encoding) {
      checkRequiredFields(ctx.resource, body)
      const entry = coerceBody(ctx.resource, body, encoding) as { indicator_id: number; location_id: number; campaign_id: number; value: number }
      await assertLocationPermitted(ctx, entry.location_id)
      if (await rawOf(ctx, entry)) {
        throw new ApiError(
          409,
          'UNIQUE_VIOLATION',
          `key: "location_id, indicator_id, campaign_id" with value: "${entry.location_id}, ${entry.indicator_id}, ${entry.campaign_id}" already exists`,
        )
      }
      await enterCampaignValue(dynamic(ctx), entry)
      await recomputeCampaign(dynamic(ctx), entry.campaign_id)
      const row = await ctx.db
        .selectFrom('datapoint_with_computed')
        .select('id')
        .where('location_id', '=', entry.location_id)
        .where('indicator_id', '=', entry.indicator_id)
        .where('campaign_id', '=', entry.campaign_id)
        .executeTakeFirstOrThrow()
      return row.id
    },
    async update(ctx, existing, body, encoding) {
      // Only the value may change; the key fields may be echoed back unchanged (GET → edit → PATCH).
      const values = coerceBody({ ...ctx.resource, writable: ['value'] }, body, encoding, existing)
      if (!('value' in values)) return
      if (values.value === null) throw validationError('value', 'may not be null')
      const { indicator_id, location_id, campaign_id } = existing as { indicator_id: number; location_id: number; campaign_id: number }
      await enterCampaignValue(dynamic(ctx), { indicator_id, location_id, campaign_id, value: values.value as number })
      await recomputeCampaign(dynamic(ctx), existing.campaign_id as number)
    },
    async remove(ctx, existing) {
      const raw = await rawOf(ctx, existing)
      if (!raw) {
        throw new ApiError(409, 'NOT_RAW', `campaign_datapoint ${existing.id} is aggregated or calculated: delete the values it is computed from`)
      }
      await ctx.db.deleteFrom('datapoint').where('id', '=', raw.id).execute()
      await recomputeCampaign(dynamic(ctx), existing.campaign_id as number)
    },
  },
})
