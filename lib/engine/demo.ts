// A small, self-made demo data set: the fictional country of Veridia with 3 provinces and 9 districts,
// campaign types and campaigns, indicators with tags and calculations, values entered at the districts
// (aggregated and calculated by the engine), monthly case counts, fictional polygons for the map and a
// dashboard of five charts. `npm start` loads it into an empty embedded database so a newcomer sees
// real answers at once (DEMO_DATA=0 skips it).
import { sql, type Kysely } from 'kysely'
import type { DB } from '../../schemas/index.js'
import { rebuildTree } from '../data/location-tree.js'
import { refreshTagJson } from '../data/caches.js'
import { attribute } from '../data/attribution.js'
import { dataEntrySubmission, dateKey, enterCampaignValue } from './data-entry.js'
import { recomputeCampaign } from './recompute.js'

const PROVINCES: Record<string, string[]> = {
  Northmarch: ['Ashford', 'Brindle', 'Coldwater'],
  Eastvale: ['Dunmore', 'Eastwick', 'Fallow'],
  Southreach: ['Glimmer', 'Harrow', 'Ivydale'],
}

/** Loads the demo set when the database has no location; returns whether it did. */
export async function loadDemoData(db: Kysely<DB>): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    await attribute(trx, { via: 'demo' })
    if (await trx.selectFrom('location').select('id').limit(1).executeTakeFirst()) return false

    const typeId: Record<string, number> = {}
    for (const [admin_level, name] of ['Country', 'Province', 'District'].entries()) {
      const existing = await trx.selectFrom('location_type').select('id').where('name', '=', name).executeTakeFirst()
      typeId[name] = existing?.id ?? (await trx.insertInto('location_type').values({ name, admin_level }).returning('id').executeTakeFirstOrThrow()).id
    }
    const country = await trx
      .insertInto('location')
      .values({ name: 'Veridia', location_code: 'VD', location_type_id: typeId.Country, latitude: 10.5, longitude: 20.5 })
      .returning('id')
      .executeTakeFirstOrThrow()
    for (const [p, [province, districts]] of Object.entries(PROVINCES).entries()) {
      const { id } = await trx
        .insertInto('location')
        .values({ name: province, location_code: `VD${p + 1}`, location_type_id: typeId.Province, parent_location_id: country.id })
        .returning('id')
        .executeTakeFirstOrThrow()
      await trx
        .insertInto('location')
        .values(
          districts.map((name, d) => ({
            name,
            location_code: `VD${p + 1}${d + 1}`,
            location_type_id: typeId.District,
            parent_location_id: id,
            lpd_status: (d % 3) + 1,
          })),
        )
        .execute()
    }
    await rebuildTree(trx)

    const districtIds = (await trx.selectFrom('location').select('id').where('location_type_id', '=', typeId.District).orderBy('id').execute()).map((r) => r.id)

    const [nid, snid] = await trx
      .insertInto('campaign_type')
      .values([{ name: 'National Immunization Days (NID)' }, { name: 'Sub-National Immunization Days (SNID)' }])
      .returning('id')
      .execute()
    const campaigns = await trx
      .insertInto('campaign')
      .values([
        { name: 'March 2016 - NID - OPV', campaign_type_id: nid.id, start_date: '2016-03-01', end_date: '2016-03-31' },
        { name: 'June 2016 - SNID - OPV', campaign_type_id: snid.id, start_date: '2016-06-01', end_date: '2016-06-30' },
        { name: 'October 2016 - NID - bOPV', campaign_type_id: nid.id, start_date: '2016-10-01', end_date: '2016-10-31' },
      ])
      .returning('id')
      .execute()

    const indicators = await trx
      .insertInto('indicator')
      .values([
        { short_name: 'Children vaccinated', name: 'Number of children vaccinated', data_format: 'int' },
        { short_name: 'Children missed', name: 'Number of children missed', data_format: 'int' },
        { short_name: 'Children targeted', name: 'Number of children targeted', data_format: 'int' },
        // Lower is better: 3 % or less missed is good, 4 % or more bad (the dashboards' traffic lights).
        { short_name: 'Percent missed', name: 'Percentage of targeted children missed', data_format: 'pct', good_bound: 0.03, bad_bound: 0.04 },
        { short_name: 'Access challenged', name: 'District is access-challenged', data_format: 'bool' },
        { short_name: 'Polio cases', name: 'Confirmed polio cases', data_format: 'date_int', resource_name: 'date' },
      ])
      .returning(['id', 'short_name'])
      .execute()
    const id = (short: string) => indicators.find((i) => i.short_name === short)!.id
    await trx
      .insertInto('calculated_indicator_component')
      .values([
        { indicator_id: id('Children targeted'), indicator_component_id: id('Children vaccinated'), calculation: 'PART_TO_BE_SUMMED' },
        { indicator_id: id('Children targeted'), indicator_component_id: id('Children missed'), calculation: 'PART_TO_BE_SUMMED' },
        { indicator_id: id('Percent missed'), indicator_component_id: id('Children missed'), calculation: 'NUMERATOR' },
        { indicator_id: id('Percent missed'), indicator_component_id: id('Children targeted'), calculation: 'DENOMINATOR' },
      ])
      .execute()
    // Implausible values are flagged: neither part of the target may exceed it (docs/decisions.md, "Validation rules").
    await trx
      .insertInto('validation_rule')
      .values([
        { name: 'Children missed ≤ Children targeted', left_indicator_id: id('Children missed'), operator: '<=', right_indicator_id: id('Children targeted') },
        {
          name: 'Children vaccinated ≤ Children targeted',
          left_indicator_id: id('Children vaccinated'),
          operator: '<=',
          right_indicator_id: id('Children targeted'),
        },
      ])
      .execute()
    const [coverage, surveillance] = await trx
      .insertInto('indicator_tag')
      .values([{ tag_name: 'Coverage' }, { tag_name: 'Surveillance' }])
      .returning('id')
      .execute()
    const [missed] = await trx
      .insertInto('indicator_tag')
      .values([{ tag_name: 'Missed children', parent_tag_id: coverage.id }])
      .returning('id')
      .execute()
    await trx
      .insertInto('indicator_to_tag')
      .values([
        { indicator_id: id('Children vaccinated'), indicator_tag_id: coverage.id },
        { indicator_id: id('Children missed'), indicator_tag_id: missed.id },
        { indicator_id: id('Percent missed'), indicator_tag_id: missed.id },
        { indicator_id: id('Polio cases'), indicator_tag_id: surveillance.id },
      ])
      .execute()
    await refreshTagJson(trx)

    // Values entered at the districts (as data entries), then each campaign recomputed: provinces and
    // the country get sums, 'Children targeted' the sum of its parts, 'Percent missed' the ratio.
    for (const [c, campaign] of campaigns.entries()) {
      for (const [d, location_id] of districtIds.entries()) {
        const entries: Array<[string, number]> = [
          ['Children vaccinated', 900 + 37 * d + 50 * c],
          ['Children missed', 20 + ((7 * d + 11 * c) % 45)],
          ['Access challenged', d % 4 === 0 ? 1 : 0],
        ]
        for (const [short, value] of entries) {
          await enterCampaignValue(trx, { indicator_id: id(short), location_id, campaign_id: campaign.id, value })
        }
      }
      await recomputeCampaign(trx, campaign.id)
    }
    // Monthly polio cases of 2016 at three districts.
    const submission = await dataEntrySubmission(trx)
    const cases = districtIds.slice(0, 3).flatMap((location_id, d) =>
      Array.from({ length: 12 }, (_, m) => {
        const row = { indicator_id: id('Polio cases'), location_id, data_date: `2016-${String(m + 1).padStart(2, '0')}-01` }
        return { ...row, value: (d + m) % 3, source_submission_id: submission, unique_index: dateKey(row), precedence_at: new Date().toISOString() }
      }),
    )
    await trx.insertInto('datapoint').values(cases).execute()

    await demoPolygons(trx, country.id)
    await demoDashboard(trx, id, campaigns[0].id, country.id)
    await demoMappings(trx)
    return true
  })
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

