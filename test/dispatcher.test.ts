// acceptance.md A: dispatcher, authentication, envelope (scenarios 1–14).
import t from 'tap'
import { admin, ADMIN_KEY, alice, build } from './helper.js'
import { client } from './api.js'
import { resources } from '../resources/index.js'

/** H-ROOT: a location type and one root location. */
async function hRoot(api: ReturnType<typeof client>) {
  const type = await api.post('/location_type/', { name: 'test', admin_level: 0 })
  const somalia = await api.post('/location/', { name: 'Somalia', location_code: 'SOM', location_type_id: type.body.id })
  return { somalia: somalia.body.id as number }
}

async function threeCampaigns(api: ReturnType<typeof client>) {
  const type = (await api.post('/campaign_type/', { name: 'NID' })).body.id
  const ids: number[] = []
  for (const month of ['01', '02', '03']) {
    const r = await api.post('/campaign/', { name: `Campaign ${month}`, campaign_type_id: type, start_date: `2016-${month}-01`, end_date: `2016-${month}-28` })
    ids.push(r.body.id)
  }
  return { type, ids }
}

// acceptance.md 1
t.test('/api/v1/ needs credentials and lists every canonical resource', async (t) => {
  const { app } = await build(t)
  const api = client(app)
  const anonymous = await api.get('/api/v1/', {})
  t.equal(anonymous.status, 401)
  t.match(anonymous.body, { statusCode: 401, error: 'Unauthorized', code: 'UNAUTHENTICATED', message: 'Authentication required' })
  const listing = await api.get('/api/v1/')
  t.equal(listing.status, 200)
  t.same(Object.keys(listing.body), resources.map((r) => r.name).sort())
  t.same(listing.body.campaign, { list_endpoint: '/api/v1/campaign/', schema: '/api/v1/campaign/schema/' })
  t.notOk('sync_odk' in listing.body)
})

// acceptance.md 2
t.test('keys: Bearer and ApiKey forms accepted; wrong keys, inactive users and keys in the query string refused', async (t) => {
  const { app, aliceId } = await build(t)
  const api = client(app)
  t.equal((await api.get('/campaign/', { authorization: `Bearer ${ADMIN_KEY}` })).status, 200)
  t.equal((await api.get('/campaign/', { authorization: `ApiKey admin:${'0'.repeat(40)}` })).body.message, 'Invalid API key')
  t.equal((await api.get('/campaign/', { authorization: `ApiKey alice:${ADMIN_KEY}` })).status, 401)
  t.equal((await api.get('/campaign/', alice)).status, 200)
  t.equal((await api.patch(`/user/${aliceId}/`, { is_active: false })).status, 200)
  t.equal((await api.get('/campaign/', alice)).status, 401, 'deactivation takes effect on the next request')
  t.equal((await api.patch(`/user/${aliceId}/`, { is_active: true })).status, 200)
  t.equal((await api.get('/campaign/', alice)).status, 401, 'reactivated: a key made before the deactivation stays refused')
  t.equal((await api.get(`/api_key/?user_id=${aliceId}`)).body.meta.total_count, 0, 'her keys ended with the deactivation')
  const fresh = (await api.post('/api_key/', { user_id: aliceId })).body.key
  t.equal((await api.get('/campaign/', { authorization: `ApiKey alice:${fresh}` })).status, 200, 'a key made after it works')
  t.equal((await api.get(`/api/v1/campaign/?username=admin&api_key=${ADMIN_KEY}`, {})).status, 401)
  t.equal((await api.get('/campaign/', { authorization: 'Basic abc' })).status, 401)
})

// acceptance.md 4
t.test('the trailing slash is optional and never redirects', async (t) => {
  const { app } = await build(t)
  const api = client(app)
  await hRoot(api)
  const { ids } = await threeCampaigns(api)
  for (const path of ['/api/v1/campaign', '/api/v1/campaign/', '/api/v1/campaign/schema', '/api/v1/campaign/schema/']) {
    t.equal((await api.get(path)).status, 200, path)
  }
  const a = await api.get(`/api/v1/campaign/${ids[0]}`)
  const b = await api.get(`/api/v1/campaign/${ids[0]}/`)
  t.equal(a.status, 200)
  t.same(a.body, b.body)
})

