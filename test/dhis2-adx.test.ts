// DHIS2's other ways in, on the demo data (either engine): ADX XML data value sets (`application/adx+xml`)
// imported through the upload pipeline and exported, with ADX's ISO 8601 periods and a disaggregation
// written as attributes set aside by name; and HTTP Basic with a person's password, as DHIS2's clients
// send it, on DHIS2's paths only and within the sign-in door's budgets.
import { request as httpRequest } from 'node:http'
import t from 'tap'
import { client } from './api.js'
import { ADMIN_KEY, build, rowCounts } from './helper.js'
import { loadDemoData } from '../lib/engine/demo.js'
import { setPassword } from '../lib/data/passwords.js'

const ADX = 'application/adx+xml'
const adx = { authorization: `ApiToken ${ADMIN_KEY}`, 'content-type': ADX }
const basic = (username: string, password: string) => `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`

t.test('ADX in and out', async (t) => {
  const { app, db } = await build(t)
  await loadDemoData(db)
  const api = client(app)
  const id = async (table: 'indicator' | 'location', column: 'short_name' | 'location_code', value: string) =>
    // biome-ignore lint/suspicious/noExplicitAny: a column chosen by the caller among the two tables' own
    (await (db as any).selectFrom(table).select('id').where(column, '=', value).executeTakeFirstOrThrow()).id as number
  const missed = await id('indicator', 'short_name', 'Children missed')
  const october = (await db.selectFrom('campaign').select('id').where('name', 'like', 'October%').executeTakeFirstOrThrow()).id
  const value = async (location: string) =>
    (await api.get(`/campaign_datapoint/?indicator__in=${missed}&campaign__in=${october}&location_id__in=${await id('location', 'location_code', location)}`))
      .body.objects[0]?.value
  t.equal((await api.post('/source_object_map/', { content_type: 'indicator', source_object_code: 'MISSED', master_object_id: missed })).status, 201)
  const before = { ashford: await value('VD11'), brindle: await value('VD12'), province: await value('VD1') }

  // The shape of DHIS2's documented example: a group per place and period, codes as identifiers, a
  // disaggregation as attributes of its own (set aside, named), ISO 8601's month.
  const message = `<?xml version="1.0" encoding="UTF-8"?>
<adx xmlns="urn:ihe:qrph:adx:2015" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" exported="2016-11-08T19:30:00Z">
  <group orgUnit="VD11" period="2016-10-01/P1M" completeDate="2016-11-01" dataSet="(EPI)NID">
    <dataValue dataElement="MISSED" value="${before.ashford + 5}"/>
    <dataValue dataElement="MISSED" GENDER="FMLE" HIV_AGE="AGE0-14" value="32"/>
  </group>
  <group orgUnit="VD12" period="2016-10-01/P1M" dataSet="(EPI)NID">
    <dataValue dataElement="MISSED" value="41"><annotation>recounted</annotation></dataValue>
  </group>
  <group orgUnit="VD13" period="2016-01-01/P1M" dataSet="(EPI)NID">
    <dataValue dataElement="MISSED" value="1"/>
  </group>
</adx>`
  const counts = await rowCounts(db)
  const dry = await api.post('/api/dataValueSets?dryRun=true&dataElementIdScheme=code&orgUnitIdScheme=code', message, adx)
  t.match(dry.body.response, { importCount: { updated: 2, ignored: 2 } }, 'a dry run counts')
  t.same(await rowCounts(db), counts, 'and keeps nothing')
  const done = await api.post('/api/dataValueSets?dataElementIdScheme=code&orgUnitIdScheme=code', message, adx)
  t.equal(done.status, 200, done.text.slice(0, 300))
  t.same(done.body.response.importCount, { imported: 0, updated: 2, ignored: 2, deleted: 0 })
  t.same(
    done.body.response.conflicts,
    [
      {
        object: 'GENDER=FMLE HIV_AGE=AGE0-14',
        value: 'GENDER=FMLE HIV_AGE=AGE0-14: a disaggregation is not read (one is an indicator of its own)',
        indexes: [1],
      },
      { object: '2016-01-01/P1M', value: 'no campaign starts in period 2016-01-01/P1M', indexes: [3] },
    ],
    'the disaggregated value and the month no campaign starts in, each named',
  )
  t.equal(await value('VD11'), before.ashford + 5, 'Ashford’s value through the pipeline')
  t.equal(await value('VD12'), 41, 'a value with an annotation element')
  t.equal(await value('VD1'), before.province + 5 + (41 - before.brindle), 'its province’s total recomputed')

  // Out as ADX, and back in: nothing changes.
  const out = await api.get('/api/dataValueSets?dataElement=MISSED&orgUnit=VD1&children=true&period=201610', {
    authorization: `ApiToken ${ADMIN_KEY}`,
    accept: ADX,
  })
  t.equal(out.status, 200, out.text.slice(0, 300))
  t.match(out.headers['content-type'], /^application\/adx\+xml/)
  t.match(out.text, /^<\?xml version="1\.0" encoding="UTF-8"\?>\s*<adx xmlns="urn:ihe:qrph:adx:2015" exported="\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ">/)
  t.match(out.text, /<group orgUnit="VD11" period="2016-10-01\/P1M" dataSet="October 2016[^"]*">\s*<dataValue dataElement="MISSED" value="\d+"/)
  t.equal(out.text.match(/<group /g)?.length, 3, 'a group per district')
  const back = await api.post('/api/dataValueSets', out.text, adx)
  t.match(back.body, { status: 'OK', response: { importCount: { imported: 0, updated: 0, ignored: 3 }, conflicts: [] } }, 'back in: three values unchanged')
  const json = await api.get('/api/dataValueSets?dataElement=MISSED&orgUnit=VD1&children=true&period=201610')
  t.match(json.headers['content-type'], /^application\/json/, 'JSON when Accept names neither')

  // What cannot be read is a 400 that says where, and nothing is written.
  for (const [body, problem] of [
    ['<adx><group orgUnit="VD11" period="2016-10-01/P1M"><dataValue dataElement="MISSED" value="1"></group></adx>', /not well-formed XML at line 1/],
    ['<!DOCTYPE adx [<!ENTITY a "aaaaaaaa">]><adx><group orgUnit="&a;" period="2016-10-01/P1M"/></adx>', /document type declaration/],
    ['<dxf><dataValue/></dxf>', /root element is <adx>/],
    ['<adx><group period="2016-10-01/P1M"><dataValue dataElement="MISSED" value="1"/></group></adx>', /group 1 needs its orgUnit and period/],
    [
      '<adx><group orgUnit="VD11" period="2016-10-01/P1M"><dataValue dataElement="MISSED"/></group></adx>',
      /value 1 \(group 1\) needs its dataElement and value/,
    ],
  ] as const) {
    const refused = await api.post('/api/dataValueSets', body, adx)
    t.equal(refused.status, 400, body.slice(0, 60))
    t.match(refused.body, { code: 'BAD_DATA_VALUE_SET', message: problem })
  }
  t.equal(await value('VD11'), before.ashford + 5, 'unchanged by what was refused')
})

