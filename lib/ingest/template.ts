// The upload template (docs/decisions.md, "The upload template"): a file that, filled in and uploaded
// as it is, has nothing to map. Every code it writes (indicator headers, location codes, the campaign)
// is one that source_object_map already maps to that object; an object without such a code first gets
// its own name mapped to it (short name, location code, campaign name; a location only when a superuser
// or metadata editor asks), or is listed as without a code. Its rows are the lowest
// locations the requester may upload for; calculated indicators are left out and named.
import { sql, type Kysely, type RawBuilder } from 'kysely'
import type { DB } from '../../schemas/index.js'
import type { AuthUser } from '../data/auth.js'
import { notFound } from '../core/errors.js'
import { LABEL_COLUMN, REQUIRED_COLUMNS, type FileType } from './columns.js'

type ContentType = 'indicator' | 'location' | 'campaign'

/** The column holding each kind's own code, and the one source_object_map names it by. */
const OWN = {
  indicator: { code: 'short_name', name: 'short_name' },
  location: { code: 'location_code', name: 'name' },
  campaign: { code: 'name', name: 'name' },
} as const

/**
 * A code a file can carry as it is: trimmed (the reader trims cells and headers), not starting like a
 * spreadsheet formula (= + - @, tab, return), and, for an indicator, no role column's name.
 */
function usable(code: RawBuilder<unknown>, contentType: ContentType) {
  const roles = contentType === 'indicator' ? sql` and ${code} not in ('geocode', 'campaign', 'unique_key', 'data_date', ${LABEL_COLUMN})` : sql``
  return sql`(${code} <> '' and ${code} = btrim(${code}) and ${code} !~ '^[-=+@\t\r]'${roles})`
}

/** An object's own code as a file carries it: trimmed, with a leading ' when it starts like a formula. */
const ownCode = (column: RawBuilder<unknown>) => sql`(case when btrim(${column}) ~ '^[-=+@\t\r]' then '''' || btrim(${column}) else btrim(${column}) end)`

/**
 * Maps each of `ids` that has no usable code to its own code, where that code is new or waits
 * unmapped (a code mapped to something else is left as it is). Returns how many were mapped.
 */
async function mapOwnCodes(db: Kysely<DB>, contentType: ContentType, ids: number[], userId: number): Promise<number> {
  if (!ids.length) return 0
  const own = OWN[contentType]
  const code = ownCode(sql.ref(`o.${own.code}`))
  const { rows } = await sql<{ id: number }>`
    insert into source_object_map as m (content_type, source_object_code, master_object_id, master_object_name, mapped_by_id)
    select distinct on (code) ${contentType}, code, id, name, ${userId}::int from (
      select o.id, ${code} as code, ${sql.ref(`o.${own.name}`)} as name from ${sql.table(contentType)} o
      where o.id = any(${ids}::int4[]) and btrim(coalesce(${sql.ref(`o.${own.code}`)}, '')) <> ''
        and not exists (select 1 from source_object_map x where x.content_type = ${contentType} and x.master_object_id = o.id
          and ${usable(sql.ref('x.source_object_code'), contentType)})) own
    where ${usable(sql.ref('code'), contentType)}
    order by code, id
    on conflict (content_type, source_object_code) do update
      set master_object_id = excluded.master_object_id, master_object_name = excluded.master_object_name, mapped_by_id = excluded.mapped_by_id
      where m.master_object_id = -1
    returning m.id`.execute(db)
  return rows.length
}

/** The code a file gives each of `ids`: a usable mapped code, its own when that is one, else the first mapped. */
async function codesOf(db: Kysely<DB>, contentType: ContentType, ids: number[]): Promise<Map<number, string>> {
  if (!ids.length) return new Map()
  const own = ownCode(sql.ref(`o.${OWN[contentType].code}`))
  const { rows } = await sql<{ id: number; code: string }>`
    select distinct on (m.master_object_id) m.master_object_id as id, m.source_object_code as code
    from source_object_map m join ${sql.table(contentType)} o on o.id = m.master_object_id
    where m.content_type = ${contentType} and m.master_object_id = any(${ids}::int4[]) and ${usable(sql.ref('m.source_object_code'), contentType)}
    order by m.master_object_id, (m.source_object_code = ${own}) desc, m.id`.execute(db)
  return new Map(rows.map((r) => [r.id, r.code]))
}

/**
 * Its own codes mapped where needed, then the code of each of `ids`. Indicators and campaigns are named
 * by metadata editors only, so mapping one's own name to it redirects nothing; locations are mapped
 * only for a requester who may change the code mappings (superusers, metadata editors): a restricted
 * user may create a location in her part, and could give it a code another upload waits on, or will
 * use, and have those rows land in it.
 */
