// A transform holds a bounded slice of a document at a time: while a file of many distinct row keys is
// transformed and refreshed, the live heap of the server's main thread (what V8's full GCs leave, from
// its --trace-gc lines) grows by far less than the document's rows would take as objects (~1 KB a row). A real server process
// (`node cli/start.mjs`), as an operator runs it. A heap flag cannot show it: V8's --max-old-space-size
// binds the parsing thread too, whose grouping of the rows by key is as large as the file.
import { createWriteStream } from 'node:fs'
import { openAsBlob } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { tempDir } from './helper.js'
import { api, postgresDatabase, startServer, until200, type Server } from './processes.js'

const ROWS = Number(process.env.TRANSFORM_MEMORY_ROWS ?? 150_000)
/** What the live heap may grow by while a step runs: the document's rows as objects take ~1 KB each. */
const GROWTH_BOUND_MB = 64

/** ROWS lines, each its own row key (`unique_key`), over 20 geocodes and 2 campaigns. */
async function distinctKeysCsv(path: string) {
  const out = createWriteStream(path)
  out.write('unique_key,geocode,campaign,missed,vaccinated\n')
  for (let i = 0; i < ROWS; i++) {
    const line = `K${i},TM-${i % 20},TMC-${i % 2},${i % 997},${(i * 7) % 1000}\n`
    if (!out.write(line)) await new Promise<void>((resolve) => out.once('drain', () => resolve()))
  }
  await new Promise<void>((resolve) => out.end(() => resolve()))
}

async function json(response: Response) {
  const text = await response.text()
  try {
    return JSON.parse(text)
  } catch {
    return { status: response.status, text }
  }
}

/** A GC of V8's --trace-gc: the isolate and the heap in use after it, in MB. */
const GC_LINE = /\[\d+:(0x[0-9a-f]+)\]\s+\d+ ms: (Scavenge|Mark-Compact|Mark-sweep)[^\d]*[\d.]+ \([\d.]+\) -> ([\d.]+) /g

/** The server's GCs so far: the main thread's (the isolate that collected first, before any worker thread). */
function mainThreadGcs(server: Server) {
  const gcs = [...server.output().matchAll(GC_LINE)].map((m) => ({ isolate: m[1], full: m[2] !== 'Scavenge', liveMb: Number(m[3]) }))
  return gcs.filter((gc) => gc.isolate === gcs[0]?.isolate)
}

/**
 * Runs `path` as a job and waits for its end (or the server's): the job's last state, and how far the
 * main thread's live heap grew meanwhile: the most a full GC during the job left, less what the last GC
 * before it left (garbage not yet collected is not counted).
 */
async function job(server: Server, path: string) {
  const before = mainThreadGcs(server)
  const baseline = before.at(-1)?.liveMb ?? 0
  const body = await jobRun(server, path)
  const during = mainThreadGcs(server)
    .slice(before.length)
    .filter((gc) => gc.full)
  return { ...body, growthMb: Math.max(0, ...during.map((gc) => gc.liveMb - baseline)), fullGcs: during.length }
}

async function jobRun(server: Server, path: string) {
  const started = await api(server, path, { headers: { prefer: 'respond-async' } })
  if (started.status !== 202) return { state: `not started: ${started.status} ${await started.text()}` }
  const location = new URL(started.headers.get('location')!, server.url)
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 250))
    const answer = await fetch(location, { headers: server.admin() }).catch(() => undefined)
    if (!answer) {
      await new Promise((resolve) => setTimeout(resolve, 1000))
      return { state: `no answer (exit code ${server.child.exitCode}): ${server.output().slice(-2000)}` }
    }
    const body = await json(answer)
    if (['completed', 'failed', 'cancelled'].includes(body.state)) return body
  }
}

