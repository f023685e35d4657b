// The property test of keys held by claim (ingestion §5.5, D26; lib/ingest/claims.ts), its seeds in
// test/takeover-model-*.test.ts so that the parallel runner spreads them: random uploads of a few
// repeated values, remaps with refreshes of older documents, reverts (forced or not) and data entries,
// run once with repeated values held by claim and once with the original's rewrite of every repeated
// key (the model: ingestion §5.5 as first written, which the ingest, history and revert tests hold).
// After every step both runs must agree on each key's value, the document holding it, the derived
// values, what the step reported and the history of value changes. On both engines.
import { sql, type Kysely } from 'kysely'
import type { Test } from 'tap'
import { client } from './api.js'
import { build } from './helper.js'
import { created, world } from './world.js'
import { enterCampaignValue } from '../lib/engine/data-entry.js'
import { recomputeCampaign } from '../lib/engine/recompute.js'
import { prng } from '../lib/core/prng.js'
import { repeatedValues } from '../lib/ingest/claims.js'
import type { DB } from '../schemas/index.js'

const CODES = ['p', 'q', 'r', 'z'] as const
export const STEPS = 30

export type Observation = { step: string; report: unknown; values: unknown; holders: unknown; derived: unknown; history: unknown }

/** What a step reported, less what D26 leaves free: a repeated value counts `unchanged`, not `updated`. */
function comparable(report: Record<string, unknown> | undefined): unknown {
  if (!report) return null
  const stats = report.ingest_stats as Record<string, Record<string, number>> | undefined
  if (stats) {
    const { updated, unchanged, ...datapoints } = stats.datapoints
    return { rows: stats.rows, datapoints, written_or_kept: updated + unchanged }
  }
  const count = (list: unknown) => (list as { count: number }).count
  return {
    restored: count(report.restored),
    deleted: count(report.deleted),
    conflicts: (report.conflicts as { items: Array<{ unique_index: string }> }).items.map((c) => c.unique_index),
    forbidden: count(report.location_forbidden),
  }
}

async function observe(db: Kysely<DB>, step: string, report: Record<string, unknown> | undefined): Promise<Observation> {
  const values = (await db.selectFrom('datapoint').select(['unique_index', 'value']).orderBy('unique_index').execute()).map((r) => [r.unique_index, r.value])
  const holders = (
    await sql<{ unique_index: string; document_id: number }>`select p.unique_index, d.id as document_id
      from source_doc d cross join lateral document_datapoints(d.id) h join datapoint p on p.id = h.datapoint_id order by 1, 2`.execute(db)
  ).rows
  const derived = (
    await db
      .selectFrom('datapoint_with_computed')
      .select(['location_id', 'indicator_id', 'campaign_id', 'value'])
      .orderBy(['campaign_id', 'indicator_id', 'location_id'])
      .execute()
  ).map((r) => [r.location_id, r.indicator_id, r.campaign_id, r.value])
  // Value changes only: a takeover (same value, another source) is free to be recorded or not.
  const history = (
    await sql<{ unique_index: string; change: string; value_before: number | null; value_after: number | null }>`
      select unique_index, change, value_before, value_after from datapoint_history
      where change <> 'update' or value_before is distinct from value_after order by unique_index, id`.execute(db)
  ).rows.map((h) => [h.unique_index, h.change, h.value_before, h.value_after])
  return { step, report: comparable(report), values, holders, derived, history }
}

