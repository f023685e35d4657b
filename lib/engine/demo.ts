// The demo data set (lib/engine/veridia.json, self-made): the fictional country of Veridia with 3
// provinces and 9 districts, campaign types and campaigns, indicators with tags, calculations and
// validation rules, values entered at the districts (aggregated and calculated by the engine), monthly
// case counts, fictional shapes for the map and a dashboard of five charts. `npm start` loads it into
// an empty embedded database so a newcomer sees real answers at once (DEMO_DATA=0 skips it). The file
// names rows by their names; this loader turns the names into the ids the database gives.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { sql, type Kysely } from 'kysely'
import type { DB } from '../../schemas/index.js'
import { PROJECT_ROOT } from '../core/paths.js'
import { attribute } from '../data/attribution.js'
import { refreshTagJson } from '../data/caches.js'
import { rebuildTree } from '../data/location-tree.js'
import { dataEntrySubmission, dateKey, enterCampaignValue } from './data-entry.js'
import { recomputeCampaign } from './recompute.js'

/** West, south, east, north: a rectangle on the map. */
type Shape = [number, number, number, number]
type Place = { name: string; code: string; shape: Shape }
/** A chart's `chart_json`, its indicators, campaigns and locations (and the keys of indicator_colors) by name. */
type Chart = Record<string, unknown>

/** The shape of veridia.json. */
export interface DemoDataSet {
  locationTypes: string[]
  country: Place & { latitude: number; longitude: number; provinces: Array<Place & { districts: Array<Place & { lpd_status: number }> }> }
  campaignTypes: string[]
  campaigns: Array<{ name: string; type: string; start_date: string; end_date: string }>
  indicators: Array<{ short_name: string; name: string; data_format: string; good_bound?: number; bad_bound?: number; resource_name?: string; tags: string[] }>
  tags: Array<{ name: string; parent?: string }>
  calculations: Array<{ indicator: string; component: string; calculation: string }>
  validationRules: Array<{ name: string; left: string; operator: string; right: string }>
  /** Per campaign, per district, per indicator: the value entered. */
  campaignValues: Array<{ campaign: string; values: Record<string, Record<string, number>> }>
  /** Per indicator and location, per date: the value of a dated indicator. */
  datedValues: Array<{ indicator: string; location: string; values: Record<string, number> }>
  dashboard: {
    title: string
    description: string
    charts: Array<{ uuid: string; title: string; chart: Chart }>
    rows: Array<{ layout: number; charts: string[] }>
  }
}

export const DEMO_DATA_FILE = join(PROJECT_ROOT, 'lib', 'engine', 'veridia.json')

/** Loads the demo set when the database has no location; returns whether it did. */
export async function loadDemoData(db: Kysely<DB>, data: DemoDataSet = JSON.parse(readFileSync(DEMO_DATA_FILE, 'utf8'))): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    await attribute(trx, { via: 'demo' })
    if (await trx.selectFrom('location').select('id').limit(1).executeTakeFirst()) return false
    const ids = {
      location: await insertTree(trx, data),
      campaign: await insertCampaigns(trx, data),
      indicator: await insertIndicators(trx, data),
    }
    const id = (kind: keyof typeof ids, name: string) => ids[kind].get(name) ?? fail(`the demo data names an unknown ${kind}: ${name}`)

    // Values entered at the districts (as data entries), then each campaign recomputed: provinces and
    // the country get sums, calculated indicators their calculations.
    for (const { campaign, values } of data.campaignValues) {
      for (const [location, entries] of Object.entries(values)) {
        for (const [indicator, value] of Object.entries(entries)) {
          await enterCampaignValue(trx, {
            indicator_id: id('indicator', indicator),
            location_id: id('location', location),
            campaign_id: id('campaign', campaign),
            value,
          })
        }
      }
      await recomputeCampaign(trx, id('campaign', campaign))
    }
    const submission = await dataEntrySubmission(trx)
    const dated = data.datedValues.flatMap(({ indicator, location, values }) =>
      Object.entries(values).map(([data_date, value]) => {
        const row = { indicator_id: id('indicator', indicator), location_id: id('location', location), data_date }
        return { ...row, value, source_submission_id: submission, unique_index: dateKey(row), precedence_at: new Date().toISOString() }
      }),
    )
    if (dated.length) await trx.insertInto('datapoint').values(dated).execute()

    await insertDashboard(trx, data.dashboard, id)
    await demoMappings(trx)
    return true
  })
}

