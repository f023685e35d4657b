// `npm run bench:soak`: mixed load for BENCH_SECONDS (default 60) against one server on PostgreSQL:
// reads, writes, uploads with their transform, and /detect, from 50 concurrent clients (the
// connection count of the other benchmarks; no search for the saturation point). It reports status counts,
// latency, the server's RSS before and after, and checks afterwards that every 201 is in the database.
import { readFileSync } from 'node:fs'
import pg from 'pg'
import { ADMIN_URL, doing, scratchDatabase, scratchDir, startServer, stop } from './lib.js'
import { prng } from '../lib/core/prng.js'

const KEY = 'e'.repeat(40)
const PORT = 4010
const seconds = Number(process.env.BENCH_SECONDS ?? 60)
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50)
const base = `http://127.0.0.1:${PORT}`
const headers = { authorization: `ApiKey admin:${KEY}`, 'content-type': 'application/json' }

const rssKiB = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0)

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
  const text = await res.text()
  let json: Record<string, unknown> = {}
  try {
    json = JSON.parse(text)
  } catch {
    // CSV or empty
  }
  return { status: res.status, json }
}

async function seed() {
  const id = async (path: string, body: unknown) => {
    const r = await call('POST', path, body)
    if (r.status !== 201) throw new Error(`${path}: ${r.status} ${JSON.stringify(r.json)}`)
    return r.json.id as number
  }
  const country = await id('/api/v1/location_type/', { name: 'Country', admin_level: 0 })
  const district = await id('/api/v1/location_type/', { name: 'District', admin_level: 1 })
  const root = await id('/api/v1/location/', { name: 'Root', location_code: 'ROOT', location_type_id: country })
  const locations: number[] = []
  for (let i = 0; i < 20; i++)
    locations.push(await id('/api/v1/location/', { name: `D${i}`, location_code: `D${i}`, location_type_id: district, parent_location_id: root }))
  const type = await id('/api/v1/campaign_type/', { name: 'NID' })
  const campaign = await id('/api/v1/campaign/', { name: 'March', campaign_type_id: type, start_date: '2016-03-01', end_date: '2016-03-31' })
  const indicators: number[] = []
  for (let i = 0; i < 5; i++) indicators.push(await id('/api/v1/indicator/', { name: `Indicator ${i}`, short_name: `i${i}`, data_format: 'int' }))
  for (const [content_type, code, master] of [
    ['campaign', 'March', campaign],
    ...locations.map((l, i) => ['location', `D${i}`, l]),
    ...indicators.map((n, i) => ['indicator', `i${i}`, n]),
  ] as const) {
    await id('/api/v1/source_object_map/', { content_type, source_object_code: code, master_object_id: master })
  }
  return { root, locations, campaign, indicators }
}

type World = Awaited<ReturnType<typeof seed>>
interface Outcome {
  kind: string
  status: number
  ms: number
}

const TEXTS = ['have a great day', 'you are an idiot', 'the vaccination round starts monday', 'shut up, loser', 'thanks for the update 🙏']

/** One operation, chosen by weight: 60 % reads, 20 % writes, 5 % uploads, 15 % /detect. */
async function operation(world: World, random: () => number, created: { campaignTypes: number[]; documents: number[] }, n: number): Promise<Outcome> {
  const pick = random()
  const started = performance.now()
  const done = (kind: string, status: number) => ({ kind, status, ms: performance.now() - started })
  if (pick < 0.2) return done('read: campaign detail', (await call('GET', `/api/v1/campaign/${world.campaign}/`)).status)
  if (pick < 0.4) return done('read: indicator list', (await call('GET', `/api/v1/indicator/?id__in=${world.indicators.join(',')}`)).status)
  if (pick < 0.6)
    return done(
      'read: campaign_datapoint',
      (
        await call(
          'GET',
          `/api/v1/campaign_datapoint/?indicator__in=${world.indicators.join(',')}&campaign__in=${world.campaign}&location_id=${world.root}&location_depth=1`,
        )
      ).status,
    )
  if (pick < 0.7) {
    const r = await call('POST', '/api/v1/campaign_type/', { name: `soak ${process.pid} ${n}` })
    if (r.status === 201) created.campaignTypes.push(r.json.id as number)
    return done('write: POST campaign_type', r.status)
  }
  if (pick < 0.8) {
    const location = world.locations[Math.floor(random() * world.locations.length)]
    const indicator = world.indicators[Math.floor(random() * world.indicators.length)]
    const r = await call('POST', '/api/v1/campaign_datapoint/', { indicator_id: indicator, location_id: location, campaign_id: world.campaign, value: n })
    // Data entry on an existing key answers 409 with the row to PATCH: the client then updates it.
    if (r.status === 409) {
      const existing = await call('GET', `/api/v1/campaign_datapoint/?indicator__in=${indicator}&campaign__in=${world.campaign}&location_id__in=${location}`)
      const row = (existing.json.objects as Array<{ id: number }> | undefined)?.[0]
      const patched = row ? (await call('PATCH', `/api/v1/campaign_datapoint/${row.id}/`, { value: n })).status : 0
      return done('write: PATCH campaign_datapoint', patched)
    }
    return done('write: POST campaign_datapoint', r.status)
  }
  if (pick < 0.85) {
    const rows = world.locations.map((_, i) => `March,D${i},${world.indicators.map(() => Math.floor(random() * 1000)).join(',')}`)
    const csv = [`campaign,geocode,${world.indicators.map((_, i) => `i${i}`).join(',')}`, ...rows].join('\n')
    const upload = await call('POST', '/api/v1/document/', { doc_title: `soak-${n}.csv`, file_type: 'campaign', docfile: Buffer.from(csv).toString('base64') })
    if (upload.status !== 201) return done('upload: POST document', upload.status)
    created.documents.push(upload.json.id as number)
    const transform = await call('GET', `/api/v1/transform_upload/?document_id=${upload.json.id}`)
    return done('upload: POST document + transform_upload', transform.status)
  }
  const res = await fetch(`${base}/detect`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ text: TEXTS[n % TEXTS.length] }),
  })
  await res.arrayBuffer()
  return done('detect', res.status)
}

