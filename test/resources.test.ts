// acceptance.md B (model resources, 15–27, 42, 56–58) and C (location tree, 59).
import t from 'tap'
import { sql } from 'kysely'
import { alice, build } from './helper.js'
import { client } from './api.js'
import { SQUARE } from './world.js'
import { afterDirectInserts, hMeta } from './fixtures.js'
import { GEO_DISTRICTS, GEO_PROVINCE, geoFile, PROVINCES } from './fixtures/country.js'
import { loadGeo } from '../lib/engine/geo-loader.js'
import { rebuildTree } from '../lib/data/location-tree.js'

type Api = ReturnType<typeof client>
const ids = (body: { objects: Array<{ id: number }> }) => body.objects.map((o) => o.id)

async function hRoot(api: Api) {
  const type = await api.post('/location_type/', { name: 'test', admin_level: 0 })
  await api.post('/location/', { name: 'Somalia', location_code: 'SOM', location_type_id: type.body.id })
}

// acceptance.md 15
t.test('campaign: create, read, rename (also the legacy POST update), required fields', async (t) => {
  const { app } = await build(t)
  const api = client(app)
  await hRoot(api)
  const type = (await api.post('/campaign_type/', { name: 'NID' })).body.id
  const c1 = (await api.post('/campaign/', { name: 'c1', campaign_type_id: type, start_date: '2016-01-01', end_date: '2016-01-31' })).body.id
  const c2 = (await api.post('/campaign/', { name: 'c2', campaign_type_id: type, start_date: '2016-02-01', end_date: '2016-02-28' })).body.id
  t.equal((await api.get('/campaign/')).body.objects.length, 2)
  t.equal((await api.get(`/campaign/?id__in=${c1},${c2}`)).body.objects.length, 2)
  t.equal((await api.get('/campaign/?id__in=12345')).body.objects.length, 0)
  t.equal((await api.get(`/campaign/${c1}/`)).body.name, 'c1')
  const missing = await api.get('/campaign/12345/')
  t.equal(missing.status, 404)
  t.match(missing.body, { code: 'NOT_FOUND', message: 'No campaign object found for id : 12345' })
  const body = { name: 'Test', campaign_type_id: type, start_date: '2016-05-01', end_date: '2016-05-31' }
  const created = await api.post('/campaign/', body)
  t.equal(created.status, 201)
  t.equal(created.headers.location, `/api/v1/campaign/${created.body.id}/`)
  t.match(created.body, { name: 'Test', id: Number, created_at: String })
  const partial = await api.post('/campaign/', { start_date: '2016-06-01', end_date: '2016-06-02' })
  t.match(partial.body, { code: 'MISSING_REQUIRED_FIELD', message: 'Missing required field name, campaign_type_id' })
  t.same(partial.body.details.missing, ['name', 'campaign_type_id'])
  const fk = await api.post('/campaign/', { ...body, campaign_type_id: 9999, start_date: '2017-01-01', end_date: '2017-01-02' })
  t.equal(fk.status, 400)
  t.match(fk.body, { code: 'FOREIGN_KEY_VIOLATION', message: 'campaign_type_id: no campaign_type with id 9999' })
  const dupe = await api.post('/campaign/', body)
  t.equal(dupe.status, 409)
  t.equal(dupe.body.message, `key: "campaign_type_id, start_date" with value: "${type}, 2016-05-01" already exists`)
  const renamed = await api.patch(`/campaign/${created.body.id}/`, { name: 'Renamed' })
  t.equal(renamed.status, 200)
  t.equal(renamed.body.name, 'Renamed')
  t.equal(renamed.body.created_at, created.body.created_at)
  const backwards = await api.patch(`/campaign/${created.body.id}/`, { end_date: '2016-04-01' })
  t.match(backwards.body, { code: 'VALIDATION_ERROR', message: 'end_date: must not be before start_date' })
  // Legacy POST with id updates (§11.3), and an unknown id there is 404.
  const legacy = await api.post('/campaign/', { id: created.body.id, name: 'Legacy' })
  t.equal(legacy.status, 200)
  t.equal(legacy.body.name, 'Legacy')
  t.equal((await api.post('/campaign/', { id: 99999, name: 'x' })).status, 404)
})

// acceptance.md 16
t.test('campaign_type: create, list, required name', async (t) => {
  const { app } = await build(t)
  const api = client(app)
  await api.post('/campaign_type/', { name: 'test' })
  t.equal((await api.get('/campaign_type/')).body.objects[0].name, 'test')
  t.equal((await api.post('/campaign_type/', {})).body.message, 'Missing required field name')
})

