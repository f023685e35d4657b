// Follow-up of values (resources/datapoint_followup.ts): a value marked with a comment, listed as open
// for its campaign, resolved with a comment, both kept with who and when; one open follow-up per
// value; a restricted user marks and reads within her subtree only; every mistake a 4xx naming it.
import t from 'tap'
import { alice, build } from './helper.js'
import { client } from './api.js'
import { world } from './world.js'

t.test('a value followed up: marked with a comment, open for its campaign, resolved with a comment, both kept', async (t) => {
  const { app, aliceId } = await build(t)
  const api = client(app)
  const w = await world(api)
  const valueAt = async (location: number) =>
    (await api.get(`/campaign_datapoint/?indicator__in=${w.n}&campaign__in=${w.C}&location_id__in=${location}`)).body.objects[0] as {
      id: number
      value: number
    }
  const a1 = await valueAt(w.a1)
  const b1 = await valueAt(w.b1)

  const marked = await api.post('/datapoint_followup/', { datapoint_id: a1.id, comment: '  Ten times last round: check the tally sheet. ' })
  t.equal(marked.status, 201, marked.text)
  t.match(marked.body, {
    datapoint_id: a1.id,
    location_id: w.a1,
    indicator_id: w.n,
    campaign_id: w.C,
    value: a1.value,
    comment: 'Ten times last round: check the tally sheet.',
    created_by_id: Number,
    resolved_at: null,
    resolution_comment: null,
  })
  const again = await api.post('/datapoint_followup/', { datapoint_id: a1.id, comment: 'again' })
  t.equal(again.status, 409, 'one open follow-up per value')
  t.match(again.body, { code: 'ALREADY_FOLLOWED_UP', message: new RegExp(`already has an open follow-up \\(${marked.body.id}\\)`) })
  t.equal((await api.post('/datapoint_followup/', { datapoint_id: b1.id, comment: 'b1 too' })).status, 201)

  const open = async (as = api) => (await as.get(`/datapoint_followup/?campaign_id=${w.C}&resolved_at__isnull=true&order_by=id`)).body
  t.equal((await open()).meta.total_count, 2, "the campaign's open follow-ups, counted")

  const resolved = await api.patch(`/datapoint_followup/${marked.body.id}/`, { resolution_comment: 'Tally sheet says 10: the value is right.' })
  t.equal(resolved.status, 200, resolved.text)
  t.match(resolved.body, {
    comment: 'Ten times last round: check the tally sheet.',
    resolution_comment: 'Tally sheet says 10: the value is right.',
    resolved_by_id: Number,
  })
  t.ok(resolved.body.resolved_at, 'when it was resolved')
  t.same(
    (await open()).objects.map((f: { datapoint_id: number }) => f.datapoint_id),
    [b1.id],
    'resolved: no longer open',
  )
  const history = (await api.get(`/datapoint_followup/?datapoint_id=${a1.id}`)).body.objects
  t.equal(history.length, 1, 'the value’s follow-up kept, marked and resolved')
  t.equal(
    (await api.post('/datapoint_followup/', { datapoint_id: a1.id, comment: 'Changed again: check once more.' })).status,
    201,
    'a resolved value may be followed up again',
  )

  // Mistakes: 4xx naming them, nothing written.
  const before = (await api.get('/datapoint_followup/?limit=0')).body.objects.length
  for (const [body, status, named] of [
    [{ datapoint_id: a1.id }, 400, /comment/],
    [{ datapoint_id: b1.id, comment: '   ' }, 400, /comment: says what to check/],
    [{ datapoint_id: 999999, comment: 'x' }, 400, /datapoint_id: names no value \(999999\)/],
    [{ datapoint_id: b1.id, comment: 'x', resolution_comment: 'y' }, 400, /resolution_comment: is given when resolving/],
  ] as const) {
    const res = await api.post('/datapoint_followup/', body)
    t.equal(res.status, status, JSON.stringify(body))
    t.match(res.body.message, named)
  }
  t.equal((await api.get('/datapoint_followup/?limit=0')).body.objects.length, before, 'nothing written')
  const twice = await api.patch(`/datapoint_followup/${marked.body.id}/`, { resolution_comment: 'twice' })
  t.equal(twice.status, 409)
  t.equal(twice.body.code, 'ALREADY_RESOLVED')
  const bOpen = (await open()).objects.find((f: { datapoint_id: number }) => f.datapoint_id === b1.id)
  t.equal((await api.patch(`/datapoint_followup/${bOpen.id}/`, { resolution_comment: '' })).status, 400, 'resolved with a comment only')
  const rewritten = await api.patch(`/datapoint_followup/${bOpen.id}/`, { comment: 'Something else', resolution_comment: 'x' })
  t.equal(rewritten.status, 400, 'a mark is not rewritten')
  t.match(rewritten.body.message, /comment: cannot be changed/)

  // A provincial officer of A: A's values only.
  t.equal((await api.post('/location_responsibility/', { user_id: aliceId, top_lvl_location_id: w.A })).status, 201)
  const asAlice = client(app, alice)
  t.same(
    (await open(asAlice)).objects.map((f: { location_id: number }) => f.location_id),
    [w.a1],
    'her open follow-ups only',
  )
  const outside = await asAlice.post('/datapoint_followup/', { datapoint_id: b1.id, comment: 'not mine' })
  t.equal(outside.status, 403)
  t.equal(outside.body.code, 'LOCATION_FORBIDDEN')
  t.equal((await asAlice.patch(`/datapoint_followup/${bOpen.id}/`, { resolution_comment: 'not mine' })).status, 404, 'b1’s is not hers to resolve')
  const aOpen = (await open(asAlice)).objects[0]
  t.equal((await asAlice.patch(`/datapoint_followup/${aOpen.id}/`, { resolution_comment: 'Checked.' })).status, 200, 'hers to resolve')
})
