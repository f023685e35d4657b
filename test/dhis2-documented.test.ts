// The payloads of DHIS2's Web API documentation ("Data values", "ADX data format"), kept as fixtures in
// test/fixtures/dhis2/, imported in the order the documentation sends them, on a small tree of its
// Sierra Leone units and data elements imported by /api/metadata (either engine): the values stored
// as the examples say, and the import summary DHIS2 documents for its bulk example (2 imported, 1
// updated, 1 ignored: the unknown organisation unit). Then each identifier scheme and each period type.
import { readFileSync } from 'node:fs'
import t from 'tap'
import { client } from './api.js'
import { admin, build } from './helper.js'

const fixture = (name: string) => readFileSync(new URL(`fixtures/dhis2/${name}`, import.meta.url), 'utf8')

t.test('DHIS2’s documented data value sets, in the order its documentation sends them', async (t) => {
  const { app, db } = await build(t)
  const api = client(app)
  const tree = await api.post('/api/metadata', JSON.parse(fixture('metadata.json')))
  t.equal(tree.body.status, 'OK', JSON.stringify(tree.body).slice(0, 300))
  const type = (await api.post('/campaign_type/', { name: 'Routine' })).body.id
  for (const [name, start, end] of [
    ['January 2014', '2014-01-06', '2014-01-10'],
    ['February 2014', '2014-02-03', '2014-02-07'],
  ]) {
    t.equal((await api.post('/campaign/', { name, campaign_type_id: type, start_date: start, end_date: end })).status, 201)
  }
  /** The value stored at a unit (its code), a data element (its short name) and a campaign. */
  const value = async (unit: string, element: string, campaign: string) =>
    (
      await db
        .selectFrom('datapoint as d')
        .innerJoin('location as l', 'l.id', 'd.location_id')
        .innerJoin('indicator as i', 'i.id', 'd.indicator_id')
        .innerJoin('campaign as c', 'c.id', 'd.campaign_id')
        .select('d.value')
        .where('l.location_code', '=', unit)
        .where('i.short_name', '=', element)
        .where('c.name', '=', campaign)
        .executeTakeFirst()
    )?.value
  const counts = (answer: { body: { response: { importCount: unknown } } }) => answer.body.response.importCount

  // "Sending data values": the Mortality < 5 years set of Ngelehun CHC, January 2014.
  const mortality = await api.post('/api/dataValueSets', JSON.parse(fixture('mortality.json')))
  t.same(counts(mortality), { imported: 3, updated: 0, ignored: 0, deleted: 0 })
  t.same(
    [await value('OU_559', 'Measles', 'January 2014'), await value('OU_559', 'Dysentery', 'January 2014'), await value('OU_559', 'Cholera', 'January 2014')],
    [1, 2, 3],
  )

  // "Sending bulks of data values": DHIS2's documented summary, imported 2, updated 1, ignored 1.
  const bulk = await api.post('/api/dataValueSets', JSON.parse(fixture('bulk.json')))
  t.same(counts(bulk), { imported: 2, updated: 1, ignored: 1, deleted: 0 }, 'the counts DHIS2 documents')
  t.same(
    bulk.body.response.conflicts,
    [{ object: 'Jkhdsf8sdf4', value: 'orgUnit Jkhdsf8sdf4 is not mapped to a location: map the code, then import again', indexes: [3] }],
    'the ignored value: its invalid reference to an organisation unit',
  )
  t.equal(await value('OU_559', 'Measles', 'January 2014'), 12)
  t.equal(await value('OU_560', 'Measles', 'January 2014'), 14)
  t.equal(await value('OU_559', 'Measles', 'February 2014'), 16)
  t.equal(await value('OU_539', 'Measles', 'January 2014'), undefined, 'a chiefdom’s total is not a stored value')

  // The same in CSV with quoted cells and the documentation's category option combination.
  const csv = await api.post('/api/dataValueSets', fixture('bulk.csv'), { ...admin, 'content-type': 'application/csv' })
  t.same(counts(csv), { imported: 0, updated: 1, ignored: 2, deleted: 0 }, 'Measles back to 1; the other two unchanged')
  t.equal(await value('OU_559', 'Measles', 'January 2014'), 1)
  // "Reading data values": the documentation's CSV export, read back as an import (short column names, a follow-up flag).
  const exported = await api.post('/api/dataValueSets', fixture('exported.csv'), { ...admin, 'content-type': 'application/csv' })
  t.same(counts(exported), { imported: 0, updated: 3, ignored: 1, deleted: 0 })
  t.same(
    exported.body.response.conflicts.map((c: { object: string }) => c.object),
    ['FTRrcoaog83'],
    'the data element it does not know',
  )
  t.same(
    [await value('OU_559', 'Measles', 'January 2014'), await value('OU_559', 'Dysentery', 'January 2014'), await value('OU_559', 'Cholera', 'January 2014')],
    [12, 14, 16],
  )

  // "ADX data format": the documented message, every value disaggregated by GENDER and HIV_AGE: each set aside, named.
  const adx = { ...admin, 'content-type': 'application/adx+xml' }
  const disaggregated = await api.post('/api/dataValueSets?dataElementIdScheme=code&orgUnitIdScheme=code', fixture('adx-disaggregated.xml'), adx)
  t.same(counts(disaggregated), { imported: 0, updated: 0, ignored: 20, deleted: 0 })
  t.same(
    disaggregated.body.response.conflicts.map((c: { object: string; indexes: number[] }) => [c.object, c.indexes.length]),
    [
      ['GENDER=FMLE HIV_AGE=AGE0-14', 5],
      ['GENDER=MLE HIV_AGE=AGE0-14', 5],
      ['GENDER=FMLE HIV_AGE=AGE15-24', 5],
      ['GENDER=MLE HIV_AGE=AGE15-24', 5],
    ],
  )
  // The same message's shape without a disaggregation, by code (ADX's usual scheme): February's set.
  const byCode = await api.post('/api/dataValueSets?dataElementIdScheme=code&orgUnitIdScheme=code', fixture('adx-codes.xml'), adx)
  t.same(counts(byCode), { imported: 2, updated: 1, ignored: 0, deleted: 0 })
  t.same(
    [await value('OU_559', 'Measles', 'February 2014'), await value('OU_559', 'Dysentery', 'February 2014'), await value('OU_559', 'Cholera', 'February 2014')],
    [21, 22, 23],
  )

  // The NAME scheme: a unit and a data element by name; a name nothing has is named back.
  const named = await api.post('/api/dataValueSets?idScheme=NAME', {
    dataValues: [
      { dataElement: 'Cholera', period: '201402', orgUnit: 'Bandajuma Clinic', value: '5' },
      { dataElement: 'Cholera', period: '201402', orgUnit: 'Nowhere CHC', value: '6' },
    ],
  })
  t.same(counts(named), { imported: 1, updated: 0, ignored: 1, deleted: 0 })
  t.same(named.body.response.conflicts, [{ object: 'Nowhere CHC', value: 'orgUnit Nowhere CHC: no location has this name', indexes: [1] }])
  t.equal(await value('OU_560', 'Cholera', 'February 2014'), 5)
  t.match(named.body.response.importOptions.idSchemes, { orgUnitIdScheme: 'NAME', dataElementIdScheme: 'NAME' })
  const attribute = await api.post('/api/dataValueSets?orgUnitIdScheme=ATTRIBUTE:DnrLSdo4hMl', { dataValues: [] })
  t.equal(attribute.status, 400)
  t.match(attribute.body.message, /orgUnitIdScheme ATTRIBUTE:DnrLSdo4hMl: UID, CODE or NAME/)

  // "Reading data values": asked for and written out by UID, as the documentation's example reads them.
  const read = await api.get('/api/dataValueSets.json?dataElement=f7n9E0hX8qk&dataElement=Ix2HsbDMLea&orgUnit=DiszpKrYNg8&period=201401&idScheme=UID')
  t.equal(read.status, 200, read.text.slice(0, 300))
  t.same(
    read.body.dataValues,
    [
      { dataElement: 'f7n9E0hX8qk', period: '201401', orgUnit: 'DiszpKrYNg8', value: '12' },
      { dataElement: 'Ix2HsbDMLea', period: '201401', orgUnit: 'DiszpKrYNg8', value: '14' },
    ],
    'the UIDs the metadata gave, in and out',
  )
  const byName = await api.get('/api/dataValueSets?dataElement=DE_MEASLES&orgUnit=OU_559&period=201401&idScheme=NAME')
  t.same(byName.body.dataValues, [{ dataElement: 'Measles', period: '201401', orgUnit: 'Ngelehun CHC', value: '12' }], 'asked by code, written by name')

  // Each period type: the campaign that starts in it, or why none.
  const periods = [
    ['20140106', 'January 2014'],
    ['2014W2', 'January 2014'],
    ['201401', 'January 2014'],
    ['2014-01-06/P1D', 'January 2014'],
    ['2014-01-06/P7D', 'January 2014'],
    ['2014-01-01/P1M', 'January 2014'],
    ['2014Q1', '2 campaigns start in period 2014Q1 (January 2014, February 2014): send a period that holds one'],
    ['2014', '2 campaigns start in period 2014 (January 2014, February 2014): send a period that holds one'],
    ['20140107', 'no campaign starts in period 20140107'],
  ] as const
  for (const [i, [period, outcome]] of periods.entries()) {
    const one = await api.post('/api/dataValueSets', { dataValues: [{ dataElement: 'eY5ehpbEsB7', period, orgUnit: 'FNnj3jKGS7i', value: String(100 + i) }] })
    if (outcome === 'January 2014') t.equal(await value('OU_560', 'Cholera', outcome), 100 + i, `${period}: ${outcome}`)
    else
      t.same(
        one.body.response.conflicts.map((c: { value: string }) => c.value),
        [outcome],
        period,
      )
  }
})