// acceptance.md 17
t.test('custom_chart: required fields, create and read', async (t) => {
  const { app } = await build(t)
  const api = client(app)
  const first = await api.post('/custom_chart/', { uuid: 'u1', title: 't1', chart_json: '{"type":"bar"}' })
  t.equal(first.status, 201)
  t.same(first.body.chart_json, { type: 'bar' })
  t.equal((await api.post('/custom_chart/', { uuid: 'u2' })).body.message, 'Missing required field chart_json, title')
  const bad = await api.post('/custom_chart/', { uuid: 'u2', title: 't2', chart_json: '{nope' })
  t.match(bad.body, { code: 'VALIDATION_ERROR', message: 'chart_json: invalid JSON' })
  const second = await api.post('/custom_chart/', { uuid: 'u2', title: 't2', chart_json: { type: 'line', series: [1, 2] } })
  t.same(second.body.chart_json, { type: 'line', series: [1, 2] })
  t.equal((await api.get('/custom_chart/')).body.objects.length, 2)
  t.equal((await api.get(`/custom_chart/${first.body.id}/`)).body.title, 't1')
  t.equal((await api.get('/custom_chart/12345/')).status, 404)
  t.equal((await api.delete(`/custom_chart/${first.body.id}/`)).status, 204)
  t.equal((await api.get('/custom_chart/')).body.objects.length, 1)
  t.equal((await api.delete(`/custom_chart/${second.body.id}/`)).status, 204)
  t.equal((await api.get('/custom_chart/')).body.objects.length, 0)
})

// acceptance.md 18
t.test('dashboard: rows stored as given, parsed in lists, expanded into charts in the detail', async (t) => {
  const { app, db } = await build(t)
  const api = client(app)
  const d1 = await api.post('/dashboard/', { title: 'd1' })
  t.equal(d1.status, 201)
  t.match(d1.body, { title: 'd1', description: '', layout: 0, rows: null })
  const rows2 = [
    { charts: ['fdfdf'], layout: 1 },
    { charts: ['ddsds'], layout: 2 },
  ]
  const d2 = await api.post('/dashboard/', { title: 'd2', rows: JSON.stringify(rows2) })
  t.same(d2.body.rows, rows2)
  t.equal((await api.post('/dashboard/', {})).body.message, 'Missing required field title')
  const charts: Record<string, number> = {}
  for (const uuid of ['a', 'b', 'c']) {
    charts[uuid] = (await api.post('/custom_chart/', { uuid, title: `chart ${uuid}`, chart_json: { uuid } })).body.id
  }
  const d3 = await api.post('/dashboard/', { title: 'd3', rows: [{ charts: ['a', 'b'], layout: 1 }] })
  t.same(d3.body.rows, [{ charts: ['a', 'b'], layout: 1 }], 'POST responses are not expanded')
  await api.post('/dashboard/', { title: 'this exists' })
  const dupe = await api.post('/dashboard/', { title: 'this exists' })
  t.equal(dupe.status, 409)
  t.match(dupe.body, { code: 'UNIQUE_VIOLATION', message: 'key: "title" with value: "this exists" already exists' })
  const listed = await api.get('/dashboard/')
  t.equal(listed.body.objects.length, 4)
  t.same(listed.body.objects.find((o: { title: string }) => o.title === 'd2').rows, rows2, 'rows parsed in lists')
  const rows7 = [
    { charts: ['a', 'zzz'], layout: 1 },
    { charts: ['b', 'c'], layout: 2 },
  ]
  const d7 = (await api.post('/dashboard/', { title: 'd7', rows: rows7 })).body.id
  const detail = (await api.get(`/dashboard/${d7}/`)).body
  t.same(detail.rows[0].charts[0], { id: charts.a, uuid: 'a', title: 'chart a', chart_json: { uuid: 'a' } })
  t.equal(detail.rows[0].charts[1], 'zzz')
  t.equal(detail.rows[1].charts[0].uuid, 'b')
  t.equal(detail.rows[1].charts[1].uuid, 'c')
  t.equal((await api.get(`/dashboard/?id=${d7}`)).body.objects[0].title, 'd7')
  t.equal((await api.delete(`/custom_chart/${charts.b}/`)).status, 204)
  const stored = await db.selectFrom('custom_dashboard').select('rows').where('id', '=', d7).executeTakeFirstOrThrow()
  t.same(stored.rows, [
    { charts: ['a', 'zzz'], layout: 1 },
    { charts: ['c'], layout: 2 },
  ])
  for (const d of (await api.get('/dashboard/')).body.objects) t.equal((await api.delete(`/dashboard/${d.id}/`)).status, 204)
  t.equal((await api.get('/dashboard/')).body.objects.length, 0)
})