const fail = (message: string): never => {
  throw new Error(message)
}

/** Location types, the country, its provinces and districts with their shapes; the ids by name. */
async function insertTree(trx: Kysely<DB>, data: DemoDataSet): Promise<Map<string, number>> {
  const typeId: number[] = []
  for (const [admin_level, name] of data.locationTypes.entries()) {
    const existing = await trx.selectFrom('location_type').select('id').where('name', '=', name).executeTakeFirst()
    typeId.push(existing?.id ?? (await trx.insertInto('location_type').values({ name, admin_level }).returning('id').executeTakeFirstOrThrow()).id)
  }
  const ids = new Map<string, number>()
  const shapes: Array<{ location_id: number; geo_json: string }> = []
  const insert = async (place: Place, level: number, more: { parent_location_id?: number; latitude?: number; longitude?: number; lpd_status?: number }) => {
    const { id } = await trx
      .insertInto('location')
      .values({ name: place.name, location_code: place.code, location_type_id: typeId[level], ...more })
      .returning('id')
      .executeTakeFirstOrThrow()
    ids.set(place.name, id)
    shapes.push({ location_id: id, geo_json: feature(place.shape) })
    return id
  }
  const { country } = data
  const countryId = await insert(country, 0, { latitude: country.latitude, longitude: country.longitude })
  for (const province of country.provinces) {
    const provinceId = await insert(province, 1, { parent_location_id: countryId })
    for (const district of province.districts) await insert(district, 2, { parent_location_id: provinceId, lpd_status: district.lpd_status })
  }
  await rebuildTree(trx)
  await trx.insertInto('location_polygon').values(shapes).execute()
  return ids
}

/** Points an edge of a shape is drawn through per degree: at the same places on both sides of a border. */
const EDGE_STEPS = 8

/**
 * Where a point of the plane is drawn: moved by a smooth wave, a few kilometres, so that the demo's
 * places, stored as rectangles of whole degrees, have borders a person takes for a map's. The same
 * move for every shape keeps neighbours' borders one line (no gap, no overlap), and a move whose
 * slope stays under one keeps every shape a simple polygon.
 */
function warped([x, y]: [number, number]): [number, number] {
  const dx = 0.12 * Math.sin(2.3 * y + 0.7 * x) + 0.05 * Math.sin(5.1 * y - 1.3 * x)
  const dy = 0.12 * Math.sin(2.1 * x + 0.9 * y + 1) + 0.05 * Math.sin(4.7 * x + 1.1 * y)
  const round = (v: number) => Math.round(v * 1e5) / 1e5
  return [round(x + dx), round(y + dy)]
}

/** The points of a straight edge from `a` to `b`, every 1/EDGE_STEPS degree, `b` left for the next edge. */
function edgePoints([ax, ay]: [number, number], [bx, by]: [number, number]): Array<[number, number]> {
  const steps = Math.max(1, Math.round(Math.hypot(bx - ax, by - ay) * EDGE_STEPS))
  return Array.from({ length: steps }, (_, i): [number, number] => [ax + ((bx - ax) * i) / steps, ay + ((by - ay) * i) / steps])
}

/** A GeoJSON feature of a rectangle of whole degrees, its borders drawn through the wave. */
function feature([west, south, east, north]: Shape): string {
  const corners: Array<[number, number]> = [
    [west, south],
    [east, south],
    [east, north],
    [west, north],
  ]
  const ring = corners.flatMap((corner, i) => edgePoints(corner, corners[(i + 1) % 4])).map(warped)
  ring.push(ring[0])
  return JSON.stringify({ type: 'Feature', properties: {}, geometry: { type: 'Polygon', coordinates: [ring] } })
}

async function insertCampaigns(trx: Kysely<DB>, data: DemoDataSet): Promise<Map<string, number>> {
  const types = await trx
    .insertInto('campaign_type')
    .values(data.campaignTypes.map((name) => ({ name })))
    .returning(['id', 'name'])
    .execute()
  const typeId = new Map(types.map((t) => [t.name, t.id]))
  const campaigns = await trx
    .insertInto('campaign')
    .values(data.campaigns.map(({ type, ...campaign }) => ({ ...campaign, campaign_type_id: typeId.get(type) ?? fail(`unknown campaign type ${type}`) })))
    .returning(['id', 'name'])
    .execute()
  return new Map(campaigns.map((c) => [c.name, c.id]))
}