/** The steps of `seed`, run with repeated values held by claim or rewritten: an observation after each. */
export async function run(t: Test, seed: number, heldByClaim: boolean): Promise<Observation[]> {
  const before = repeatedValues.heldByClaim
  repeatedValues.heldByClaim = heldByClaim
  t.teardown(() => {
    repeatedValues.heldByClaim = before
  })
  const { app, db } = await build(t)
  const api = client(app)
  const w = await world(api)
  const v = await created(api.post('/indicator/', { name: 'v', short_name: 'v', data_format: 'int' }))
  const type = await created(api.post('/campaign_type/', { name: 'Model' }))
  const K = await created(api.post('/campaign/', { name: 'K', campaign_type_id: type, start_date: '2016-03-01', end_date: '2016-03-05' }))
  const places = [w.a1, w.b1, w.B, w.A]
  const maps: Record<string, number> = {}
  for (const [content_type, code, master] of [
    ['campaign', 'K', K],
    ['indicator', 'v', v],
    ['location', 'p', w.a1],
    ['location', 'q', w.b1],
    ['location', 'r', w.B],
  ] as const)
    maps[code] = await created(api.post('/source_object_map/', { content_type, source_object_code: code, master_object_id: master }))

  const random = prng(seed)
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)]
  const documents: number[] = []
  const observations: Observation[] = []
  const answer = (r: { status: number; text: string; body: { objects?: Array<Record<string, unknown>> } }, what: string) => {
    if (r.status !== 200) throw new Error(`${what}: ${r.status} ${r.text}`)
    return r.body.objects![0]
  }
  for (let step = 0; step < STEPS; step++) {
    const roll = random()
    let what: string
    let report: Record<string, unknown> | undefined
    if (roll < 0.45 || documents.length < 2) {
      // A file of a few rows, its values from a small set: most repeat what is stored.
      const rows = CODES.filter(() => random() < 0.7).map((code) => `K,${code},${1 + Math.floor(random() * 3)},${1 + Math.floor(random() * 3)}`)
      const doc = await api.post('/document/', {
        docfile: Buffer.from(`campaign,geocode,n,v\n${rows.join('\n')}\n`).toString('base64'),
        doc_title: `step-${step}.csv`,
        file_type: 'campaign',
      })
      if (doc.status !== 201) throw new Error(doc.text)
      documents.push(doc.body.id)
      what = `upload ${doc.body.id}: ${rows.join(' ')}`
      report = answer(await api.get(`/transform_upload/?document_id=${doc.body.id}`), what)
    } else if (roll < 0.65) {
      // A code remapped (or mapped at last), then an earlier document refreshed.
      const code = pick(CODES)
      const place = pick(places)
      const document = pick(documents)
      what = `${code} → ${place}, refresh ${document}`
      // `z` is mapped the first time it is picked: registered unmapped by an upload, or made here.
      maps[code] ??=
        (await db.selectFrom('source_object_map').select('id').where('source_object_code', '=', code).where('content_type', '=', 'location').executeTakeFirst())
          ?.id ?? (await created(api.post('/source_object_map/', { content_type: 'location', source_object_code: code, master_object_id: place })))
      const patched = await api.patch(`/source_object_map/${maps[code]}/`, { master_object_id: place })
      if (patched.status !== 200) throw new Error(patched.text)
      report = answer(await api.get(`/refresh_master/?document_id=${document}`), what)
    } else if (roll < 0.85) {
      const document = pick(documents)
      const force = random() < 0.3
      what = `revert ${document}${force ? ', forced' : ''}`
      report = answer(await api.get(`/revert_document/?document_id=${document}&force=${force}`), what)
    } else {
      const entry = { indicator_id: pick([w.n, v]), location_id: pick(places), campaign_id: K, value: 1 + Math.floor(random() * 3) }
      what = `entry ${JSON.stringify(entry)}`
      await db.transaction().execute(async (trx) => {
        await enterCampaignValue(trx, entry)
        await recomputeCampaign(trx, K)
      })
    }
    observations.push(await observe(db, `step ${step}: ${what}`, report))
  }
  return observations
}

/** The test of each seed: the two runs, compared step by step. */
export function compareRuns(t: Test, seeds: number[]) {
  for (const seed of seeds) {
    t.test(`seed ${seed}: held by claim, every step as the rewrite of every key`, async (t) => {
      let byClaim: Observation[] = []
      let rewritten: Observation[] = []
      await t.test('held by claim', async (t) => {
        byClaim = await run(t, seed, true)
      })
      await t.test('rewritten', async (t) => {
        rewritten = await run(t, seed, false)
      })
      t.equal(byClaim.length, STEPS)
      for (const [i, observed] of byClaim.entries()) {
        const model = rewritten[i]
        for (const aspect of ['report', 'values', 'holders', 'derived', 'history'] as const) {
          if (!t.same(observed[aspect], model[aspect], `${observed.step}: ${aspect}`)) return
        }
      }
    })
  }
}