t.test(`${ROWS} distinct row keys transformed and refreshed: the heap grows by less than ${GROWTH_BOUND_MB} MB`, async (t) => {
  const dataDir = tempDir(t)
  const databaseUrl = await postgresDatabase(t)
  const env = { DATA_DIR: dataDir, ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) }
  const server = await startServer(t, env, ['--trace-gc'])
  await until200(server, '/health/ready')

  // The catalog the codes map to.
  const created = async (path: string, body: object) => {
    const answer = await json(await api(server, path, { method: 'POST', body: JSON.stringify(body) }))
    if (!Number.isInteger(answer.id)) throw new Error(`POST ${path}: ${JSON.stringify(answer)}`)
    return answer.id as number
  }
  const type = await created('/location_type/', { name: 'TM district', admin_level: 9 })
  const locations = await Promise.all(
    Array.from({ length: 20 }, (_, i) => created('/location/', { name: `TM district ${i}`, location_code: `TM-L${i}`, location_type_id: type })),
  )
  const campaignType = await created('/campaign_type/', { name: 'TM round' })
  const campaigns = await Promise.all(
    [0, 1].map((i) =>
      created('/campaign/', { name: `TM ${i}`, campaign_type_id: campaignType, start_date: `2016-0${i + 1}-01`, end_date: `2016-0${i + 1}-10` }),
    ),
  )
  const indicators = await Promise.all(
    ['missed', 'vaccinated'].map((name) => created('/indicator/', { name: `TM ${name}`, short_name: name, data_format: 'int' })),
  )
  t.ok([type, ...locations, campaignType, ...campaigns, ...indicators].every(Number.isInteger), 'the catalog is created')

  const file = join(dataDir, 'distinct.csv')
  await distinctKeysCsv(file)
  const form = new FormData()
  form.set('file_type', 'campaign')
  form.set('docfile', await openAsBlob(file), 'distinct.csv')
  const upload = await fetch(`${server.url}/api/v1/document/`, { method: 'POST', headers: server.admin(), body: form })
  t.equal(upload.status, 201, 'saved')
  const documentId = (await json(upload)).id as number

  // First transform: nothing mapped yet, every row waits.
  const first = await job(server, `/transform_upload/?document_id=${documentId}`)
  t.equal(first.state, 'completed', JSON.stringify(first).slice(0, 400))
  t.match(first.result?.ingest_stats?.submissions, { file_rows: ROWS, created: ROWS })
  t.ok(first.growthMb < GROWTH_BOUND_MB, `the first transform: the live heap grew by ${first.growthMb.toFixed(1)} MB (${first.fullGcs} full GCs)`)

  // Map every code, then refresh: each stored submission is read, staged and written again.
  const maps = (await json(await api(server, `/source_object_map/?document_id=${documentId}&limit=0`))).objects as Array<{
    id: number
    content_type: string
    source_object_code: string
  }>
  const target = (m: (typeof maps)[number]) =>
    m.content_type === 'location'
      ? locations[Number(m.source_object_code.slice(3))]
      : m.content_type === 'campaign'
        ? campaigns[Number(m.source_object_code.slice(4))]
        : indicators[['missed', 'vaccinated'].indexOf(m.source_object_code)]
  for (const m of maps) {
    const patched = await api(server, `/source_object_map/${m.id}/`, { method: 'PATCH', body: JSON.stringify({ master_object_id: target(m) }) })
    t.equal(patched.status, 200, `${m.content_type} ${m.source_object_code} mapped`)
  }
  const refreshed = await job(server, `/refresh_master/?document_id=${documentId}`)
  t.equal(refreshed.state, 'completed', JSON.stringify(refreshed).slice(0, 400))
  t.match(refreshed.result?.ingest_stats, { rows: { processed: ROWS }, doc_datapoints: 2 * ROWS }, 'every row staged')
  // Every row key wrote one of 40 cells (20 locations, each with one campaign, × 2 indicators): the last row wins each.
  t.match(refreshed.result?.ingest_stats?.datapoints, { inserted: 40 })
  t.ok(refreshed.growthMb < GROWTH_BOUND_MB, `the refresh: the live heap grew by ${refreshed.growthMb.toFixed(1)} MB (${refreshed.fullGcs} full GCs)`)
  t.equal(server.child.exitCode, null, 'the process lives')
})
