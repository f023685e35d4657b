// The numbers a person reads on the demo dashboard are right after an ordinary correction: a district
// uploads its own "Children targeted" for October (1,000 instead of the 1,174 the engine calculated),
// and every chart's value at a location is the sum of its children's (a percent, its parts' ratio).
import t from 'tap'
import { build } from './helper.js'
import { client } from './api.js'
import { loadDemoData } from '../lib/engine/demo.js'

type Row = { location_id: number; indicator_id: number; campaign_id: number; value: number | null }

t.test('the demo dashboard after a district corrects its targeted: every total is its children’s', async (t) => {
  const { app, db } = await build(t)
  await loadDemoData(db)
  const api = client(app)
  const indicator = async (short: string) => (await db.selectFrom('indicator').select('id').where('short_name', '=', short).executeTakeFirstOrThrow()).id
  const [vaccinated, missed, targeted, percent] = [
    await indicator('Children vaccinated'),
    await indicator('Children missed'),
    await indicator('Children targeted'),
    await indicator('Percent missed'),
  ]
  const october = await db.selectFrom('campaign').select(['id', 'name']).where('name', 'like', 'October%').executeTakeFirstOrThrow()
  const district = await db
    .selectFrom('location')
    .select(['id', 'location_code', 'parent_location_id'])
    .where('location_code', '=', 'VD11')
    .executeTakeFirstOrThrow()
  const mapped = await db
    .selectFrom('source_object_map')
    .select('id')
    .where('content_type', '=', 'indicator')
    .where('source_object_code', '=', 'Children targeted')
    .executeTakeFirst()
  if (!mapped) await api.post('/source_object_map/', { content_type: 'indicator', source_object_code: 'Children targeted', master_object_id: targeted })

  const value = async (i: number, location: number) => {
    const res = await api.get(`/campaign_datapoint/?indicator__in=${i}&campaign__in=${october.id}&location_id__in=${location}`)
    return res.body.objects[0]?.value as number | undefined
  }
  const before = await value(targeted, district.id)
  t.not(before, 1000, `the district's targeted was calculated (${before})`)
  const csv = `campaign,geocode,Children targeted\n${october.name},${district.location_code},1000\n`
  const doc = await api.post('/document/', { docfile: Buffer.from(csv).toString('base64'), doc_title: 'recount.csv', file_type: 'campaign' })
  t.equal(doc.status, 201, doc.text)
  const run = await api.get(`/transform_upload/?document_id=${doc.body.id}`)
  t.equal(run.status, 200, run.text)
  t.equal(await value(targeted, district.id), 1000, 'the correction is saved')

  const children = async (location: number) =>
    (await db.selectFrom('location').select('id').where('parent_location_id', '=', location).execute()).map((l) => l.id)
  /** The sum of the children's values of `i` at `location`, from the API. */
  const sumOfChildren = async (i: number, location: number) => {
    let total = 0
    for (const child of await children(location)) total += (await value(i, child)) ?? 0
    return total
  }
  const dashboard = (await db.selectFrom('custom_dashboard').select('id').orderBy('id').executeTakeFirstOrThrow()).id
  const data = await api.get(`/dashboard/${dashboard}/data/?campaign=${october.id}`)
  t.equal(data.status, 200, data.text)
  let compared = 0
  for (const [chart, { objects }] of Object.entries(data.body.charts) as Array<[string, { objects: Row[] }]>) {
    for (const row of objects) {
      if (row.campaign_id !== october.id || row.value === null) continue
      if (row.indicator_id === percent) {
        // At a parent, its children's targeted added up; at a district, its own.
        const parent = (await children(row.location_id)).length > 0
        const m = await value(missed, row.location_id)
        const total = parent ? await sumOfChildren(targeted, row.location_id) : await value(targeted, row.location_id)
        t.ok(Math.abs(row.value - m! / total!) < 1e-9, `chart ${chart}: percent missed at ${row.location_id} is missed ÷ targeted (${m} ÷ ${total})`)
        compared++
      } else if ([vaccinated, missed, targeted].includes(row.indicator_id)) {
        const below = await children(row.location_id)
        if (!below.length) continue
        t.equal(
          row.value,
          await sumOfChildren(row.indicator_id, row.location_id),
          `chart ${chart}: indicator ${row.indicator_id} at ${row.location_id} is its children's sum`,
        )
        compared++
      }
    }
  }
  t.ok(compared >= 6, `every province value of the charts compared (${compared})`)
  // The province and the country, as the scenario names them.
  const province = district.parent_location_id!
  const country = (await db.selectFrom('location').select('parent_location_id').where('id', '=', province).executeTakeFirstOrThrow()).parent_location_id!
  t.equal(await value(targeted, province), await sumOfChildren(targeted, province), 'the province’s targeted: its districts’ sum')
  t.equal(await value(targeted, country), await sumOfChildren(targeted, country), 'the country’s: its provinces’ sum')
  t.ok((await value(targeted, province))! > 3000, 'not the corrected district’s 1,000')
})
