// DHIS2's `/api/metadata` (either engine): organisation units in DHIS2's JSON (children before their
// parents) become the location tree, its shapes and levels, data elements become indicators, both with
// their UIDs and codes mapped; a second import changes nothing, a rename and a move are updates, VALIDATE
// keeps nothing. A user responsible for a province writes inside it only, all or nothing. An export
// imported into an empty database recreates the same tree, and a data value set naming its UIDs lands.
import t from 'tap'
import { client } from './api.js'
import { admin, build, rowCounts } from './helper.js'
import { bob, moreUsers } from './world.js'
import { loadDemoData } from '../lib/engine/demo.js'

type Row = Record<string, unknown>
type Api = ReturnType<typeof client>

const square = (x: number, y: number) => [
  [
    [x, y],
    [x + 1, y],
    [x + 1, y + 1],
    [x, y + 1],
    [x, y],
  ],
]

/** A small country in DHIS2's JSON, listed children first: two provinces, two districts, three data elements. */
const payload = () => ({
  organisationUnits: [
    {
      id: 'AshfordUID1',
      code: 'ASH',
      name: 'Ashford',
      shortName: 'Ashford',
      level: 3,
      parent: { id: 'NorthUID001' },
      geometry: { type: 'Polygon', coordinates: square(0, 1) },
    },
    {
      id: 'BrindleUID1',
      code: 'BRI',
      name: 'Brindle',
      level: 3,
      parent: { code: 'NORTH' },
      geometry: { type: 'MultiPolygon', coordinates: [square(1, 1), square(3, 3)] },
    },
    { id: 'NorthUID001', code: 'NORTH', name: 'North', level: 2, parent: { id: 'CountryUID1' }, geometry: { type: 'Polygon', coordinates: square(0, 1) } },
    { id: 'SouthUID001', name: 'South', level: 2, parent: { id: 'CountryUID1' }, geometry: { type: 'Point', coordinates: [10.5, -3.25] } },
    { id: 'CountryUID1', code: 'VD', name: 'Veridia', level: 1, openingDate: '1970-01-01T00:00:00.000' },
  ],
  dataElements: [
    { id: 'MissedUID01', code: 'MISSED', name: 'Children missed', shortName: 'Missed', valueType: 'INTEGER_ZERO_OR_POSITIVE', aggregationType: 'SUM' },
    { id: 'CoverUID001', code: 'COVER', name: 'Coverage', shortName: 'Coverage', valueType: 'PERCENTAGE' },
    { id: 'NoteUID0001', name: 'Note', shortName: 'Note', valueType: 'TEXT' },
  ],
  indicators: [{ id: 'IndicUID001', name: 'Not here' }],
})

const stats = (report: Row, klass: string) => (report.typeReports as Array<{ klass: string; stats: Row }>).find((r) => r.klass.endsWith(klass))?.stats

async function locationOf(api: Api, code: string): Promise<Row> {
  const found = await api.get(`/location/?location_code=${encodeURIComponent(code)}`)
  return found.body.objects[0]
}

