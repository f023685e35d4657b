// A corrected re-upload recomputes only what it changed (lib/engine/recompute-changed.ts). Property test:
// random files over an uneven tree, then random corrections (changed, blanked and new cells, dropped
// and new rows, a location code remapped and its document refreshed); after each upload every raw value
// equals a model of ingestion §5.5, every final value equals a model of §6–§7 (test/finals-model.ts: a parent's
// int total is its children's final values, also for a calculated int indicator given raw values at
// some locations), every derived value equals a from-scratch recompute, and the history holds exactly
// one row per value changed.
import t, { type Test } from 'tap'
import { type Kysely, sql } from 'kysely'
import { build, engine } from './helper.js'
import { client } from './api.js'
import { created, locationLevels } from './world.js'
import { recomputeCampaign } from '../lib/engine/recompute.js'
import { syncChunks } from '../lib/ingest/sync.js'
import { ingest } from '../lib/ingest/actions.js'
import type { Document } from '../lib/ingest/transform.js'
import { noProgress, type Progress } from '../lib/core/progress.js'
import type { DB } from '../schemas/index.js'
import { modelFinals } from './finals-model.js'

type Api = ReturnType<typeof client>
type Row = { campaign: string; location: string; cells: Record<string, string> }

/** mulberry32: the same sequence for a seed, so a failure names the seed that reproduces it. */
function random(seed: number) {
  let a = seed
  const next = () => {
    a = (a + 0x6d2b79f5) | 0
    let x = Math.imul(a ^ (a >>> 15), 1 | a)
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296
  }
  return { chance: (p: number) => next() < p, int: (n: number) => Math.floor(next() * n), pick: <T>(xs: T[]) => xs[Math.floor(next() * xs.length)] }
}

// `s` is calculated (i1 + i2) in the seeds with calculations, and files give it at some locations.
const COLUMNS = { i1: 'int', i2: 'int', b: 'bool', p: 'pct', s: 'int' } as const

/** Country R, provinces P1–P3, districts under each, and villages under d11: four depths, uneven. */
async function country(api: Api, calculations: boolean) {
  const { country, province, district, place } = await locationLevels(api)
  const village = await created(api.post('/location_type/', { name: 'Village', admin_level: 3 }))
  const ids: Record<string, number> = {}
  ids.R = await place('R', country)
  for (const p of ['P1', 'P2', 'P3']) ids[p] = await place(p, province, ids.R)
  for (const [d, p] of [
    ['d11', 'P1'],
    ['d12', 'P1'],
    ['d13', 'P1'],
    ['d21', 'P2'],
    ['d22', 'P2'],
    ['d31', 'P3'],
  ])
    ids[d] = await place(d, district, ids[p])
  for (const v of ['v111', 'v112']) ids[v] = await place(v, village, ids.d11)
  const ct = await created(api.post('/campaign_type/', { name: 'NID' }))
  const campaigns: Record<string, number> = {}
  for (const [code, start] of [
    ['C1', '2016-01-01'],
    ['C2', '2016-02-01'],
  ])
    campaigns[code] = await created(api.post('/campaign/', { name: code, campaign_type_id: ct, start_date: start, end_date: start }))
  const indicators: Record<string, number> = {}
  for (const [name, data_format] of Object.entries(COLUMNS)) indicators[name] = await created(api.post('/indicator/', { name, short_name: name, data_format }))
  // Calculated: a sum of parts over a sum of parts, a ratio and a difference of the int columns.
  if (calculations)
    for (const part of ['i1', 'i2'])
      await created(
        api.post('/calculated_indicator_component/', {
          indicator_id: indicators.s,
          indicator_component_id: indicators[part],
          calculation: 'PART_TO_BE_SUMMED',
        }),
      )
  for (const [name, format, parts] of !calculations
    ? []
    : ([
        [
          's2',
          'int',
          [
            ['s', 'PART_TO_BE_SUMMED'],
            ['b', 'PART_TO_BE_SUMMED'],
          ],
        ],
        [
          'r',
          'pct',
          [
            ['i1', 'NUMERATOR'],
            ['i2', 'DENOMINATOR'],
          ],
        ],
        [
          'd',
          'pct',
          [
            ['i1', 'WHOLE_OF_DIFFERENCE'],
            ['i2', 'PART_OF_DIFFERENCE'],
          ],
        ],
      ] as const)) {
    indicators[name] = await created(api.post('/indicator/', { name, short_name: name, data_format: format }))
    for (const [part, calculation] of parts)
      await created(api.post('/calculated_indicator_component/', { indicator_id: indicators[name], indicator_component_id: indicators[part], calculation }))
  }
  const maps: Record<string, number> = {}
  for (const [content_type, codes] of [
    ['location', ids],
    ['campaign', campaigns],
    ['indicator', indicators],
  ] as const)
    for (const [code, master_object_id] of Object.entries(codes))
      if (content_type !== 'indicator' || code in COLUMNS)
        maps[code] = await created(api.post('/source_object_map/', { content_type, source_object_code: code, master_object_id }))
  return { ids, campaigns, indicators, maps }
}