export async function ensureCodes(db: Kysely<DB>, contentType: ContentType, ids: number[], user: AuthUser) {
  if (contentType !== 'location' || user.is_superuser || user.metadata_editor) await mapOwnCodes(db, contentType, ids, user.id)
  return { codes: await codesOf(db, contentType, ids) }
}

/**
 * The lowest locations (no child) under `root`, or under every root: those a person enters values for.
 * A restricted user's root is her responsibility (the caller checks a chosen one is inside it). In the
 * tree's order: by the names on the way down from the root, so a district stands with its province's
 * others, siblings by name.
 */
async function lowestLocations(db: Kysely<DB>, root: number | null) {
  const under = root === null ? sql`true` : sql`l.id in (select location_id from location_tree where parent_location_id = ${root})`
  const { rows } = await sql<{ id: number; name: string }>`select l.id, l.name from location l
    where ${under} and not exists (select 1 from location c where c.parent_location_id = l.id)
    order by (select array_agg(a.name order by t.lvl desc) from location_tree t join location a on a.id = t.parent_location_id
      where t.location_id = l.id), l.id`.execute(db)
  return rows
}

/** The indicators a file of `fileType` holds, split into those entered and those calculated from others. */
async function templateIndicators(db: Kysely<DB>, fileType: FileType) {
  const { rows } = await sql<{ id: number; short_name: string; calculated: boolean }>`
    select i.id, i.short_name, exists (select 1 from calculated_indicator_component c where c.indicator_id = i.id) as calculated
    from indicator i where (coalesce(i.resource_name, '') = 'date') = ${fileType === 'date'} order by i.short_name, i.id`.execute(db)
  return { entered: rows.filter((r) => !r.calculated), calculated: rows.filter((r) => r.calculated).map(({ id, short_name }) => ({ id, short_name })) }
}

/** The campaign asked for, or the latest one. */
async function templateCampaign(db: Kysely<DB>, campaignId: number | undefined) {
  let query = db.selectFrom('campaign').select(['id', 'name']).orderBy('start_date', 'desc').orderBy('id', 'desc')
  if (campaignId !== undefined) query = query.where('id', '=', campaignId)
  const found = await query.executeTakeFirst()
  if (!found && campaignId !== undefined) throw notFound('campaign', campaignId)
  return found ?? null
}

export interface TemplateAsked {
  fileType: FileType
  /** The subtree of its rows; the requester's own part (or the whole tree) when absent. */
  root: number | null
  campaignId?: number
  /** Date files: the day written on each row. */
  dataDate: string
}

/** The template's columns and rows, and what it leaves out (see above). */
export async function uploadTemplate(db: Kysely<DB>, user: AuthUser, asked: TemplateAsked) {
  const root = asked.root ?? (user.restricted ? user.top_lvl_location_id! : null)
  const { entered, calculated } = await templateIndicators(db, asked.fileType)
  const indicators = await ensureCodes(
    db,
    'indicator',
    entered.map((i) => i.id),
    user,
  )
  const places = await lowestLocations(db, root)
  const locations = await ensureCodes(
    db,
    'location',
    places.map((l) => l.id),
    user,
  )
  const campaign = asked.fileType === 'campaign' ? await templateCampaign(db, asked.campaignId) : null
  const campaigns = await ensureCodes(db, 'campaign', campaign ? [campaign.id] : [], user)
  const columns = entered.filter((i) => indicators.codes.has(i.id))
  const rows = places
    .filter((l) => locations.codes.has(l.id))
    .map((l) => {
      const code = locations.codes.get(l.id)!
      return asked.fileType === 'campaign'
        ? [code, l.name, campaign ? (campaigns.codes.get(campaign.id) ?? '') : '']
        : [code, l.name, asked.dataDate, `${code}-${asked.dataDate}`]
    })
  return {
    file_type: asked.fileType,
    location_id: root,
    campaign: campaign && { ...campaign, code: campaigns.codes.get(campaign.id) ?? null },
    data_date: asked.fileType === 'date' ? asked.dataDate : null,
    // The location's name beside its code, for the person filling it in; uploads ignore it.
    header: ['geocode', LABEL_COLUMN, ...REQUIRED_COLUMNS[asked.fileType].slice(1), ...columns.map((i) => indicators.codes.get(i.id)!)],
    indicators: columns.map((i) => ({ id: i.id, short_name: i.short_name, code: indicators.codes.get(i.id)! })),
    rows,
    calculated,
    without_code: {
      indicators: entered.filter((i) => !indicators.codes.has(i.id)).map(({ id, short_name }) => ({ id, short_name })),
      locations: places.filter((l) => !locations.codes.has(l.id)),
    },
  }
}
