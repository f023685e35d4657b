// Reporting completeness (resources/campaign_completeness.ts): per parent, how many of the places that
// enter values have reported for a campaign, and which have not; a restricted user sees her part only.
import t from 'tap'
import { alice, build } from './helper.js'
import { client } from './api.js'
import { world } from './world.js'

t.test("a campaign's completeness: the places that reported, per parent, and the ones missing", async (t) => {
  const { app, aliceId } = await build(t)
  const api = client(app)
  const w = await world(api)
  const district = (await api.get(`/location/${w.a1}/`)).body.location_type_id
  const a2 = (await api.post('/location/', { name: 'a2', location_code: 'a2', location_type_id: district, parent_location_id: w.A })).body.id

  const res = await api.get(`/campaign_completeness/?campaign_id=${w.C}`)
  t.equal(res.status, 200, res.text)
  t.same(res.body.objects, [
    { location: { id: w.A, name: 'A' }, expected: 2, reported: 1, rate: 0.5, missing: [{ id: a2, name: 'a2' }] },
    { location: { id: w.B, name: 'B' }, expected: 1, reported: 1, rate: 1, missing: [] },
  ])
  t.same(
    (await api.get(`/campaign_completeness/?campaign_id=${w.C}&location_id=${w.B}`)).body.objects.map((o: { location: { id: number } }) => o.location.id),
    [w.B],
    'within a location',
  )
  // a2 reports: A is complete.
  t.equal((await api.post('/campaign_datapoint/', { indicator_id: w.n, location_id: a2, campaign_id: w.C, value: 3 })).status, 201)
  t.match((await api.get(`/campaign_completeness/?campaign_id=${w.C}`)).body.objects[0], { expected: 2, reported: 2, rate: 1, missing: [] })

  // A provincial officer of A sees A's places only, whatever location she names.
  t.equal((await api.post('/location_responsibility/', { user_id: aliceId, top_lvl_location_id: w.A })).status, 201)
  const asAlice = client(app, alice)
  t.same(
    (await asAlice.get(`/campaign_completeness/?campaign_id=${w.C}`)).body.objects.map((o: { location: { id: number } }) => o.location.id),
    [w.A],
  )
  t.same((await asAlice.get(`/campaign_completeness/?campaign_id=${w.C}&location_id=${w.B}`)).body.objects, [], 'B is not hers')

  const missing = await api.get('/campaign_completeness/')
  t.equal(missing.status, 400)
  t.match(missing.body.message, /campaign_id/)
})
