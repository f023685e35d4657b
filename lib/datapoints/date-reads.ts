// date_datapoint's reads (ingestion §8.2, §8.3): the raw rows at the selected locations (flat, and
// discrete with explicit locations), or with group_by_time, sums over each target's subtree per bucket.
import { sql, type RawBuilder } from 'kysely'
import { badRequest } from '../core/errors.js'
import { dynamic, inList } from '../api/crud.js'
import { joinParams, Param } from '../api/query.js'
import type { Context, ListQuery, ReadMode, Row, WideExport } from '../api/resource.js'
import { FILTER_CAMPAIGN_PARAMS, locationSelection } from './location-selection.js'
import { statusOf, withStatus } from './status.js'
import { DATAPOINT_META, DATAPOINT_PARAMS, datapointMeta, indicatorSet, pivot } from './reads.js'

export const DATE_DATAPOINT_PARAMS = joinParams(DATAPOINT_PARAMS, FILTER_CAMPAIGN_PARAMS, {
  start_date: Param.date('inclusive lower bound on data_date'),
  end_date: Param.date('inclusive upper bound on data_date'),
  campaign_start: Param.date('alias of start_date'),
  campaign_end: Param.date('alias of end_date'),
  chart_type: Param.ignored(),
})
type DateContext = Context<typeof DATE_DATAPOINT_PARAMS>

export const DATE_DATAPOINT_META = {
  ...DATAPOINT_META,
  time_groupings: { type: 'array', items: { oneOf: [{ type: 'string' }, { type: 'integer' }] }, description: 'grouped: the buckets in the result; flat: []' },
}

/** Time buckets of the grouped mode (ingestion §8.3): year and all_time are integers, the others strings. */
const BUCKETS: Record<string, RawBuilder<unknown>> = {
  year: sql`extract(year from d.data_date)::int`,
  quarter: sql`to_char(d.data_date, 'YYYYQ')`,
  month: sql`to_char(d.data_date, 'YYYYMM')`,
  all_time: sql`1`,
}

/** The grouped mode's own parameter. */
const GROUPED_PARAMS = {
  group_by_time: Param.string('flat (default), year, quarter ("YYYYQ"), month ("YYYYMM") or all_time: sums over each target location\'s subtree'),
}
type GroupedParams = typeof DATE_DATAPOINT_PARAMS & typeof GROUPED_PARAMS

type Mode = { kind: 'flat' | 'discrete' } | { kind: 'grouped'; bucket: RawBuilder<unknown> }

function modeOf(ctx: Context<GroupedParams>): Mode {
  const query = ctx.params
  const grouping = query.group_by_time
  if (grouping === undefined || grouping === 'flat') return { kind: 'flat' }
  if (!Object.hasOwn(BUCKETS, grouping)) {
    throw badRequest('INVALID_GROUPING', `Invalid group_by_time: ${JSON.stringify(grouping)} (expected flat, year, quarter, month or all_time)`)
  }
  // With explicit locations the seed returns exactly those, raw, whatever the grouping says.
  return query.location_id__in !== undefined ? { kind: 'discrete' } : { kind: 'grouped', bucket: BUCKETS[grouping] }
}

/** Base rows (§8.2): indicator ∈ I, start_date ≤ data_date ≤ end_date. */
function baseRows(ctx: DateContext, query: ListQuery, indicators: number[]): ListQuery {
  query = query.where(inList('t.indicator_id', indicators))
  const { params } = ctx
  const start = params.start_date ?? params.campaign_start
  const end = params.end_date ?? params.campaign_end
  if (start) query = query.where('t.data_date', '>=', start)
  if (end) query = query.where('t.data_date', '<=', end)
  return query
}

/** Flat and discrete modes: raw rows at the selected locations. */
async function rawRows(ctx: DateContext, query: ListQuery) {
  const indicators = indicatorSet(ctx)
  const locations = await locationSelection(ctx)
  query = baseRows(ctx, query, indicators)
  if (locations.sql) query = query.where(sql<boolean>`t.location_id in (${locations.sql})`)
  return { query, indicators, locations }
}

/** The flat and discrete list read (a `list` hook): the raw rows and the meta extras, the selected ids read while the main statement runs. */
export async function rawSelection(ctx: DateContext, query: ListQuery) {
  const { query: rows, indicators, locations } = await rawRows(ctx, query)
  const meta = async () => datapointMeta(ctx, { time_groupings: [], location_ids: await locations.idsJson(), indicator_ids: indicators })
  return { query: rows, meta }
}

/** Grouped-mode targets T as a subquery of `id`s: the location selection, the requester's top level, or every root. */
async function targetsOf(ctx: DateContext): Promise<RawBuilder<unknown>> {
  if (ctx.params.location_id !== undefined) return (await locationSelection(ctx)).sql!
  if (ctx.user.restricted) return sql`select ${ctx.user.top_lvl_location_id}::int4 as id`
  return sql`select id from location where parent_location_id is null`
}

/**
 * Grouped mode: for each (indicator, target, bucket), the SUM of the finite values at the target and
 * every descendant, the targets being the ids of `targets`. The base rows are already limited to the
 * requester's subtree, so the sums are too. The fixed part is a template, not builder calls: building
 * and compiling it with Kysely's builder cost ~0.1 ms of CPU per read (bench/README.md, "Datapoint reads").
 */