t.test('HTTP Basic with a password, as DHIS2’s clients send it', async (t) => {
  // A small budget of wrong passwords: each one costs a password hash.
  const { app, db } = await build(t, { AUTH_FAILURE_MAX: 5 })
  await loadDemoData(db)
  const api = client(app)
  t.ok(await setPassword(db, 'admin', 'correct horse battery'))
  const right = { authorization: basic('admin', 'correct horse battery') }
  const out = await api.get('/api/dataValueSets?dataElement=Children%20missed&orgUnit=VD11&period=201610', right)
  t.equal(out.status, 200, out.text.slice(0, 200))
  t.equal(out.body.dataValues.length, 1)
  const wrong = await api.get('/api/dataValueSets?dataElement=Children%20missed&orgUnit=VD11&period=201610', { authorization: basic('admin', 'wrong') })
  t.equal(wrong.status, 401)
  t.equal(wrong.body.code, 'INVALID_CREDENTIALS')
  const asKeyFile = await api.get('/api/dataValueSets?dataElement=Children%20missed&orgUnit=VD11&period=201610', {
    authorization: `ApiToken admin:${ADMIN_KEY}`,
  })
  t.equal(asKeyFile.status, 200, 'ApiToken with the key file’s username:key, as the README’s example sends it')
  const elsewhere = await api.get('/indicator/', right)
  t.equal(elsewhere.status, 401, 'not on the API’s own paths: a key there')
  t.match(elsewhere.body, { code: 'BASIC_NOT_TAKEN', message: /DHIS2's paths only/ })
  const crossSite = await api.post('/api/dataValueSets', { dataValues: [] }, { ...right, 'sec-fetch-site': 'cross-site' })
  t.equal(crossSite.status, 403, 'another site’s page cannot use a browser’s remembered Basic')
  // A right pair is remembered as a key is, and forgotten when the password changes.
  t.ok(await setPassword(db, 'admin', 'a new passphrase here'))
  await new Promise((resolve) => setTimeout(resolve, 200))
  t.equal((await api.get('/api/dataValueSets?dataElement=X&orgUnit=VD11&period=201610', right)).status, 401, 'the old password, once changed: 401')
  // The sign-in door's budget: wrong passwords from one address end in 429, the right one included.
  let status = 0
  for (let i = 0; i < 10 && status !== 429; i++) {
    status = (await api.get('/api/dataValueSets?dataElement=X&orgUnit=VD11&period=201610', { authorization: basic('admin', `guess ${i}`) })).status
  }
  t.equal(status, 429, 'wrong passwords are budgeted as at sign-in')
})

t.test('a person’s uploads, data value sets and metadata imports in progress are counted together', async (t) => {
  const { app } = await build(t, { WORK_QUEUE_PER_USER: 1 })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }
  const api = client(app)
  // A document upload whose body is still arriving holds the person's one place. A probe admitted
  // before it reaches the gate takes the place first (the upload is then the one refused): opened again.
  const holdAnUpload = () => {
    const req = httpRequest({
      host: '127.0.0.1',
      port,
      path: '/api/v1/document/',
      method: 'POST',
      headers: { authorization: `ApiKey admin:${ADMIN_KEY}`, 'content-type': 'application/json', 'content-length': '1000' },
    })
    req.on('error', () => {})
    const state = { answered: false, closed: new Promise((resolve) => req.once('close', resolve)) }
    req.on('response', (res) => {
      state.answered = true
      res.resume()
    })
    req.write('{"docfile":"')
    return { req, state }
  }
  let held = holdAnUpload()
  let status = 0
  for (let i = 0; i < 500 && status !== 429; i++) {
    await new Promise((resolve) => setTimeout(resolve, 20))
    if (held.state.answered) {
      held.req.destroy()
      held = holdAnUpload()
      continue
    }
    status = (await api.post('/api/dataValueSets', { dataValues: [] })).status
  }
  t.equal(status, 429, 'a data value set while an upload arrives: 429')
  t.equal((await api.post('/api/metadata', { organisationUnits: [] })).status, 429, 'a metadata import too')
  held.req.destroy()
  await held.state.closed
  let after = 429
  for (let i = 0; i < 500 && after === 429; i++) {
    after = (await api.post('/api/dataValueSets', { dataValues: [] })).status
    if (after === 429) await new Promise((resolve) => setTimeout(resolve, 20))
  }
  t.equal(after, 200, 'once the upload is gone, the import runs')
})

t.test('a heavy ADX message is read off the event loop', async (t) => {
  const { app } = await build(t)
  const api = client(app)
  // 170,000 attributes on one group (1.9 MB, within the limit): about two seconds of parsing.
  const attributes = Array.from({ length: 170_000 }, (_, i) => `a${i}="1"`).join(' ')
  const message = `<adx><group orgUnit="VD11" period="201610" ${attributes}><dataValue dataElement="X" value="1"/></group></adx>`
  // The event loop's turns while it is read: none at all when the parse held the loop.
  let turns = 0
  const ticking = setInterval(() => turns++, 10)
  const imported = await api.post('/api/dataValueSets', message, adx).finally(() => clearInterval(ticking))
  t.equal(imported.status, 200)
  t.equal(imported.body.response.conflicts.length, 1, 'its one value set aside under its categories')
  t.ok(turns >= 10, `the event loop turned ${turns} times while the message was read`)
})
