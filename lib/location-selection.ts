// Location selection parameters (resource-api §10), shared by location, geo and the datapoint reads.
import { sql } from 'kysely'
import { forbidden, invalidValue } from './errors.js'
import type { Context, ParamSpec } from './resource.js'
import { isInt32, parseFloatStrict } from './values.js'
import { integerList, integerParam } from './params.js'

export { integerList }

export const LOCATION_PARAMS: Record<string, ParamSpec> = {
  location_id__in: { type: 'integer_list', help: 'exactly these locations (comma list), no aggregation' },
  location_id: { type: 'integer', help: 'the location whose subtree is selected (with location_depth or location_type)' },
  location_depth: { type: 'integer', help: 'with location_id: descendants at this distance (0 = itself)' },
  location_type: { type: 'string', help: 'with location_id: descendants of this type (name, or id)' },
  filter_indicator: { type: 'string', help: 'keep locations whose value for this indicator short_name…' },
  filter_value: { type: 'string', help: '…is one of these numbers (comma list)' },
  campaign__in: { type: 'integer_list', help: 'campaigns considered by filter_indicator' },
}

async function ids(ctx: Context, query: ReturnType<typeof sql>): Promise<number[]> {
  const { rows } = await query.execute(ctx.db)
  return (rows as Array<{ id: number }>).map((r) => r.id)
}

/**
 * The selection S of §10 as ascending ids, or null when no selection parameter was given (all
 * locations). `campaigns` is the campaign set C that filter_indicator looks at (null = all).
 * S is intersected with the requester's permitted subtree.
 */
export async function selectLocations(ctx: Context, campaigns: number[] | null = null): Promise<number[] | null> {
  const { query, user } = ctx
  let selection: number[] | null = null
  if (query.has('location_id__in')) {
    selection = integerList(ctx, 'location_id__in')
  } else if (query.has('location_id')) {
    const root = integerParam(ctx, 'location_id') ?? NaN
    const validRoot = isInt32(root) ? root : -1
    const typeName = query.last('location_type')
    if (typeName !== undefined && typeName !== '') {
      const type = await sql<{ id: number }>`select id from location_type where name = ${typeName}
        union all select id from location_type where ${/^-?\d+$/.test(typeName) && isInt32(Number(typeName)) ? sql`id = ${Number(typeName)}` : sql`false`}
          and not exists (select 1 from location_type where name = ${typeName})
        limit 1`.execute(ctx.db)
      if (!type.rows.length) throw invalidValue('location_type', typeName, 'a location type name or id')
      selection = await ids(ctx, sql`select lt.location_id as id from location_tree lt join location l on l.id = lt.location_id
        where lt.parent_location_id = ${validRoot} and l.location_type_id = ${type.rows[0].id}`)
    } else {
      const depthText = query.last('location_depth')
      const depth = depthText === undefined || depthText === '' ? 0 : integerParam(ctx, 'location_depth')!
      selection = depth < 0 || !isInt32(depth) ? [] : await ids(ctx, sql`select location_id as id from location_tree
        where parent_location_id = ${validRoot} and lvl = ${depth}`)
    }
    if (!selection.length) {
      // District fallback: every descendant of the district type (none if the type does not exist).
      selection = await ids(ctx, sql`select lt.location_id as id from location_tree lt
        join location l on l.id = lt.location_id join location_type ty on ty.id = l.location_type_id
        where lt.parent_location_id = ${validRoot} and ty.name = ${ctx.config.DISTRICT_TYPE_NAME}`)
    }
  }

  const filterIndicator = query.last('filter_indicator')
  if (filterIndicator && query.has('filter_value')) {
    const values = query.list('filter_value').map((text) => {
      const n = parseFloatStrict(text)
      if (n === undefined) throw invalidValue('filter_value', text, 'comma-separated numbers')
      return n
    })
    const campaignSet = campaigns ?? (query.has('campaign__in') ? integerList(ctx, 'campaign__in') : null)
    const matching = values.length && (campaignSet === null || campaignSet.length)
      ? await ids(ctx, sql`select distinct d.location_id as id from datapoint_with_computed d
          join indicator i on i.id = d.indicator_id
          where i.short_name = ${filterIndicator} and d.value in (${sql.join(values)})
          ${campaignSet ? sql`and d.campaign_id in (${sql.join(campaignSet)})` : sql``}`)
      : []
    const keep = new Set(matching)
    selection = (selection ?? matching).filter((id) => keep.has(id))
  }

  if (selection !== null && user.restricted) {
    const permitted = new Set(await ids(ctx, sql`select location_id as id from location_tree
      where parent_location_id = ${user.top_lvl_location_id}`))
    selection = selection.filter((id) => permitted.has(id))
  }
  return selection === null ? null : [...new Set(selection)].sort((a, b) => a - b)
}

/** §6: a restricted user may only write rows placed inside their subtree (403 LOCATION_FORBIDDEN). */
export async function assertLocationPermitted(ctx: Context, location: number | null): Promise<void> {
  if (!ctx.user.restricted) return
  const inside =
    location !== null &&
    (await ctx.db
      .selectFrom('location_tree')
      .select('lvl')
      .where('parent_location_id', '=', ctx.user.top_lvl_location_id!)
      .where('location_id', '=', location)
      .executeTakeFirst())
  if (!inside) throw forbidden(`Location ${location ?? 'null'} is outside your responsibility`, 'LOCATION_FORBIDDEN')
}
