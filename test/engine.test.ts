// acceptance.md D (60–71): aggregation up the location tree and calculated indicators.
import t from 'tap'
import { sql, type Kysely } from 'kysely'
import { build } from './helper.js'
import { client } from './api.js'
import { hMeta } from './fixtures.js'
import { PROVINCE_COUNTS } from './fixtures/country.js'
import { enterCampaignValue } from '../lib/engine/data-entry.js'
import type { DB } from '../schemas/index.js'

type Api = ReturnType<typeof client>
const close = (a: number | undefined, b: number, digits = 9) => a !== undefined && Math.abs(a - b) < 10 ** -digits

function engine(api: Api, db: Kysely<DB>) {
  const dwc = async (i: number, l: number, c: number) => {
    const res = await api.get(`/campaign_datapoint/?indicator__in=${i}&campaign__in=${c}&location_id__in=${l}`)
    return res.body.objects.length ? (res.body.objects[0].value as number) : undefined
  }
  const raw = (indicator_id: number, location_id: number, campaign_id: number, value: number | null) =>
    enterCampaignValue(db, { indicator_id, location_id, campaign_id, value })
  const refresh = async (c: number) => {
    const res = await api.get(`/agg_refresh/?campaign_id=${c}`)
    if (res.status !== 200) throw new Error(res.text)
    return res.body.objects[0].agg_stats
  }
  const indicator = async (name: string, data_format = 'int') => (await api.post('/indicator/', { name, short_name: name, data_format })).body.id as number
  const component = (indicator_id: number, indicator_component_id: number, calculation: string) =>
    api.post('/calculated_indicator_component/', { indicator_id, indicator_component_id, calculation })
  /** Int indicators `a` and `b`, then a pct indicator `name` calculated from them as `kinds`. */
  const calculated = async (name: string, [a, b]: [string, string], kinds: [string, string]) => {
    const [A, B] = [await indicator(a), await indicator(b)]
    const R = await indicator(name, 'pct')
    await component(R, A, kinds[0])
    await component(R, B, kinds[1])
    return [A, B, R]
  }
  return { api, db, dwc, raw, refresh, indicator, component, calculated }
}

/** A fresh app and database, its API client and the engine helpers over them. */
async function started(test: Parameters<typeof build>[0]) {
  const { app, db } = await build(test)
  return engine(client(app), db)
}

/** One location L of a type X, and one campaign C. */
async function single(api: Api) {
  const type = (await api.post('/location_type/', { name: 'X', admin_level: 0 })).body.id
  const L = (await api.post('/location/', { name: 'L', location_code: 'L', location_type_id: type })).body.id as number
  const ct = (await api.post('/campaign_type/', { name: 'NID' })).body.id
  const C = (await api.post('/campaign/', { name: 'C', campaign_type_id: ct, start_date: '2016-01-01', end_date: '2016-01-31' })).body.id as number
  return { L, C }
}

/** H-AGG: H-META, campaign C and the raw counts of indicators 22 and 55 in eleven provinces. */
async function hAgg(api: Api, db: Kysely<DB>) {
  await hMeta(db)
  const C = (await api.post('/campaign/', { name: 'C', campaign_type_id: 1, start_date: '2016-01-01', end_date: '2016-01-31' })).body.id as number
  for (const { location_id, notAtHome, targeted } of PROVINCE_COUNTS) {
    await enterCampaignValue(db, { indicator_id: 22, location_id, campaign_id: C, value: notAtHome })
    await enterCampaignValue(db, { indicator_id: 55, location_id, campaign_id: C, value: targeted })
  }
  return C
}