t.test('organisation units and data elements in; again; renamed and moved; validated', async (t) => {
  const { app, db } = await build(t)
  const api = client(app)
  const first = await api.post('/api/metadata', payload())
  t.equal(first.status, 200, first.text.slice(0, 500))
  t.equal(first.body.status, 'WARNING', 'a data element of a value type without a format here is set aside, with a warning')
  t.match(stats(first.body, '.OrganisationUnit'), { created: 5, updated: 0, ignored: 0, total: 5 })
  t.match(stats(first.body, '.DataElement'), { created: 2, ignored: 1, total: 3 })
  t.same(first.body.ignoredTypes, ['indicators'], 'a type this API does not import is named')
  t.match(first.body.typeReports[1].objectReports, [
    { index: 2, uid: 'NoteUID0001', errorReports: [], warningReports: [{ errorCode: 'W1004', message: /valueType TEXT/ }] },
  ])

  // The tree, through the API's reads: each at its level's type, under its parent.
  const [country, north, south, ashford, brindle] = await Promise.all(['VD', 'NORTH', 'SouthUID001', 'ASH', 'BRI'].map((code) => locationOf(api, code)))
  t.match(country, { name: 'Veridia', parent_location_id: null, lvl: 0 })
  t.match(north, { name: 'North', parent_location_id: country.id, lvl: 1 })
  t.match(
    south,
    { name: 'South', location_code: 'SouthUID001', latitude: -3.25, longitude: 10.5 },
    'a unit without a code: its UID is its code; a Point its coordinates',
  )
  t.match(ashford, { parent_location_id: north.id, lvl: 2 })
  t.match(brindle, { parent_location_id: north.id, lvl: 2 }, 'a parent named by its code')
  const types = (await api.get('/location_type/')).body.objects.map((o: Row) => [o.name, o.admin_level])
  t.same(types, [
    ['Level 1', 0],
    ['Level 2', 1],
    ['Level 3', 2],
  ])
  const districts = (await api.get(`/location/?location_id=${country.id}&location_depth=2`)).body.objects.map((o: Row) => o.name).sort()
  t.same(districts, ['Ashford', 'Brindle'], 'location_tree holds the districts two levels under the country')
  const shape = async (id: unknown) => (await api.get(`/geo/?location_id=${id}`)).body.objects[0]?.geometry
  t.same(await shape(brindle.id), payload().organisationUnits[1].geometry, 'a MultiPolygon stored as the location’s shape')
  t.same(await shape(north.id), payload().organisationUnits[2].geometry)
  t.equal(await shape(south.id), undefined, 'a Point is no shape')
  const indicator = (await api.get('/indicator/?short_name=Missed')).body.objects[0]
  t.match(indicator, { name: 'Children missed', data_format: 'int' })
  t.match((await api.get('/indicator/?short_name=Coverage')).body.objects[0], { data_format: 'pct' })
  // Both the UID and the code of each object are mapped to its row.
  const mapped = await db.selectFrom('source_object_map').select(['content_type', 'source_object_code', 'master_object_id']).orderBy('id').execute()
  t.match(
    mapped.filter((m) => ['AshfordUID1', 'ASH', 'MissedUID01', 'MISSED'].includes(m.source_object_code)),
    [
      { content_type: 'location', source_object_code: 'AshfordUID1', master_object_id: ashford.id },
      { content_type: 'location', source_object_code: 'ASH', master_object_id: ashford.id },
      { content_type: 'indicator', source_object_code: 'MissedUID01', master_object_id: indicator.id },
      { content_type: 'indicator', source_object_code: 'MISSED', master_object_id: indicator.id },
    ],
  )

  // The same again: nothing created, nothing changed, nothing written.
  const counts = await rowCounts(db)
  const again = await api.post('/api/metadata.json', payload())
  t.match(stats(again.body, '.OrganisationUnit'), { created: 0, updated: 0, ignored: 5 })
  t.match(stats(again.body, '.DataElement'), { created: 0, updated: 0, ignored: 3 })
  t.same(await rowCounts(db), counts, 'a second import writes nothing')

  // A rename and a move (Brindle under South): updates, the tree kept by the location resource.
  const changed = payload()
  changed.organisationUnits[2].name = 'Northmarch'
  changed.organisationUnits[1].parent = { id: 'SouthUID001' }
  const moved = await api.post('/api/metadata?importReportMode=FULL', changed)
  t.equal(moved.body.status, 'WARNING')
  t.match(stats(moved.body, '.OrganisationUnit'), { created: 0, updated: 2, ignored: 3 })
  t.equal(moved.body.typeReports[0].objectReports.length, 5, 'FULL: a report of every object')
  t.equal((await locationOf(api, 'NORTH')).name, 'Northmarch')
  t.equal((await locationOf(api, 'BRI')).parent_location_id, south.id)
  const southern = (await api.get(`/location/?location_id=${south.id}&location_depth=1`)).body.objects.map((o: Row) => o.name)
  t.same(southern, ['Brindle'], 'the closure table follows the move')

  // VALIDATE: the whole import runs, its counts are real, nothing is kept.
  const before = await rowCounts(db)
  const east = { organisationUnits: [{ id: 'EastUID0001', code: 'EAST', name: 'East', parent: { id: 'CountryUID1' } }] }
  const validated = await api.post('/api/metadata?importMode=VALIDATE', east)
  t.match(validated.body, { status: 'OK', importParams: { importMode: 'VALIDATE' }, stats: { created: 1 } })
  t.same(await rowCounts(db), before, 'VALIDATE keeps nothing')
  t.match(await api.post('/api/metadata?importStrategy=UPDATE', east), { body: { stats: { created: 0, ignored: 1 } } }, 'UPDATE: a new unit ignored')

  // Levels named as DHIS2 names them; a unit found by its code (identifier=CODE) under another UID, which is mapped too.
  const level = await api.post('/api/metadata', { organisationUnitLevels: [{ level: 2, name: 'Province' }] })
  t.match(level.body.stats, { updated: 1 })
  t.match((await api.get('/location_type/?admin_level=1')).body.objects, [{ name: 'Province' }])
  const byCode = await api.post('/api/metadata?identifier=CODE', { organisationUnits: [{ id: 'OtherUID001', code: 'ASH', name: 'Ashford town' }] })
  t.match(byCode.body.stats, { created: 0, updated: 1 })
  t.match(await locationOf(api, 'ASH'), { id: ashford.id, name: 'Ashford town', parent_location_id: north.id }, 'without a parent: where it was')
  t.equal(
    (await db.selectFrom('source_object_map').select('master_object_id').where('source_object_code', '=', 'OtherUID001').executeTakeFirst())?.master_object_id,
    ashford.id,
  )

  // A name another location has: this one's gets its code after it, and the report says so.
  const clash = await api.post('/api/metadata', { organisationUnits: [{ id: 'FarUID00001', code: 'FAR', name: 'Brindle', parent: { code: 'VD' } }] })
  t.match(clash.body, { status: 'WARNING', stats: { created: 1 } })
  t.match(clash.body.typeReports[0].objectReports[0].warningReports, [{ errorCode: 'W1001', message: /Brindle \(FAR\)/ }])
  t.match(await locationOf(api, 'FAR'), { name: 'Brindle (FAR)', lvl: 1 }, 'without a level: one below its parent')
})