// acceptance.md 19
t.test('indicator: required fields, bounds and data formats validated, JSON caches not filterable', async (t) => {
  const { app } = await build(t)
  const api = client(app)
  await hRoot(api)
  const body = { name: 'Polio Cases', short_name: 'polio', description: 'd', bad_bound: 1, good_bound: 10, data_format: 'int', source_name: 'WHO' }
  const created = await api.post('/indicator/', body)
  t.equal(created.status, 201)
  t.match(created.body, { name: 'Polio Cases', is_reported: true, resource_name: 'campaign', bound_json: [], tag_json: [] })
  const id = created.body.id
  const count = async (q: string) => (await api.get(`/indicator/?${q}`)).body.objects.length
  t.equal(await count(`id=${id}`), 1)
  t.equal(await count('id=99999'), 0)
  t.equal(await count('name=Polio Cases'), 1)
  t.equal(await count('name__startswith=Pol'), 1)
  t.equal(await count(`id__gt=${id}`), 0)
  t.equal((await api.post('/indicator/', { name: 'x', short_name: 'x' })).body.message, 'Missing required field data_format')
  const bound = await api.post('/indicator/', { ...body, name: 'y', short_name: 'y', good_bound: 'abc' })
  t.equal(bound.body.code, 'VALIDATION_ERROR')
  t.match(bound.body.message, /^good_bound:/)
  t.equal((await api.post('/indicator/', { ...body, name: 'z', short_name: 'z', data_format: 'xyz' })).body.code, 'VALIDATION_ERROR')
  const dupe = await api.post('/indicator/', { ...body, short_name: 'other' })
  t.equal(dupe.status, 409)
  t.equal(dupe.body.message, 'key: "name" with value: "Polio Cases" already exists')
  t.equal((await api.get('/indicator/?bound_json=1')).body.code, 'UNKNOWN_FILTER', 'JSON caches are not filterable')
})

// acceptance.md 20
t.test('indicator tag and bound caches follow every change; cache_meta rebuilds them', async (t) => {
  const { app, db } = await build(t)
  const api = client(app)
  const i = (await api.post('/indicator/', { name: 'i', short_name: 'i', data_format: 'int' })).body.id
  const t1 = (await api.post('/indicator_tag/', { tag_name: 't1' })).body.id
  const t2 = (await api.post('/indicator_tag/', { tag_name: 't2' })).body.id
  await api.post('/indicator_to_tag/', { indicator_id: i, indicator_tag_id: t2 })
  await api.post('/indicator_to_tag/', { indicator_id: i, indicator_tag_id: t1 })
  t.same((await api.get(`/indicator/${i}/`)).body.tag_json, [t1, t2])
  await db
    .insertInto('indicator_bound')
    .values([
      { indicator_id: i, mn_val: 10, mx_val: 20, bound_name: 'Good' },
      { indicator_id: i, mn_val: 20, mx_val: 30, bound_name: 'Bad' },
    ])
    .execute()
  const cache = await api.get('/cache_meta/')
  t.equal(cache.status, 200)
  t.match(cache.body.objects[0], { location_tree_rows: 0, indicators_updated: 1 })
  const indicator = (await api.get(`/indicator/${i}/`)).body
  t.same(indicator.bound_json, [
    { indicator_id: i, bound_name: 'Good', mn_val: 10, mx_val: 20, location_type_id: null, location_type: null },
    { indicator_id: i, bound_name: 'Bad', mn_val: 20, mx_val: 30, location_type_id: null, location_type: null },
  ])
  t.same(indicator.tag_json, [t1, t2])
})

