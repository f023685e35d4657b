// Start-up, configuration, bootstrap, the CLI, demo data, CSV export and error mapping.
import { readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { sql } from 'kysely'
import { admin, build, engine, eventually, tempDir } from './helper.js'
import { client } from './api.js'
import { smallWorld } from './fixtures.js'
import { buildApp } from '../app.js'
import { loadConfig } from '../lib/core/config.js'
import { ensureAdmin } from '../lib/data/bootstrap.js'
import { runCommand } from '../cli/commands.js'
import { loadDemoData } from '../lib/engine/demo.js'
import { createDatabase, formatTimestamp } from '../lib/data/database.js'

t.test('configuration: defaults, and a clear error naming the bad variable', async (t) => {
  const config = loadConfig({})
  t.match(config, { HOST: '127.0.0.1', PORT: 3000, DATA_DIR: './.data', MAX_UPLOAD_BYTES: 52428800, DISTRICT_TYPE_NAME: 'District' })
  t.equal(loadConfig({ PORT: '8080' }).PORT, 8080)
  t.throws(() => loadConfig({ PORT: 'eighty' }), { name: 'ConfigError' })
  t.throws(() => loadConfig({ PORT: 'eighty' }), /PORT="eighty"/)
  t.throws(() => loadConfig({ DATABASE_URL: 'mysql://x' }), /DATABASE_URL/)
  t.throws(() => loadConfig({ LOG_LEVEL: 'loud' }), /LOG_LEVEL/)
  t.throws(() => loadConfig({ ADMIN_API_KEY: 'short' }), /ADMIN_API_KEY/)
})

t.test('timestamps leave the database as UTC with six fractional digits and no zone designator', async (t) => {
  t.equal(formatTimestamp('2016-05-04 02:31:29.227679+00'), '2016-05-04T02:31:29.227679')
  t.equal(formatTimestamp('2016-05-04 02:31:29.2+00'), '2016-05-04T02:31:29.200000')
  t.equal(formatTimestamp('2016-05-04 02:31:29+00'), '2016-05-04T02:31:29.000000')
})

// acceptance.md 3
t.test('the first start creates admin and its key file, a second start nothing', async (t) => {
  const { database } = await build(t)
  const { db } = database
  await sql`truncate auth_user restart identity cascade`.execute(db)
  const dataDir = tempDir(t)
  const config = loadConfig({ DATA_DIR: dataDir })
  const printed: string[] = []
  const key = await ensureAdmin(db, config, (line) => printed.push(line))
  t.match(key, /^[0-9a-f]{40}$/)
  const users = await db.selectFrom('auth_user').selectAll().execute()
  t.equal(users.length, 1)
  t.match(users[0], { username: 'admin', is_superuser: true })
  const file = join(dataDir, 'admin-api-key')
  t.equal(readFileSync(file, 'utf8'), `admin:${key}\n`)
  t.equal(statSync(file).mode & 0o777, 0o600)
  t.match(printed[0], `admin API key: admin:${key}`)
  const app = await buildApp({ database, logger: false, config: { DATA_DIR: dataDir } })
  t.teardown(() => app.close())
  t.equal((await client(app, { authorization: `ApiKey admin:${key}` }).get('/campaign/')).status, 200)
  const before = statSync(file).mtimeMs
  t.equal(await ensureAdmin(db, config, () => {}), undefined)
  t.equal((await db.selectFrom('auth_user').select('id').execute()).length, 1)
  t.equal(statSync(file).mtimeMs, before, 'the key file is not rewritten')
})

t.test('ADMIN_API_KEY sets the first key instead of generating one', async (t) => {
  const { database } = await build(t)
  await sql`truncate auth_user restart identity cascade`.execute(database.db)
  const key = 'c'.repeat(40)
  const dataDir = tempDir(t)
  t.equal(await ensureAdmin(database.db, loadConfig({ DATA_DIR: dataDir, ADMIN_API_KEY: key }), () => {}), key)
  t.throws(() => statSync(join(dataDir, 'admin-api-key')), 'no key file when the operator chose the key')
})

t.test('a fresh embedded database: start, migrate, bootstrap, demo data, restart', { skip: engine !== 'pglite' && 'PGlite start-up' }, async (t) => {
  const dataDir = tempDir(t)
  const config = { DATA_DIR: dataDir, DATABASE_URL: undefined }
  const first = await buildApp({ logger: false, config })
  t.ok(await loadDemoData(first.db.db))
  const key = readFileSync(join(dataDir, 'admin-api-key'), 'utf8').trim()
  const api = client(first, { authorization: `ApiKey ${key}` })
  const provinces = await api.get('/location/?location_id=1&location_depth=1')
  t.same(provinces.body.objects.map((o: { name: string }) => o.name).sort(), ['Eastvale', 'Northmarch', 'Southreach'])
  t.equal((await api.get('/location/?location_type=District&location_id=1')).body.meta.total_count, 9)
  const campaigns = (await api.get('/campaign/')).body.objects as Array<{ id: number }>
  t.equal(campaigns.length, 3)
  // The demo has data: district entries, aggregated and calculated by the engine.
  const indicators = new Map(((await api.get('/indicator/')).body.objects as Array<{ id: number; short_name: string }>).map((i) => [i.short_name, i.id]))
  const value = async (short: string, location: string) => {
    const res = await api.get(`/campaign_datapoint/?indicator__in=${indicators.get(short)}&campaign__in=${campaigns[0].id}&${location}`)
    return (res.body.objects as Array<{ value: number }>).map((o) => o.value)
  }
  const districts = 'location_id=1&location_type=District'
  const [vaccinated, missed] = [await value('Children vaccinated', districts), await value('Children missed', districts)]
  t.equal(vaccinated.length, 9)
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0)
  const [countryMissed] = await value('Children missed', 'location_id__in=1')
  const [countryTargeted] = await value('Children targeted', 'location_id__in=1')
  t.equal(countryMissed, sum(missed), 'the country sums its districts')
  t.equal(countryTargeted, sum(vaccinated) + sum(missed), 'targeted is the sum of its parts')
  t.equal((await value('Percent missed', 'location_id__in=1'))[0], countryMissed / countryTargeted)
  const cases = await api.get(`/date_datapoint/?indicator__in=${indicators.get('Polio cases')}&group_by_time=all_time&location_id=1`)
  t.equal(cases.body.objects.length, 1)
  t.ok(cases.body.objects[0].value > 0, 'monthly cases summed to the country')
  const months = await api.get(`/date_datapoint/?indicator__in=${indicators.get('Polio cases')}&group_by_time=month&location_id=1`)
  const byMonth = months.body.objects.map((m: { value: number }) => m.value)
  t.equal(byMonth.length, 12, 'a country total for each month of 2016')
  t.ok(new Set(byMonth).size >= 6, `the country's polio line has a season's shape, not a flat line (${byMonth.join(', ')})`)
  // The map and the dashboard have something to draw: a polygon for every location, five charts of
  // different types in the original front-end's shape, each chart's campaign read answering.
  const shapes = await api.get('/geo/?location_id=1&location_type=District')
  t.equal(shapes.body.objects.length, 9, 'every district has a polygon')
  t.equal((await api.get('/geo/?location_id=1&location_depth=1')).body.objects.length, 3, 'every province')
  const [board] = (await api.get('/dashboard/')).body.objects as Array<{ title: string; rows: Array<{ charts: string[] }> }>
  t.equal(board.title, 'Campaign overview')
  const charts = (await api.get('/custom_chart/')).body.objects as Array<{ uuid: string; chart_json: Record<string, unknown> }>
  t.same(board.rows.flatMap((r) => r.charts).sort(), charts.map((c) => c.uuid).sort(), 'the dashboard shows every demo chart')
  t.same(charts.map((c) => c.chart_json.type).sort(), ['ChoroplethMap', 'ColumnChart', 'LineChart', 'PieChart', 'TableChart'])
  for (const { chart_json: chart } of charts.filter((c) => c.chart_json.campaign_ids)) {
    const read = await api.get(
      `/campaign_datapoint/?indicator__in=${(chart.indicator_ids as number[]).join(',')}&campaign__in=${(chart.campaign_ids as number[]).join(',')}&location_id=${(chart.location_ids as number[])[0]}&location_depth=${chart.location_depth}`,
    )
    t.ok(read.body.objects.length >= 3, `${chart.type}: ${read.body.objects.length} values`)
  }
  const password = readFileSync(join(dataDir, 'admin-password'), 'utf8').trim()
  const signIn = await first.inject({ method: 'POST', url: '/api/v1/session/', payload: { username: 'admin', password } })
  t.equal(signIn.statusCode, 200, 'the first start gives admin a password to sign in with')
  await first.close()
  const second = await buildApp({ logger: false, config })
  t.teardown(() => second.close())
  t.notOk(await loadDemoData(second.db.db), 'demo data loads into an empty database only')
  t.equal((await second.db.db.selectFrom('auth_user').select('id').execute()).length, 1)
  t.equal(readFileSync(join(dataDir, 'admin-api-key'), 'utf8').trim(), key)
  t.equal((await client(second, { authorization: `ApiKey ${key}` }).get('/location/')).body.meta.total_count, 13)
})