function groupedSums(ctx: DateContext, filtered: ListQuery, bucket: RawBuilder<unknown>, targets: RawBuilder<unknown>) {
  const rows = baseRows(ctx, filtered, indicatorSet(ctx))
    .where(sql<boolean>`t.value is not null and t.value not in ('NaN'::float8, 'Infinity'::float8, '-Infinity'::float8)`)
    .select(['t.indicator_id', 't.location_id', 't.data_date', 't.value'])
  return sql<Row>`select d.indicator_id, lt.parent_location_id as location_id, ${bucket} as time_grouping, sum(d.value) as value
    from (${rows}) d join location_tree lt on lt.location_id = d.location_id
    where lt.parent_location_id in (${targets})
    group by d.indicator_id, lt.parent_location_id, 3`
}

/**
 * One page of the grouped rows and the targets for meta, in ONE statement: the targets are computed
 * once (a materialized CTE) for both, and the read costs one round trip (bench/README.md).
 */
async function groupedPage(ctx: DateContext, filtered: ListQuery, bucket: RawBuilder<unknown>, page: { limit: number; offset: number }) {
  const targetSet = await targetsOf(ctx)
  const withTargets = async <R>(query: RawBuilder<unknown>) => (await sql<R>`with targets as materialized (${targetSet}) ${query}`.execute(ctx.db)).rows
  const sums = groupedSums(ctx, filtered, bucket, sql`select id from targets`)
  const status = withStatus(ctx) ? sql`, ${statusOf(sql`g.indicator_id`, sql`g.value`, sql`g.location_id`)} as status` : sql``
  const pageQuery = sql`select *${status}, count(*) over () as __total from (${sums}) g
    order by time_grouping, location_id, indicator_id limit ${page.limit} offset ${page.offset}`
  // One line per page row, each carrying the targets; one line of nulls and the targets when the page is empty.
  const lines = await withTargets<Row>(
    sql`select page.*, meta.__targets
      from (select json_agg(distinct id order by id) as __targets from targets where id is not null) meta
      left join (${pageQuery}) page on true`,
  )
  const targets = (lines[0]?.__targets as number[] | null) ?? []
  const rows = lines.filter((line) => line.__total !== null)
  let total = rows.length ? Number(rows[0].__total) : 0
  for (const row of rows) {
    delete row.__total
    delete row.__targets
  }
  let buckets: unknown[]
  if (page.offset === 0 && rows.length === total) {
    // The whole result is on this page (the usual case): its buckets, in the order the rows came.
    buckets = [...new Set(rows.map((r) => r.time_grouping))]
  } else {
    // A partial page: the buckets (and, past the last page, the count) need the whole result.
    const found = await withTargets<{ time_grouping: unknown; n: number }>(
      sql`select time_grouping, count(*) as n from (${sums}) g group by time_grouping order by time_grouping`,
    )
    buckets = found.map((r) => r.time_grouping)
    total = found.reduce((sum, r) => sum + Number(r.n), 0)
  }
  const meta = datapointMeta(ctx, { time_groupings: buckets, location_ids: targets, indicator_ids: indicatorSet(ctx) })
  return { rows, total, meta, fields: ['indicator_id', 'location_id', 'time_grouping', 'value', ...(withStatus(ctx) ? ['status'] : [])] }
}

/** group_by_time=year|quarter|month|all_time: sums over each target location's subtree per bucket. */
export const grouped: ReadMode<GroupedParams> = {
  when: (ctx) => modeOf(ctx).kind === 'grouped',
  params: GROUPED_PARAMS,
  rowSchema: {
    type: 'object',
    properties: {
      indicator_id: { type: 'integer' },
      location_id: { type: 'integer' },
      time_grouping: {
        oneOf: [
          { type: 'integer', description: 'year (2016) or all_time (1)' },
          { type: 'string', description: 'quarter ("20161") or month ("201601")' },
        ],
      },
      value: { type: 'number' },
      status: { type: 'string', nullable: true, description: 'with with_status=1' },
    },
    required: ['indicator_id', 'location_id', 'time_grouping', 'value'],
    description: 'group_by_time=year|quarter|month|all_time',
  },
  read: (ctx, page, filtered) => groupedPage(ctx, filtered, bucketOf(ctx), page),
  async wide(ctx, filtered) {
    const sums = groupedSums(ctx, filtered, bucketOf(ctx), sql`select id from (${await targetsOf(ctx)}) s`)
    return pivot(ctx, dynamic(ctx).selectFrom(sql`(${sums})`.as('s')).selectAll(), indicatorSet(ctx), { column: 'time_grouping' })
  },
}

/** The grouped mode's bucket expression. */
function bucketOf(ctx: Context<GroupedParams>): RawBuilder<unknown> {
  const mode = modeOf(ctx)
  if (mode.kind !== 'grouped') throw new Error('not the grouped mode')
  return mode.bucket
}

/** The flat and discrete modes' wide export (the grouped mode has its own). */
export async function rawWide(ctx: DateContext, filtered: ListQuery): Promise<WideExport> {
  const { query, indicators } = await rawRows(ctx, filtered)
  const long = query.select(['t.location_id', 't.indicator_id', 't.data_date', 't.value']).orderBy('t.id')
  return pivot(ctx, long, indicators, { column: 'data_date' })
}