const scratch = await scratchDatabase(ADMIN_URL, 'rhizome_soak')
const server = await startServer(
  ['dist/server.js'],
  { DATABASE_URL: scratch.url, DATA_DIR: scratchDir('rhizome-soak-'), ADMIN_API_KEY: KEY, DEMO_DATA: '0' },
  PORT,
)
try {
  doing('seeding')
  const world = await seed()
  const created = { campaignTypes: [] as number[], documents: [] as number[] }
  const outcomes: Outcome[] = []
  // Warm-up, then the RSS baseline.
  doing(`${connections} clients: 5 s of warm-up, then ${seconds} s of mixed load`)
  const warmUntil = Date.now() + 5_000
  await Promise.all(
    Array.from({ length: connections }, async (_, c) => {
      const random = prng(1000 + c)
      for (let n = 0; Date.now() < warmUntil; n++) await operation(world, random, created, -(c * 1_000_000 + n) - 1)
    }),
  )
  const rssBefore = rssKiB(server.pid!)
  const started = Date.now()
  const until = started + seconds * 1000
  await Promise.all(
    Array.from({ length: connections }, async (_, c) => {
      const random = prng(c + 1)
      for (let n = 0; Date.now() < until; n++) outcomes.push(await operation(world, random, created, c * 1_000_000 + n))
    }),
  )
  const elapsed = (Date.now() - started) / 1000
  const rssAfter = rssKiB(server.pid!)

  // Every 201 is in the database.
  doing('looking up every write in the database')
  const client = new pg.Client({ connectionString: scratch.url })
  await client.connect()
  const types = (await client.query('select count(*)::int as n from campaign_type where id = any($1)', [created.campaignTypes])).rows[0].n
  const docs = (await client.query('select count(*)::int as n from source_doc where id = any($1) and ingest_stats is not null', [created.documents])).rows[0].n
  await client.end()

  const byKind = new Map<string, Outcome[]>()
  for (const o of outcomes) byKind.set(o.kind, [...(byKind.get(o.kind) ?? []), o])
  const percentile = (values: number[], p: number) => values.sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((p / 100) * values.length))]
  console.log(`| operation | count | statuses | p50 ms | p99 ms |\n|---|---|---|---|---|`)
  for (const [kind, list] of [...byKind].sort()) {
    const statuses = Object.entries(list.reduce<Record<number, number>>((acc, o) => Object.assign(acc, { [o.status]: (acc[o.status] ?? 0) + 1 }), {}))
      .map(([s, n]) => `${s}×${n}`)
      .join(' ')
    const ms = list.map((o) => o.ms)
    console.log(`| ${kind} | ${list.length} | ${statuses} | ${percentile(ms, 50).toFixed(1)} | ${percentile(ms, 99).toFixed(1)} |`)
  }
  const fiveXX = outcomes.filter((o) => o.status >= 500).length
  console.log(`\n${outcomes.length} operations in ${elapsed.toFixed(1)} s (${(outcomes.length / elapsed).toFixed(0)}/s), ${connections} clients`)
  console.log(`5xx responses: ${fiveXX}`)
  console.log(`created campaign types: ${created.campaignTypes.length}, found in the database: ${types} (lost: ${created.campaignTypes.length - types})`)
  console.log(`uploaded documents: ${created.documents.length}, transformed and recorded: ${docs}`)
  console.log(
    `server RSS: ${(rssBefore / 1024).toFixed(0)} MiB after warm-up, ${(rssAfter / 1024).toFixed(0)} MiB at the end (${(((rssAfter - rssBefore) / rssBefore) * 100).toFixed(1)} %)`,
  )
  if (fiveXX || types !== created.campaignTypes.length) process.exitCode = 1
} finally {
  await stop(server)
  await scratch.close()
}
