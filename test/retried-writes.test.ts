// Retried and conditional data writes (docs/decisions.md, "Retried writes"): an Idempotency-Key makes
// a repeated POST or PATCH answer its first answer and write nothing again; If-Match with a row's ETag
// makes a PATCH refuse (412, with the current row) a row that changed since it was read.
import t from 'tap'
import { sql } from 'kysely'
import { admin, alice, build } from './helper.js'
import { client } from './api.js'
import { moreUsers, bob, world } from './world.js'
import { purgeExpiredIdempotencyKeys } from '../lib/api/idempotency.js'

async function setup(t: Parameters<typeof build>[0]) {
  const harness = await build(t)
  const api = client(harness.app)
  await moreUsers(harness.db)
  const w = await world(api)
  const entries = async () => Number((await sql<{ n: string }>`select count(*) as n from datapoint_history`.execute(harness.db)).rows[0].n)
  return { ...harness, api, w, entries }
}

const key = (k: string) => ({ 'idempotency-key': `"${k}"` })

t.test('a POST repeated with its Idempotency-Key answers the first answer and writes once', async (t) => {
  const { api, w, entries } = await setup(t)
  const body = { indicator_id: w.n, location_id: w.A, campaign_id: w.C, value: 7 }
  const before = await entries()
  const first = await api.post('/campaign_datapoint/', body, { ...bob, ...key('k-1') })
  t.equal(first.status, 201, first.text)
  t.ok(first.body.validation, 'the answer carries its validation')
  const written = await entries()
  t.ok(written > before, 'the first write is in the history')
  const again = await api.post('/campaign_datapoint/', body, { ...bob, ...key('k-1') })
  t.equal(again.status, 201, 'the same status, not 409: the first answer')
  t.equal(again.text, first.text, 'byte for byte')
  t.equal(again.headers.location, first.headers.location)
  t.equal(again.headers.etag, first.headers.etag)
  t.equal(await entries(), written, 'nothing written again')
  // The same JSON spaced otherwise is the same request.
  t.equal((await api.post('/campaign_datapoint/', JSON.stringify(body, null, 2), { ...bob, ...key('k-1'), 'content-type': 'application/json' })).status, 201)

  const other = await api.post('/campaign_datapoint/', { ...body, value: 8 }, { ...bob, ...key('k-1') })
  t.equal(other.status, 422, 'the same key with another body')
  t.equal(other.body.code, 'IDEMPOTENCY_KEY_REUSED')
  // Keys are each user's own: another user's k-1 is a new request (here, a real 409: the row exists).
  t.equal((await api.post('/campaign_datapoint/', body, { ...alice, ...key('k-1') })).status, 409, 'alice under the same key writes for herself')
  t.equal((await api.post('/campaign_datapoint/', body, { ...bob, ...key('') })).status, 400, 'an empty key')
  t.equal((await api.post('/campaign_datapoint/', body, { ...bob, ...key('x'.repeat(256)) })).status, 400, 'a key too long')
})

t.test('a refused write keeps no key: the mended request goes through under it', async (t) => {
  const { api, w } = await setup(t)
  const refused = await api.post('/campaign_datapoint/', { indicator_id: w.n, location_id: w.A, campaign_id: w.C }, { ...bob, ...key('k-2') })
  t.equal(refused.status, 400)
  const mended = await api.post('/campaign_datapoint/', { indicator_id: w.n, location_id: w.A, campaign_id: w.C, value: 3 }, { ...bob, ...key('k-2') })
  t.equal(mended.status, 201, 'nothing was kept of the refusal')
})

