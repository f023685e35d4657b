// The read cache (lib/api/read-cache.ts, plugins/http-cache.ts): list and datapoint reads answered from
// memory until a table they read changes, whoever changes it; ETags, 304 and compressed answers.
import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import t from 'tap'
import { sql, type Kysely } from 'kysely'
import type { DB } from '../schemas/index.js'
import { admin, alice, build, eventually } from './helper.js'
import { client, type Response } from './api.js'
import { upload, world } from './world.js'
import { cacheLookups } from '../lib/core/metrics.js'

type Api = ReturnType<typeof client>

async function readLookups(): Promise<{ hit: number; miss: number }> {
  const { values } = await cacheLookups.get()
  const count = (result: string) => values.find((v) => v.labels.cache === 'read' && v.labels.result === result)?.value ?? 0
  return { hit: count('hit'), miss: count('miss') }
}

/** GETs `path` and says whether the read cache answered it. */
async function read(api: Api, path: string, headers?: Record<string, string>): Promise<Response & { hit: boolean }> {
  const before = await readLookups()
  const res = await api.get(path, headers)
  const after = await readLookups()
  return { ...res, hit: after.hit > before.hit }
}

/** Reads `path` until it comes from memory (a change notified by an earlier write may still arrive and drop it). */
const cached = (api: Api, path: string, headers?: Record<string, string>) =>
  eventually(
    () => read(api, path, headers),
    (res) => res.hit,
  )

/** Changes rows of `table` with its notification off: only a read computed afresh can see it. */
async function unheard(db: Kysely<DB>, table: string, change: () => Promise<unknown>) {
  await sql`alter table ${sql.table(table)} disable trigger ${sql.id(`${table}_data_changed`)}`.execute(db)
  try {
    await change()
  } finally {
    await sql`alter table ${sql.table(table)} enable trigger ${sql.id(`${table}_data_changed`)}`.execute(db)
  }
}

const valueAt = (res: Response, location: number) => res.body.objects.find((o: { location_id: number }) => o.location_id === location)?.value

t.test('a list read is answered from memory with the same bytes and ETag, 304 when the client holds it', async (t) => {
  const { app, db } = await build(t)
  const api = client(app)
  const w = await world(api)
  const path = `/campaign_datapoint/?indicator__in=${w.n}&campaign__in=${w.C}&location_id__in=${w.a1},${w.b1}`
  const first = await api.get(path)
  const hit = await cached(api, path)
  t.ok(hit.hit, 'the second read came from memory')
  t.equal(hit.text, first.text, 'identical bytes')
  t.equal(hit.headers.etag, first.headers.etag, 'and ETag')
  t.match(hit.headers.etag, /^"[\w-]{27}"$/, 'a strong ETag: the hash of the bytes')
  t.equal(hit.headers['cache-control'], 'private, no-cache')
  t.equal(hit.headers.vary, 'Authorization, Cookie, Accept, Accept-Encoding')

  const forced = await read(api, path, { ...admin, 'cache-control': 'no-cache' })
  t.notOk(forced.hit, 'a request with Cache-Control: no-cache is computed afresh')
  t.equal(forced.text, first.text)

  // Parameters in another order are the same request.
  const reordered = await read(api, `/campaign_datapoint/?location_id__in=${w.a1},${w.b1}&campaign__in=${w.C}&indicator__in=${w.n}`)
  t.ok(reordered.hit, 'parameters in another order share the entry')

  const notModified = await api.get(path, { ...admin, 'if-none-match': hit.headers.etag as string })
  t.equal(notModified.status, 304)
  t.equal(notModified.text, '', 'no body')
  t.equal(notModified.headers.etag, hit.headers.etag)

  // A change the server did not hear of, to the final values the read reads, is not seen: the answer is
  // the kept one. (A data entry elsewhere recomputes only the totals above it, and leaves this row.)
  await unheard(db, 'datapoint_with_computed', () =>
    db.updateTable('datapoint_with_computed').set({ value: 99 }).where('location_id', '=', w.a1).where('indicator_id', '=', w.n).execute(),
  )
  t.equal(valueAt(await api.get(path), w.a1), valueAt(first, w.a1), 'served from memory')

  // A data entry through the API: the next read is computed afresh, with a new ETag; the old one is 200.
  const entry = first.body.objects.find((o: { location_id: number }) => o.location_id === w.b1)
  t.equal((await api.patch(`/campaign_datapoint/${entry.id}/`, { value: 42 })).status, 200)
  const after = await api.get(path, { ...admin, 'if-none-match': hit.headers.etag as string })
  t.equal(after.status, 200, 'the old ETag no longer matches')
  t.equal(valueAt(after, w.b1), 42)
  t.equal(valueAt(after, w.a1), 99, 'the unheard change is there too: computed afresh')
  t.not(after.headers.etag, hit.headers.etag)
})