/** Indicators, their calculations, validation rules and tags; the ids by short name. */
async function insertIndicators(trx: Kysely<DB>, data: DemoDataSet): Promise<Map<string, number>> {
  const rows = await trx
    .insertInto('indicator')
    .values(data.indicators.map(({ tags: _tags, ...indicator }) => indicator))
    .returning(['id', 'short_name'])
    .execute()
  const ids = new Map(rows.map((r) => [r.short_name, r.id]))
  const id = (name: string) => ids.get(name) ?? fail(`the demo data names an unknown indicator: ${name}`)
  await trx
    .insertInto('calculated_indicator_component')
    .values(data.calculations.map((c) => ({ indicator_id: id(c.indicator), indicator_component_id: id(c.component), calculation: c.calculation })))
    .execute()
  // Implausible values are flagged (docs/decisions.md, "Validation rules").
  await trx
    .insertInto('validation_rule')
    .values(data.validationRules.map((r) => ({ name: r.name, left_indicator_id: id(r.left), operator: r.operator, right_indicator_id: id(r.right) })))
    .execute()
  // Tags without a parent first, so that a parent's id is known.
  const tagId = new Map<string, number>()
  for (const tag of [...data.tags.filter((t) => !t.parent), ...data.tags.filter((t) => t.parent)]) {
    const parent_tag_id = tag.parent ? (tagId.get(tag.parent) ?? fail(`unknown parent tag ${tag.parent}`)) : null
    const { id: created } = await trx.insertInto('indicator_tag').values({ tag_name: tag.name, parent_tag_id }).returning('id').executeTakeFirstOrThrow()
    tagId.set(tag.name, created)
  }
  const links = data.indicators.flatMap((indicator) =>
    indicator.tags.map((tag) => ({ indicator_id: id(indicator.short_name), indicator_tag_id: tagId.get(tag) ?? fail(`unknown tag ${tag}`) })),
  )
  if (links.length) await trx.insertInto('indicator_to_tag').values(links).execute()
  await refreshTagJson(trx)
  return ids
}

/**
 * Upload codes the demo knows: every location code and campaign name maps to its row, so a file in the
 * demo's terms needs only its indicator columns mapped (which the web app's upload page asks for).
 */
async function demoMappings(trx: Kysely<DB>) {
  await sql`insert into source_object_map (content_type, source_object_code, master_object_id, master_object_name)
    select 'location', location_code, id, name from location
    union all select 'campaign', name, id, name from campaign
    on conflict (content_type, source_object_code) do nothing`.execute(trx)
}

/** The dashboard and its charts, in the original front-end's `chart_json` shape, names turned into ids; owned by the first superuser. */
async function insertDashboard(
  trx: Kysely<DB>,
  dashboard: DemoDataSet['dashboard'],
  id: (kind: 'location' | 'campaign' | 'indicator', name: string) => number,
) {
  const owner_id = sql<number>`(select min(id) from auth_user where is_superuser)`
  const named = { indicator_ids: 'indicator', campaign_ids: 'campaign', location_ids: 'location' } as const
  const withIds = (chart: Chart) =>
    Object.fromEntries(
      Object.entries(chart).map(([key, value]) => {
        if (key in named) return [key, (value as string[]).map((name) => id(named[key as keyof typeof named], name))]
        if (key === 'indicator_colors')
          return [key, Object.fromEntries(Object.entries(value as Record<string, string>).map(([name, color]) => [id('indicator', name), color]))]
        return [key, value]
      }),
    )
  await trx
    .insertInto('custom_chart')
    .values(dashboard.charts.map(({ uuid, title, chart }) => ({ uuid, title, chart_json: JSON.stringify(withIds(chart)), owner_id })))
    .execute()
  await trx
    .insertInto('custom_dashboard')
    .values({ title: dashboard.title, description: dashboard.description, rows: JSON.stringify(dashboard.rows), owner_id })
    .execute()
}