// acceptance.md 5
t.test('unknown resources are 404 UNKNOWN_RESOURCE; aliases answer like their resource', async (t) => {
  const { app } = await build(t)
  const api = client(app)
  const nope = await api.get('/nope/')
  t.equal(nope.status, 404)
  t.match(nope.body, { code: 'UNKNOWN_RESOURCE', message: 'Unknown resource: nope' })
  t.equal((await api.get('/sync_odk/?odk_form_id=1')).body.code, 'UNKNOWN_RESOURCE')
  await api.post('/dashboard/', { title: 'd' })
  await api.post('/indicator/', { name: 'a', short_name: 'a', data_format: 'int' })
  await api.post('/indicator/', { name: 'b', short_name: 'b', data_format: 'int' })
  await api.post('/calculated_indicator_component/', { indicator_id: 1, indicator_component_id: 2, calculation: 'NUMERATOR' })
  t.same((await api.get('/custom_dashboard/')).body.objects, (await api.get('/dashboard/')).body.objects)
  const calc = await api.get('/indicator_calculation/')
  t.equal(calc.body.objects.length, 1)
  t.same(calc.body.objects, (await api.get('/calculated_indicator_component/')).body.objects)
})

// acceptance.md 6
t.test('methods a URL does not take are 405 with Allow; bad ids are 400, absent ones 404', async (t) => {
  const { app } = await build(t)
  const api = client(app)
  await hRoot(api)
  const { ids } = await threeCampaigns(api)
  const c = ids[0]
  const put = await api.put(`/campaign/${c}/`, {})
  t.equal(put.status, 405)
  t.equal(put.headers.allow, 'GET, PATCH, DELETE')
  t.equal((await api.post(`/campaign/${c}/`, {})).status, 405)
  t.equal((await api.patch('/campaign/', {})).status, 405)
  const transform = await api.post('/transform_upload/', {})
  t.equal(transform.status, 405)
  t.equal(transform.headers.allow, 'GET')
  t.equal((await api.get('/transform_upload/5/')).status, 404)
  const allMeta = await api.post('/all_meta/', {})
  t.equal(allMeta.status, 405)
  t.equal(allMeta.headers.allow, 'GET')
  const abc = await api.get('/campaign/abc/')
  t.equal(abc.status, 400)
  t.match(abc.body, { code: 'INVALID_ID', message: 'Invalid id : abc' })
  t.equal((await api.get('/all_meta/5/')).status, 404)
  t.equal((await api.get('/campaign/1/set/2/')).status, 404)
  // Method override: POST + X-HTTP-Method-Override: PATCH on a detail URL.
  const overridden = await api.post(`/campaign/${c}/`, { name: 'Overridden' }, { ...admin, 'x-http-method-override': 'PATCH' })
  t.equal(overridden.status, 200)
  t.equal(overridden.body.name, 'Overridden')
})

// acceptance.md 7
t.test('bodies: invalid JSON, unsupported media types and unknown fields are 400/415; urlencoded forms are read', async (t) => {
  const { app } = await build(t)
  const api = client(app)
  await hRoot(api)
  const type = (await api.post('/campaign_type/', { name: 'NID' })).body.id
  const bad = await api.post('/campaign/', '{"name":', { ...admin, 'content-type': 'application/json' })
  t.equal(bad.status, 400)
  t.match(bad.body, { code: 'INVALID_JSON', message: 'Request is not valid JSON.' })
  const text = await api.post('/campaign/', '{"name":', { ...admin, 'content-type': 'text/plain' })
  t.equal(text.status, 415)
  t.match(text.body, { code: 'UNSUPPORTED_MEDIA_TYPE', message: 'Unsupported Media Type: text/plain' })
  const form = await api.post('/campaign/', `name=x&campaign_type_id=${type}&start_date=2016-01-01&end_date=2016-01-31`, {
    ...admin,
    'content-type': 'application/x-www-form-urlencoded',
  })
  t.equal(form.status, 201)
  t.equal(form.body.campaign_type_id, type)
  const extra = await api.post('/campaign/', { name: 'y', campaign_type_id: type, start_date: '2016-02-01', end_date: '2016-02-02', foo: 1 })
  t.equal(extra.status, 400)
  t.match(extra.body, { code: 'UNKNOWN_FIELD', message: 'Unknown field foo' })
  const array = await api.post('/campaign/', '[1,2]', { ...admin, 'content-type': 'application/json' })
  t.equal(array.status, 400)
  t.equal(array.body.code, 'VALIDATION_ERROR')
})