t.test('answers above 1 KB leave compressed by Accept-Encoding, each encoding with its own ETag', async (t) => {
  const { app } = await build(t)
  const api = client(app)
  await world(api)
  const path = '/location/?limit=100'
  for (let i = 0; i < 30; i++) await api.post('/location_type/', { name: `type ${i} ${'x'.repeat(40)}`, admin_level: 3 + i })
  const listPath = '/location_type/?limit=100'
  const plain = await api.get(listPath)
  t.ok(plain.text.length > 1024, `${plain.text.length} bytes`)
  t.notOk(plain.headers['content-encoding'], 'identity without Accept-Encoding')
  const br = await app.inject({ method: 'GET', url: `/api/v1${listPath}`, headers: { ...admin, 'accept-encoding': 'gzip, br' } })
  t.equal(br.headers['content-encoding'], 'br', 'br preferred')
  t.equal(brotliDecompressSync(br.rawPayload).toString(), plain.text, 'the same bytes, compressed')
  t.ok(br.rawPayload.length < plain.text.length / 3, `${br.rawPayload.length} bytes on the wire`)
  const gz = await app.inject({ method: 'GET', url: `/api/v1${listPath}`, headers: { ...admin, 'accept-encoding': 'gzip' } })
  t.equal(gz.headers['content-encoding'], 'gzip')
  t.equal(gunzipSync(gz.rawPayload).toString(), plain.text)
  const tags = new Set([plain.headers.etag, br.headers.etag, gz.headers.etag])
  t.equal(tags.size, 3, 'three ETags for three encodings')
  const held = await app.inject({
    method: 'GET',
    url: `/api/v1${listPath}`,
    headers: { ...admin, 'accept-encoding': 'br', 'if-none-match': br.headers.etag as string },
  })
  t.equal(held.statusCode, 304)
  const other = await app.inject({ method: 'GET', url: `/api/v1${listPath}`, headers: { ...admin, 'if-none-match': br.headers.etag as string } })
  t.equal(other.statusCode, 200, "a br ETag does not validate the identity's bytes")
  const small = await app.inject({ method: 'GET', url: `/api/v1${path.replace('100', '1')}`, headers: { ...admin, 'accept-encoding': 'br' } })
  t.notOk(small.headers['content-encoding'], 'a short answer is not compressed')
  t.ok(small.headers.etag, 'but has its ETag')

  // A detail (not in the read cache) and a long CSV export (streamed) get the same treatment.
  const detail = await api.get('/location_type/1/')
  t.ok(detail.headers.etag)
  t.equal((await api.get('/location_type/1/', { ...admin, 'if-none-match': detail.headers.etag as string })).status, 304)
  const csv = await app.inject({ method: 'GET', url: '/api/v1/location_type/?format=csv', headers: { ...admin, 'accept-encoding': 'gzip' } })
  t.equal(csv.headers['content-encoding'], 'gzip')
  t.match(gunzipSync(csv.rawPayload).toString(), /^id,name,admin_level/)

  // Public answers may be kept by proxies, revalidated.
  const index = await app.inject({ method: 'GET', url: '/' })
  t.equal(index.headers['cache-control'], 'public, no-cache')
  t.ok(index.headers.etag)
  const docs = await app.inject({ method: 'GET', url: '/documentation/json', headers: { 'accept-encoding': 'br' } })
  t.equal(docs.headers['content-encoding'], 'br')
  t.equal(
    (await app.inject({ method: 'GET', url: '/documentation/json', headers: { 'accept-encoding': 'br', 'if-none-match': docs.headers.etag as string } }))
      .statusCode,
    304,
  )
})

