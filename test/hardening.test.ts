// Defences an attacker with a key would try: formulas in exports, locking others out, flooding the
// job queue, deeply nested bodies, secret-derived filters, other users' dashboards, and a removed
// responsibility that would widen a user. Each scenario failed before its defence existed.
import t from 'tap'
import ExcelJS from 'exceljs'
import { parse } from 'csv-parse/sync'
import { sql } from 'kysely'
import { admin, alice, build, engine, eventually } from './helper.js'
import { client } from './api.js'
import { bob, erin, moreUsers, upload, world } from './world.js'
import { resources } from '../resources/index.js'
import { tables } from '../schemas/index.js'
import { columnsOf } from '../schemas/columns.js'
import { createApiKey } from '../lib/data/auth.js'
import { runCommand } from '../cli/commands.js'
import { loadConfig } from '../lib/core/config.js'
import { migrateToLatest } from '../lib/data/migrations.js'
import { runJob } from '../plugins/jobs.js'

async function xlsx(rows: unknown[][]): Promise<string> {
  const workbook = new ExcelJS.Workbook()
  const sheet = workbook.addWorksheet('data')
  for (const row of rows) sheet.addRow(row)
  return Buffer.from(await workbook.xlsx.writeBuffer()).toString('base64')
}

/** The cells of a CSV answer's lines, split naively (the values used here hold no commas). */
const csvLines = (text: string) => text.trim().split('\r\n')

