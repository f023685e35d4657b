// A failure half-way through transform_upload leaves the database exactly as it was (ingestion §5.6).
import t from 'tap'
import { sql, type Kysely } from 'kysely'
import { build } from './helper.js'
import { client } from './api.js'
import { smallWorld } from './fixtures.js'
import type { DB } from '../schemas/index.js'

async function counts(db: Kysely<DB>) {
  const tables = ['source_submission', 'source_object_map', 'doc_object_map', 'doc_datapoint', 'datapoint', 'agg_datapoint', 'datapoint_with_computed']
  const result: Record<string, number> = {}
  for (const table of tables) {
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from ${sql.table(table)}`.execute(db)
    result[table] = rows[0].n
  }
  return result
}

t.test('a fault after half the rows rolls the whole transform back', async (t) => {
  const { app, db } = await build(t)
  const api = client(app)
  const { location, campaign, indicator } = await smallWorld(api.post)
  for (const [content_type, code, id] of [['location', 'G0', location], ['campaign', 'C', campaign], ['indicator', 'n', indicator]] as const) {
    await api.post('/source_object_map/', { content_type, source_object_code: code, master_object_id: id })
  }
  // 3,000 rows: the submissions go in three batches, so half of them are written before the fault.
  const rows = Array.from({ length: 3000 }, (_, i) => `C,G${i},${i}`)
  const csv = Buffer.from(['campaign,geocode,n', ...rows].join('\n'))
  const doc = (await api.post('/document/', { docfile: csv.toString('base64'), doc_title: 'big.csv', file_type: 'campaign' })).body.id
  const before = await counts(db)
  await sql.raw(`create function fail_half_way() returns trigger language plpgsql as $$
    begin if new.row_number = 1500 then raise exception 'injected fault after half the rows'; end if; return new; end $$`).execute(db)
  await sql.raw('create trigger fail_half_way before insert on source_submission for each row execute function fail_half_way()').execute(db)
  t.teardown(async () => {
    await sql.raw('drop trigger if exists fail_half_way on source_submission').execute(db)
    await sql.raw('drop function if exists fail_half_way()').execute(db)
  })
  const failed = await api.get(`/transform_upload/?document_id=${doc}`)
  t.equal(failed.status, 500)
  t.same(failed.body, { statusCode: 500, error: 'Internal Server Error', code: 'INTERNAL_ERROR', message: 'An internal error occurred' })
  t.notOk(failed.text.includes('injected'), 'no internals leak')
  t.same(await counts(db), before, 'nothing was written')
  t.equal((await api.get(`/document/${doc}/`)).body.ingest_stats, null)
  await sql.raw('drop trigger fail_half_way on source_submission').execute(db)
  const ok = await api.get(`/transform_upload/?document_id=${doc}`)
  t.equal(ok.status, 200, 'the server keeps answering, and the same document then goes through')
  t.match(ok.body.objects[0].ingest_stats, { submissions: { created: 3000 }, rows: { processed: 1, missing_location: 2999 } })
})
