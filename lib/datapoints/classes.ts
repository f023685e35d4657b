// Class indicators in the datapoint reads (docs/decisions.md, "Class indicators"): each value's label
// (`with_labels=1`), and the count of each class over a location's subtree (`count_classes=1`: a
// province, 7 pass and 2 fail), since a class is never summed.
import { sql, type RawBuilder } from 'kysely'
import { inList } from '../api/crud.js'
import { Param } from '../api/query.js'
import type { Context, ReadMode, Row } from '../api/resource.js'
import { locationSelection } from './location-selection.js'
import { datapointMeta, indicatorSet, type DATAPOINT_PARAMS, type DatapointContext } from './reads.js'

/** The label of `value` of `indicator` (SQL expressions), or null. */
export function labelOf(indicator: RawBuilder<unknown>, value: RawBuilder<unknown>): RawBuilder<string | null> {
  // An alias of its own: the caller's stay visible inside.
  return sql<string | null>`(select class_label.label from indicator_class_map class_label
    where class_label.indicator_id = ${indicator} and class_label.value = ${value})`
}

/** The `label` field of the datapoint reads: a synthetic field over `t`, shown with `with_labels=1`. */
export const LABEL_FIELD = { kind: 'string' as const, expression: labelOf(sql`t.indicator_id`, sql`t.value`) }

/** Whether the read asks for labels (`with_labels=1`). */
export const withLabels = (ctx: DatapointContext) => ctx.params.with_labels === true

/** The locations whose subtrees are counted: the selection, else the requester's top location or every root. */
async function targetsOf(ctx: DatapointContext, campaigns: number[]): Promise<RawBuilder<unknown>> {
  const selection = await locationSelection(ctx, campaigns)
  if (selection.sql) return selection.sql
  if (ctx.user.restricted) return sql`select ${ctx.user.top_lvl_location_id}::int4 as id`
  return sql`select id from location where parent_location_id is null`
}

const CLASS_COUNTS_PARAMS = { count_classes: Param.boolean("1: class indicators' values counted by class over each selected location's subtree") }
type ClassCountsParams = typeof DATAPOINT_PARAMS & typeof CLASS_COUNTS_PARAMS

/**
 * count_classes=1: for each selected location, class indicator of I and campaign of C, how many raw
 * values of each class its subtree holds (the location itself included), with the class's label.
 */
export function classCounts(campaignSet: (ctx: Context<ClassCountsParams>) => Promise<number[]>): ReadMode<ClassCountsParams> {
  return {
    when: (ctx) => ctx.params.count_classes === true,
    params: CLASS_COUNTS_PARAMS,
    rowSchema: {
      type: 'object',
      properties: {
        indicator_id: { type: 'integer' },
        location_id: { type: 'integer' },
        campaign_id: { type: 'integer' },
        value: { type: 'number', description: 'the class' },
        label: { type: 'string', nullable: true },
        count: { type: 'integer', description: 'values of this class in the location’s subtree' },
      },
      required: ['indicator_id', 'location_id', 'campaign_id', 'value', 'label', 'count'],
      description: 'count_classes=1',
    },
    async read(ctx, page) {
      const indicators = indicatorSet(ctx)
      const campaigns = await campaignSet(ctx)
      const targets = await targetsOf(ctx, campaigns)
      const { rows } = await sql<Row>`with targets as materialized (${targets})
        select d.indicator_id, lt.parent_location_id as location_id, d.campaign_id, d.value, ${labelOf(sql`d.indicator_id`, sql`d.value`)} as label,
          count(*)::int as count, count(*) over () as __total
        from datapoint d
        join indicator i on i.id = d.indicator_id and i.data_format = 'class'
        join location_tree lt on lt.location_id = d.location_id and lt.parent_location_id in (select id from targets)
        where ${inList('d.indicator_id', indicators)} and ${inList('d.campaign_id', campaigns)}
        group by d.indicator_id, lt.parent_location_id, d.campaign_id, d.value
        order by location_id, d.indicator_id, d.campaign_id, d.value
        limit ${page.limit} offset ${page.offset}`.execute(ctx.db)
      const total = rows.length ? Number(rows[0].__total) : 0
      for (const row of rows) delete row.__total
      const { rows: ids } = await sql<{ ids: number[] | null }>`select json_agg(distinct id order by id) as ids from (${targets}) s`.execute(ctx.db)
      const meta = datapointMeta(ctx, { location_ids: ids[0]?.ids ?? [], indicator_ids: indicators, campaign_ids: campaigns })
      return { rows, total, meta, fields: ['indicator_id', 'location_id', 'campaign_id', 'value', 'label', 'count'] }
    },
  }
}