// acceptance.md 60, 61
t.test('int values are summed up the tree; null and NaN ignored; a raw value wins; percentages are not aggregated', async (t) => {
  const e = await started(t)
  const { api, db } = e
  const C = await hAgg(api, db)
  await sql`update datapoint set value = null where location_id = 12918 and indicator_id = 22`.execute(db)
  await sql`update datapoint set value = 'NaN'::float8 where location_id = 12913 and indicator_id = 22`.execute(db)
  await e.refresh(C)
  t.equal(await e.dwc(22, 12910, C), 140)
  // 140 + 275 + 96 + 52 + 188 + 401 + 77 + 119 + 233: every province's count but 12913's (NaN) and 12918's (null).
  t.equal(await e.dwc(22, 12907, C), 1581)
  t.equal(await e.dwc(22, 12918, C), undefined)
  t.equal(await e.dwc(22, 12913, C), undefined)
  // 9800 + 11200 + 7400 + 15600 + 6100 + 12800 + 20300 + 8900 + 31000 + 10400 + 14500
  t.equal(await e.dwc(55, 12907, C), 148000)
  const raw = await db.selectFrom('agg_datapoint').select('is_raw').where('indicator_id', '=', 22).where('location_id', '=', 12910).executeTakeFirstOrThrow()
  t.equal(raw.is_raw, true)
  await e.raw(22, 12907, C, 909090)
  await e.refresh(C)
  t.equal(await e.dwc(22, 12907, C), 909090)
  await e.raw(164, 12910, C, 0.2)
  await e.raw(164, 12911, C, 0.6)
  await e.refresh(C)
  t.equal(await e.dwc(164, 12910, C), 0.2)
  t.equal(await e.dwc(164, 12907, C), undefined)
})

// acceptance.md 62
t.test('a calculated ratio of two sums', async (t) => {
  const e = await started(t)
  const { api } = e
  const { L, C } = await single(api)
  const [p1, p2, p3, S] = [await e.indicator('p1'), await e.indicator('p2'), await e.indicator('p3'), await e.indicator('S')]
  const R = await e.indicator('R', 'pct')
  for (const p of [p1, p2, p3]) await e.component(S, p, 'PART_TO_BE_SUMMED')
  await e.component(R, p3, 'NUMERATOR')
  await e.component(R, S, 'DENOMINATOR')
  await e.raw(p1, L, C, 303)
  await e.raw(p2, L, C, 808)
  await e.raw(p3, L, C, 909)
  await e.refresh(C)
  t.equal(await e.dwc(S, L, C), 2020)
  t.ok(close(await e.dwc(R, L, C), 909 / 2020))
})

// acceptance.md 63, 64
t.test('part of difference, and no value when a part is missing', async (t) => {
  const e = await started(t)
  const { api } = e
  const { L, C } = await single(api)
  const [x, y, Q] = await e.calculated('Q', ['x', 'y'], ['WHOLE_OF_DIFFERENCE', 'PART_OF_DIFFERENCE'])
  await e.raw(x, L, C, 303)
  await e.raw(y, L, C, 808)
  const [a, b, c, S] = [await e.indicator('a'), await e.indicator('b'), await e.indicator('c'), await e.indicator('S')]
  for (const p of [a, b, c]) await e.component(S, p, 'PART_TO_BE_SUMMED')
  await e.raw(a, L, C, 101)
  await e.raw(b, L, C, 102)
  await e.refresh(C)
  t.ok(close(await e.dwc(Q, L, C), -505 / 303, 4))
  t.equal(await e.dwc(S, L, C), 203)
})

// acceptance.md 65
t.test('sums of parts recurse to any depth; a stored part wins over its own sum', async (t) => {
  const e = await started(t)
  const { api, db } = e
  const { L, C } = await single(api)
  const ids: Record<string, number> = {}
  for (const n of ['P', 'sub1', 'sub2', 'sub3', 'ss1', 'ss2', 'ss3', 's2a', 's2b']) ids[n] = await e.indicator(n)
  for (const [parent, parts] of [
    ['P', ['sub1', 'sub2', 'sub3']],
    ['sub1', ['ss1', 'ss2', 'ss3']],
    ['sub2', ['s2a', 's2b']],
  ] as const) {
    for (const part of parts) await e.component(ids[parent], ids[part], 'PART_TO_BE_SUMMED')
  }
  const values = { sub2: 33, sub3: 44, ss1: 44, ss2: 55, ss3: 66, s2a: 77, s2b: 88 }
  for (const [n, v] of Object.entries(values)) await e.raw(ids[n], L, C, v)
  await e.refresh(C)
  t.equal(await e.dwc(ids.sub1, L, C), 165)
  t.equal(await e.dwc(ids.sub2, L, C), 33)
  t.equal(await e.dwc(ids.P, L, C), 242)
  await db.deleteFrom('datapoint').where('indicator_id', '=', ids.sub2).execute()
  await e.refresh(C)
  t.equal(await e.dwc(ids.sub2, L, C), 165)
  t.equal(await e.dwc(ids.P, L, C), 374)
})