t.test('bad input: a 4xx naming the problem, nothing written', async (t) => {
  const { app, db } = await build(t)
  const api = client(app)
  await api.post('/api/metadata', payload())
  const counts = await rowCounts(db)
  const unit = (more: Row) => ({ organisationUnits: [{ id: 'NewUID00001', code: 'NEW', name: 'New', ...more }] })
  for (const [path, body, problem] of [
    ['/api/metadata', [1], /JSON object of metadata types/],
    ['/api/metadata', { organisationUnits: {} }, /organisationUnits: an array/],
    ['/api/metadata', { organisationUnits: [1] }, /organisationUnits\[0\]: an object/],
    ['/api/metadata', unit({ name: ' ' }), /organisationUnits\[0\]: name is required/],
    ['/api/metadata', unit({ parent: { id: 'NowhereUID1' } }), /its parent NowhereUID1 is neither in the payload nor a known location/],
    ['/api/metadata', unit({ level: 0 }), /level: an integer from 1/],
    ['/api/metadata', unit({ geometry: { type: 'LineString', coordinates: [[0, 0]] } }), /geometry: a GeoJSON Polygon, MultiPolygon or Point/],
    ['/api/metadata', unit({ geometry: { type: 'Point', coordinates: [500, 0] } }), /out of range/],
    [
      '/api/metadata',
      unit({
        geometry: {
          type: 'Polygon',
          coordinates: [
            [
              [0, 0],
              [0, 1],
              [1, 95],
              [0, 0],
            ],
          ],
        },
      }),
      /out of range \(±180, ±90\)/,
    ],
    [
      '/api/metadata',
      unit({
        geometry: {
          type: 'MultiPolygon',
          coordinates: [
            [
              [
                [0, 0],
                [0, 1],
                [-181, 1],
                [0, 0],
              ],
            ],
          ],
        },
      }),
      /out of range/,
    ],
    ['/api/metadata', { organisationUnits: [{ name: 'Nameless' }] }, /an id or a code is required/],
    [
      '/api/metadata',
      {
        organisationUnits: [
          { id: 'LoopUID0001', name: 'A', parent: { id: 'LoopUID0002' } },
          { id: 'LoopUID0002', name: 'B', parent: { id: 'LoopUID0001' } },
        ],
      },
      /a cycle/,
    ],
    ['/api/metadata', { dataElements: [{ id: 'X0000000001', name: 'X' }] }, /dataElements\[0\]: valueType is required/],
    [
      '/api/metadata',
      {
        dataElements: [
          { id: 'Same0000001', name: 'X', valueType: 'NUMBER' },
          { id: 'Same0000001', name: 'Y', valueType: 'NUMBER' },
        ],
      },
      /same id Same0000001/,
    ],
    [
      '/api/metadata',
      {
        organisationUnits: [
          { id: 'UnitUID0001', code: 'ONE', name: 'One' },
          { id: 'UnitUID0002', code: 'UnitUID0001', name: 'Two' },
        ],
      },
      /organisationUnits\[0\] and organisationUnits\[1\] name UnitUID0001, as id and as code/,
    ],
    ['/api/metadata?importMode=NOPE', unit({}), /importMode NOPE: one of COMMIT, VALIDATE/],
    ['/api/metadata?identifier=NAME', unit({}), /identifier NAME/],
    ['/api/metadata?importStrategy=DELETE', unit({}), /importStrategy DELETE is not honoured/],
    ['/api/metadata?atomicMode=SOME', unit({}), /atomicMode SOME/],
    ['/api/metadata?importReportMode=ALL', unit({}), /importReportMode ALL/],
  ] as const) {
    const refused = await api.post(path, body)
    t.equal(refused.status, 400, `${path} ${JSON.stringify(body).slice(0, 80)}`)
    t.match(refused.body?.message, problem)
  }
  t.equal((await api.post('/api/metadata', 'name=x', { ...admin, 'content-type': 'text/plain' })).status, 415, 'not JSON: 415')
  t.same(await rowCounts(db), counts, 'nothing written by any of them')
  for (const query of ['organisationUnits=maybe', 'dataElements=1']) t.equal((await api.get(`/api/metadata?${query}`)).status, 400, query)

  // Without credentials, on every spelling of the path: 401. A user who may write none of it: 403.
  for (const path of ['/api/metadata', '/api/metadata/', '//api/metadata', '/api/metadat%61', '/api/metadata.json']) {
    t.equal((await api.post(path, payload(), {})).status, 401, `POST ${path}`)
    t.equal((await api.get(path, {})).status, 401, `GET ${path}`)
  }
  await moreUsers(db)
  const plain = await api.post('/api/metadata', payload(), bob)
  t.equal(plain.status, 403)
  t.match(plain.body, { code: 'FORBIDDEN' })
})