const cell = (rng: ReturnType<typeof random>, column: keyof typeof COLUMNS) =>
  column === 'b' ? String(rng.int(2)) : column === 'p' ? String(rng.int(100) / 100) : String(rng.int(60))

const csvOf = (rows: Row[]) =>
  [
    `campaign,geocode,${Object.keys(COLUMNS).join(',')}`,
    ...rows.map((r) => [r.campaign, r.location, ...Object.keys(COLUMNS).map((c) => r.cells[c] ?? '')].join(',')),
  ].join('\n')

/** The derived tables, by key. */
async function derived(db: Kysely<DB>) {
  const agg = await db
    .selectFrom('agg_datapoint')
    .select(['campaign_id', 'location_id', 'indicator_id', 'value', 'is_raw'])
    .orderBy('campaign_id')
    .orderBy('location_id')
    .orderBy('indicator_id')
    .execute()
  const dwc = await db
    .selectFrom('datapoint_with_computed')
    .select(['campaign_id', 'location_id', 'indicator_id', 'value'])
    .orderBy('campaign_id')
    .orderBy('location_id')
    .orderBy('indicator_id')
    .execute()
  return { agg, dwc }
}

/**
 * The same keys (and `is_raw`), and the same values to float8 rounding: a sum of non-integers depends on
 * the order its terms are added in, which SQL leaves to the plan, in a full recompute too.
 */
function sameValues(t: Test, actual: Array<{ value: number }>, expected: Array<{ value: number }>, what: string) {
  const keys = (rows: Array<{ value: number }>) => rows.map(({ value, ...key }) => key)
  t.same(keys(actual), keys(expected), `${what}: the keys`)
  const far = actual.filter((row, n) => Math.abs(row.value - expected[n]?.value) > 1e-12 * Math.max(1, Math.abs(row.value)))
  t.same(far, [], `${what}: the values`)
}

/** The derived tables as a full recompute of every campaign leaves them, rolled back. */
async function fromScratch(db: Kysely<DB>, campaigns: number[]) {
  let result: Awaited<ReturnType<typeof derived>> | undefined
  const rollback = new Error('rollback')
  await db
    .transaction()
    .execute(async (trx) => {
      for (const c of campaigns) await recomputeCampaign(trx, c)
      result = await derived(trx)
      throw rollback
    })
    .catch((error) => {
      if (error !== rollback) throw error
    })
  return result!
}

/** The final values the model of §6–§7 gives for the raw values of `model` (key → value), in `derived`'s order. */
async function modelled(db: Kysely<DB>, model: Map<string, { value: number }>) {
  const locations = await db.selectFrom('location').select(['id', 'parent_location_id']).execute()
  const children = new Map<number, number[]>()
  for (const l of locations) if (l.parent_location_id !== null) children.set(l.parent_location_id, [...(children.get(l.parent_location_id) ?? []), l.id])
  const formats = new Map((await db.selectFrom('indicator').select(['id', 'data_format']).execute()).map((i) => [i.id, i.data_format]))
  const components = await db.selectFrom('calculated_indicator_component').select(['indicator_id', 'indicator_component_id', 'calculation']).execute()
  const raw = new Map<number, Map<number, Map<number, number>>>()
  for (const [key, { value }] of model) {
    const [location, indicator, campaign] = key.split('_').map(Number)
    if (!raw.has(campaign)) raw.set(campaign, new Map())
    const at = raw.get(campaign)!
    if (!at.has(location)) at.set(location, new Map())
    at.get(location)!.set(indicator, value)
  }
  const rows: Array<{ campaign_id: number; location_id: number; indicator_id: number; value: number }> = []
  for (const [campaign, values] of raw)
    for (const [key, value] of modelFinals(
      values,
      children,
      locations.map((l) => l.id),
      formats,
      components,
    )) {
      const [location_id, indicator_id] = key.split('_').map(Number)
      rows.push({ campaign_id: campaign, location_id, indicator_id, value })
    }
  return rows.sort((a, b) => a.campaign_id - b.campaign_id || a.location_id - b.location_id || a.indicator_id - b.indicator_id)
}