// acceptance.md 66
t.test('bool values are averaged over the frontier below a location', async (t) => {
  const e = await started(t)
  const { db } = e
  await hMeta(db)
  const B = await e.indicator('B', 'bool')
  const states = (await db.selectFrom('location').select('id').where('parent_location_id', '=', 12907).orderBy('id').execute()).map((r) => r.id)
  for (const s of states) await e.raw(B, s, 99, s === 12910 ? 0 : 1)
  await e.refresh(99)
  t.ok(close(await e.dwc(B, 12907, 99), (states.length - 1) / states.length))
  t.equal(states.length, 12, 'the mean is over the 12 provinces: 11/12')
})

// acceptance.md 67
t.test('a ratio at an aggregated level uses the aggregated operands', async (t) => {
  const e = await started(t)
  const { db } = e
  await hMeta(db)
  const [N, D, R] = await e.calculated('R', ['N', 'D'], ['NUMERATOR', 'DENOMINATOR'])
  await e.raw(N, 12910, 99, 32)
  await e.raw(D, 12910, 99, 100)
  await e.raw(N, 12911, 99, 48)
  await e.raw(D, 12911, 99, 200)
  await e.refresh(99)
  t.ok(close(await e.dwc(R, 12910, 99), 0.32))
  t.ok(close(await e.dwc(R, 12911, 99), 0.24))
  t.equal(await e.dwc(N, 12907, 99), 80)
  t.equal(await e.dwc(D, 12907, 99), 300)
  t.ok(close(await e.dwc(R, 12907, 99), 80 / 300, 5))
})

// acceptance.md 68
t.test('several calculation kinds in one campaign take their precedence', async (t) => {
  const e = await started(t)
  const { api, db } = e
  const { L, C } = await single(api)
  const [missed, seen, vaccinated] = [await e.indicator('missed'), await e.indicator('seen'), await e.indicator('vaccinated')]
  const pct = await e.indicator('pct_missed', 'pct')
  await e.component(pct, missed, 'NUMERATOR')
  await e.component(pct, seen, 'DENOMINATOR')
  await e.component(pct, vaccinated, 'PART_OF_DIFFERENCE')
  await e.component(pct, seen, 'WHOLE_OF_DIFFERENCE')
  await e.raw(missed, L, C, 45)
  await e.raw(seen, L, C, 100)
  await e.refresh(C)
  t.ok(close(await e.dwc(pct, L, C), 0.45))
  await e.raw(vaccinated, L, C, 55)
  await e.refresh(C)
  t.ok(close(await e.dwc(pct, L, C), 0.45))
  await db.deleteFrom('datapoint').where('indicator_id', '=', missed).execute()
  await e.refresh(C)
  t.ok(close(await e.dwc(pct, L, C), 0.45))
})