t.test('every kind of change drops what read it, and only that', async (t) => {
  const { app, db } = await build(t)
  const api = client(app)
  const w = await world(api)
  const points = `/campaign_datapoint/?indicator__in=${w.n}&campaign__in=${w.C}&location_id__in=${w.a1},${w.b1},${w.A}`
  const indicators = '/indicator/'

  await t.test('an upload', async (t) => {
    await cached(api, '/document/')
    await upload(api, 'again.csv', 'campaign', 'campaign,geocode,n\nC,a1,11\n').then((u) => api.get(`/document/${u.id}/`))
    t.notOk((await read(api, '/document/')).hit, 'the document list is read afresh')
  })

  await t.test('a transform', async (t) => {
    await cached(api, points)
    const doc = await api.post('/document/', {
      docfile: Buffer.from('campaign,geocode,n\nC,a1,12\n').toString('base64'),
      doc_title: 'b.csv',
      file_type: 'campaign',
    })
    await cached(api, points)
    t.equal((await api.get(`/transform_upload/?document_id=${doc.body.id}`)).status, 200)
    t.equal(valueAt(await api.get(points), w.a1), 12)
  })

  await t.test('a transform run as a job: done means every cache heard it', async (t) => {
    const doc = await api.post('/document/', {
      docfile: Buffer.from('campaign,geocode,n\nC,a1,13\n').toString('base64'),
      doc_title: 'c.csv',
      file_type: 'campaign',
    })
    await cached(api, points)
    const job = await api.get(`/transform_upload/?document_id=${doc.body.id}`, { ...admin, prefer: 'respond-async' })
    t.equal(job.status, 202)
    await eventually(
      () => api.get(`/job/${job.body.id}/`),
      (res) => res.body.state === 'completed',
      20_000,
    )
    t.equal(valueAt(await api.get(points), w.a1), 13, 'the first read after completion has the job’s value')
  })

  await t.test('a PATCH of metadata, and a change made with psql', async (t) => {
    await cached(api, indicators)
    t.equal((await api.patch(`/indicator/${w.n}/`, { name: 'renamed' })).status, 200)
    t.ok((await api.get(indicators)).body.objects.some((i: { name: string }) => i.name === 'renamed'))
    await cached(api, indicators)
    await db.updateTable('indicator').set({ name: 'by psql' }).where('id', '=', w.n).execute()
    const seen = await eventually(
      () => read(api, indicators),
      (res) => res.body.objects.some((i: { name: string }) => i.name === 'by psql'),
    )
    t.ok(
      seen.body.objects.some((i: { name: string }) => i.name === 'by psql'),
      'seen once notified',
    )
  })

  await t.test('a DELETE', async (t) => {
    const type = await api.post('/location_type/', { name: 'short-lived', admin_level: 9 })
    const types = (await cached(api, '/location_type/')).body.objects
    t.equal((await api.delete(`/location_type/${type.body.id}/`)).status, 204)
    t.equal((await api.get('/location_type/')).body.objects.length, types.length - 1)
  })

  await t.test('an agg_refresh', async (t) => {
    const before = valueAt(await cached(api, points), w.A)
    await unheard(db, 'datapoint', () =>
      db.updateTable('datapoint').set({ value: 1000 }).where('location_id', '=', w.a1).where('indicator_id', '=', w.n).execute(),
    )
    t.equal(valueAt(await api.get(points), w.A), before, 'the kept aggregate')
    t.equal((await api.get(`/agg_refresh/?campaign_id=${w.C}`)).status, 200)
    t.equal(valueAt(await api.get(points), w.A), 1000, 'recomputed and read afresh')
  })

  await t.test('a change to another table keeps the entry', async (t) => {
    await cached(api, indicators)
    await cached(api, points)
    // Made by someone else (heard through NOTIFY, not by this process dropping its own caches).
    await db.insertInto('campaign_type').values({ name: 'unrelated' }).execute()
    await db.updateTable('api_key').set({ last_used_at: sql`now()` }).execute()
    await new Promise((resolve) => setTimeout(resolve, 200))
    t.ok((await read(api, indicators)).hit, 'the indicator list read no campaign_type nor api_key')
    t.ok((await read(api, points)).hit, 'nor did the datapoint read')
    // What the datapoint read reads: the computed rows (a raw value changes nothing it shows until recomputed).
    await db.updateTable('datapoint_with_computed').set({ value: 5 }).where('location_id', '=', w.b1).where('indicator_id', '=', w.n).execute()
    const dropped = await eventually(
      () => read(api, points),
      (res) => !res.hit,
    )
    t.notOk(dropped.hit, 'a datapoint change drops the datapoint read')
    t.equal(valueAt(dropped, w.b1), 5)
    t.ok((await read(api, indicators)).hit, 'and keeps the indicator list')
  })
})