/**
 * Fictional shapes for the map: Veridia a rectangle around its coordinates, each province a third of
 * it (west to east), each district a third of its province (south to north).
 */
async function demoPolygons(trx: Kysely<DB>, countryId: number) {
  const box = (west: number, south: number, east: number, north: number) =>
    JSON.stringify({
      type: 'Feature',
      properties: {},
      geometry: {
        type: 'Polygon',
        coordinates: [
          [
            [west, south],
            [east, south],
            [east, north],
            [west, north],
            [west, south],
          ],
        ],
      },
    })
  const provinces = await trx.selectFrom('location').select('id').where('parent_location_id', '=', countryId).orderBy('id').execute()
  const rows = [{ location_id: countryId, geo_json: box(19, 9, 22, 12) }]
  for (const [p, province] of provinces.entries()) {
    // Provinces as bands from north to south, their districts side by side: shapes wide enough for
    // their names on a map.
    rows.push({ location_id: province.id, geo_json: box(19, 11 - p, 22, 12 - p) })
    const districts = await trx.selectFrom('location').select('id').where('parent_location_id', '=', province.id).orderBy('id').execute()
    for (const [d, district] of districts.entries()) rows.push({ location_id: district.id, geo_json: box(19 + d, 11 - p, 20 + d, 12 - p) })
  }
  await trx.insertInto('location_polygon').values(rows).execute()
}

