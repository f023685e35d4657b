// What campaign_datapoint and date_datapoint share (ingestion §8, §10.2): their parameters, the indicator
// set, meta extras and the wide pivot of their long rows.
import { sql } from 'kysely'
import { dynamic } from '../api/crud.js'
import { joinParams, MAX_LIMIT, Param } from '../api/query.js'
import { LOCATION_PARAMS } from './location-selection.js'
import { STATUS_PARAMS, statusOf, withStatus } from './status.js'
import type { Context, ListQuery, Row, WideExport } from '../api/resource.js'

/** Parameters both datapoint resources take; each adds its own (campaign window, grouping…). */
export const DATAPOINT_PARAMS = joinParams(
  { indicator__in: Param.integers('required: indicator ids', { required: true }) },
  LOCATION_PARAMS,
  {
    chart_uuid: Param.string('echoed as meta.chart_uuid'),
    with_labels: Param.boolean("1: each value's label, for class indicators that have labels (indicator_class_map); null otherwise"),
  },
  STATUS_PARAMS,
  { cumulative: Param.ignored(), show_missing_data: Param.ignored(), source_name: Param.ignored() },
)
/** What the shared reads below see of a datapoint read's context. */
export type DatapointContext = Context<typeof DATAPOINT_PARAMS>

/** I: `indicator__in`, duplicates removed, request order kept. */
export function indicatorSet(ctx: DatapointContext): number[] {
  return [...new Set(ctx.params.indicator__in)]
}

const ids = { type: 'array', items: { type: 'integer' } }

/** The meta fields of the datapoint reads, for the OpenAPI document (`meta_fields`). */
export const DATAPOINT_META = {
  chart_uuid: { type: 'string', description: 'the chart_uuid parameter, when given' },
  indicator_ids: { ...ids, description: 'the indicators read (indicator__in, request order, no duplicates)' },
  location_ids: { ...ids, description: 'the locations selected, ascending' },
}

/** The meta extras both resources echo. */
export function datapointMeta(ctx: DatapointContext, extras: Row): Row {
  const chartUuid = ctx.params.chart_uuid
  return { ...(chartUuid !== undefined ? { chart_uuid: chartUuid } : {}), ...extras }
}

export interface PivotKey {
  /** Column of the long rows that, with location_id, identifies a wide line. */
  column: string
  /** The table it references, when the line also shows that row's name (`campaign`). */
  named?: { table: string; as: string; orderBy: string }
}

/**
 * §10.2: one line per (location, key), one column per indicator of I in request order, headed by its
 * short_name. `long` selects location_id, indicator_id, value and the key column; at most max_limit
 * long rows are pivoted. Lines are ordered by location name, then the key.
 */
export async function pivot(ctx: DatapointContext, long: ListQuery, indicators: number[], key: PivotKey): Promise<WideExport> {
  const db = dynamic(ctx)
  const names = new Map(
    indicators.length
      ? (await db.selectFrom('indicator').select(['id', 'short_name']).where('id', 'in', indicators).execute()).map((r) => [
          r.id as number,
          r.short_name as string,
        ])
      : [],
  )
  let query = db
    .selectFrom(long.limit(MAX_LIMIT).as('p'))
    .innerJoin('location as l', 'l.id', 'p.location_id')
    .select(['p.location_id', 'l.name as location', `p.${key.column}`])
    .groupBy(['p.location_id', 'l.name', `p.${key.column}`])
    .orderBy('l.name')
  if (key.named) {
    const { table, as, orderBy } = key.named
    query = query
      .innerJoin(`${table} as k`, 'k.id', `p.${key.column}`)
      .select(`k.name as ${as}`)
      .groupBy(['k.name', `k.${orderBy}`])
      .orderBy(`k.${orderBy}`)
  }
  query = query.orderBy(`p.${key.column}`).orderBy('p.location_id')
  // Each indicator column is written as a literal: integers from the request, already parsed.
  const valueIn = (id: number) => sql`max(p.value) filter (where p.indicator_id = ${sql.lit(id)})`
  query = query.select(indicators.map((id, i) => valueIn(id).as(`i${i}`)))
  const headers = indicators.map((id) => names.get(id) ?? String(id))
  // with_status: after the values, one status column per indicator, in the same order.
  if (withStatus(ctx)) query = query.select(indicators.map((id, i) => statusOf(sql.lit(id), valueIn(id), sql`p.location_id`).as(`s${i}`)))
  return {
    header: [
      'location_id',
      'location',
      key.column,
      ...(key.named ? [key.named.as] : []),
      ...headers,
      ...(withStatus(ctx) ? headers.map((h) => `${h} status`) : []),
    ],
    query,
  }
}