t.test('users who see different rows never share an answer, and a moved responsibility meets no old one', async (t) => {
  const { app, aliceId } = await build(t)
  const api = client(app)
  const w = await world(api)
  const asAlice = client(app, alice)
  const responsibility = await api.post('/location_responsibility/', { user_id: aliceId, top_lvl_location_id: w.A })
  t.equal(responsibility.status, 201)
  const path = `/campaign_datapoint/?indicator__in=${w.n}&campaign__in=${w.C}&location_id__in=${w.a1},${w.b1}`
  const all = await cached(api, path)
  t.same(all.body.objects.map((o: { location_id: number }) => o.location_id).sort(), [w.a1, w.b1].sort())
  const hers = await read(asAlice, path)
  t.notOk(hers.hit, "not the superuser's entry")
  t.same(
    hers.body.objects.map((o: { location_id: number }) => o.location_id),
    [w.a1],
    'only her subtree',
  )
  await cached(asAlice, path)
  const locations = (await cached(asAlice, '/location/')).body.objects.map((l: { id: number }) => l.id)
  t.notOk(locations.includes(w.b1))

  // Her responsibility moves to the other province: her next reads are of the new scope.
  t.equal((await api.patch(`/location_responsibility/${responsibility.body.id}/`, { top_lvl_location_id: w.B })).status, 200)
  const moved = await asAlice.get(path)
  t.same(
    moved.body.objects.map((o: { location_id: number }) => o.location_id),
    [w.b1],
    'the new subtree at once',
  )
  const now = (await asAlice.get('/location/')).body.objects.map((l: { id: number }) => l.id)
  t.ok(now.includes(w.b1) && !now.includes(w.a1))
})