// acceptance.md 69
t.test('a value is never counted twice up the tree', async (t) => {
  const e = await started(t)
  const { api } = e
  const types = [] as number[]
  for (const [i, name] of ['Country', 'Province', 'District'].entries()) types.push((await api.post('/location_type/', { name, admin_level: i })).body.id)
  const loc = async (name: string, level: number, parent?: number) =>
    (await api.post('/location/', { name, location_code: name, location_type_id: types[level], parent_location_id: parent ?? null })).body.id as number
  const K = await loc('K', 0)
  const [P1, P2] = [await loc('P1', 1, K), await loc('P2', 1, K)]
  const [D1, D2, D3, D4] = [await loc('D1', 2, P1), await loc('D2', 2, P1), await loc('D3', 2, P2), await loc('D4', 2, P2)]
  const ct = (await api.post('/campaign_type/', { name: 'NID' })).body.id
  const C = (await api.post('/campaign/', { name: 'C', campaign_type_id: ct, start_date: '2016-01-01', end_date: '2016-01-02' })).body.id
  const n = await e.indicator('n')
  const b = await e.indicator('b', 'bool')
  for (const [l, v] of [
    [P1, 100],
    [D1, 30],
    [D2, 40],
    [D3, 5],
    [D4, 6],
  ])
    await e.raw(n, l, C, v)
  for (const [l, v] of [
    [P1, 1],
    [D1, 0],
    [D2, 0],
    [D3, 1],
    [D4, 0],
  ])
    await e.raw(b, l, C, v)
  await e.refresh(C)
  t.equal(await e.dwc(n, P1, C), 100)
  t.equal(await e.dwc(n, P2, C), 11)
  t.equal(await e.dwc(n, K, C), 111)
  t.equal(await e.dwc(b, P2, C), 0.5)
  t.ok(close(await e.dwc(b, K, C), 2 / 3))
})

// acceptance.md 70
t.test('a zero denominator gives no row, never NaN or Infinity', async (t) => {
  const e = await started(t)
  const { api } = e
  const { L, C } = await single(api)
  const [N, D, R] = await e.calculated('R', ['N', 'D'], ['NUMERATOR', 'DENOMINATOR'])
  await e.raw(N, L, C, 5)
  await e.raw(D, L, C, 0)
  await e.refresh(C)
  t.equal(await e.dwc(R, L, C), undefined)
  t.equal(await e.dwc(N, L, C), 5)
  t.equal(await e.dwc(D, L, C), 0)
})

// acceptance.md 71
t.test('computed rows keep their ids across recomputes', async (t) => {
  const e = await started(t)
  const { api, db } = e
  const C = await hAgg(api, db)
  await e.refresh(C)
  const ids = async () =>
    (await api.get(`/campaign_datapoint/?indicator__in=22,55&campaign__in=${C}&limit=0`)).body.objects.map((o: { id: number }) => o.id).sort()
  const before = await ids()
  const stats = await e.refresh(C)
  t.same(await ids(), before)
  t.match(stats, { raw: 22, aggregated: 2 })
  const country = (await api.get(`/campaign_datapoint/?indicator__in=22&campaign__in=${C}&location_id__in=12907`)).body.objects[0]
  // 12910's 140 becomes 1140: the country's sum grows by 1000.
  await e.raw(22, 12910, C, 1140)
  await e.refresh(C)
  const after = (await api.get(`/campaign_datapoint/?indicator__in=22&campaign__in=${C}&location_id__in=12907`)).body.objects[0]
  t.equal(after.id, country.id)
  t.equal(after.value, country.value + 1000)
})

t.test('derived rows have no foreign keys (sql/005), yet the API refuses and cascades deletes over them', async (t) => {
  const e = await started(t)
  const { api, db } = e
  const { L, C } = await single(api)
  const [N, D, R] = await e.calculated('R', ['N', 'D'], ['NUMERATOR', 'DENOMINATOR'])
  await e.raw(N, L, C, 1)
  await e.raw(D, L, C, 4)
  t.same(await e.refresh(C), { raw: 2, aggregated: 0, computed: 3 })
  t.equal(await e.dwc(R, L, C), 0.25)

  // R has no raw value: only derived rows and its calculation hold on to it.
  const refused = await api.delete(`/indicator/${R}/`)
  t.equal(refused.status, 409)
  t.same(refused.body.details.dependents, { calculated_indicator_component: 2, datapoint_with_computed: 1 })
  const location = await api.delete(`/location/${L}/`)
  t.equal(location.status, 409)
  t.match(location.body.details.dependents, { datapoint: 2, agg_datapoint: 2, datapoint_with_computed: 3 })

  t.equal((await api.delete(`/location/${L}/?cascade=true`)).status, 204)
  const orphans = await sql<{ n: number }>`select
      (select count(*) from agg_datapoint a where not exists (select 1 from location l where l.id = a.location_id))
    + (select count(*) from datapoint_with_computed d where not exists (select 1 from location l where l.id = d.location_id)) as n`.execute(db)
  t.equal(Number(orphans.rows[0].n), 0, 'the cascade removed the derived rows of the location')
  t.equal((await api.delete(`/indicator/${R}/?cascade=true`)).status, 204)
})

