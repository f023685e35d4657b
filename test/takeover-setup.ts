// The world of the takeover scenarios (test/reupload-takeover.test.ts, test/campaign-locks.test.ts): a
// campaign K of their own, its codes mapped (K → the campaign, p → a1, q → b1), and what they read.
import { randomInt } from 'node:crypto'
import { sql } from 'kysely'
import type { Test } from 'tap'
import { client } from './api.js'
import { build } from './helper.js'
import { created, upload, world } from './world.js'

export type TakeoverWorld = Awaited<ReturnType<typeof takeoverWorld>>

export async function takeoverWorld(t: Test) {
  const { app, db } = await build(t)
  const api = client(app)
  const w = await world(api)
  // The world's campaign holds values already: K is the scenarios' own.
  const type = await created(api.post('/campaign_type/', { name: 'Takeover' }))
  // K's id is one no other test file uses: campaign locks are the database's (lib/engine/campaign-locks.ts),
  // and the PostgreSQL suite's files share one database (a schema each).
  await sql`select setval(pg_get_serial_sequence('campaign', 'id'), ${1_000_000 + randomInt(1_000_000_000)})`.execute(db)
  const K = await created(api.post('/campaign/', { name: 'K', campaign_type_id: type, start_date: '2016-03-01', end_date: '2016-03-05' }))
  const maps: Record<string, number> = {}
  for (const [content_type, code, master] of [
    ['campaign', 'K', K],
    ['location', 'p', w.a1],
    ['location', 'q', w.b1],
  ] as const)
    maps[code] = await created(api.post('/source_object_map/', { content_type, source_object_code: code, master_object_id: master }))
  const send = async (title: string, rows: string) => {
    const { id, run } = await upload(api, title, 'campaign', `campaign,geocode,n\n${rows}`)
    if (run.status !== 200) throw new Error(run.text)
    return { id, stats: run.body.objects[0].ingest_stats }
  }
  /** A document uploaded, not yet transformed. */
  const uploaded = (title: string, rows: string) =>
    created(api.post('/document/', { docfile: Buffer.from(`campaign,geocode,n\n${rows}`).toString('base64'), doc_title: title, file_type: 'campaign' }))
  /** The id of the campaign_datapoint row (the final value) at `location`'s key, which data entry edits. */
  const finalRow = async (location: number) =>
    (
      await db
        .selectFrom('datapoint_with_computed')
        .select('id')
        .where('location_id', '=', location)
        .where('indicator_id', '=', w.n)
        .where('campaign_id', '=', K)
        .executeTakeFirstOrThrow()
    ).id
  const key = (location: number) => `${location}_${w.n}_${K}`
  const value = async (location: number) =>
    (await db.selectFrom('datapoint').select('value').where('unique_index', '=', key(location)).executeTakeFirst())?.value
  const rowVersion = async () =>
    (await sql<{ k: string; v: string }>`select unique_index as k, xmin::text || ':' || ctid::text as v from datapoint order by 1`.execute(db)).rows
  const historyCount = async () => Number((await sql<{ n: number }>`select count(*)::int as n from datapoint_history`.execute(db)).rows[0].n)
  return { app, db, api, w, K, maps, send, uploaded, finalRow, key, value, rowVersion, historyCount }
}