// acceptance.md 21
t.test('calculated_indicator_component: kinds validated, cycles refused', async (t) => {
  const { app } = await build(t)
  const api = client(app)
  await hRoot(api)
  const [a, b, c] = await Promise.all(
    ['a', 'b', 'c'].map(async (n) => (await api.post('/indicator/', { name: n, short_name: `short ${n}`, data_format: 'int' })).body.id),
  )
  t.equal((await api.get('/calculated_indicator_component/')).body.objects.length, 0)
  const created = await api.post('/calculated_indicator_component/', { indicator_id: a, indicator_component_id: b, calculation: 'DENOMINATOR' })
  t.equal(created.status, 201)
  t.match(created.body, { indicator_id: a, indicator_component_id: b, calculation: 'DENOMINATOR', indicator_component__short_name: 'short b' })
  t.equal((await api.get(`/calculated_indicator_component/?indicator_id=${a}`)).body.objects.length, 1)
  t.equal((await api.get('/calculated_indicator_component/?indicator_id=99999')).body.objects.length, 0)
  t.equal((await api.delete(`/calculated_indicator_component/${created.body.id}/`)).status, 204)
  t.equal((await api.get(`/calculated_indicator_component/${created.body.id}/`)).status, 404)
  t.equal((await api.delete('/calculated_indicator_component/99999/')).status, 404)
  const listDelete = await api.delete('/calculated_indicator_component/')
  t.match(listDelete.body, { code: 'LIST_DELETE_NOT_ALLOWED', message: 'Must Delete by ID only' })
  await api.post('/calculated_indicator_component/', { indicator_id: a, indicator_component_id: b, calculation: 'NUMERATOR' })
  await api.post('/calculated_indicator_component/', { indicator_id: a, indicator_component_id: c, calculation: 'DENOMINATOR' })
  t.equal((await api.delete(`/calculated_indicator_component/?indicator_id=${a}`)).status, 204)
  t.equal((await api.get(`/calculated_indicator_component/?indicator_id=${a}`)).body.objects.length, 0)
  t.equal((await api.post('/calculated_indicator_component/', { indicator_id: a, indicator_component_id: a, calculation: 'PART_TO_BE_SUMMED' })).status, 400)
  await api.post('/calculated_indicator_component/', { indicator_id: a, indicator_component_id: b, calculation: 'PART_TO_BE_SUMMED' })
  const cycle = await api.post('/calculated_indicator_component/', { indicator_id: b, indicator_component_id: a, calculation: 'PART_TO_BE_SUMMED' })
  t.match(cycle.body, { code: 'CALCULATION_CYCLE', message: `indicator ${a} cannot be a component of ${b}: it would depend on itself` })
  // A longer cycle: c ← a ← b, then b ← c closes it.
  await api.post('/calculated_indicator_component/', { indicator_id: c, indicator_component_id: a, calculation: 'PART_TO_BE_SUMMED' })
  t.equal(
    (await api.post('/calculated_indicator_component/', { indicator_id: b, indicator_component_id: c, calculation: 'NUMERATOR' })).body.code,
    'CALCULATION_CYCLE',
  )
  t.equal(
    (await api.post('/calculated_indicator_component/', { indicator_id: a, indicator_component_id: c, calculation: 'PART' })).body.code,
    'VALIDATION_ERROR',
  )
  t.same((await api.get('/indicator_calculation/')).body.objects, (await api.get('/calculated_indicator_component/')).body.objects)
})

// acceptance.md 22
t.test('indicator_tag: a tree of tags, cycles refused', async (t) => {
  const { app } = await build(t)
  const api = client(app)
  const root = (await api.post('/indicator_tag/', { tag_name: 'root' })).body.id
  const child = await api.post('/indicator_tag/', { tag_name: 'child', parent_tag_id: root })
  t.equal(child.status, 201)
  t.equal(child.body.parent_tag_id, root)
  t.equal((await api.get(`/indicator_tag/?id=${root}`)).body.objects[0].tag_name, 'root')
  const leaves = (await api.get('/indicator_tag/?show_leaf=1')).body.objects
  t.same(
    leaves.map((o: { tag_name: string }) => o.tag_name),
    ['child'],
  )
  t.equal(leaves[0].parent_tag__tag_name, 'root')
  t.equal((await api.get('/indicator_tag/?show_leaf=0')).body.objects.length, 2)
  t.equal((await api.post('/indicator_tag/', {})).body.message, 'Missing required field tag_name')
  t.equal((await api.get('/indicator_tag/')).body.objects.length, 2)
  const renamed = await api.patch(`/indicator_tag/${child.body.id}/`, { tag_name: 'renamed' })
  t.match(renamed.body, { id: child.body.id, tag_name: 'renamed', parent_tag__tag_name: 'root' })
  t.equal((await api.get('/indicator_tag/')).body.objects.length, 2)
  t.equal((await api.patch(`/indicator_tag/${root}/`, { parent_tag_id: child.body.id })).body.code, 'TAG_CYCLE')
  t.equal((await api.patch(`/indicator_tag/${root}/`, { parent_tag_id: root })).body.code, 'TAG_CYCLE')
  const blocked = await api.delete(`/indicator_tag/${root}/`)
  t.equal(blocked.status, 409)
  t.equal(blocked.body.code, 'HAS_DEPENDENTS')
  t.equal(blocked.body.details.dependents.indicator_tag, 1)
  t.equal((await api.delete(`/indicator_tag/${root}/?cascade=true`)).status, 204)
  t.equal((await api.get('/indicator_tag/')).body.objects.length, 0)
})