// acceptance.md 8
t.test('lists answer in the envelope with limit, offset and next/previous links', async (t) => {
  const { app } = await build(t)
  const api = client(app)
  const { somalia } = await hRoot(api)
  const { ids } = await threeCampaigns(api)
  const page1 = await api.get('/campaign/?limit=2')
  t.equal(page1.status, 200)
  t.same(
    page1.body.objects.map((o: { id: number }) => o.id),
    [ids[2], ids[1]],
  )
  t.match(page1.body.meta, {
    total_count: 3,
    limit: 2,
    offset: 0,
    next: '/api/v1/campaign/?limit=2&offset=2',
    previous: null,
    get_params: { limit: '2' },
    top_lvl_location_id: somalia,
  })
  t.equal(page1.body.error, null)
  const page2 = await api.get('/campaign/?limit=2&offset=2')
  t.same(
    page2.body.objects.map((o: { id: number }) => o.id),
    [ids[0]],
  )
  t.equal(page2.body.meta.next, null)
  t.equal(page2.body.meta.previous, '/api/v1/campaign/?limit=2&offset=0')
  const all = await api.get('/campaign/?limit=0')
  t.equal(all.body.objects.length, 3)
  t.equal(all.body.meta.limit, 100000)
  t.equal((await api.get('/campaign/')).body.meta.limit, 1000)
  t.equal((await api.get('/campaign/?limit=-1')).body.code, 'INVALID_VALUE')
  const beyond = await api.get('/campaign/?offset=10')
  t.equal(beyond.body.objects.length, 0)
  t.equal(beyond.body.meta.total_count, 3, 'total_count is right past the last page too')
})

// acceptance.md 9
t.test('order_by and fields order and project lists', async (t) => {
  const { app } = await build(t)
  const api = client(app)
  await hRoot(api)
  const { ids } = await threeCampaigns(api)
  t.equal((await api.get('/campaign/?order_by=start_date')).body.objects[0].id, ids[0])
  t.equal((await api.get('/campaign/?order_by=-id')).body.objects[0].id, ids[2])
  const nope = await api.get('/campaign/?order_by=nope')
  t.match(nope.body, { code: 'INVALID_ORDER_BY', message: "Cannot order by 'nope'" })
  const projected = await api.get('/campaign/?fields=id,name')
  t.same(Object.keys(projected.body.objects[0]), ['id', 'name'])
  t.equal((await api.get('/campaign/?fields=id,secret')).body.code, 'INVALID_VALUE')
})

// acceptance.md 10
t.test('filters with lookups and through relations narrow lists', async (t) => {
  const { app } = await build(t)
  const api = client(app)
  await hRoot(api)
  const { ids } = await threeCampaigns(api)
  const count = async (query: string) => (await api.get(`/campaign/?${query}`)).body.objects?.length
  t.match((await api.get('/campaign/?foo=1')).body, { code: 'UNKNOWN_FILTER', message: "The 'foo' field does not allow filtering." })
  t.match((await api.get('/campaign/?start_date__icontains=2016')).body, {
    code: 'INVALID_LOOKUP',
    message: "'icontains' is not an allowed filter on the 'start_date' field.",
  })
  t.equal((await api.get('/campaign/?id=abc')).body.code, 'INVALID_VALUE')
  t.equal(await count('id__in='), 0)
  t.equal(await count(`id__in=${ids[0]},${ids[1]}&id__in=${ids[2]}`), 3)
  t.equal(await count('start_date__gte=2016-02-01'), 2)
  t.equal(await count('start_date__month=3'), 1)
  t.equal(await count('campaign_type__name=NID'), 3)
  t.equal(await count('campaign_type=999'), 0)
  t.equal(await count('name__istartswith=cAMPAIGN 0'), 3)
  t.equal(await count('name__iexact=campaign 02'), 1)
  t.equal(await count('id=2147483648'), 0)
})