/** The demo dashboard: five charts of different types, in the original front-end's `chart_json` shape. */
async function demoDashboard(trx: Kysely<DB>, id: (short: string) => number, firstCampaign: number, countryId: number) {
  const owner_id = sql<number>`(select min(id) from auth_user where is_superuser)`
  // Saved for the viewer's location and its children: the country's provinces for whoever sees it whole,
  // her districts for a provincial officer (location_ids stays for readers that know only those).
  const byProvince = { campaign_ids: [firstCampaign], location_ids: [countryId], location_depth: 1, relative_location: 'viewer' }
  const charts: Array<[string, string, Record<string, unknown>]> = [
    ['demo-missed-by-province', 'Missed children', { type: 'ColumnChart', indicator_ids: [id('Children missed')], ...byProvince }],
    ['demo-vaccinated-share', 'Children vaccinated, share', { type: 'PieChart', indicator_ids: [id('Children vaccinated')], ...byProvince }],
    [
      'demo-missed-map',
      'Percent missed, on the map',
      { type: 'ChoroplethMap', indicator_ids: [id('Percent missed')], ...byProvince, indicator_colors: { [id('Percent missed')]: '#d7301f' } },
    ],
    [
      'demo-polio-cases',
      'Polio cases by month, 2016',
      {
        type: 'LineChart',
        indicator_ids: [id('Polio cases')],
        location_ids: [countryId],
        location_depth: 0,
        start_date: '2016-01-01',
        end_date: '2016-12-31',
        groupByTime: 'month',
      },
    ],
    [
      'demo-districts-table',
      'Districts: targeted, missed, percent missed',
      {
        type: 'TableChart',
        indicator_ids: [id('Children targeted'), id('Children missed'), id('Percent missed')],
        campaign_ids: [firstCampaign],
        location_ids: [countryId],
        location_depth: 2,
      },
    ],
  ]
  await trx
    .insertInto('custom_chart')
    .values(charts.map(([uuid, title, chart]) => ({ uuid, title, chart_json: JSON.stringify(chart), owner_id })))
    .execute()
  const uuids = charts.map(([uuid]) => uuid)
  await trx
    .insertInto('custom_dashboard')
    .values({
      title: 'Campaign overview',
      description: 'Demo dashboard',
      rows: JSON.stringify([
        { layout: 2, charts: uuids.slice(0, 2) },
        { layout: 2, charts: uuids.slice(2, 4) },
        { layout: 1, charts: uuids.slice(4) },
      ]),
      owner_id,
    })
    .execute()
}