t.test('CLI: create-user, create-key, revoke-key (refused at once), load-geo errors', async (t) => {
  const { app, db } = await build(t)
  const api = client(app)
  const lines: string[] = []
  const run = (command: string, arg?: string, options = {}) => runCommand(db, command, arg, options, (l) => lines.push(l))
  await api.post('/location_type/', { name: 'Country', admin_level: 0 })
  const root = (await api.post('/location/', { name: 'Root', location_code: 'R', location_type_id: 1 })).body.id
  t.equal(await run('create-user', 'carol', { location: String(root) }), 0)
  const carol = lines.pop()!
  t.match(carol, /^carol:[0-9a-f]{40}$/)
  const carolAuth = { authorization: `ApiKey ${carol}` }
  const me = await api.get('/location/', carolAuth)
  t.equal(me.status, 200)
  t.equal(me.body.meta.top_lvl_location_id, root)
  t.equal(await run('create-key', 'carol'), 0)
  const second = lines.pop()!
  t.equal((await api.get('/location/', { authorization: `ApiKey ${second}` })).status, 200)
  t.equal(await run('revoke-key', carol), 0)
  // The CLI is another writer: the server hears of it through NOTIFY, within milliseconds.
  const started = Date.now()
  const revoked = await eventually(
    () => api.get('/location/', carolAuth),
    (r) => r.status === 401,
  )
  t.equal(revoked.status, 401, 'a revoked key is refused')
  t.ok(Date.now() - started < 1000, `within a second (${Date.now() - started} ms)`)
  t.equal((await api.get('/location/', { authorization: `ApiKey ${second}` })).status, 200, 'other keys keep working')
  t.equal(await run('revoke-key', undefined, { user: 'carol' }), 0)
  t.equal(
    (
      await eventually(
        () => api.get('/location/', { authorization: `ApiKey ${second}` }),
        (r) => r.status === 401,
      )
    ).status,
    401,
  )
  t.equal(await run('revoke-key', 'f'.repeat(40)), 1, 'nothing to revoke')
  await t.rejects(run('create-key', 'nobody'), { name: 'UsageError' })
  await t.rejects(run('frobnicate'), { name: 'UsageError' })
  const file = join(tempDir(t), 'geo.txt')
  writeFileSync(file, 'location_code|geo_json\nR|"{""type"":""Polygon"",""coordinates"":[[[0,0],[1,0],[0,0]]]}"\nNOPE|"{}"\n')
  t.equal(await run('load-geo', file), 0)
  t.same(lines.slice(-2), ['1 polygon(s) loaded', 'unknown location codes skipped: NOPE'])
})