// acceptance.md 23
t.test('indicator_to_tag links indicators and tags', async (t) => {
  const { app } = await build(t)
  const api = client(app)
  await hRoot(api)
  const i1 = (await api.post('/indicator/', { name: 'i1', short_name: 's1', data_format: 'int' })).body.id
  const i2 = (await api.post('/indicator/', { name: 'i2', short_name: 's2', data_format: 'int' })).body.id
  const tag = (await api.post('/indicator_tag/', { tag_name: 'tag' })).body.id
  const link = await api.post('/indicator_to_tag/', { indicator_id: i1, indicator_tag_id: tag })
  t.equal(link.status, 201)
  t.match(link.body, { indicator_id: i1, indicator_tag_id: tag })
  const byIndicator = (await api.get(`/indicator_to_tag/?indicator_id=${i1}`)).body.objects
  t.equal(byIndicator.length, 1)
  t.match(byIndicator[0], { indicator_id: i1, indicator__short_name: 's1', indicator_tag__tag_name: 'tag' })
  t.equal((await api.get('/indicator_to_tag/?indicator_id=99999')).body.objects.length, 0)
  t.equal((await api.get(`/indicator_to_tag/?indicator_tag_id=${tag}`)).body.objects.length, 1)
  t.equal((await api.get('/indicator_to_tag/?indicator__short_name__icontains=S1')).body.objects.length, 1)
  await api.post('/indicator_to_tag/', { indicator_id: i2, indicator_tag_id: tag })
  t.equal((await api.get('/indicator_to_tag/')).body.objects.length, 2)
  const dupe = await api.post('/indicator_to_tag/', { indicator_id: i1, indicator_tag_id: tag })
  t.equal(dupe.status, 409)
  t.equal(dupe.body.message, `key: "indicator_id, indicator_tag_id" with value: "${i1}, ${tag}" already exists`)
  t.equal((await api.delete(`/indicator_to_tag/${link.body.id}/`)).status, 204)
  t.equal((await api.delete(`/indicator_to_tag/?indicator_id=${i2}`)).status, 204)
  t.equal((await api.get('/indicator_to_tag/')).body.objects.length, 0)
  t.same((await api.get(`/indicator/${i1}/`)).body.tag_json, [])
  t.same((await api.get(`/indicator/${i2}/`)).body.tag_json, [])
})

// acceptance.md 24
t.test('location: the tree, synthetic lvl, and what each user may write', async (t) => {
  const { app, db, aliceId, adminId } = await build(t)
  const api = client(app)
  const country = (await api.post('/location_type/', { name: 'Country', admin_level: 0 })).body.id
  const province = (await api.post('/location_type/', { name: 'Province', admin_level: 1 })).body.id
  const nigeria = (await api.post('/location/', { name: 'Nigeria', location_code: 'NG', location_type_id: country })).body.id
  const kano = (await api.post('/location/', { name: 'Kano', location_code: 'KN', location_type_id: province, parent_location_id: nigeria })).body.id
  const somalia = (await api.post('/location/', { name: 'Somalia', location_code: 'SO', location_type_id: country })).body.id
  await db
    .insertInto('location_permission')
    .values([
      { user_id: aliceId, top_lvl_location_id: nigeria },
      { user_id: adminId, top_lvl_location_id: nigeria },
    ])
    .execute()
  const asAlice = await api.get('/location/', alice)
  t.equal(asAlice.body.meta.top_lvl_location_id, nigeria)
  t.same(ids(asAlice.body).sort(), [nigeria, kano].sort())
  const asAdmin = await api.get('/location/')
  t.equal(asAdmin.body.meta.top_lvl_location_id, nigeria)
  t.equal(asAdmin.body.objects.length, 3)
  t.equal((await api.get(`/location/${somalia}/`, alice)).status, 404)
  t.equal((await api.get(`/location/?location_id__in=${somalia}`, alice)).body.objects.length, 0)
  const outside = await api.post('/location/', { name: 'X', location_code: 'X', location_type_id: province, parent_location_id: somalia }, alice)
  t.equal(outside.status, 403)
  t.match(outside.body, { code: 'LOCATION_FORBIDDEN', message: `Location ${somalia} is outside your responsibility` })
  t.equal((await api.post('/location/', { name: 'Root', location_code: 'R', location_type_id: country }, alice)).status, 403)
  const inside = await api.post('/location/', { name: 'X', location_code: 'X', location_type_id: province, parent_location_id: kano }, alice)
  t.equal(inside.status, 201)
  t.equal((await api.patch(`/location/${somalia}/`, { name: 'Renamed' }, alice)).status, 404)
  const all = (await api.get('/location/?order_by=id')).body.objects
  t.same(
    all.filter((o: { id: number }) => o.id === nigeria || o.id === kano).map((o: { lvl: number }) => o.lvl),
    [0, 1],
  )
  t.equal((await api.get('/location/?name=Kano')).body.objects.length, 1)
  t.equal((await api.get('/location/?lvl=1')).body.code, 'UNKNOWN_FILTER', 'lvl is synthetic')
})