t.test('a user responsible for a province imports inside it only, all or nothing', async (t) => {
  const { app, db } = await build(t)
  const api = client(app)
  await api.post('/api/metadata', payload())
  const north = await locationOf(api, 'NORTH')
  const officer = (await api.post('/user/', { username: 'northern' })).body
  await api.post('/location_responsibility/', { user_id: officer.id, top_lvl_location_id: north.id })
  const key = (await api.post('/api_key/', { user_id: officer.id })).body.key
  const hers = { authorization: `ApiToken ${key}` }
  const inside = { id: 'InsideUID01', code: 'IN', name: 'Inside', parent: { id: 'NorthUID001' } }
  const outside = { id: 'OutsideUID1', code: 'OUT', name: 'Outside', parent: { id: 'SouthUID001' } }

  const counts = await rowCounts(db)
  const refused = await api.post('/api/metadata', { organisationUnits: [inside, outside] }, hers)
  t.equal(refused.status, 200, refused.text.slice(0, 300))
  t.match(refused.body, { status: 'ERROR', stats: { created: 0, updated: 0, ignored: 2 } })
  t.match(refused.body.typeReports[0].objectReports[1], {
    index: 1,
    uid: 'OutsideUID1',
    errorReports: [{ errorCode: 'E3000', message: /outside your responsibility/ }],
  })
  t.same(await rowCounts(db), counts, 'atomicMode ALL: an error outside her part, and nothing is written')
  const renamed = await api.post('/api/metadata', { organisationUnits: [{ id: 'SouthUID001', name: 'Mine now' }] }, hers)
  t.match(renamed.body.typeReports[0].objectReports, [{ errorReports: [{ errorCode: 'E3001', message: /outside the locations you are responsible for/ }] }])
  t.equal((await locationOf(api, 'SouthUID001')).name, 'South')

  const best = await api.post('/api/metadata?atomicMode=NONE', { organisationUnits: [inside, outside] }, hers)
  t.match(best.body, { status: 'WARNING', stats: { created: 1, ignored: 1 } }, 'atomicMode NONE: what she may write is written')
  t.match(await locationOf(api, 'IN'), { name: 'Inside', parent_location_id: north.id })
  t.notOk(await locationOf(api, 'OUT'))
  // Codes are mapped by those who may map them: hers are said to be left unmapped.
  t.match(best.body.typeReports[0].objectReports[0], { uid: 'InsideUID01', warningReports: [{ errorCode: 'W1003' }, { errorCode: 'W1003' }] })
  // Her UIDs are not mapped, so her unit is found again by its code (identifier=AUTO), not by its UID.
  const renamedInside = { organisationUnits: [{ ...inside, name: 'Inside renamed' }] }
  const byUid = await api.post('/api/metadata', renamedInside, hers)
  t.match(byUid.body.typeReports[0].objectReports[0].errorReports, [{ errorCode: 'E5003', message: /code IN: identifier=AUTO matches it by its code/ }])
  const mine = await api.post('/api/metadata?identifier=AUTO', renamedInside, hers)
  t.match(mine.body, { stats: { updated: 1 } })
  t.equal((await locationOf(api, 'IN')).name, 'Inside renamed')
  const out = await api.get('/api/metadata', hers)
  t.same(
    out.body.organisationUnits.map((u: Row) => u.code),
    ['NORTH', 'ASH', 'BRI', 'IN'],
    'her export: her subtree only, the parent outside it unnamed',
  )
  t.notOk(out.body.organisationUnits[0].parent)
})