t.test('CSV export of model lists', async (t) => {
  const { app } = await build(t)
  const api = client(app)
  const type = (await api.post('/campaign_type/', { name: 'NID' })).body.id
  for (const m of ['01', '02', '03']) {
    await api.post('/campaign/', { name: `C, "${m}"`, campaign_type_id: type, start_date: `2016-${m}-01`, end_date: `2016-${m}-02` })
  }
  const csv = await api.get('/campaign/?format=csv')
  t.equal(csv.status, 200)
  t.equal(csv.headers['content-type'], 'text/csv; charset=utf-8')
  t.equal(csv.headers['x-total-count'], '3')
  const lines = csv.text.split('\r\n')
  t.equal(lines[0], 'id,name,campaign_type_id,start_date,end_date,created_at')
  t.equal(lines.length, 5, 'header, 3 rows, final CRLF')
  t.match(lines[1], /^3,"C, ""03""",1,2016-03-01,2016-03-02,\d{4}-/)
  t.equal((await api.get('/campaign/', { ...admin, accept: 'text/csv' })).headers['content-type'], 'text/csv; charset=utf-8')
  t.equal((await api.get('/campaign/?format=xml')).body.code, 'INVALID_VALUE')
  const error = await api.get('/campaign/?foo=1&format=csv')
  t.equal(error.body.code, 'UNKNOWN_FILTER', 'errors still answer JSON')
  t.equal((await api.get('/campaign/?format=csv&shape=wide')).status, 400)
  t.equal((await api.get('/cache_meta/?format=csv')).status, 400, 'csv is for model resources')
})

