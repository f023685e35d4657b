import { sql, type RawBuilder } from 'kysely'
import { Datapoint } from '../schemas/datapoint.js'
import { defineResource, type Context, type ListQuery, type ReadMode, type Row } from '../lib/api/resource.js'
import { locationSelection, assertLocationPermitted } from '../lib/api/location-selection.js'
import { ApiError, badRequest } from '../lib/core/errors.js'
import { dynamic } from '../lib/api/crud.js'
import { DATAPOINT_META, DATAPOINT_PARAMS, datapointMeta, dateParam, indicatorSet, inList, pivot } from '../lib/api/datapoint-reads.js'
import { dataEntrySubmission, dateKey } from '../lib/engine/data-entry.js'

/** Time buckets of the grouped mode (ingestion §8.3): year and all_time are integers, the others strings. */
const BUCKETS: Record<string, RawBuilder<unknown>> = {
  year: sql`extract(year from d.data_date)::int`,
  quarter: sql`to_char(d.data_date, 'YYYYQ')`,
  month: sql`to_char(d.data_date, 'YYYYMM')`,
  all_time: sql`1`,
}

type Mode = { kind: 'flat' | 'discrete' } | { kind: 'grouped'; bucket: RawBuilder<unknown> }

function modeOf(ctx: Context): Mode {
  const grouping = ctx.query.last('group_by_time')
  if (grouping === undefined || grouping === '' || grouping === 'flat') return { kind: 'flat' }
  if (!Object.hasOwn(BUCKETS, grouping)) {
    throw badRequest('INVALID_GROUPING', `Invalid group_by_time: ${JSON.stringify(grouping)} (expected flat, year, quarter, month or all_time)`)
  }
  // With explicit locations the seed returns exactly those, raw, whatever the grouping says.
  return ctx.query.has('location_id__in') ? { kind: 'discrete' } : { kind: 'grouped', bucket: BUCKETS[grouping] }
}

/** Base rows (§8.2): indicator ∈ I, start_date ≤ data_date ≤ end_date. */
function baseRows(ctx: Context, query: ListQuery, indicators: number[]): ListQuery {
  query = query.where(inList('t.indicator_id', indicators))
  const start = dateParam(ctx, ['start_date', 'campaign_start'])
  const end = dateParam(ctx, ['end_date', 'campaign_end'])
  if (start) query = query.where('t.data_date', '>=', start)
  if (end) query = query.where('t.data_date', '<=', end)
  return query
}

/** Flat and discrete modes: raw rows at the selected locations. */
async function rawRows(ctx: Context, query: ListQuery) {
  const indicators = indicatorSet(ctx)
  const locations = await locationSelection(ctx)
  query = baseRows(ctx, query, indicators)
  if (locations.sql) query = query.where(sql<boolean>`t.location_id in (${locations.sql})`)
  return { query, indicators, locations }
}

/** The raw rows and the meta extras, the selected ids read while the main statement runs. */
async function rawSelection(ctx: Context, query: ListQuery) {
  const { query: rows, indicators, locations } = await rawRows(ctx, query)
  const meta = async () => datapointMeta(ctx, { time_groupings: [], location_ids: await locations.idsJson(), indicator_ids: indicators })
  return { query: rows, meta }
}

/** Grouped-mode targets T as a subquery of `id`s: the location selection, the requester's top level, or every root. */
async function targetsOf(ctx: Context): Promise<RawBuilder<unknown>> {
  if (ctx.query.has('location_id')) return (await locationSelection(ctx)).sql!
  if (ctx.user.restricted) return sql`select ${ctx.user.top_lvl_location_id}::int4 as id`
  return sql`select id from location where parent_location_id is null`
}

/**
 * Grouped mode: for each (indicator, target, bucket), the SUM of the finite values at the target and
 * every descendant, the targets being the ids of `targets`. The base rows are already limited to the
 * requester's subtree, so the sums are too. The fixed part is a template, not builder calls: building
 * and compiling it with Kysely's builder cost ~0.1 ms of CPU per read (bench/README.md, "Datapoint reads").
 */
function groupedSums(ctx: Context, filtered: ListQuery, bucket: RawBuilder<unknown>, targets: RawBuilder<unknown>) {
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
async function groupedPage(ctx: Context, filtered: ListQuery, bucket: RawBuilder<unknown>, page: { limit: number; offset: number }) {
  const targetSet = await targetsOf(ctx)
  const withTargets = async <R>(query: RawBuilder<unknown>) => (await sql<R>`with targets as materialized (${targetSet}) ${query}`.execute(ctx.db)).rows
  const sums = groupedSums(ctx, filtered, bucket, sql`select id from targets`)
  const pageQuery = sql`select *, count(*) over () as __total from (${sums}) g
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
  return { rows, total, meta, fields: ['indicator_id', 'location_id', 'time_grouping', 'value'] }
}

/** group_by_time=year|quarter|month|all_time: sums over each target location's subtree per bucket. */
const grouped: ReadMode = {
  when: (ctx) => modeOf(ctx).kind === 'grouped',
  params: {
    group_by_time: { type: 'string', help: 'flat (default), year, quarter ("YYYYQ"), month ("YYYYMM") or all_time: sums over each target location\'s subtree' },
  },
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
function bucketOf(ctx: Context): RawBuilder<unknown> {
  const mode = modeOf(ctx)
  if (mode.kind !== 'grouped') throw new Error('not the grouped mode')
  return mode.bucket
}

/** §9.2: a written row is a data entry: its key follows its fields, its source is the Data Entry submission. */
async function asDataEntry(ctx: Context, values: Row, existing?: Row): Promise<Row> {
  const row = { ...existing, ...values }
  if (values.location_id !== undefined) await assertLocationPermitted(ctx, row.location_id as number)
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
  // Only date rows are ever read or written here; campaign rows belong to campaign_datapoint.
  scope: sql<boolean>`t.data_date is not null`,
  query_fields: ['id', 'indicator_id', 'location_id', 'data_date', 'value'],
  filtering: ['id', 'indicator_id', 'data_date', 'value'],
  detail_fields: ['id', 'indicator_id', 'location_id', 'campaign_id', 'data_date', 'value', 'source_submission_id', 'unique_index', 'created_at'],
  writable: ['indicator_id', 'location_id', 'data_date', 'value'],
  GET_params_required: ['indicator__in'],
  required_fields_for_post: ['indicator_id', 'location_id', 'data_date', 'value'],
  location_column: 'location_id',
  meta_fields: {
    ...DATAPOINT_META,
    time_groupings: { type: 'array', items: { oneOf: [{ type: 'string' }, { type: 'integer' }] }, description: 'grouped: the buckets in the result; flat: []' },
  },
  modes: [grouped],
  params: {
    ...DATAPOINT_PARAMS,
    start_date: { type: 'date', help: 'inclusive lower bound on data_date' },
    end_date: { type: 'date', help: 'inclusive upper bound on data_date' },
    campaign_start: { type: 'date', help: 'alias of start_date' },
    campaign_end: { type: 'date', help: 'alias of end_date' },
  },
  hooks: {
    list: rawSelection,
    // The flat and discrete modes' export; the grouped mode has its own.
    async wide(ctx, filtered) {
      const { query, indicators } = await rawRows(ctx, filtered)
      const long = query.select(['t.location_id', 't.indicator_id', 't.data_date', 't.value']).orderBy('t.id')
      return pivot(ctx, long, indicators, { column: 'data_date' })
    },
    beforeWrite: (ctx, values, existing) => asDataEntry(ctx, values, existing),
  },
})
