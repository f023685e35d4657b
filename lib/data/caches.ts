// Denormalised caches on indicator (resource-api §16) and mapping resets (§11.5).
import { sql, type Kysely } from 'kysely'
import type { DB } from '../../schemas/index.js'

type Executor = Kysely<DB>

/** Rewrites indicator.tag_json (ascending tag ids); all indicators when `ids` is undefined. */
export async function refreshTagJson(db: Executor, ids?: number[]): Promise<number> {
  if (ids && !ids.length) return 0
  const result = await sql`update indicator i set tag_json = coalesce(
      (select jsonb_agg(it.indicator_tag_id order by it.indicator_tag_id) from indicator_to_tag it where it.indicator_id = i.id),
      '[]'::jsonb)
    where ${ids ? sql`i.id in (${sql.join(ids)})` : sql`true`}`.execute(db)
  return Number(result.numAffectedRows ?? 0)
}

/** Rewrites indicator.bound_json from indicator_bound, ordered by bound id, each range with its level's name. */
export async function refreshBoundJson(db: Executor, ids?: number[]): Promise<number> {
  if (ids && !ids.length) return 0
  const result = await sql`update indicator i set bound_json = coalesce(
      (select jsonb_agg(jsonb_build_object('indicator_id', b.indicator_id, 'bound_name', b.bound_name,
                                           'mn_val', b.mn_val, 'mx_val', b.mx_val,
                                           'location_type_id', b.location_type_id, 'location_type', lt.name)
                       order by b.id)
       from indicator_bound b left join location_type lt on lt.id = b.location_type_id where b.indicator_id = i.id),
      '[]'::jsonb)
    where ${ids ? sql`i.id in (${sql.join(ids)})` : sql`true`}`.execute(db)
  return Number(result.numAffectedRows ?? 0)
}

/** Mappings that pointed at deleted master objects become unmapped again; they never block a delete. */
export async function resetMappings(db: Executor, contentType: 'indicator' | 'location' | 'campaign', ids: number[]) {
  if (!ids.length) return
  await db
    .updateTable('source_object_map')
    .set({ master_object_id: -1, master_object_name: null })
    .where('content_type', '=', contentType)
    .where('master_object_id', 'in', ids)
    .execute()
}