// acceptance.md 25
t.test('location_responsibility: required fields, and a user reads only their own', async (t) => {
  const { app, aliceId, adminId } = await build(t)
  const api = client(app)
  await hRoot(api)
  const type = (await api.get('/location_type/')).body.objects[0].id
  const l1 = (await api.post('/location/', { name: 'L1', location_code: 'L1', location_type_id: type })).body.id
  const l2 = (await api.post('/location/', { name: 'L2', location_code: 'L2', location_type_id: type })).body.id
  const created = await api.post('/location_responsibility/', { user_id: aliceId, top_lvl_location_id: l1 })
  t.equal(created.status, 201)
  t.match(created.body, { user_id: aliceId, top_lvl_location_id: l1 })
  const read = (await api.get(`/location_responsibility/?user_id=${aliceId}`)).body.objects
  t.match(read, [{ user_id: aliceId, top_lvl_location__name: 'L1' }])
  t.equal((await api.get('/location_responsibility/')).body.message, 'Missing required parameter user_id')
  t.equal((await api.post('/location_responsibility/', { user_id: adminId })).body.message, 'Missing required field top_lvl_location_id')
  t.equal((await api.patch(`/location_responsibility/${created.body.id}/`, { top_lvl_location_id: l2 })).body.top_lvl_location_id, l2)
  t.equal((await api.post('/location_responsibility/', { user_id: aliceId, top_lvl_location_id: l1 }, alice)).status, 403)
  const other = await api.get(`/location_responsibility/?user_id=${adminId}`, alice)
  t.equal(other.status, 403)
  t.equal(other.body.message, 'You may only read your own responsibility')
  t.equal((await api.get(`/location_responsibility/?user_id=${aliceId}`, alice)).status, 200)
})

// acceptance.md 26
t.test('location_type: create and read', async (t) => {
  const { app } = await build(t)
  const api = client(app)
  for (const [name, level] of [
    ['a', 0],
    ['b', 1],
    ['c', 2],
  ] as const)
    await api.post('/location_type/', { name, admin_level: level })
  t.equal((await api.get('/location_type/')).body.objects.length, 3)
  t.equal((await api.post('/location_type/', { name: 'd', admin_level: 1 })).status, 409)
})

// acceptance.md 27
t.test('geo: polygons loaded and served as GeoJSON features by location selection', async (t) => {
  const { app, db } = await build(t)
  const api = client(app)
  await db
    .insertInto('location_type')
    .values([
      { id: 1, name: 'Planet', admin_level: 0 },
      { id: 2, name: 'Region', admin_level: 1 },
      { id: 3, name: 'District', admin_level: 2 },
    ] as never)
    .execute()
  await db
    .insertInto('location')
    .values({ id: 1, name: 'Earth', location_code: 'EARTH', location_type_id: 1 } as never)
    .execute()
  // The province, then its districts, inserted out of id order.
  await db
    .insertInto('location')
    .values([GEO_PROVINCE, ...GEO_DISTRICTS] as never)
    .execute()
  await afterDirectInserts(db, ['location_type', 'location'])
  const loaded = await loadGeo(db, geoFile())
  t.same(loaded, { loaded: 6, unknown: [] })
  const depth = await api.get('/geo/?location_id=6&location_depth=1')
  t.same(
    depth.body.objects.map((o: { location_id: number }) => o.location_id),
    [416, 417, 423, 434, 441],
  )
  for (const o of depth.body.objects) {
    t.match(o, { type: 'Feature', geometry: { type: 'Polygon' }, properties: { location_id: o.location_id }, parent_location_id: 6 })
    t.same(Object.keys(o.properties), ['location_id'])
  }
  t.equal(depth.body.meta.total_count, 5)
  t.same((await api.get('/geo/?location_id=1&location_type=District')).body.objects, depth.body.objects)
  const province = (await api.get('/geo/?location_id__in=6')).body.objects
  t.equal(province.length, 1)
  t.equal(province[0].parent_location_id, 1)
  t.equal((await api.get('/geo/?location_id=1')).body.objects.length, 0)
  const geometry = SQUARE
  t.equal((await api.post('/geo/', { location_id: 6, geo_json: { type: 'Feature', geometry, properties: {} } })).status, 409)
  const bare = await api.post('/geo/', { location_id: 1, geo_json: geometry })
  t.equal(bare.status, 201)
  t.same(bare.body.geo_json, { type: 'Feature', geometry, properties: {} })
  t.equal((await api.post('/geo/', { location_id: 1, geo_json: { type: 'Point', coordinates: [0, 0] } })).body.code, 'VALIDATION_ERROR')
  t.equal((await api.get('/geo/?location_type=District&location_id=1&name=x')).body.code, 'UNKNOWN_FILTER')
})