// acceptance.md 11
t.test('/schema describes every field, relation and filter of a resource', async (t) => {
  const { app } = await build(t)
  const api = client(app)
  const schema = (await api.get('/campaign/schema/')).body
  const six = ['id', 'name', 'campaign_type_id', 'start_date', 'end_date', 'created_at']
  t.same(Object.keys(schema.fields), six)
  t.equal(schema.fields.id.primary_key, true)
  t.equal(schema.fields.campaign_type_id.type, 'related')
  t.equal(schema.fields.campaign_type_id.related_resource, 'campaign_type')
  t.same(schema.required_fields_for_post, ['name', 'campaign_type_id', 'start_date', 'end_date'])
  t.same(schema.GET_params_required, [])
  t.same(schema.query_fields, six)
  t.same(Object.keys(schema.filtering).sort(), [...six].sort())
  t.same(schema.allowed_methods, ['GET', 'POST', 'PATCH', 'DELETE'])
  t.same(schema.ordering, ['-start_date', 'id'])
  const tag = (await api.get('/indicator_to_tag/schema/')).body
  t.ok(tag.query_fields.includes('indicator__short_name'))
  t.ok(tag.query_fields.includes('indicator_tag__tag_name'))
  t.same(tag.list_delete_by, ['indicator_id'])
  const cache = (await api.get('/cache_meta/schema/')).body
  t.equal(cache.kind, 'non_model')
  t.same(cache.allowed_methods, ['GET'])
})

// resource-api "Value formats" (acceptance 12).
t.test('formats: timestamps in UTC with microseconds and no zone designator, dates as YYYY-MM-DD', async (t) => {
  const { app } = await build(t)
  const api = client(app)
  await hRoot(api)
  const { ids } = await threeCampaigns(api)
  const campaign = (await api.get(`/campaign/${ids[0]}/`)).body
  t.match(campaign.created_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}$/)
  t.equal(new Date(`${campaign.created_at}Z`).toISOString().slice(0, 23), campaign.created_at.slice(0, 23), "read as UTC by new Date(s + 'Z')")
  t.ok(Math.abs(Date.parse(`${campaign.created_at}Z`) - Date.now()) < 5000, 'the time it was created, in UTC')
  t.equal(campaign.start_date, '2016-01-01')
})

// acceptance.md 13
t.test('DELETE and writes of users need a superuser', async (t) => {
  const { app } = await build(t)
  const api = client(app)
  await hRoot(api)
  const { ids } = await threeCampaigns(api)
  const denied = await api.delete(`/campaign/${ids[0]}/`, alice)
  t.equal(denied.status, 403)
  t.match(denied.body, { code: 'FORBIDDEN', message: 'Only a superuser may delete' })
  const deleted = await api.delete(`/campaign/${ids[0]}/`)
  t.equal(deleted.status, 204)
  t.equal(deleted.text, '')
  const bob = await api.post('/user/', { username: 'bob' }, alice)
  t.equal(bob.status, 403)
  t.equal(bob.body.message, 'Only a superuser may modify user')
  const users = await api.get('/user/', alice)
  t.equal(users.status, 200)
  for (const user of users.body.objects) {
    t.notOk(Object.keys(user).some((k) => /password|key|hash/.test(k)))
  }
})

// acceptance.md 14
t.test('GET /, /health and /documentation need no key; the document lists every route', async (t) => {
  const { app } = await build(t)
  const api = client(app)
  const health = await api.get('/health', {})
  t.equal(health.status, 200)
  t.match(health.body, { status: 'ok', database: 'ok' })
  const doc = await api.get('/documentation/json', {})
  t.equal(doc.status, 200)
  t.equal(doc.body.openapi, '3.0.3')
  t.ok(doc.body.paths['/api/v1/campaign/'])
  t.ok(doc.body.paths['/api/v1/campaign/{id}/'].patch.requestBody, 'PATCH documents its body')
  t.same(doc.body.paths['/api/v1/custom_dashboard/'], { $ref: '#/paths/~1api~1v1~1dashboard~1' }, 'an alias is a reference to its canonical path')
  t.same(doc.body.paths['/api/v1/campaign/{id}'], { $ref: '#/paths/~1api~1v1~1campaign~1{id}~1' }, 'so is a path without its trailing slash')
  const root = await api.get('/', {})
  t.equal(root.status, 200)
  t.equal(root.body.api, '/api/v1/')
})
