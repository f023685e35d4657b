// campaign_datapoint's reads (ingestion §8.1): I × C × S of the precomputed rows, nothing aggregated at
// request time; with chart_type=ColumnChart, densified.
import { sql } from 'kysely'
import { dynamic, inList, withMeta } from '../api/crud.js'
import { joinParams, Param } from '../api/query.js'
import type { Context, ListQuery, ReadMode, Row, WideExport } from '../api/resource.js'
import { locationSelection } from './location-selection.js'
import { labelOf, withLabels } from './classes.js'
import { COVERAGE_PARAMS, coverageOf, withCoverage } from './coverage.js'
import { statusOf, withStatus } from './status.js'
import { DATAPOINT_META, DATAPOINT_PARAMS, datapointMeta, indicatorSet, pivot } from './reads.js'

// chart_type is the ColumnChart mode's (below).
export const CAMPAIGN_DATAPOINT_PARAMS = joinParams(
  DATAPOINT_PARAMS,
  {
    // The campaign set C, which filter_indicator looks in too (no filter_campaign__in here).
    campaign__in: Param.integers('the campaigns read (C), which filter_indicator looks in too; without it, those starting within campaign_start..campaign_end'),
    campaign_start: Param.date('without campaign__in: campaigns starting on or after (default 2000-01-01)'),
    campaign_end: Param.date('without campaign__in: campaigns starting on or before (default 2070-01-01)'),
    start_date: Param.date('alias of campaign_start (the original front-end sends it)'),
    end_date: Param.date('alias of campaign_end (the original front-end sends it)'),
    group_by_time: Param.ignored(),
  },
  COVERAGE_PARAMS,
)
type CampaignContext = Context<typeof CAMPAIGN_DATAPOINT_PARAMS>

export const CAMPAIGN_DATAPOINT_META = {
  ...DATAPOINT_META,
  campaign_ids: { type: 'array', items: { type: 'integer' }, description: 'the campaigns read, ascending' },
}

/** C (ingestion §8.1): campaign__in, else campaigns starting within [campaign_start, campaign_end]. */
export async function campaignSet(ctx: CampaignContext): Promise<number[]> {
  const query = ctx.params
  if (query.campaign__in !== undefined) return [...new Set(query.campaign__in)].sort((a, b) => a - b)
  const rows = await ctx.db
    .selectFrom('campaign')
    .select('id')
    .where('start_date', '>=', query.campaign_start ?? query.start_date ?? '2000-01-01')
    .where('start_date', '<=', query.campaign_end ?? query.end_date ?? '2070-01-01')
    .orderBy('id')
    .execute()
  return rows.map((r) => r.id)
}

/** I × C × S of the request (ingestion §8.1): the precomputed rows, nothing aggregated now. */
async function selected(ctx: CampaignContext, query: ListQuery) {
  const indicators = indicatorSet(ctx)
  const campaigns = await campaignSet(ctx)
  const locations = await locationSelection(ctx, campaigns)
  query = query.where(inList('t.indicator_id', indicators)).where(inList('t.campaign_id', campaigns))
  if (locations.sql) query = query.where(sql<boolean>`t.location_id in (${locations.sql})`)
  return { query, indicators, campaigns, locations }
}

/** The list read (a `list` hook): the rows, and the meta extras, meta.location_ids read while the main statement runs, as JSON text. */
export async function selectCampaignRows(ctx: CampaignContext, query: ListQuery) {
  const { query: rows, indicators, campaigns, locations } = await selected(ctx, query)
  const meta = async () => datapointMeta(ctx, { location_ids: await locations.idsJson(), indicator_ids: indicators, campaign_ids: campaigns })
  return { query: rows, meta }
}

/** The wide export: one line per location and campaign, one column per indicator. */
export async function campaignWide(ctx: CampaignContext, filtered: ListQuery): Promise<WideExport> {
  const { query, indicators } = await selected(ctx, filtered)
  const long = query.select(['t.location_id', 't.indicator_id', 't.campaign_id', 't.value']).orderBy('t.id')
  return pivot(ctx, long, indicators, { column: 'campaign_id', named: { table: 'campaign', as: 'campaign', orderBy: 'start_date' } })
}

const FIELDS = ['id', 'indicator_id', 'campaign_id', 'location_id', 'value'] as const
export const CAMPAIGN_DATAPOINT_FIELDS = [...FIELDS]

/**
 * Densification (chart_type=ColumnChart): the Cartesian product of the location, indicator and
 * campaign ids present in the rows, missing combinations as null rows; paginated after densifying.
 */
async function densified(ctx: CampaignContext, rows: ListQuery, page: { limit: number; offset: number; order: Array<{ field: string; desc: boolean }> }) {
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
    .$if(withStatus(ctx), (q) => q.select(statusOf(sql`i.indicator_id`, sql`r.value`, sql`l.location_id`).as('status')))
    .$if(withLabels(ctx), (q) => q.select(labelOf(sql`i.indicator_id`, sql`r.value`).as('label')))
    .$if(withCoverage(ctx), (q) =>
      q.select(sql`case when r.value is null then null else ${coverageOf(sql`i.indicator_id`, sql`l.location_id`, sql`c.campaign_id`)} end`.as('coverage')),
    )
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

const COLUMN_CHART_PARAMS = { chart_type: Param.string('ColumnChart: add null rows for missing (location, indicator, campaign) combinations') }

/** chart_type=ColumnChart: every location × indicator × campaign, a combination without a value as a row without id and value. */
export const columnChart: ReadMode<typeof CAMPAIGN_DATAPOINT_PARAMS & typeof COLUMN_CHART_PARAMS> = {
  when: (ctx) => ctx.params.chart_type === 'ColumnChart',
  params: COLUMN_CHART_PARAMS,
  rowSchema: {
    type: 'object',
    properties: {
      id: { type: 'integer', nullable: true },
      indicator_id: { type: 'integer' },
      campaign_id: { type: 'integer' },
      location_id: { type: 'integer' },
      value: { type: 'number', nullable: true },
      status: { type: 'string', nullable: true, description: 'with with_status=1' },
      label: { type: 'string', nullable: true, description: 'with with_labels=1' },
      coverage: { type: 'object', nullable: true, description: 'with with_coverage=1: {reported, expected, below_threshold}' },
    },
    required: ['id', 'indicator_id', 'campaign_id', 'location_id', 'value'],
    description: 'chart_type=ColumnChart: a location × indicator × campaign without a value',
  },
  async read(ctx, page, filtered) {
    const { query, meta } = await selectCampaignRows(ctx, filtered)
    const [dense, extras] = await withMeta(densified(ctx, query, page), meta)
    return { ...dense, meta: extras }
  },
}
