import { defineResource, type Context, type Resource, type Row } from '../lib/api/resource.js'
import { listRows } from '../lib/api/crud.js'
import { MAX_LIMIT } from '../lib/api/query.js'
import { QueryParams } from '../lib/api/query-params.js'
import campaign from './campaign.js'
import customChart from './custom_chart.js'
import dashboard from './dashboard.js'
import indicator from './indicator.js'
import indicatorTag from './indicator_tag.js'
import indicatorToTag from './indicator_to_tag.js'
import location from './location.js'

const LISTS: Record<string, Resource> = {
  campaigns: campaign,
  charts: customChart,
  dashboards: dashboard,
  indicators: indicator,
  indicator_tags: indicatorTag,
  indicators_to_tags: indicatorToTag,
  locations: location,
}

/** The full, unpaginated list representation of a resource in its default order. */
async function fullList(ctx: Context, resource: Resource) {
  const order = resource.ordering.map((o) => ({ field: o.replace(/^-/, ''), desc: o.startsWith('-') }))
  if (!order.some((o) => o.field === 'id')) order.push({ field: 'id', desc: false })
  const sub: Context = { ...ctx, resource, urlName: resource.name, query: new QueryParams([]) }
  const { rows } = await listRows(sub, { limit: MAX_LIMIT, offset: 0, order, fields: resource.query_fields, filters: [] })
  return rows
}

export default defineResource({
  name: 'all_meta',
  kind: 'non_model',
  reads_only: true,
  description: 'Every campaign, chart, dashboard, indicator, tag, tag link and (permitted) location at once.',
  result_fields: Object.fromEntries([...Object.keys(LISTS).map((k) => [k, 'json' as const]), ['is_superuser', 'boolean' as const]]),
  action: async (ctx) => {
    const result: Record<string, unknown> = {}
    for (const [key, resource] of Object.entries(LISTS)) result[key] = await fullList(ctx, resource)
    // The original served these two as JSON text, and its client JSON.parses them: all_meta exists for
    // that client, so here they keep that form (the indicator resource has them typed).
    result.indicators = (result.indicators as Row[]).map((indicator) => ({
      ...indicator,
      tag_json: JSON.stringify(indicator.tag_json ?? []),
      bound_json: JSON.stringify(indicator.bound_json ?? []),
    }))
    result.is_superuser = ctx.user.is_superuser
    return [result]
  },
})