/** The sync writes its winners in chunks of `rows` until the test ends. */
function syncInChunksOf(t: Test, rows: number) {
  const before = syncChunks.rows
  syncChunks.rows = rows
  t.teardown(() => {
    syncChunks.rows = before
  })
}

/** Every datapoint: key → value and source. */
async function raw(db: Kysely<DB>) {
  const rows = await db.selectFrom('datapoint').select(['unique_index', 'value', 'source_submission_id']).where('campaign_id', 'is not', null).execute()
  return new Map(rows.map((r) => [r.unique_index, { value: r.value, source: r.source_submission_id }]))
}

// Seeds 3 and 4 sync in chunks of 7 winners, the way a national file is synced in chunks of 200,000.
for (const seed of [1, 2, 3, 4, 5, 6]) {
  t.test(`random uploads and corrections, seed ${seed}`, async (t) => {
    const { app, db } = await build(t)
    const api = client(app)
    const rng = random(seed)
    if (seed === 3 || seed === 4) syncInChunksOf(t, 7)
    // Odd seeds with calculated indicators, even seeds without (the final values are then the stored ones).
    const { ids, campaigns, indicators, maps } = await country(api, seed % 2 === 1)
    let codes = Object.keys(ids)
    const locationOf: Record<string, number> = { ...ids }
    // The model of §5.5: each key's value and the document that wrote it last.
    const model = new Map<string, { value: number; doc: number }>()
    const keyOf = (location: number, column: string, campaign: string) => `${location}_${indicators[column]}_${campaigns[campaign]}`
    let keysRecomputed = 0

    const check = async (what: string, before: Map<string, { value: number | null; source: number }>, historyAfter: number) => {
      const after = await raw(db)
      t.same(
        Object.fromEntries([...after].map(([k, v]) => [k, v.value])),
        Object.fromEntries([...model].map(([k, v]) => [k, v.value])),
        `${what}: every raw value as §5.5 says`,
      )
      const now = await derived(db)
      sameValues(t, now.dwc, await modelled(db, model), `${what}: datapoint_with_computed as the model of §6–§7`)
      const scratch = await fromScratch(db, Object.values(campaigns))
      sameValues(t, now.agg, scratch.agg, `${what}: agg_datapoint as a full recompute`)
      sameValues(t, now.dwc, scratch.dwc, `${what}: datapoint_with_computed as a full recompute`)
      // One history row per datapoint inserted, deleted, or given another value. A row that records a
      // takeover (the same value, another document: a key held by claim made real, D26) is no value change.
      const history = (
        await db
          .selectFrom('datapoint_history')
          .select(['change', 'unique_index', 'value_before', 'value_after'])
          .where('id', '>', historyAfter)
          .where('campaign_id', 'is not', null)
          .orderBy('unique_index')
          .orderBy('id')
          .execute()
      ).filter((h) => h.change !== 'update' || h.value_before !== h.value_after)
      const expected = [...new Set([...before.keys(), ...after.keys()])].sort().flatMap((k) => {
        const [b, a] = [before.get(k), after.get(k)]
        if (!b) return [{ change: 'insert', unique_index: k, value_before: null, value_after: a!.value }]
        if (!a) return [{ change: 'delete', unique_index: k, value_before: b.value, value_after: null }]
        return b.value !== a.value ? [{ change: 'update', unique_index: k, value_before: b.value, value_after: a.value }] : []
      })
      t.same(history, expected, `${what}: the history is exact`)
    }
    const historyMark = async () =>
      Number(
        (
          await db
            .selectFrom('datapoint_history')
            .select((e) => e.fn.max('id').as('id'))
            .executeTakeFirst()
        )?.id ?? 0,
      )

    let rows: Row[] = []
    for (let round = 0; round < 6; round++) {
      // A correction of the last file, or (round 0) a first file.
      const next: Row[] = []
      const present = new Set<string>()
      for (const row of rows) {
        if (rng.chance(0.05) || !codes.includes(row.location)) continue
        const cells = { ...row.cells }
        for (const column of Object.keys(COLUMNS) as Array<keyof typeof COLUMNS>) {
          if (cells[column] === undefined) {
            if (rng.chance(0.1)) cells[column] = cell(rng, column)
          } else if (rng.chance(0.05)) delete cells[column]
          else if (rng.chance(0.15)) cells[column] = cell(rng, column)
        }
        next.push({ ...row, cells })
        present.add(`${row.campaign}|${row.location}`)
      }
      for (const campaign of Object.keys(campaigns))
        for (const location of codes)
          if (!present.has(`${campaign}|${location}`) && rng.chance(round === 0 ? 0.7 : 0.1)) {
            const cells: Record<string, string> = {}
            for (const column of Object.keys(COLUMNS) as Array<keyof typeof COLUMNS>)
              if (rng.chance(column === 's' ? 0.3 : 0.8)) cells[column] = cell(rng, column)
            next.push({ campaign, location, cells })
          }
      rows = next

      const before = await raw(db)
      const mark = await historyMark()
      const doc = await api.post('/document/', { docfile: Buffer.from(csvOf(rows)).toString('base64'), doc_title: `round-${round}.csv`, file_type: 'campaign' })
      t.equal(doc.status, 201, `round ${round} uploaded`)
      const run = await api.get(`/transform_upload/?document_id=${doc.body.id}`)
      t.equal(run.status, 200, `round ${round} transformed`)
      keysRecomputed += run.body.objects[0].ingest_stats.recomputed_keys
      for (const row of rows)
        for (const [column, text] of Object.entries(row.cells))
          model.set(keyOf(locationOf[row.location], column, row.campaign), { value: Number(text), doc: doc.body.id })
      await check(`round ${round}`, before, mark)

      // Now and then a location code is remapped and the last document refreshed: its keys at the old
      // location are deleted, the same cells written at the new one.
      if (round > 0 && rng.chance(0.5)) {
        const last = doc.body.id as number
        const used = new Set(rows.map((r) => r.location))
        const from = rng.pick([...used].filter((c) => c !== 'R'))
        const to = rng.pick(codes.filter((c) => !used.has(c)))
        if (!from || !to) continue
        const beforeRemap = await raw(db)
        const markRemap = await historyMark()
        const patched = await api.patch(`/source_object_map/${maps[from]}/`, { master_object_id: ids[to] })
        t.equal(patched.status, 200, 'remapped')
        const refreshed = await api.get(`/refresh_master/?document_id=${last}`)
        t.equal(refreshed.status, 200, 'refreshed')
        keysRecomputed += refreshed.body.objects[0].ingest_stats.recomputed_keys
        for (const [key, entry] of model) if (entry.doc === last && key.startsWith(`${ids[from]}_`)) model.delete(key)
        for (const row of rows.filter((r) => r.location === from))
          for (const [column, text] of Object.entries(row.cells)) model.set(keyOf(ids[to], column, row.campaign), { value: Number(text), doc: last })
        await check(`round ${round}: ${from} remapped to ${to}`, beforeRemap, markRemap)
        // From now on the code `from` names `to`, which keeps its own code: files use only `to`.
        codes = codes.filter((c) => c !== from)
        rows = rows.filter((r) => r.location !== from)
        locationOf[from] = ids[to]
      }
    }
    t.ok(keysRecomputed > 0, `some corrections were recomputed key by key (${keysRecomputed} keys), not whole`)
  })
}