t.test('a job request and an action that writes are never answered from memory', async (t) => {
  const { app } = await build(t)
  const api = client(app)
  const w = await world(api)
  const first = await api.get(`/agg_refresh/?campaign_id=${w.C}`)
  const second = await read(api, `/agg_refresh/?campaign_id=${w.C}`)
  t.equal(first.status, 200)
  t.notOk(second.hit, 'an action runs each time')
  // Each job request reaches the queue. A recompute asked for while one still waits is that one (its
  // dedupe rule), so the second is asked once the first has left the queue's waiting state.
  const ask = async () => (await api.get(`/agg_refresh/?campaign_id=${w.C}`, { ...admin, prefer: 'respond-async' })).body.id as number
  const firstJob = await ask()
  await eventually(
    () => api.get(`/job/${firstJob}/`),
    (r) => !['created', 'retry'].includes(r.body?.state),
    30_000,
  )
  const secondJob = await ask()
  t.not(secondJob, firstJob, 'two job requests, two jobs')
  // A job's write drops the cache, so both are let finish before the read that must stay cached.
  for (const job of [firstJob, secondJob]) {
    await eventually(
      () => api.get(`/job/${job}/`),
      (r) => ['completed', 'failed', 'cancelled'].includes(r.body?.state),
      30_000,
    )
  }
  const meta = await api.get('/all_meta/')
  t.equal((await read(api, '/all_meta/')).hit, true, 'all_meta only reads: kept')
  t.equal(meta.status, 200)
})

t.test('READ_CACHE_BYTES=0 turns it off; ETags and 304 remain', async (t) => {
  const { app } = await build(t, { READ_CACHE_BYTES: 0 })
  const api = client(app)
  await api.get('/indicator/')
  const again = await read(api, '/indicator/')
  t.notOk(again.hit)
  t.equal((await api.get('/indicator/', { ...admin, 'if-none-match': again.headers.etag as string })).status, 304)
})

t.test('bounded by READ_CACHE_BYTES, least recently used out first; hits, misses, evictions and bytes in /metrics', async (t) => {
  const { app } = await build(t, { READ_CACHE_BYTES: 2500 })
  const api = client(app)
  await world(api)
  const paths = ['/indicator/', '/campaign/', '/location/', '/location_type/', '/campaign_type/', '/indicator/?limit=2', '/location/?limit=2']
  const sizes: number[] = []
  for (const path of paths) sizes.push((await api.get(path)).text.length)
  t.ok(sizes.reduce((a, b) => a + b) > 2500, `${sizes.reduce((a, b) => a + b)} bytes read, more than the bound`)
  const metrics = (await app.inject({ method: 'GET', url: '/metrics' })).body
  const value = (pattern: RegExp) => Number(pattern.exec(metrics)?.[1] ?? Number.NaN)
  t.ok(value(/^rhizome_cache_evictions_total\{cache="read"\} (\d+)/m) > 0, 'evictions counted')
  const bytes = value(/^rhizome_cache_bytes\{cache="read"\} (\d+)/m)
  t.ok(bytes > 0 && bytes <= 2500, `${bytes} bytes held, within the bound`)
  t.ok(value(/^rhizome_cache_lookups_total\{cache="read",result="miss"\} (\d+)/m) >= paths.length)
  // The most recently used stays: read the last path again.
  t.ok((await read(api, paths[paths.length - 1])).hit, 'the latest entry is kept')
  t.notOk((await read(api, paths[0])).hit, 'the oldest went first')
})

t.test('a write, or a job, whose change cannot be confirmed as heard still answers as committed', async (t) => {
  const { app, database } = await build(t)
  const api = client(app)
  const w = await world(api)
  // The confirmation's connection failing after the commit (the database going away in that instant).
  const confirmHeard = database.confirmHeard
  database.confirmHeard = async () => {
    throw new Error('connection terminated')
  }
  t.teardown(() => {
    database.confirmHeard = confirmHeard
  })
  const created = await api.post('/campaign_type/', { name: 'committed' })
  t.equal(created.status, 201, 'the write is answered as what it is: done')
  t.equal((await api.get(`/campaign_type/${created.body.id}/`)).body.name, 'committed')
  const job = await api.get(`/agg_refresh/?campaign_id=${w.C}`, { ...admin, prefer: 'respond-async' })
  const done = await eventually(
    () => api.get(`/job/${job.body.id}/`),
    (res) => res.body.state === 'completed' || res.body.state === 'failed',
    20_000,
  )
  t.equal(done.body.state, 'completed', 'the job is not failed (nor run again) for it')
})
