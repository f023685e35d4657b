// `campaign/?has_data_for=<location>`: the campaigns with a value at a location or below it (what a
// dashboard's campaign picker offers), on both engines; a restricted user asks within her part only.
import t from 'tap'
import { admin, alice, build } from './helper.js'
import { client } from './api.js'
import { world } from './world.js'

t.test('has_data_for lists the campaigns with a value at the location or below it', async (t) => {
  const { app, aliceId } = await build(t)
  const api = client(app)
  const { R, A, B, a1, b1, C, n, lpd } = await world(api)
  const campaign = async (name: string, start_date: string) =>
    (await api.post('/campaign/', { name, campaign_type_id: (await api.get('/campaign_type/')).body.objects[0].id, start_date, end_date: start_date })).body.id
  const empty = await campaign('D', '2016-02-01')
  const onlyB = await campaign('E', '2016-03-01')
  t.equal((await api.post('/campaign_datapoint/', { indicator_id: n, location_id: b1, campaign_id: onlyB, value: 3 })).status, 201)

  const names = async (query: string, headers = admin) => {
    const res = await app.inject({ url: `/api/v1/campaign/?order_by=start_date${query}`, headers })
    return res.statusCode === 200 ? res.json().objects.map((c: { name: string }) => c.name) : res.json()
  }
  t.same(await names(''), ['C', 'D', 'E'], 'without it: every campaign')
  t.same(await names(`&has_data_for=${R}`), ['C', 'E'], 'the country: C and E (D has no value anywhere)')
  t.same(await names(`&has_data_for=${A}`), ['C'], 'province A: C only')
  t.same(await names(`&has_data_for=${B}`), ['C', 'E'], 'province B: E’s value is at its district b1')
  t.same(await names(`&has_data_for=${a1}`), ['C'], 'a district')
  t.equal((await api.post('/campaign_datapoint/', { indicator_id: n, location_id: a1, campaign_id: onlyB, value: 4 })).status, 201)
  t.same(await names(`&has_data_for=${A}`), ['C', 'E'], 'a new value shows at once (the read cache kept honest)')
  t.equal(
    (
      await api.delete(
        `/campaign_datapoint/${(await api.get(`/campaign_datapoint/?indicator__in=${n}&campaign__in=${onlyB}&location_id=${a1}`)).body.objects[0].id}/`,
      )
    ).status,
    204,
  )
  t.ok(empty && C, 'the campaigns exist')
  // Only the values of the named indicators count (a dashboard's charts' indicators).
  t.same(await names(`&has_data_for=${R}&has_data_of=${n}`), ['C', 'E'], 'values of n: C and E')
  t.same(await names(`&has_data_for=${R}&has_data_of=${lpd}`), ['C'], 'values of LPD: C only')
  t.same(await names(`&has_data_for=${B}&has_data_of=${lpd},${n}`), ['C', 'E'], 'either of two indicators')
  t.match(
    await names(`&has_data_of=${n}`),
    { statusCode: 400, code: 'MISSING_PARAMETER', message: /has_data_of.*has_data_for/ },
    'without a location: 400 naming both',
  )
  t.match(await names(`&has_data_for=${R}&has_data_of=n`), { statusCode: 400, message: /has_data_of/ }, 'not ids: 400 naming it')
  t.match(await names('&has_data_for=north'), { statusCode: 400, code: 'INVALID_VALUE', message: /has_data_for/ }, 'not an id: 400 naming it')

  t.equal((await api.post('/location_responsibility/', { user_id: aliceId, top_lvl_location_id: A })).status, 201)
  t.same(await names(`&has_data_for=${A}`, alice), ['C'], 'a user limited to A: within A')
  t.match(await names(`&has_data_for=${B}`, alice), { statusCode: 403, code: 'LOCATION_FORBIDDEN' }, 'outside her part: 403, nothing told')
  // The indicators only narrow what her location allows: outside her part, still a 403 before any value is read.
  t.same(await names(`&has_data_for=${A}&has_data_of=${n}`, alice), ['C'], 'within A, of n')
  t.same(await names(`&has_data_for=${A}&has_data_of=${lpd}`, alice), ['C'], 'within A, of LPD')
  t.match(await names(`&has_data_for=${B}&has_data_of=${n}`, alice), { statusCode: 403, code: 'LOCATION_FORBIDDEN' }, 'B with indicators: 403 too')
  t.match(await names(`&has_data_for=${R}&has_data_of=${n}`, alice), { statusCode: 403, code: 'LOCATION_FORBIDDEN' }, 'the country above her: 403')
})