t.test('PATCH: If-Match with the ETag of a GET writes; a stale one is 412 with the current row', async (t) => {
  const { api, w, entries } = await setup(t)
  const rows = await api.get(`/campaign_datapoint/?indicator__in=${w.n}&campaign__in=${w.C}&location_id__in=${w.a1}`)
  const id = rows.body.objects[0].id as number
  const read = await api.get(`/campaign_datapoint/${id}/`, bob)
  const etag = read.headers.etag as string
  t.match(etag, /^"[\w-]+"$/, 'a GET of the row gives its strong ETag')
  const mine = await api.patch(`/campaign_datapoint/${id}/`, { value: 11 }, { ...bob, 'if-match': etag, ...key('p-1') })
  t.equal(mine.status, 200, mine.text)
  t.equal(mine.body.value, 11)
  t.not(mine.headers.etag, etag, 'the answer carries the new version')
  t.equal(mine.headers.etag, (await api.get(`/campaign_datapoint/${id}/`, bob)).headers.etag, 'which a GET gives too')
  const history = await entries()
  // The same PATCH again (a lost answer): the first answer, though its If-Match no longer holds.
  const repeat = await api.patch(`/campaign_datapoint/${id}/`, { value: 11 }, { ...bob, 'if-match': etag, ...key('p-1') })
  t.equal(repeat.status, 200)
  t.equal(repeat.text, mine.text)
  t.equal(await entries(), history)
  // Someone else with the old ETag is refused, and shown what is there now.
  const stale = await api.patch(`/campaign_datapoint/${id}/`, { value: 12 }, { ...admin, 'if-match': etag })
  t.equal(stale.status, 412, stale.text)
  t.equal(stale.body.code, 'PRECONDITION_FAILED')
  t.equal(stale.body.details.current.value, 11, 'the current row')
  t.equal(stale.headers.etag, mine.headers.etag, 'and its ETag')
  t.equal(await entries(), history, 'nothing written')
  t.equal(
    (await api.patch(`/campaign_datapoint/${id}/`, { value: 12 }, { ...admin, 'if-match': `W/${mine.headers.etag}` })).status,
    412,
    'a weak tag never matches',
  )
  t.equal((await api.patch(`/campaign_datapoint/${id}/`, { value: 12 }, { ...admin, 'if-match': '*' })).status, 200, '* matches any version')
  t.equal(
    (await api.patch(`/campaign_datapoint/${id}/`, { value: 13 }, { ...admin, 'if-match': stale.headers.etag as string })).status,
    412,
    'the tag before * wrote',
  )
})

t.test('date_datapoint: the same key answers once; If-Match guards its PATCH', async (t) => {
  const { api, w, entries } = await setup(t)
  const body = { indicator_id: w.cases, location_id: w.a1, data_date: '2015-03-01', value: 4 }
  const first = await api.post('/date_datapoint/', body, { ...bob, ...key('d-1') })
  t.equal(first.status, 201, first.text)
  const written = await entries()
  const again = await api.post('/date_datapoint/', body, { ...bob, ...key('d-1') })
  t.same([again.status, again.text], [201, first.text])
  t.equal(await entries(), written)
  const id = first.body.id as number
  const etag = (await api.get(`/date_datapoint/${id}/`)).headers.etag as string
  t.equal(etag, first.headers.etag, "the POST answer's ETag is the row's")
  t.equal((await api.patch(`/date_datapoint/${id}/`, { value: 5 }, { ...admin, 'if-match': etag })).status, 200)
  const stale = await api.patch(`/date_datapoint/${id}/`, { value: 6 }, { ...admin, 'if-match': etag })
  t.same([stale.status, stale.body.details.current.value], [412, 5])
})

t.test('concurrent repeats of one key write once', async (t) => {
  const { api, w, entries } = await setup(t)
  const body = { indicator_id: w.n, location_id: w.A, campaign_id: w.C, value: 9 }
  const before = await entries()
  const answers = await Promise.all([1, 2, 3].map(() => api.post('/campaign_datapoint/', body, { ...bob, ...key('c-1') })))
  t.same(
    answers.map((a) => a.status),
    [201, 201, 201],
  )
  t.equal(new Set(answers.map((a) => a.text)).size, 1, 'one answer')
  t.equal((await entries()) - before > 0, true)
  const once = await api.get(`/datapoint_history/?location_id=${w.A}&indicator_id=${w.n}&campaign_id=${w.C}`)
  t.equal(once.body.objects.filter((h: { value_after: number }) => h.value_after === 9).length, 1, 'one history entry of the value')
})

t.test('expired keys are purged, and a key past its time is a new request', async (t) => {
  const { api, w, db } = await setup(t)
  const body = { indicator_id: w.n, location_id: w.A, campaign_id: w.C, value: 7 }
  t.equal((await api.post('/campaign_datapoint/', body, { ...bob, ...key('e-1') })).status, 201)
  await db.updateTable('idempotency_key').set({ expires_at: sql<string>`now() - interval '1 second'` }).execute()
  t.equal((await api.post('/campaign_datapoint/', body, { ...bob, ...key('e-1') })).status, 409, 'written again: the row exists')
  await db.updateTable('idempotency_key').set({ expires_at: sql<string>`now() - interval '1 second'` }).execute()
  // The refusal rolled back with the key's renewal: the first answer's key is there, expired, and goes.
  t.equal(await purgeExpiredIdempotencyKeys(db), 1)
  t.equal(await purgeExpiredIdempotencyKeys(db), 0)
})

t.test('a repeat is answered only while the row is still the user’s to write', async (t) => {
  const { api, w, db } = await setup(t)
  const body = { indicator_id: w.n, location_id: w.A, campaign_id: w.C, value: 9 }
  t.equal((await api.post('/campaign_datapoint/', body, { ...bob, ...key('k-rights') })).status, 201)
  // Bob is now responsible for province B only: the row at A is no longer his to write.
  const bobId = (await db.selectFrom('auth_user').select('id').where('username', '=', 'bob').executeTakeFirstOrThrow()).id
  t.equal((await api.post('/location_responsibility/', { user_id: bobId, top_lvl_location_id: w.B }, admin)).status, 201)
  const again = await api.post('/campaign_datapoint/', body, { ...bob, ...key('k-rights') })
  t.equal(again.status, 403, 'the refusal a new write gets')
  t.equal(again.body.code, 'LOCATION_FORBIDDEN')
})