t.test('error mapping: limits, nulls, ids and bodies', async (t) => {
  const { app } = await build(t, { BODY_LIMIT_BYTES: 1024 })
  const api = client(app)
  const big = await api.post('/campaign_type/', { name: 'x'.repeat(2000) })
  t.equal(big.status, 413)
  t.match(big.body, { code: 'PAYLOAD_TOO_LARGE', message: 'Request body is too large (limit 1024 bytes)' })
  const nul = await api.post('/campaign_type/', { name: null })
  t.equal(nul.body.message, 'Missing required field name')
  const type = (await api.post('/campaign_type/', { name: 'T' })).body.id
  const notNull = await api.patch(`/campaign_type/${type}/`, { name: null })
  t.match(notNull.body, { code: 'NOT_NULL_VIOLATION', message: 'name may not be null' })
  const long = await api.patch(`/campaign_type/${type}/`, { name: 'x'.repeat(56) })
  t.match(long.body, { code: 'VALIDATION_ERROR', message: 'name: must be at most 55 characters' })
  t.equal((await api.patch(`/campaign_type/${type}/`, { id: type + 1, name: 'y' })).body.code, 'VALIDATION_ERROR')
  t.equal((await api.patch(`/campaign_type/${type}/`, { id: type, name: 'y' })).body.name, 'y')
  t.equal((await api.get('/campaign_type/99999999999/')).status, 404)
  t.equal((await api.get('/campaign_type/-1/')).status, 404)
  t.equal((await api.delete('/campaign_type/?id=abc')).body.code, 'INVALID_ID')
  t.equal((await api.delete('/campaign_type/?id=99999')).status, 404)
  t.equal((await api.delete(`/campaign_type/?id=${type}&cascade=maybe`)).body.code, 'INVALID_VALUE')
  t.equal((await api.delete(`/campaign_type/?id=${type}`)).status, 204, 'legacy DELETE ?id=')
  const empty = await api.post('/campaign_type/', '', { ...admin, 'content-type': 'application/json' })
  t.equal(empty.body.message, 'Missing required field name', 'an empty body is {}')
  const preflight = await app.inject({ method: 'OPTIONS', url: '/api/v1/campaign/', headers: { origin: 'http://x', 'access-control-request-method': 'POST' } })
  t.equal(preflight.statusCode, 204)
  t.equal(preflight.headers['access-control-allow-origin'], '*')
  t.equal((await api.get('/campaign_type/')).headers['cache-control'], 'private, no-cache')
})

