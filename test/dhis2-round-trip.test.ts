// The demo out in DHIS2's formats and into an empty database (either engine): its organisation units,
// levels and data elements by `/api/metadata`, its campaigns made as a programme makes them (DHIS2 has
// periods, not campaigns), its dated indicator declared (DHIS2 has no such notion), then its values by
// `/api/dataValueSets`, as JSON and as ADX. Every value entered, at campaigns and by date, and every
// total the engine computes from them up the tree come out equal. Calculated
// indicators are not DHIS2 data elements (their formulas are not exchanged), so their values are left
// out of the comparison, as they are of the export.
import t from 'tap'
import { sql, type Kysely } from 'kysely'
import { client } from './api.js'
import { admin, build } from './helper.js'
import { loadDemoData } from '../lib/engine/demo.js'
import { exportPages } from '../lib/dhis2/export.js'
import type { DB } from '../schemas/index.js'

type Row = Record<string, unknown>

/**
 * Every raw value and every aggregate of the entered indicators, by place code, short name and campaign
 * name, and every dated value by its day.
 */
async function everyValue(db: Kysely<DB>): Promise<string[]> {
  const { rows } = await sql<{ line: string }>`
    select concat_ws(' ', l.location_code, i.short_name, c.name, a.is_raw, round(a.value::numeric, 6)) as line
    from agg_datapoint a join location l on l.id = a.location_id join indicator i on i.id = a.indicator_id
      join campaign c on c.id = a.campaign_id
    where not exists (select 1 from calculated_indicator_component k where k.indicator_id = i.id)
    union all
    select concat_ws(' ', l.location_code, i.short_name, d.data_date, round(d.value::numeric, 6))
    from datapoint d join location l on l.id = d.location_id join indicator i on i.id = d.indicator_id
    where d.data_date is not null
    order by 1`.execute(db)
  return rows.map((r) => r.line)
}

// The export is written as it is read, a page of places at a time: three places a page here, so the
// demo goes out in pages (an ADX group never split between two).
exportPages.places = 3

// ADX and JSON by codes; JSON by UIDs as well (DHIS2's own default), which the metadata import mapped.
for (const [format, scheme] of [
  ['JSON', 'CODE'],
  ['ADX', 'CODE'],
  ['JSON', 'UID'],
] as const) {
  t.test(`the demo through DHIS2's formats (${format}, by ${scheme}) into an empty database: every value and total equal`, async (t) => {
    // Out of the demo.
    const source = await build(t)
    await loadDemoData(source.db)
    const from = client(source.app)
    const metadata = (await from.get('/api/metadata')).body
    const elements = (metadata.dataElements as Row[]).map((e) => String(e.code))
    const root = (metadata.organisationUnits as Row[]).find((u) => !u.parent)!
    const campaigns = (await from.get('/campaign/?limit=1000')).body.objects as Row[]
    const types = (await from.get('/campaign_type/?limit=1000')).body.objects as Row[]
    const query = `dataElement=${elements.map(encodeURIComponent).join('&dataElement=')}&orgUnit=${root.code}&children=true&startDate=1900-01-01&endDate=2999-12-31&idScheme=${scheme}`
    const values = await from.get(`/api/dataValueSets?${query}`, format === 'ADX' ? { ...admin, accept: 'application/adx+xml' } : undefined)
    t.equal(values.status, 200)
    const firstUnit = format === 'JSON' ? values.body.dataValues[0].orgUnit : /orgUnit="([^"]+)"/.exec(values.text)?.[1]
    t.ok(
      (metadata.organisationUnits as Row[]).some((u) => u[scheme === 'UID' ? 'id' : 'code'] === firstUnit),
      `units named by ${scheme}`,
    )
    const expected = await everyValue(source.db)
    t.ok(expected.length > 100, `${expected.length} values and totals in the demo`)
    const dated = ((await from.get('/indicator/?limit=1000')).body.objects as Row[]).filter((i) => i.resource_name === 'date')
    t.ok(dated.length > 0 && /20161001|2016-10-01\/P1D/.test(values.text), 'dated values out, each on its day')

    // Into an empty database: the tree and data elements, the campaigns, then the values. The test's
    // database is one per process, emptied by build: the demo's app is closed first, so that none of
    // its work (jobs, listeners) meets the import.
    await source.app.close()
    const target = await build(t)
    const to = client(target.app)
    const tree = await to.post('/api/metadata', metadata)
    t.equal(tree.body.status, 'OK', JSON.stringify(tree.body).slice(0, 400))
    for (const type of types) t.equal((await to.post('/campaign_type/', { name: type.name })).status, 201)
    const typeIds = new Map(((await to.get('/campaign_type/?limit=1000')).body.objects as Row[]).map((row) => [row.name, row.id]))
    for (const c of campaigns) {
      const typeName = types.find((type) => type.id === c.campaign_type_id)!.name
      const made = await to.post('/campaign/', { name: c.name, campaign_type_id: typeIds.get(typeName), start_date: c.start_date, end_date: c.end_date })
      t.equal(made.status, 201, made.text.slice(0, 200))
    }
    // The indicators that take values by date, declared as in the source.
    const madeIndicators = ((await to.get('/indicator/?limit=1000')).body.objects as Row[]).filter((i) => dated.some((d) => d.short_name === i.short_name))
    t.equal(madeIndicators.length, dated.length, 'each dated indicator came as a data element')
    for (const made of madeIndicators) {
      const declared = dated.find((d) => d.short_name === made.short_name)!
      t.equal((await to.patch(`/indicator/${made.id}/`, { resource_name: 'date', data_format: declared.data_format })).status, 200)
    }
    const body = format === 'ADX' ? values.text : values.body
    const imported = await to.post('/api/dataValueSets', body, format === 'ADX' ? { ...admin, 'content-type': 'application/adx+xml' } : undefined)
    t.equal(imported.status, 200, imported.text.slice(0, 300))
    t.same(imported.body.response.conflicts, [], 'nothing set aside')
    t.ok(imported.body.response.importCount.imported > 50, `${imported.body.response.importCount.imported} values imported`)
    t.same(await everyValue(target.db), expected, 'every value entered and every total up the tree, equal')
  })
}