t.test('a user keeps at most IDEMPOTENCY_KEYS_PER_USER keys: a new one past it is 429, a kept one still answers', async (t) => {
  const harness = await build(t, { IDEMPOTENCY_KEYS_PER_USER: 2 })
  const api = client(harness.app)
  await moreUsers(harness.db)
  const w = await world(api)
  const body = (value: number, location = w.A) => ({ indicator_id: w.n, location_id: location, campaign_id: w.C, value })
  const first = await api.post('/campaign_datapoint/', body(1), { ...bob, ...key('a') })
  t.equal(first.status, 201, first.text)
  const second = await api.post('/campaign_datapoint/', body(2, w.R), { ...bob, ...key('b') })
  t.equal(second.status, 201)
  const third = await api.post('/campaign_datapoint/', body(3, w.R), { ...bob, ...key('c') })
  t.equal(third.status, 429, 'a third key')
  t.match(third.body, { code: 'TOO_MANY_IDEMPOTENCY_KEYS', details: { limit: 2 } })
  t.ok(Number(third.headers['retry-after']) > 23 * 3600, `retried once the oldest has expired (${third.headers['retry-after']} s)`)
  t.equal((await api.post('/campaign_datapoint/', body(2, w.R), { ...bob, ...key('b') })).text, second.text, 'a kept key is still answered')
  t.equal((await api.post('/campaign_datapoint/', body(3, w.R), alice)).status, 409, 'a write without a key is as it was (here the row exists)')
  t.equal((await api.post('/campaign_datapoint/', body(4, w.R), { ...alice, ...key('c') })).status, 409, 'another user has keys of her own')
  await sql`update idempotency_key set expires_at = now() - interval '1 second' where key = 'a'`.execute(harness.db)
  t.equal((await api.patch(`/campaign_datapoint/${second.body.id}/`, { value: 5 }, { ...bob, ...key('c') })).status, 200, 'room again once one expired')
})

t.test('If-Match holds on every write of every resource: PATCH and DELETE compare, a create takes only *', async (t) => {
  const { api, w } = await setup(t)
  const match = (etag: string) => ({ ...admin, 'if-match': etag })
  // A location: its detail's ETag; a stale one is 412 with the row as it is, nothing written.
  const read = await api.get(`/location/${w.a1}/`)
  const etag = read.headers.etag as string
  t.match(etag, /^"[\w+/=-]+"$/, 'a location detail has an ETag')
  t.equal((await api.patch(`/location/${w.a1}/`, { name: 'a1 renamed' }, match(etag))).status, 200, 'PATCH location with its ETag')
  const stale = await api.patch(`/location/${w.a1}/`, { name: 'a1 again' }, match(etag))
  t.equal(stale.status, 412, 'PATCH location with a stale ETag')
  t.match(stale.body, { code: 'PRECONDITION_FAILED', details: { current: { name: 'a1 renamed' } } })
  t.equal((await api.get(`/location/${w.a1}/`)).body.name, 'a1 renamed', 'nothing written')
  // DELETE of a datapoint: compared too.
  const row = (await api.get(`/campaign_datapoint/?location_id__in=${w.b1}&indicator__in=${w.n}&campaign__in=${w.C}`)).body.objects[0]
  const rowTag = (await api.get(`/campaign_datapoint/${row.id}/`)).headers.etag as string
  t.equal((await api.delete(`/campaign_datapoint/${row.id}/`, match('"not-its-tag"'))).status, 412, 'DELETE with a tag of no version of it')
  t.equal((await api.get(`/campaign_datapoint/${row.id}/`)).status, 200, 'still there')
  t.equal((await api.delete(`/campaign_datapoint/${row.id}/`, match(rowTag))).status, 204, 'DELETE with its ETag')
  // A create has no version: If-Match names none of it (412), `*` holds.
  const body = { indicator_id: w.n, location_id: w.b1, campaign_id: w.C, value: 9 }
  const tagged = await api.post('/campaign_datapoint/', body, match(rowTag))
  t.equal(tagged.status, 412, 'POST with an entity tag')
  t.match(tagged.body.message, /only If-Match: \* holds/)
  t.equal((await api.post('/campaign_datapoint/', body, match('*'))).status, 201, 'POST with If-Match: *')
  t.equal((await api.post('/campaign_type/', { name: 'SNID' }, match('"x"'))).status, 412, 'on any resource')
})