// acceptance.md 42
t.test('doc_detail and doc_detail_type attach attributes to documents', async (t) => {
  const { app, db } = await build(t)
  const api = client(app)
  const [d1, d2] = await Promise.all(
    ['D1', 'D2'].map(
      async (title) =>
        (await db.insertInto('source_doc').values({ doc_title: title, file_type: 'campaign', guid: title }).returning('id').executeTakeFirstOrThrow()).id,
    ),
  )
  const t1 = (await api.post('/doc_detail_type/', { name: 'T1' })).body.id
  const t2 = (await api.post('/doc_detail_type/', { name: 'T2' })).body.id
  const detail = await api.post('/doc_detail/', { document_id: d1, doc_detail_type_id: t1, doc_detail_value: 1232 })
  t.equal(detail.status, 201)
  t.equal(detail.body.doc_detail_value, '1232')
  await api.post('/doc_detail/', { document_id: d2, doc_detail_type_id: t2, doc_detail_value: 'x' })
  t.equal((await api.get('/doc_detail/?doc_detail_type__name=T1')).body.objects.length, 1)
  t.equal((await api.get(`/doc_detail/?document_id=${d1}`)).body.objects.length, 1)
  t.equal((await api.get('/doc_detail/')).body.objects.length, 2)
  t.equal((await api.get('/doc_detail_type/')).body.objects.length, 13)
})

// acceptance.md 56
t.test('user, group and user_group: superusers manage membership', async (t) => {
  const { app, aliceId, adminId } = await build(t)
  const api = client(app)
  const groups = (await api.get('/group/')).body.objects
  t.same(
    groups.map((g: { name: string }) => g.name),
    ['data_entry', 'explore_data', 'source_data', 'manage_system', 'chart_builder', 'chart_edit'],
  )
  const group = (name: string) => groups.find((g: { name: string }) => g.name === name).id
  await api.post('/user_group/', { user_id: aliceId, group_id: group('data_entry') })
  await api.post('/user_group/', { user_id: adminId, group_id: group('manage_system') })
  const mine = (await api.get(`/user_group/?user_id=${aliceId}`)).body.objects
  t.match(mine, [{ user_id: aliceId, group_id: group('data_entry') }])
  t.equal(mine.length, 1)
  t.equal((await api.get('/user_group/')).body.objects.length, 2)
  const added = await api.post('/user_group/', { user_id: aliceId, group_id: group('chart_edit') })
  t.equal(added.status, 201)
  t.match(added.body, { user_id: aliceId, group_id: group('chart_edit') })
  t.equal((await api.post('/user_group/', { user_id: aliceId, group_id: group('source_data') }, alice)).status, 403)
  t.equal((await api.delete(`/user_group/${added.body.id}/`)).status, 204)
  t.equal((await api.get(`/user_group/${added.body.id}/`)).status, 404)
  // Users: no deleting or deactivating yourself; deleting a user removes their keys and memberships.
  const self = await api.patch(`/user/${adminId}/`, { is_active: false })
  t.match(self.body, { code: 'VALIDATION_ERROR', message: 'id: you cannot delete or deactivate yourself' })
  t.equal((await api.delete(`/user/${adminId}/`)).status, 400)
  t.equal((await api.delete(`/user/${aliceId}/`)).status, 204)
  t.equal((await api.get('/campaign/', alice)).status, 401, "a deleted user's key no longer works")
  t.equal((await api.get('/user_group/')).body.objects.length, 1)
})

// acceptance.md 57
t.test('all_meta answers every metadata list at once', async (t) => {
  const { app, db } = await build(t)
  const api = client(app)
  await hMeta(db)
  await api.post('/custom_chart/', { uuid: 'u', title: 't', chart_json: { a: 1 } })
  const meta = await api.get('/all_meta/')
  t.equal(meta.status, 200)
  t.equal(meta.body.objects.length, 1)
  const [all] = meta.body.objects
  // Every location of H-META: the country and its 12 provinces (one of them with a comma in its name).
  t.equal(all.locations.length, 1 + PROVINCES.length)
  t.equal(all.locations.length, 13)
  t.equal(all.is_superuser, true)
  t.same(all.charts[0].chart_json, { a: 1 })
  t.equal(all.indicators.length, 4)
  t.equal(all.campaigns.length, 8)
  t.equal((await api.get('/all_meta/?foo=1')).body.code, 'UNKNOWN_FILTER')
})

// acceptance.md 58
t.test('cache_meta rebuilds the location tree', async (t) => {
  const { app, db } = await build(t)
  const api = client(app)
  const galaxy = (await api.post('/location_type/', { name: 'Galaxy', admin_level: 0 })).body.id
  const planet = (await api.post('/location_type/', { name: 'Planet', admin_level: 1 })).body.id
  const solar = (await api.post('/location/', { name: 'The Solar System', location_code: 'SS', location_type_id: galaxy })).body.id
  const mars = (await api.post('/location/', { name: 'Mars', location_code: 'M', location_type_id: planet, parent_location_id: solar })).body.id
  await sql`truncate location_tree`.execute(db)
  t.equal((await api.get('/cache_meta/')).status, 200)
  const rows = await db.selectFrom('location_tree').selectAll().where('location_id', '=', mars).orderBy('lvl').execute()
  t.same(rows, [
    { parent_location_id: mars, location_id: mars, lvl: 0 },
    { parent_location_id: solar, location_id: mars, lvl: 1 },
  ])
})