t.test('no formula reaches a CSV export: file cells, header cells and API text are neutralised; numbers are not', async (t) => {
  const { app } = await build(t)
  const api = client(app)
  const w = await world(api)
  const attack = "=cmd|' /C calc'!A0"
  // An XLSX text cell (uploads read XLSX formulas through their values, but this is text).
  const doc = await api.post('/document/', {
    docfile: await xlsx([
      ['campaign', 'geocode', 'n', 'note'],
      ['C', 'a1', 7, attack],
    ]),
    doc_title: 'x.xlsx',
    file_type: 'campaign',
  })
  t.equal(doc.status, 201, doc.text)
  t.equal((await api.get(`/transform_upload/?document_id=${doc.body.id}`)).status, 200)
  const raw = await api.get(`/source_submission/?document_id=${doc.body.id}&format=csv`)
  t.equal(raw.status, 200)
  t.ok(raw.text.includes(`"'${attack}"`), 'the XLSX text cell is exported with a leading quote, quoted')
  t.notOk(/(^|,)=cmd/m.test(raw.text), 'never as a formula')

  // A CSV header cell: data cells starting with = are refused at upload, header cells were not.
  const headed = await upload(api, 'h.csv', 'campaign', 'campaign,geocode,@SUM(A1),n\nC,a1,1,2\n')
  t.equal(headed.run.status, 200, headed.run.text)
  const rawHeader = csvLines((await api.get(`/source_submission/?document_id=${headed.id}&format=csv`)).text)[0]
  t.ok(rawHeader.split(',').includes(`"'@SUM(A1)"`), `the header cell is neutralised: ${rawHeader}`)
  const maps = await api.get(`/source_object_map/?document_id=${headed.id}&format=csv`)
  t.ok(maps.text.includes(`"'@SUM(A1)"`), 'and so is the unmapped code it became')
  t.notOk(/(^|,)@SUM/m.test(maps.text))

  // Text written through the API, in every export that shows it.
  const place = await api.post('/location/', {
    name: '+1+cmd',
    location_code: '-5',
    location_type_id: (await api.get(`/location/${w.a1}/`)).body.location_type_id,
    parent_location_id: w.A,
  })
  t.equal(place.status, 201, place.text)
  const locations = await api.get('/location/?format=csv&limit=1000')
  t.ok(locations.text.includes(`"'+1+cmd"`), 'a location name')
  t.match(locations.text, /,-5,/, 'a number written as text stays a number')
  t.equal((await api.post('/dashboard/', { title: '@dash' })).status, 201)
  t.ok((await api.get('/dashboard/?format=csv')).text.includes(`"'@dash"`), "a dashboard's title")
  t.equal((await api.post('/custom_chart/', { uuid: 'c1', title: '\tchart', chart_json: { title: '=1+1' } })).status, 201)
  const charts = (await api.get('/custom_chart/?format=csv')).text
  t.ok(charts.includes(`"'\tchart"`), "a chart's title")
  t.notOk(/(^|,)"?=1\+1/m.test(charts), 'JSON cells start with { and are left alone')
  const type = await api.post('/doc_detail_type/', { name: 'status' })
  t.equal((await api.post('/doc_detail/', { doc_detail_type_id: type.body.id, document_id: w.campaignDoc, doc_detail_value: '-2+3' })).status, 201)
  t.ok((await api.get('/doc_detail/?format=csv')).text.includes(`"'-2+3"`), 'a doc_detail value')

  // Numbers: a negative value stays a number in the long and wide exports (a percentage: a count is
  // never negative).
  const m = (await api.post('/indicator/', { name: 'm', short_name: 'm', data_format: 'pct' })).body.id
  t.equal((await api.post('/campaign_datapoint/', { indicator_id: m, location_id: w.b1, campaign_id: w.C, value: -5 })).status, 201)
  const long = await api.get(`/campaign_datapoint/?indicator__in=${m}&campaign__in=${w.C}&location_id__in=${w.b1}&format=csv`)
  t.match(long.text, /,-5(,|\r\n)/, long.text)
  t.notMatch(long.text, /'-5/)
  const wide = await api.get(`/campaign_datapoint/?indicator__in=${m}&campaign__in=${w.C}&location_id__in=${w.b1}&format=csv&shape=wide`)
  t.match(wide.text, /,-5(\r\n|$)/, wide.text)
})

t.test('every CSV export reads back whole with a CSV parser: text holding CR, LF, quotes and commas; no cell starts a formula', async (t) => {
  const { app } = await build(t)
  const api = client(app)
  const w = await world(api)
  // Each would have split its row, or started a new row with a formula, if written unquoted.
  const hostile = ["Q3 coverage\n=cmd|' /C calc'!A0", 'lone\r=1+1', 'say "hi", twice', '\r\n@SUM(A1)', '-2+3\n+4']
  const ok = (res: { status: number; text: string }) => {
    if (res.status >= 300) throw new Error(res.text)
  }
  ok(await api.patch(`/location/${w.a1}/`, { name: hostile[0] }))
  ok(await api.patch(`/campaign/${w.C}/`, { name: hostile[1] }))
  ok(await api.patch(`/indicator/${w.n}/`, { name: hostile[2], description: hostile[3] }))
  ok(await api.post('/dashboard/', { title: hostile[4], description: hostile[0] }))
  ok(await api.post('/custom_chart/', { uuid: 'c-hostile', title: hostile[3], chart_json: { title: hostile[0] } }))
  ok(await api.post('/campaign_type/', { name: hostile[0] }))
  ok(await api.post('/indicator_tag/', { tag_name: hostile[1] }))
  ok(await api.patch('/user/2/', { first_name: hostile[2], last_name: hostile[4] }))
  const type = await api.post('/doc_detail_type/', { name: hostile[3] })
  ok(await api.post('/doc_detail/', { doc_detail_type_id: type.body.id, document_id: w.campaignDoc, doc_detail_value: hostile[0] }))

  // The parameters a list needs, where it needs some.
  const needs: Record<string, string> = {
    campaign_datapoint: `indicator__in=${w.n}&campaign__in=${w.C}&location_id__in=${w.a1},${w.b1}`,
    date_datapoint: `indicator__in=${w.cases}&location_id__in=${w.a1},${w.b1}`,
    doc_datapoint: `document_id=${w.campaignDoc}`,
    source_object_map: `document_id=${w.campaignDoc}`,
    location_responsibility: 'user_id=2',
  }
  // A spreadsheet ends a row at CRLF, a lone LF or a lone CR, wherever it is not quoted.
  const asSpreadsheet = { record_delimiter: ['\r\n', '\n', '\r'], relax_column_count: true }
  let exports = 0
  for (const resource of resources) {
    if (resource.kind !== 'model' || !resource.methods.list.includes('GET')) continue
    if (resource.GET_params_required.length && !needs[resource.name]) continue
    const url = `/${resource.name}/?limit=1000&${needs[resource.name] ?? ''}`
    const listed = await api.get(url)
    if (listed.status !== 200) continue
    const csv = await api.get(`${url}&format=csv`)
    t.equal(csv.status, 200, `${resource.name} CSV`)
    const records: string[][] = parse(csv.text, asSpreadsheet)
    t.equal(records.length - 1, listed.body.objects.length, `${resource.name}: ${listed.body.objects.length} rows read back`)
    const formula = records.flat().find((cell) => /^[=+\-@\t\r]/.test(cell) && !/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(cell))
    t.equal(formula, undefined, `${resource.name}: no cell starts a formula`)
    exports++
  }
  t.ok(exports >= 20, `${exports} exports read back`)
  const wide = await api.get(`/campaign_datapoint/?${needs.campaign_datapoint}&format=csv&shape=wide`)
  t.equal(wide.status, 200)
  t.equal(parse(wide.text, asSpreadsheet).length, 3, 'the wide export: a header and the two districts, one holding a newline in its name')
})

t.test('a JSON body nested past JSON_MAX_DEPTH is 400 before anything runs; at the limit it is stored', async (t) => {
  const { app, db } = await build(t)
  const api = client(app)
  const nested = (levels: number): unknown => (levels === 0 ? 1 : [nested(levels - 1)])
  // The body is one level; its rows add the rest.
  const atLimit = await api.post('/dashboard/', { title: 'deep', rows: nested(63) })
  t.equal(atLimit.status, 201, 'depth 64 is stored')
  const past = await api.post('/dashboard/', { title: 'deeper', rows: nested(64) })
  t.equal(past.status, 400, 'depth 65 is refused')
  t.match(past.body, { code: 'JSON_TOO_DEEP', message: /deeper than 64 levels/ })
  const chartJson = '['.repeat(4500) + ']'.repeat(4500)
  const huge = await app.inject({
    method: 'POST',
    url: '/api/v1/custom_chart/',
    headers: { ...admin, 'content-type': 'application/json' },
    payload: `{"uuid":"u","title":"t","chart_json":${chartJson}}`,
  })
  t.equal(huge.statusCode, 400, 'thousands of levels: 400, not 500')
  // JSON carried as text, in a JSON body or a form, counts on its own.
  const asText = await api.post('/custom_chart/', { uuid: 'u', title: 't', chart_json: chartJson })
  t.equal(asText.status, 400)
  t.match(asText.body.message, /Field chart_json/)
  const form = await app.inject({
    method: 'POST',
    url: '/api/v1/custom_chart/',
    headers: { ...admin, 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ uuid: 'u', title: 't', chart_json: chartJson }).toString(),
  })
  t.equal(form.statusCode, 400)
  t.match(form.json().message, /Form field chart_json/)
  const { rows } = await sql<{ n: number }>`select count(*)::int as n from custom_chart`.execute(db)
  t.equal(rows[0].n, 0, 'nothing was written')
  const limited = await build(t, { JSON_MAX_DEPTH: 3 })
  t.equal((await client(limited.app).post('/dashboard/', { title: 'x', rows: [[1]] })).status, 201)
  t.equal((await client(limited.app).post('/dashboard/', { title: 'y', rows: [[[1]]] })).status, 400, 'the limit is configurable')
})

t.test('no column derived from a secret is filterable or orderable by a non-superuser, on any resource', async (t) => {
  const { app, db } = await build(t)
  await moreUsers(db)
  const asBob = client(app, bob)
  const secrets = Object.entries(tables).flatMap(([table, schema]) =>
    Object.entries(columnsOf(schema))
      .filter(([, meta]) => meta.secret)
      .map(([column]) => `${table}.${column}`),
  )
  t.same(
    secrets,
    ['api_key.key_hash', 'auth_user.password_hash', 'password_reset.token_hash', 'dashboard_share.token_hash', 'user_session.token_hash'],
    'the secret-derived columns',
  )
  let checked = 0
  for (const resource of resources) {
    const secret = (field: string) => resource.columns[field]?.secret
    t.notOk([...resource.query_fields, ...resource.detail_fields, ...resource.ordering].some(secret), `${resource.name}: no secret shown or ordered by`)
    for (const field of resource.filtering.filter(secret)) {
      for (const lookup of ['', '__startswith', '__contains', '__gt', '__in']) {
        const required = resource.GET_params_required.map((p) => `${p}=1&`).join('')
        const res = await asBob.get(`/${resource.name}/?${required}${field}${lookup}=a`)
        t.equal(res.status, 400, `${resource.name}?${field}${lookup}`)
        t.equal(res.body.code, 'UNKNOWN_FILTER')
        checked++
      }
      const order = await asBob.get(`/${resource.name}/?order_by=${field}`)
      t.equal(order.status, 400, `${resource.name}?order_by=${field}`)
    }
  }
  // A password's hash and a session token's are filterable by nobody (user lists neither; no resource serves sessions).
  t.equal(checked, 5, 'api_key.key_hash under every lookup')
  // Recovering one's own key hash a digit at a time answered before; a superuser may still filter.
  t.equal((await asBob.get('/api_key/?key_hash__startswith=0')).status, 400)
  t.equal((await client(app).get('/api_key/?key_hash__startswith=0')).status, 200)
})

t.test('dashboards and charts have owners: the owner, superusers and metadata editors change and delete them', async (t) => {
  const { app, db, adminId } = await build(t)
  const { erinId, bobId } = await moreUsers(db)
  const asBob = client(app, bob)
  const asAlice = client(app, alice)
  const asErin = client(app, erin)
  const board = await asBob.post('/dashboard/', { title: "bob's", owner_id: adminId })
  t.equal(board.status, 201)
  t.equal(board.body.owner_id, bobId, 'the owner is whoever creates it, whatever the body says')
  const chart = await asBob.post('/custom_chart/', { uuid: 'b1', title: "bob's chart", chart_json: { type: 'LineChart' } })
  t.equal(chart.body.owner_id, bobId)

  const refused = await asAlice.patch(`/dashboard/${board.body.id}/`, { title: 'mine now' })
  t.equal(refused.status, 403, "another user's PATCH")
  t.equal(refused.body.code, 'OWNER_FORBIDDEN')
  t.equal((await asAlice.post('/dashboard/', { id: board.body.id, title: 'legacy update' })).status, 403, 'also through the legacy POST with an id')
  t.equal((await asAlice.patch(`/custom_chart/${chart.body.id}/`, { title: 'x' })).status, 403)
  t.equal((await asAlice.delete(`/custom_chart/${chart.body.id}/`)).status, 403, "another user's DELETE")
  t.equal((await asAlice.get(`/dashboard/${board.body.id}/`)).status, 200, 'everyone reads it')
  t.equal((await asBob.patch(`/dashboard/${board.body.id}/`, { title: 'renamed' })).status, 200, "the owner's PATCH")
  t.equal((await asErin.patch(`/dashboard/${board.body.id}/`, { description: 'tidied' })).status, 200, "a metadata editor's")
  t.equal((await client(app).patch(`/dashboard/${board.body.id}/`, { layout: 2 })).status, 200, "a superuser's")
  t.equal((await asBob.patch(`/dashboard/${board.body.id}/`, { owner_id: erinId })).status, 200, 'owner_id is read-only: ignored')
  t.equal((await asBob.get(`/dashboard/${board.body.id}/`)).body.owner_id, bobId)
  t.equal((await asBob.delete(`/custom_chart/${chart.body.id}/`)).status, 204, 'the owner deletes it')
  t.equal((await asErin.delete(`/dashboard/${board.body.id}/`)).status, 204, 'so does a metadata editor')
  t.equal((await asBob.delete(`/campaign/1/`)).body.message, 'Only a superuser may delete', 'other resources: superusers only, as before')
})

t.test("a dashboard draws only charts its owner may show: a squatted uuid is not drawn; another's chart chosen on purpose is", async (t) => {
  const { app, db } = await build(t)
  await moreUsers(db)
  const asBob = client(app, bob)
  const asAlice = client(app, alice)
  const own = await asBob.post('/custom_chart/', { uuid: 'bob-own', title: "bob's own", chart_json: { type: 'ColumnChart' } })
  const alices = await asAlice.post('/custom_chart/', { uuid: 'alice-shared', title: "alice's", chart_json: { type: 'PieChart' } })
  // The original front-end's form: uuids, one of them not (or no longer) held by any chart.
  const board = await asBob.post('/dashboard/', { title: 'board', rows: [{ charts: ['bob-own', 'future-uuid', 'alice-shared'] }] })
  t.equal(board.status, 201, board.text)
  const squat = await asAlice.post('/custom_chart/', { uuid: 'future-uuid', title: 'squatter', chart_json: { type: 'TableChart', title: 'pwned' } })
  t.equal(squat.status, 201)
  const drawn = (await asBob.get(`/dashboard/${board.body.id}/`)).body.rows[0].charts
  t.match(drawn[0], { id: own.body.id, uuid: 'bob-own', title: "bob's own" }, "the owner's chart, by uuid")
  t.equal(drawn[1], 'future-uuid', "a uuid held by someone else's chart is not drawn")
  t.match(drawn[2], { id: alices.body.id, title: "alice's" }, "another's chart that existed when it was added is drawn")
  const stored = await db.selectFrom('custom_dashboard').select('rows').where('id', '=', board.body.id).executeTakeFirstOrThrow()
  t.same((stored.rows as Array<{ charts: unknown[] }>)[0].charts, ['bob-own', 'future-uuid', alices.body.id], 'kept by its id, which nobody can take')
  t.equal((await asAlice.delete(`/custom_chart/${alices.body.id}/`)).status, 204)
  const after = await db.selectFrom('custom_dashboard').select('rows').where('id', '=', board.body.id).executeTakeFirstOrThrow()
  t.same((after.rows as Array<{ charts: unknown[] }>)[0].charts, ['bob-own', 'future-uuid'], 'a deleted chart leaves the dashboard, by id too')
})

t.test('rows made before owners existed belong to the first superuser after the migration', async (t) => {
  const { database, db, adminId } = await build(t)
  // The migrations from 010 on run again (those after it are written to run twice).
  await sql`delete from kysely_migration where name >= '010_owners'`.execute(db)
  await sql`drop index custom_chart_owner`.execute(db)
  await sql`drop index custom_dashboard_owner`.execute(db)
  await sql`alter table custom_chart drop column owner_id`.execute(db)
  await sql`alter table custom_dashboard drop column owner_id`.execute(db)
  await sql`insert into custom_dashboard (title) values ('old board')`.execute(db)
  await sql`insert into custom_chart (uuid, title, chart_json) values ('old', 'old chart', '{}')`.execute(db)
  await migrateToLatest(database)
  const owners = await sql<{ owner_id: number }>`select owner_id from custom_dashboard union all select owner_id from custom_chart`.execute(db)
  t.same(owners.rows, [{ owner_id: adminId }, { owner_id: adminId }])
})

t.test("deleting a user's last responsibility is 409: the user stays restricted", async (t) => {
  const { app, aliceId } = await build(t)
  const api = client(app)
  const w = await world(api)
  const responsibility = await api.post('/location_responsibility/', { user_id: aliceId, top_lvl_location_id: w.A })
  t.equal(responsibility.status, 201)
  const refused = await api.delete(`/location_responsibility/${responsibility.body.id}/`)
  t.equal(refused.status, 409)
  t.equal(refused.body.code, 'LAST_RESPONSIBILITY')
  t.match(refused.body.message, /PATCH the responsibility to the root location.*deactivate the user/)
  // Nor through a cascade: deleting the location the responsibility names.
  const cascade = await api.delete(`/location/${w.A}/?cascade=true`)
  t.equal(cascade.status, 409, cascade.text)
  t.equal(cascade.body.code, 'LAST_RESPONSIBILITY')
  const seen = await client(app, alice).get('/location/?limit=100')
  t.same(seen.body.objects.map((l: { id: number }) => l.id).sort(), [w.A, w.a1].sort(), 'alice still sees only her province')
  // The explicit way to widen.
  t.equal((await api.patch(`/location_responsibility/${responsibility.body.id}/`, { top_lvl_location_id: w.R })).status, 200)
  t.equal((await client(app, alice).get('/location/?limit=100')).body.objects.length, 5)
})

t.test('a user may have JOB_MAX_QUEUED_PER_USER jobs queued; others are not stuck behind them', async (t) => {
  const { app, db } = await build(t, { JOB_CONCURRENCY: 0, JOB_MAX_QUEUED_PER_USER: 20 })
  const api = client(app)
  await world(api)
  const { bobId } = await moreUsers(db)
  const asBob = client(app, bob)
  const asErin = client(app, erin)
  const queue = async (who: typeof asBob, headers: Record<string, string>) => {
    const doc = await who.post('/document/', {
      docfile: Buffer.from('campaign,geocode,n\nC,a1,1\n').toString('base64'),
      doc_title: 'd.csv',
      file_type: 'campaign',
    })
    return who.get(`/transform_upload/?document_id=${doc.body.id}`, { ...headers, prefer: 'respond-async' })
  }
  const bobsJobs: number[] = []
  for (let i = 0; i < 20; i++) {
    const res = await queue(asBob, bob)
    t.equal(res.status, 202)
    bobsJobs.push(res.body.id)
  }
  const over = await queue(asBob, bob)
  t.equal(over.status, 429, "bob's 21st job")
  t.equal(over.body.code, 'TOO_MANY_JOBS')
  t.ok(Number(over.headers['retry-after']) > 0)
  t.match(over.body.message, /20 jobs queued or running/)
  const erinsFirst = await queue(asErin, erin)
  t.equal(erinsFirst.status, 202, "another user's first job is accepted")
  t.equal(erinsFirst.body.queue_position, 2, "it goes right after bob's first")
  const positions = (await api.get(`/job/?created_by=${bobId}&order_by=id&limit=50`)).body.objects.map((j: { queue_position: number }) => j.queue_position)
  t.same(positions, [1, ...Array.from({ length: 19 }, (_, i) => i + 3)], "bob's backlog waits behind erin's job")
  // pg-boss's own order, as a worker takes jobs.
  const taken: number[] = []
  for (let i = 0; i < 3; i++) {
    const [next] = (await app.jobs.boss.fetch<{ job_id: number }>('document')) ?? []
    taken.push(next.data.job_id)
  }
  t.same(taken, [bobsJobs[0], erinsFirst.body.id, bobsJobs[1]], 'a worker takes bob 1, erin 1, bob 2')
})

t.test(
  'a revoke with the CLI on PostgreSQL returns once every server refuses the key',
  { skip: engine === 'pglite' && 'the CLI sends revoke-key to the server holding PGlite (tested in service.test.ts)' },
  async (t) => {
    const { app, db, database, adminId } = await build(t)
    const config = loadConfig(process.env, { DATABASE_URL: process.env.DATABASE_URL })
    for (let i = 0; i < 30; i++) {
      const key = await createApiKey(db, adminId)
      const headers = { authorization: `Bearer ${key}` }
      t.equal((await app.inject({ url: '/api/v1/campaign/', headers })).statusCode, 200, 'the key is cached')
      t.equal(await runCommand(db, 'revoke-key', key, {}, () => {}, config, database), 0)
      const after = await app.inject({ url: '/api/v1/campaign/', headers })
      if (after.statusCode !== 401) t.fail(`try ${i}: the revoked key answered ${after.statusCode}`)
    }
    t.pass('30 revokes, each refused on the next request')
  },
)

t.test("a queued job runs with its requester's rights as they are when it runs: smaller, or none", async (t) => {
  const { app, db } = await build(t, { JOB_CONCURRENCY: 0 })
  const api = client(app)
  const w = await world(api)
  const { erinId, bobId } = await moreUsers(db)
  const queue = async (headers: Record<string, string>) => {
    const doc = await client(app, headers).post('/document/', {
      docfile: Buffer.from('campaign,geocode,n\nC,a1,31\nC,b1,32\n').toString('base64'),
      doc_title: 'q.csv',
      file_type: 'campaign',
    })
    const job = await client(app, headers).get(`/transform_upload/?document_id=${doc.body.id}`, { ...headers, prefer: 'respond-async' })
    t.equal(job.status, 202)
    return { doc: doc.body.id as number, job: job.body.id as number }
  }
  const bobs = await queue(bob)
  const erins = await queue(erin)
  // While they wait: bob's rights shrink to province A, erin is deactivated.
  t.equal((await api.post('/location_responsibility/', { user_id: bobId, top_lvl_location_id: w.A })).status, 201)
  t.equal((await api.patch(`/user/${erinId}/`, { is_active: false })).status, 200)
  await app.jobs.work(1, (job, trx, progress) => runJob(app, job, trx, progress))
  const settled = (id: number) =>
    eventually(
      () => api.get(`/job/${id}/`),
      (r) => ['completed', 'failed'].includes(r.body.state),
      30_000,
    )
  const bobsJob = (await settled(bobs.job)).body
  t.equal(bobsJob.state, 'completed')
  t.equal(bobsJob.result.ingest_stats.rows.location_forbidden, 1, "the row outside bob's new province is not written")
  const written = await api.get(`/campaign_datapoint/?indicator__in=${w.n}&campaign__in=${w.C}&location_id__in=${w.a1},${w.b1}`)
  t.same(
    written.body.objects.map((o: { location_id: number; value: number }) => [o.location_id, o.value]).sort(),
    [
      [w.a1, 31],
      [w.b1, 20],
    ].sort(),
    'a1 written, b1 kept',
  )
  const erinsJob = (await settled(erins.job)).body
  t.equal(erinsJob.state, 'failed')
  t.match(erinsJob.error, { code: 'USER_INACTIVE', message: /no longer active/ })
})