t.test('a sum or ratio beyond float8 is not kept, and the rest of the campaign is computed (PostgreSQL raised an overflow error)', async (t) => {
  const e = await started(t)
  const { api, db } = e
  const type = (await api.post('/location_type/', { name: 'X', admin_level: 0 })).body.id
  const place = async (name: string, parent?: number) =>
    (await api.post('/location/', { name, location_code: name, location_type_id: type, parent_location_id: parent ?? null })).body.id as number
  const K = await place('K')
  const [A, B] = [await place('A', K), await place('B', K)]
  const ct = (await api.post('/campaign_type/', { name: 'NID' })).body.id
  const C = (await api.post('/campaign/', { name: 'C', campaign_type_id: ct, start_date: '2016-01-01', end_date: '2016-01-02' })).body.id
  const [big, small, tiny] = [await e.indicator('big'), await e.indicator('small'), await e.indicator('tiny')]
  const R = await e.indicator('R', 'pct')
  await e.component(R, big, 'NUMERATOR')
  await e.component(R, tiny, 'DENOMINATOR')
  await e.raw(big, A, C, 1.5e308)
  await e.raw(big, B, C, 1.5e308)
  await e.raw(small, A, C, 2)
  await e.raw(small, B, C, 3)
  await e.raw(tiny, A, C, 1e-300)
  await e.raw(tiny, B, C, 2)
  // Aggregated: small and tiny at K (big's sum is dropped). Calculated: R at B only (R at A and K is too large).
  t.same(await e.refresh(C), { raw: 6, aggregated: 2, computed: 9 })
  t.equal(await e.dwc(R, A, C), undefined, '1.5e308 / 1e-300: no row')
  t.equal(await e.dwc(R, B, C), 7.5e307, '1.5e308 / 2')
  t.equal(await e.dwc(big, K, C), undefined, 'the sum is Infinity: no row')
  t.equal(await e.dwc(big, A, C), 1.5e308)
  t.equal(await e.dwc(small, K, C), 5)
  const agg = await db.selectFrom('agg_datapoint').select('value').where('indicator_id', '=', big).where('location_id', '=', K).execute()
  t.same(agg, [], 'nor in agg_datapoint')
})

t.test("a campaign's first recompute inserts its rows; rows of it written outside the engine are merged", async (t) => {
  const { api, db, raw, refresh, indicator } = await started(t)
  const { L, C } = await single(api)
  const [n, m] = [await indicator('n'), await indicator('m')]
  const rowsOf = (table: 'agg_datapoint' | 'datapoint_with_computed') =>
    db.selectFrom(table).select(['indicator_id', 'value']).where('campaign_id', '=', C).orderBy('indicator_id').execute()
  await raw(n, L, C, 7)
  t.same(await refresh(C), { raw: 1, aggregated: 0, computed: 1 }, 'the first recompute')
  t.same(await rowsOf('datapoint_with_computed'), [{ indicator_id: n, value: 7 }])
  // No row in datapoint_with_computed, two in agg_datapoint that no recompute wrote: one under a key
  // the recompute makes, one under a key it does not.
  await db.deleteFrom('datapoint_with_computed').where('campaign_id', '=', C).execute()
  await db.deleteFrom('agg_datapoint').where('campaign_id', '=', C).execute()
  await db
    .insertInto('agg_datapoint')
    .values([
      { location_id: L, indicator_id: n, campaign_id: C, value: 999, is_raw: true },
      { location_id: L, indicator_id: m, campaign_id: C, value: 5, is_raw: true },
    ])
    .execute()
  t.same(await refresh(C), { raw: 1, aggregated: 0, computed: 1 }, 'recomputed, not refused on the key')
  t.same(await rowsOf('agg_datapoint'), [{ indicator_id: n, value: 7 }], 'the value corrected, the stray key gone')
  t.same(await rowsOf('datapoint_with_computed'), [{ indicator_id: n, value: 7 }])
})