t.test('a sync is written in chunks, and reports its progress chunk by chunk, in its place among the stages', async (t) => {
  const { app, db } = await build(t)
  const api = client(app)
  const { ids, campaigns } = await country(api, false)
  // 100 more districts: 112 locations × 2 campaigns × 4 columns = 896 cells, a dozen blocks of winners.
  const district = (await db.selectFrom('location_type').select('id').where('name', '=', 'District').executeTakeFirstOrThrow()).id
  for (let k = 0; k < 100; k++) {
    const id = await created(api.post('/location/', { name: `x${k}`, location_code: `x${k}`, location_type_id: district, parent_location_id: ids.P3 }))
    await created(api.post('/source_object_map/', { content_type: 'location', source_object_code: `x${k}`, master_object_id: id }))
  }
  const codes = (await db.selectFrom('location').select('location_code').execute()).map((l) => l.location_code)
  const rows = Object.keys(campaigns).flatMap((campaign) =>
    codes.map((location, n) => ({ campaign, location, cells: { i1: String(n), i2: String(n + 1), b: String(n % 2), p: '0.5' } })),
  )
  syncInChunksOf(t, 100)
  const doc = await api.post('/document/', { docfile: Buffer.from(csvOf(rows)).toString('base64'), doc_title: 'big.csv', file_type: 'campaign' })
  const run = await api.get(`/transform_upload/?document_id=${doc.body.id}`)
  t.match(run.body.objects[0].ingest_stats.datapoints, { inserted: 896, updated: 0 }, 'every chunk inserted')
  const rowsOf = async (table: 'datapoint' | 'datapoint_history') =>
    Number(
      (
        await db
          .selectFrom(table)
          .select((e) => e.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    )
  t.equal(await rowsOf('datapoint'), 896)
  t.equal(await rowsOf('datapoint_history'), 896, 'one history row each')

  // Every value changed behind the document's back, then the document refreshed, watched: it writes
  // every key again, and the datapoints written grow chunk by chunk to every key.
  await sql`update datapoint set value = value + 1`.execute(db)
  const reports: number[] = []
  const places = new Set<string>()
  const source = await db.selectFrom('source_doc').selectAll().where('id', '=', doc.body.id).executeTakeFirstOrThrow()
  const runner = { id: 1, username: 'admin', is_superuser: true, restricted: false, metadata_editor: true, top_lvl_location_id: null, key_id: 0 }
  const refresh = (progress: Progress = noProgress) =>
    db.transaction().execute((trx) => ingest(trx, source as unknown as Document, runner, '', false, progress))
  const refreshed = await refresh((stage, done, total, place) => {
    places.add(`${place?.step} of ${place?.steps}: ${stage}`)
    if (stage === 'datapoints written') reports.push(done / total)
  })
  t.match(refreshed.datapoints, { inserted: 0, updated: 896, unchanged: 0 }, 'the refresh writes every key again')
  t.match((await refresh()).datapoints, { inserted: 0, updated: 0, unchanged: 896 }, 'a refresh of the same document then changes nothing')
  t.same(
    [...places],
    ['1 of 4: cells staged', '2 of 4: cells written', '3 of 4: datapoints written', '4 of 4: campaigns recomputed'],
    'each stage placed among the refresh’s four',
  )
  t.ok(reports.length >= 10, `a report per chunk (${reports.length})`)
  t.same(
    reports,
    [...reports].sort((a, b) => a - b),
    'in order',
  )
  t.equal(reports.at(-1), 1, 'ending at every key')
})

t.test(
  'two corrections of one campaign at once: each recomputes its own keys after the other, and the result is a full recompute’s',
  { skip: engine !== 'postgres' && 'two uploads at once need two sessions (PostgreSQL)' },
  async (t) => {
    const { app, db } = await build(t)
    const api = client(app)
    const { campaigns } = await country(api, true)
    const rng = random(7)
    const everywhere = ['R', 'P1', 'P2', 'P3', 'd11', 'd12', 'd13', 'd21', 'd22', 'd31', 'v111', 'v112']
    const send = async (rows: Row[], title: string) => {
      const doc = await api.post('/document/', { docfile: Buffer.from(csvOf(rows)).toString('base64'), doc_title: title, file_type: 'campaign' })
      if (doc.status !== 201) throw new Error(doc.text)
      return doc.body.id as number
    }
    const transform = async (id: number) => {
      const run = await api.get(`/transform_upload/?document_id=${id}`)
      if (run.status !== 200) throw new Error(run.text)
      return run.body.objects[0].ingest_stats.recomputed_keys as number
    }
    // Recounts of i1 and b: four keys of the campaign's 32 stored, recomputed key by key (under a fifth).
    const districts = (locations: string[], full = false) =>
      locations.map((location) => ({
        campaign: 'C1',
        location,
        cells: { i1: String(rng.int(60)), b: String(rng.int(2)), ...(full ? { i2: String(rng.int(60)), p: '0.5' } : {}) },
      }))
    await transform(
      await send(
        districts(
          everywhere.filter((l) => !l.startsWith('P') && l !== 'R'),
          true,
        ),
        'all.csv',
      ),
    )
    for (let round = 0; round < 3; round++) {
      // Two recounts under the same province and country, uploaded and run at the same time.
      const [a, b] = [await send(districts(['v111', 'd12']), `a${round}.csv`), await send(districts(['d13', 'd21']), `b${round}.csv`)]
      const keys = await Promise.all([transform(a), transform(b)])
      t.ok(
        keys.every((n) => n > 0),
        `round ${round}: both recomputed key by key (${keys})`,
      )
      const scratch = await fromScratch(db, Object.values(campaigns))
      const now = await derived(db)
      sameValues(t, now.agg, scratch.agg, `round ${round}: agg_datapoint as a full recompute`)
      sameValues(t, now.dwc, scratch.dwc, `round ${round}: datapoint_with_computed as a full recompute`)
    }
  },
)

// A value typed in (POST), changed (PATCH) or deleted through campaign_datapoint recomputes the totals
// above its key only, as a correction does: the derived tables equal a full recompute after each.
for (const seed of [1, 2]) {
  t.test(`data entries recompute the keys above them, seed ${seed}`, async (t) => {
    const { app, db } = await build(t)
    const api = client(app)
    const rng = random(seed)
    const { ids, campaigns, indicators } = await country(api, seed === 1)
    const rows = Object.keys(campaigns).flatMap((campaign) =>
      ['d11', 'd12', 'd13', 'd21', 'd22', 'd31', 'v111'].map((location) => ({
        campaign,
        location,
        cells: { i1: cell(rng, 'i1'), i2: cell(rng, 'i2'), b: cell(rng, 'b') },
      })),
    )
    const doc = await api.post('/document/', { docfile: Buffer.from(csvOf(rows)).toString('base64'), doc_title: 'first.csv', file_type: 'campaign' })
    t.equal((await api.get(`/transform_upload/?document_id=${doc.body.id}`)).status, 200, 'the first file transformed')
    const places = ['d11', 'd12', 'd13', 'd21', 'd22', 'd31', 'v111', 'v112']
    for (let n = 0; n < 16; n++) {
      const [location, column, campaign] = [ids[rng.pick(places)], rng.pick(['i1', 'i2', 'b', 'p'] as const), rng.pick(Object.values(campaigns))]
      const key = { indicator_id: indicators[column], location_id: location, campaign_id: campaign }
      const found = await api.get(`/campaign_datapoint/?indicator__in=${key.indicator_id}&campaign__in=${campaign}&location_id__in=${location}`)
      const row = found.body.objects[0] as { id: number } | undefined
      const stored =
        row && (await db.selectFrom('datapoint').select('id').where('unique_index', '=', `${location}_${key.indicator_id}_${campaign}`).executeTakeFirst())
      const [what, answer] = !stored
        ? ['POST', await api.post('/campaign_datapoint/', { ...key, value: Number(cell(rng, column)) })]
        : rng.chance(0.3)
          ? ['DELETE', await api.delete(`/campaign_datapoint/${row.id}/`)]
          : ['PATCH', await api.patch(`/campaign_datapoint/${row.id}/`, { value: Number(cell(rng, column)) })]
      t.ok(answer.status < 300, `entry ${n}: ${what} ${column} at ${location} answered ${answer.status}`)
      const scratch = await fromScratch(db, Object.values(campaigns))
      const now = await derived(db)
      sameValues(t, now.agg, scratch.agg, `entry ${n}: agg_datapoint as a full recompute`)
      sameValues(t, now.dwc, scratch.dwc, `entry ${n}: datapoint_with_computed as a full recompute`)
    }

    // Only the keys above the entry are recomputed: a total of another province, spoilt behind the
    // engine's back, stays spoilt (a whole campaign's recompute would have mended it).
    const C1 = campaigns.C1
    await sql`update agg_datapoint set value = 99999 where campaign_id = ${C1} and location_id = ${ids.P3} and indicator_id = ${indicators.i1}`.execute(db)
    const d11 = (await api.get(`/campaign_datapoint/?indicator__in=${indicators.i1}&campaign__in=${C1}&location_id__in=${ids.d11}`)).body.objects[0] as {
      id: number
    }
    t.equal((await api.patch(`/campaign_datapoint/${d11.id}/`, { value: 41 })).status, 200, 'a value under P1 changed')
    const spoilt = await db
      .selectFrom('agg_datapoint')
      .select('value')
      .where('campaign_id', '=', C1)
      .where('location_id', '=', ids.P3)
      .where('indicator_id', '=', indicators.i1)
      .executeTakeFirstOrThrow()
    t.equal(spoilt.value, 99999, "P3's total was not recomputed by an entry under P1")
  })
}