t.test('out and back in: the same database, an empty one, and data values by UID', async (t) => {
  let exported: Row = {}
  t.test('an export of the demo, imported into the same database, changes nothing', async (t) => {
    const { app, db } = await build(t)
    await loadDemoData(db)
    const api = client(app)
    const out = await api.get('/api/metadata')
    t.equal(out.status, 200)
    exported = out.body
    const units = out.body.organisationUnits as Row[]
    t.equal(units.length, 13, 'the country, 3 provinces, 9 districts')
    t.match(units[0], { code: 'VD', level: 1, geometry: { type: 'Polygon' } })
    t.notOk(units[0].parent)
    const country = (await api.get('/location/?location_code=VD')).body.objects[0]
    t.same(units[0].geometry, (await api.get(`/geo/?location_id=${country.id}`)).body.objects[0].geometry, 'its shape as stored')
    t.match(units[4], { code: 'VD11', level: 3, parent: { id: units[1].id } }, 'a district under its province, by its UID')
    for (const unit of units) t.match(unit.id, /^[A-Za-z][A-Za-z0-9]{10}$/, `${unit.code}: a UID`)
    const calculated = await db
      .selectFrom('calculated_indicator_component as c')
      .innerJoin('indicator as i', 'i.id', 'c.indicator_id')
      .select('i.short_name')
      .execute()
    t.ok(calculated.length > 0)
    const names = (out.body.dataElements as Row[]).map((e) => e.shortName)
    for (const { short_name } of calculated) t.notOk(names.includes(short_name), `${short_name}: calculated, not a data element`)
    t.same(
      out.body.organisationUnitLevels.map((l: Row) => [l.name, l.level]),
      [
        ['Country', 1],
        ['Province', 2],
        ['District', 3],
      ],
    )
    const only = await api.get('/api/metadata.json?dataElements=true')
    t.same(Object.keys(only.body).sort(), ['dataElements', 'date', 'system'])

    const counts = await rowCounts(db)
    const back = await api.post('/api/metadata', out.body)
    t.equal(back.body.status, 'OK', JSON.stringify(back.body.typeReports).slice(0, 600))
    t.match(back.body.stats, { created: 0, updated: 0, deleted: 0 })
    const again = await rowCounts(db)
    t.same({ ...again, source_object_map: counts.source_object_map }, counts, 'no row but the UIDs’ mappings')
    await api.post('/api/metadata', out.body)
    t.same(await rowCounts(db), again, 'and a second time, not even those')

    // A district moved to another province: the provinces' totals are recomputed in the import.
    const id = async (table: 'indicator' | 'campaign', column: 'short_name' | 'name', value: string) =>
      (await db.selectFrom(table).select('id').where(column, 'like', value).executeTakeFirstOrThrow()).id
    const [missed, october] = [await id('indicator', 'short_name', 'Children missed'), await id('campaign', 'name', 'October%')]
    const value = async (code: string) =>
      (await api.get(`/campaign_datapoint/?indicator__in=${missed}&campaign__in=${october}&location_id__in=${(await locationOf(api, code)).id}`)).body
        .objects[0]?.value as number
    const [ashford, northmarch, eastvale] = [await value('VD11'), await value('VD1'), await value('VD2')]
    const vd11 = units.find((u) => u.code === 'VD11')!
    const vd2 = units.find((u) => u.code === 'VD2')!
    const move = await api.post('/api/metadata', { organisationUnits: [{ ...vd11, parent: { id: vd2.id } }] })
    t.match(move.body.stats, { updated: 1 })
    t.equal(await value('VD1'), northmarch - ashford, 'its old province without it')
    t.equal(await value('VD2'), eastvale + ashford, 'its new province with it')
  })

  t.test('the export into an empty database: the same tree; then data values by its UIDs', async (t) => {
    const { app, db } = await build(t)
    const api = client(app)
    const imported = await api.post('/api/metadata', exported)
    t.equal(imported.status, 200)
    t.equal(imported.body.status, 'OK', JSON.stringify(imported.body.typeReports).slice(0, 600))
    t.match(imported.body.stats, { created: 3 + 13 + (exported.dataElements as Row[]).length })
    const out = (await api.get('/api/metadata')).body
    const tree = (body: Row) =>
      (body.organisationUnits as Row[]).map(({ openingDate: _date, ...unit }) => unit).sort((a, b) => String(a.code).localeCompare(String(b.code)))
    t.same(tree(out), tree(exported), 'the same units: UIDs, codes, names, parents, levels and shapes')
    t.same(out.dataElements, exported.dataElements)
    t.match(await rowCounts(db), { location: 13, location_polygon: 13, location_tree: 13 + 12 + 9 }, 'every shape, and the closure of the tree')
    t.same(
      out.organisationUnitLevels.map((l: Row) => l.name),
      ['Country', 'Province', 'District'],
    )
    const district = (exported.organisationUnits as Row[]).find((u) => u.code === 'VD11')!
    t.equal((await locationOf(api, 'VD11')).name, district.name)

    // A campaign in October 2026, and a data value set naming the district and the data element by UID.
    const element = (exported.dataElements as Row[]).find((e) => e.valueType === 'NUMBER')!
    const type = (await api.post('/campaign_type/', { name: 'NID' })).body.id
    const campaign = (await api.post('/campaign/', { name: 'October 2026', campaign_type_id: type, start_date: '2026-10-05', end_date: '2026-10-09' })).body.id
    const set = await api.post('/api/dataValueSets', { dataValues: [{ dataElement: element.id, period: '202610', orgUnit: district.id, value: '42' }] })
    t.match(set.body, { status: 'OK', response: { importCount: { imported: 1 }, conflicts: [] } }, set.text.slice(0, 400))
    const indicator = (await api.get(`/indicator/?short_name=${encodeURIComponent(String(element.shortName))}`)).body.objects[0]
    const value = await api.get(
      `/campaign_datapoint/?indicator__in=${indicator.id}&campaign__in=${campaign}&location_id__in=${(await locationOf(api, 'VD11')).id}`,
    )
    t.equal(value.body.objects[0]?.value, 42, 'the value at the district its UID names')
  })
})
