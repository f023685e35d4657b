// Location selection parameters (resource-api §10), shared by location, geo and the datapoint reads.
import { sql, type RawBuilder } from 'kysely'
import { invalidValue } from '../core/errors.js'
import { RawJson } from '../core/raw-json.js'
import type { Context } from '../api/resource.js'
import { Param } from '../api/query.js'
import { isInt32 } from '../core/values.js'
import { assertLocationInReach, permittedLocations } from '../engine/access.js'

export const LOCATION_PARAMS = {
  location_id__in: Param.integers('exactly these locations (comma list), no aggregation'),
  location_id: Param.integer('the location whose subtree is selected (with location_depth or location_type)'),
  location_depth: Param.integer('with location_id: descendants at this distance (0 = itself)'),
  location_type: Param.string('with location_id: descendants of this type (name, or id)'),
  filter_indicator: Param.string('keep locations whose value for this indicator short_name…'),
  filter_value: Param.numbers('…is one of these numbers (comma list)'),
}

/**
 * The campaigns filter_indicator looks in, where the request names them for that alone (location, geo,
 * date_datapoint); campaign_datapoint's are its campaign set C. `campaign__in` is its first name.
 */
export const FILTER_CAMPAIGN_PARAMS = {
  filter_campaign__in: Param.integers('the campaigns filter_indicator looks in (default: every campaign)', { alias: 'campaign__in' }),
}

/**
 * The ids of `selection`, distinct and ascending, read as ONE json value: a selection can hold
 * thousands of locations, and one row per id costs more to receive and parse than the query itself.
 */
async function ids(ctx: Context, selection: RawBuilder<unknown>): Promise<number[]> {
  return JSON.parse((await idsJson(ctx, selection)).text) as number[]
}

/** The same ids as JSON text, for a response to carry unparsed. */
async function idsJson(ctx: Context, selection: RawBuilder<unknown>): Promise<RawJson> {
  const { rows } = await sql<{ ids: string | null }>`select json_agg(distinct id order by id)::text as ids from (${selection}) s where id is not null`.execute(
    ctx.db,
  )
  return new RawJson(rows[0]?.ids ?? '[]')
}

/** The selection S as SQL, and the same ids as a list. */
export interface Selection {
  /** A subquery yielding the selected location ids as `id`; null = no selection parameter (all). */
  sql: RawBuilder<unknown> | null
  /** S ascending (runs the subquery); null when there is no selection. */
  ids: () => Promise<number[] | null>
  /** S ascending as JSON text (runs the subquery); `[]` when there is no selection. */
  idsJson: () => Promise<RawJson>
}

/**
 * The selection S of §10, intersected with the requester's permitted subtree, as one SQL subquery.
 * Datapoint reads put it inside their main statement, so the planner sees the location_tree
 * statistics (a hash semi-join over thousands of locations) instead of a long id list; the id list
 * for meta is read from the same subquery. `campaigns` is the campaign set C that filter_indicator
 * looks in (campaign_datapoint's); null: the request's filter_campaign__in, else every campaign.
 */
export async function locationSelection(
  ctx: Context<typeof LOCATION_PARAMS & typeof FILTER_CAMPAIGN_PARAMS>,
  campaigns: number[] | null = null,
): Promise<Selection> {
  const { user, params: query } = ctx
  let selection: RawBuilder<unknown> | null = null
  if (query.location_id__in !== undefined) {
    selection = sql`select id from location where id = any(${query.location_id__in}::int4[])`
  } else if (query.location_id !== undefined) {
    const root = query.location_id
    const validRoot = isInt32(root) ? root : -1
    const typeName = query.location_type
    let primary: RawBuilder<unknown>
    if (typeName !== undefined) {
      const type = await sql<{ id: number }>`select id from location_type where name = ${typeName}
        union all select id from location_type where ${/^-?\d+$/.test(typeName) && isInt32(Number(typeName)) ? sql`id = ${Number(typeName)}` : sql`false`}
          and not exists (select 1 from location_type where name = ${typeName})
        limit 1`.execute(ctx.db)
      if (!type.rows.length) throw invalidValue('location_type', typeName, 'a location type name or id')
      primary = sql`select lt.location_id as id from location_tree lt join location l on l.id = lt.location_id
        where lt.parent_location_id = ${validRoot} and l.location_type_id = ${type.rows[0].id}`
    } else {
      const depth = query.location_depth ?? 0
      primary =
        depth < 0 || !isInt32(depth)
          ? sql`select null::int4 as id where false`
          : sql`select location_id as id from location_tree where parent_location_id = ${validRoot} and lvl = ${depth}`
    }
    // District fallback: when nothing matches, every descendant of the district type (none if the
    // type does not exist). Asked first, in a statement of its own: the selection is then one plain
    // subquery the planner joins as it is (location_tree's key makes it unique), where a union with
    // the fallback inside the read cost a de-duplication of the whole set, a third of the read
    // (bench/README.md, "Datapoint reads").
    const found = await sql<{ found: boolean }>`select exists (${primary}) as found`.execute(ctx.db)
    selection = found.rows[0].found
      ? primary
      : sql`select lt.location_id as id from location_tree lt
          join location l on l.id = lt.location_id join location_type ty on ty.id = l.location_type_id
          where lt.parent_location_id = ${validRoot} and ty.name = ${ctx.config.DISTRICT_TYPE_NAME}`
  }

  const { filter_indicator: filterIndicator, filter_value: values } = query
  if (filterIndicator !== undefined && values !== undefined) {
    const campaignSet = campaigns ?? query.filter_campaign__in ?? null
    const matching =
      values.length && (campaignSet === null || campaignSet.length)
        ? sql`select d.location_id as id from datapoint_with_computed d
          join indicator i on i.id = d.indicator_id
          where i.short_name = ${filterIndicator} and d.value = any(${values}::float8[])
          ${campaignSet ? sql`and d.campaign_id = any(${campaignSet}::int4[])` : sql``}`
        : sql`select null::int4 as id where false`
    selection = selection === null ? matching : sql`select id from (${selection}) s where id in (${matching})`
  }

  if (selection !== null && user.restricted) {
    selection = sql`select id from (${selection}) s
      where id in ${permittedLocations(user)}`
  }
  return {
    sql: selection === null ? null : sql`select id from (${selection}) s`,
    ids: async () => (selection === null ? null : ids(ctx, selection)),
    idsJson: async () => (selection === null ? new RawJson('[]') : idsJson(ctx, selection)),
  }
}

/** S as ascending ids, or null when no selection parameter was given (all locations). */
export async function selectLocations(
  ctx: Context<typeof LOCATION_PARAMS & typeof FILTER_CAMPAIGN_PARAMS>,
  campaigns: number[] | null = null,
): Promise<number[] | null> {
  return (await locationSelection(ctx, campaigns)).ids()
}

/** §6: a restricted user may only write rows placed inside their subtree (403 LOCATION_FORBIDDEN). */
export async function assertLocationPermitted(ctx: Context, location: number | null): Promise<void> {
  await assertLocationInReach(ctx.db, ctx.user, location)
}
