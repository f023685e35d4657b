// The small country the permission and authorization tests share, and users of each role
// (SECURITY.md, "Who may do what"): `admin` (superuser), `alice` (plain until a test gives her a
// responsibility), `erin` (metadata editor) and `bob` (plain user).
import type { Kysely } from 'kysely'
import type { DB } from '../schemas/index.js'
import { createApiKey, createUser } from '../lib/data/auth.js'
import { METADATA_EDITORS_GROUP } from '../lib/data/auth.js'
import type { client } from './api.js'

type Api = ReturnType<typeof client>

export const ERIN_KEY = 'e'.repeat(40)
export const BOB_KEY = 'c'.repeat(40)
export const erin = { authorization: `ApiKey erin:${ERIN_KEY}` }
export const bob = { authorization: `ApiKey bob:${BOB_KEY}` }

/** `erin`, a member of the metadata editors' group, and `bob`, a user with no group and no responsibility. */
export async function moreUsers(db: Kysely<DB>): Promise<{ erinId: number; bobId: number }> {
  const erinId = await createUser(db, { username: 'erin' })
  await createApiKey(db, erinId, ERIN_KEY)
  const group = await db.selectFrom('auth_group').select('id').where('name', '=', METADATA_EDITORS_GROUP).executeTakeFirstOrThrow()
  await db.insertInto('auth_user_groups').values({ user_id: erinId, group_id: group.id }).execute()
  const bobId = await createUser(db, { username: 'bob' })
  await createApiKey(db, bobId, BOB_KEY)
  return { erinId, bobId }
}

/** A unit square's polygon, for a location's shape in tests. */
export const SQUARE = {
  type: 'Polygon',
  coordinates: [
    [
      [0, 0],
      [1, 0],
      [1, 1],
      [0, 0],
    ],
  ],
}

/** POSTs `csv` as a document with the given headers' user, runs transform_upload; the document's id and the run's answer. */
export async function upload(api: Api, title: string, file_type: string, csv: string, headers?: Record<string, string>) {
  const doc = await api.post('/document/', { docfile: Buffer.from(csv).toString('base64'), doc_title: title, file_type }, headers)
  if (doc.status !== 201) throw new Error(doc.text)
  const run = await api.get(`/transform_upload/?document_id=${doc.body.id}`, headers)
  return { id: doc.body.id as number, run }
}

/** The id of a row a POST created (201), else the answer as an error. */
export async function created(res: Promise<{ status: number; body: { id: number }; text: string }>): Promise<number> {
  const r = await res
  if (r.status !== 201) throw new Error(r.text)
  return r.body.id
}

/** The types Country, Province and District, and `place(name, type, parent?)`: a location coded by its name. */
export async function locationLevels(api: Api) {
  const type = (name: string, admin_level: number) => created(api.post('/location_type/', { name, admin_level }))
  const [country, province, district] = [await type('Country', 0), await type('Province', 1), await type('District', 2)]
  const place = (name: string, location_type_id: number, parent_location_id?: number) =>
    created(api.post('/location/', { name, location_code: name, location_type_id, parent_location_id }))
  return { country, province, district, place }
}

/** Root R → provinces A and B → districts a1 and b1, with data everywhere, written by the admin. */
export async function world(api: Api) {
  const id = created
  const { country, province, district, place } = await locationLevels(api)
  const R = await place('R', country)
  const A = await place('A', province, R)
  const B = await place('B', province, R)
  const a1 = await place('a1', district, A)
  const b1 = await place('b1', district, B)
  const ct = await id(api.post('/campaign_type/', { name: 'NID' }))
  const C = await id(api.post('/campaign/', { name: 'C', campaign_type_id: ct, start_date: '2016-01-01', end_date: '2016-01-05' }))
  const n = await id(api.post('/indicator/', { name: 'n', short_name: 'n', data_format: 'int' }))
  const lpd = await id(api.post('/indicator/', { name: 'LPD', short_name: 'LPD', data_format: 'class' }))
  const cases = await id(api.post('/indicator/', { name: 'cases', short_name: 'cases', data_format: 'date_int', resource_name: 'date' }))
  for (const [location, value] of [
    [a1, 1],
    [b1, 2],
    [B, 5],
  ]) {
    await id(api.post('/campaign_datapoint/', { indicator_id: n, location_id: location, campaign_id: C, value }))
    await id(api.post('/campaign_datapoint/', { indicator_id: lpd, location_id: location, campaign_id: C, value: 1 }))
  }
  // An uploaded campaign file (doc_datapoint, campaign_doc_result) and date file (date_doc_result).
  for (const [content_type, code, master] of [
    ['location', 'a1', a1],
    ['location', 'b1', b1],
    ['campaign', 'C', C],
    ['indicator', 'n', n],
    ['indicator', 'cases', cases],
  ] as const) {
    await id(api.post('/source_object_map/', { content_type, source_object_code: code, master_object_id: master }))
  }
  const uploaded = async (title: string, file_type: string, csv: string) => {
    const { id, run } = await upload(api, title, file_type, csv)
    if (run.status !== 200) throw new Error(run.text)
    return id
  }
  const campaignDoc = await uploaded('campaign.csv', 'campaign', 'campaign,geocode,n\nC,a1,10\nC,b1,20\n')
  const dateDoc = await uploaded('date.csv', 'date', 'unique_key,geocode,data_date,cases\n1,a1,2015-01-01,1\n2,b1,2015-01-01,2\n3,b1,2015-02-01,3\n')
  for (const location of [a1, b1]) {
    const geo = await api.post('/geo/', { location_id: location, geo_json: SQUARE })
    if (geo.status !== 201) throw new Error(geo.text)
  }
  return { R, A, B, a1, b1, C, n, lpd, cases, campaignDoc, dateDoc }
}

/** A dashboard of three charts over the world: provinces' n, districts' n (a table), cases by month. */
export async function dashboardOf(api: Api, w: Awaited<ReturnType<typeof world>>) {
  const chart = async (uuid: string, chart_json: Record<string, unknown>) => {
    const res = await api.post('/custom_chart/', { uuid, title: uuid, chart_json })
    if (res.status !== 201) throw new Error(res.text)
    return res.body.id as number
  }
  const provinces = await chart('provinces', { type: 'ColumnChart', indicator_ids: [w.n], campaign_ids: [w.C], location_ids: [w.R], location_depth: 1 })
  const districts = await chart('districts', { type: 'TableChart', indicator_ids: [w.n], campaign_ids: [w.C], location_ids: [w.R], location_depth: 2 })
  // Saved as the original front-end saved it: chart_json as a JSON string.
  const cases = await chart(
    'cases',
    JSON.stringify({
      type: 'LineChart',
      indicator_ids: [w.cases],
      location_ids: [w.R],
      location_depth: 0,
      start_date: '2015-01-01',
      end_date: '2015-12-31',
      groupByTime: 'month',
    }) as never,
  )
  const dashboard = await api.post('/dashboard/', { title: 'Overview', rows: [{ charts: ['provinces', 'districts'] }, { charts: ['cases'] }] })
  if (dashboard.status !== 201) throw new Error(dashboard.text)
  return { id: dashboard.body.id as number, provinces, districts, cases }
}