t.test('/health is 503 and requests 503 while the database is unreachable', async (t) => {
  const { app } = await build(t)
  t.equal((await client(app).get('/health', {})).status, 200)
  // A server that refuses connections: port 1 on loopback.
  const unreachable = await createDatabase({ url: 'postgres://postgres@127.0.0.1:1/none' })
  const down = await buildApp({ logger: false, database: unreachable })
  t.teardown(async () => {
    await down.close()
    await unreachable.close()
  })
  const health = await client(down).get('/health', {})
  t.equal(health.status, 503)
  t.same(health.body, { status: 'down', database: 'down', model: 'ok' })
  const read = await client(down).get('/campaign/')
  t.equal(read.status, 503)
  t.match(read.body, { code: 'DATABASE_UNAVAILABLE', message: 'Database unavailable' })
})

t.test('CLI upload: mappings, upload, transform and summary in one command', async (t) => {
  const { app, db } = await build(t)
  const api = client(app)
  const { location, campaign, indicator } = await smallWorld(api.post)
  const dir = tempDir(t)
  writeFileSync(
    join(dir, 'map.csv'),
    `content_type,source_object_code,master_object_id\nlocation,G1,${location}\ncampaign,March,${campaign}\nindicator,vaccinated,${indicator}\n`,
  )
  writeFileSync(join(dir, 'data.csv'), 'campaign,geocode,vaccinated\nMarch,G1,"1,250"\nMarch,G2,7\n')
  const lines: string[] = []
  const config = loadConfig({ DATA_DIR: dir })
  t.equal(await runCommand(db, 'upload', join(dir, 'data.csv'), { type: 'campaign', map: join(dir, 'map.csv') }, (l) => lines.push(l), config), 0)
  const summary = JSON.parse(lines.join('\n'))
  t.match(summary, { submissions: { created: 2 }, rows: { processed: 1, missing_location: 1 }, datapoints: { inserted: 1 }, campaigns_recomputed: [campaign] })
  const value = await api.get(`/campaign_datapoint/?indicator__in=${indicator}&campaign__in=${campaign}&location_id__in=${location}`)
  t.equal(value.body.objects[0].value, 1250)
  await t.rejects(
    runCommand(db, 'upload', join(dir, 'data.csv'), { type: 'weekly' }, () => {}, config),
    { code: 'VALIDATION_ERROR' },
  )
  // --conflict reject: G1 given twice with different values is listed and not written.
  writeFileSync(join(dir, 'twice.csv'), 'campaign,geocode,vaccinated\nMarch,G1,3\nMarch,G1,4\n')
  lines.length = 0
  t.equal(await runCommand(db, 'upload', join(dir, 'twice.csv'), { type: 'campaign', conflict: 'reject' }, (l) => lines.push(l), config), 0)
  t.match(JSON.parse(lines.join('\n')), { duplicates: { count: 1, items: [{ row_numbers: [0, 1], values: [3, 4] }] }, datapoints: { inserted: 0, updated: 0 } })
  t.equal((await api.get(`/campaign_datapoint/?indicator__in=${indicator}&campaign__in=${campaign}&location_id__in=${location}`)).body.objects[0].value, 1250)
  await t.rejects(
    runCommand(db, 'upload', join(dir, 'twice.csv'), { type: 'campaign', conflict: 'newest' }, () => {}, config),
    { code: 'VALIDATION_ERROR' },
  )
})