// acceptance.md 59
t.test('the location tree is maintained on every write and equals a rebuild', async (t) => {
  const { app, db } = await build(t)
  const api = client(app)
  const types: number[] = []
  for (const [i, name] of ['Country', 'State', 'City', 'Neighborhood'].entries()) {
    types.push((await api.post('/location_type/', { name, admin_level: i })).body.id)
  }
  const create = async (name: string, level: number, parent?: number) =>
    (await api.post('/location/', { name, location_code: name, location_type_id: types[level], parent_location_id: parent ?? null })).body.id as number
  const usa = await create('USA', 0)
  const nys = await create('New York State', 1, usa)
  const nyc = await create('New York City', 2, nys)
  const texas = await create('Texas', 1, usa)
  const california = await create('California', 1, usa)
  const maine = await create('Maine', 1, usa)
  const portland = await create('Portland', 2, maine)
  const brooklyn = await create('Brooklyn', 3, nyc)
  const tree = async () =>
    (await db.selectFrom('location_tree').selectAll().orderBy(['location_id', 'lvl']).execute()).map((r) => [r.location_id, r.parent_location_id, r.lvl])
  const expected = [
    [usa, usa, 0],
    [nys, nys, 0],
    [nys, usa, 1],
    [nyc, nyc, 0],
    [nyc, nys, 1],
    [nyc, usa, 2],
    [texas, texas, 0],
    [texas, usa, 1],
    [california, california, 0],
    [california, usa, 1],
    [maine, maine, 0],
    [maine, usa, 1],
    [portland, portland, 0],
    [portland, maine, 1],
    [portland, usa, 2],
    [brooklyn, brooklyn, 0],
    [brooklyn, nyc, 1],
    [brooklyn, nys, 2],
    [brooklyn, usa, 3],
  ]
  t.same(await tree(), expected)
  t.equal(expected.length, 19)
  await api.get('/cache_meta/')
  t.same(await tree(), expected, 'cache_meta gives the same rows')
  const byDepth = async (q: string) => ids((await api.get(`/location/?${q}`)).body).sort((a, b) => a - b)
  t.same(await byDepth(`location_id=${usa}&location_depth=2`), [nyc, portland])
  t.same(await byDepth(`location_id=${usa}&location_depth=3`), [brooklyn])
  t.same(await byDepth(`location_id=${usa}&location_type=State`), [nys, texas, california, maine])
  t.same(await byDepth(`location_id=${usa}&location_type=${types[1]}`), [nys, texas, california, maine], 'a type id works too')
  t.equal((await api.get(`/location/?location_id=${usa}&location_type=Nope`)).body.code, 'INVALID_VALUE')
  t.same(await byDepth(`location_id=${usa}&location_depth=4`), [], 'no District type: the fallback stays empty')
  t.same(await byDepth(`location_id=${usa}`), [usa])
  t.equal((await api.get(`/location/?location_id=${usa}&location_depth=x`)).body.code, 'INVALID_VALUE')
  // Re-parent Portland under Texas, then compare with a rebuild.
  t.equal((await api.patch(`/location/${portland}/`, { parent_location_id: texas })).status, 200)
  const portlandRows = (await tree()).filter((r) => r[0] === portland)
  t.same(portlandRows, [
    [portland, portland, 0],
    [portland, texas, 1],
    [portland, usa, 2],
  ])
  // Moving a subtree moves its descendants' rows too.
  await api.patch(`/location/${nyc}/`, { parent_location_id: texas })
  const incremental = await tree()
  await rebuildTree(db)
  t.same(incremental.sort(), (await tree()).sort(), 'incremental maintenance equals a rebuild')
  const cycle = await api.patch(`/location/${nys}/`, { parent_location_id: nys })
  t.equal(cycle.body.code, 'LOCATION_CYCLE')
  const deep = await api.patch(`/location/${texas}/`, { parent_location_id: brooklyn })
  t.match(deep.body, { code: 'LOCATION_CYCLE', message: `parent_location_id ${brooklyn} would make location ${texas} its own ancestor` })
  const blocked = await api.delete(`/location/${texas}/`)
  t.equal(blocked.status, 409)
  t.equal(blocked.body.details.dependents.location, 2)
  t.equal((await api.delete(`/location/${texas}/?cascade=true`)).status, 204)
  const left = ids((await api.get('/location/?limit=0')).body).sort((a, b) => a - b)
  t.same(left, [usa, nys, california, maine])
  t.notOk((await tree()).some((r) => [texas, portland, nyc, brooklyn].includes(r[0]) || [texas, nyc].includes(r[1])))
})
