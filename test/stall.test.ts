// Nobody stalls or ends the server: under a 256 MB heap, a 50 MB upload is saved and transformed, and
// 16 exports (8 through a shared link) are drawn, while /health/live keeps answering within 100 ms at
// the 99th percentile on PostgreSQL. A real server process (`node cli/start.mjs`), as an operator runs it.
// The embedded database runs its statements on the server's own thread, and with the suite's other
// workers beside it its p99 reached 144 ms in one whole run: there the bound is 1 s, which still fails
// the stalls this guards against (7–15 s before the work left the event loop, bench/README.md).
import { createWriteStream, openAsBlob, readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { api, demoServer, type Server } from './processes.js'

const P99_BOUND_MS = process.env.DATABASE_URL ? 100 : 1_000

// 50 MB, under MAX_UPLOAD_BYTES's default 50 MiB.
const FILE_BYTES = 50_000_000

/** A campaign file of FILE_BYTES: 2 million lines over 60 row keys, the same values on each (codes nobody mapped, so the refresh writes little). */
async function bigCsv(path: string): Promise<number> {
  const out = createWriteStream(path)
  out.write('geocode,campaign,missed,vaccinated\n')
  let size = 0
  let i = 0
  for (; size < FILE_BYTES; i++) {
    const line = `LOC-${String(i % 20).padStart(4, '0')},CAMP-${i % 3},${(i * 7) % 1000},${(i * 7) % 1000}\n`
    size += line.length
    if (!out.write(line)) await new Promise<void>((resolve) => out.once('drain', () => resolve()))
  }
  await new Promise<void>((resolve) => out.end(() => resolve()))
  return i
}

/** Times /health/live every 20 ms until stopped: the answers' latencies in ms. */
function probe(server: Server) {
  const latencies: number[] = []
  let running = true
  const loop = (async () => {
    while (running) {
      const started = performance.now()
      await fetch(`${server.url}/health/live`).then((r) => r.arrayBuffer())
      latencies.push(performance.now() - started)
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  })()
  return async () => {
    running = false
    await loop
    const sorted = [...latencies].sort((a, b) => a - b)
    return { count: sorted.length, p99: sorted[Math.floor(sorted.length * 0.99)], max: sorted[sorted.length - 1] }
  }
}

/** The peak resident memory of a process, in MB (Linux). */
const peakRssMb = (pid: number) => Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024

const skip = process.platform !== 'linux' && 'reads the peak RSS from /proc: Linux only'

t.test('a 50 MB upload and 16 exports under a 256 MB heap: the process lives, /health/live answers', { skip }, async (t) => {
  // The demo's dashboard is what is exported.
  const { server, dataDir } = await demoServer(t, ['--max-old-space-size=256'])
  const file = join(dataDir, 'big.csv')
  const lines = await bigCsv(file)

  // Parsed (the upload's check) and transformed (a background job), each in a worker thread.
  const stopUpload = probe(server)
  const form = new FormData()
  form.set('file_type', 'campaign')
  form.set('docfile', await openAsBlob(file), 'big.csv')
  const upload = await fetch(`${server.url}/api/v1/document/`, { method: 'POST', headers: server.admin(), body: form })
  if (upload.status !== 201) return t.fail(`the 50 MB file is saved: ${upload.status} ${await upload.text()}`)
  const documentId = ((await upload.json()) as { id: number }).id
  const job = await api(server, `/transform_upload/?document_id=${documentId}`, { headers: { prefer: 'respond-async' } })
  if (job.status !== 202) return t.fail(`the transform runs as a job: ${job.status} ${await job.text()}`)
  let state = ''
  let result: Record<string, unknown> = {}
  while (!['completed', 'failed', 'cancelled'].includes(state) && server.child.exitCode === null) {
    await new Promise((resolve) => setTimeout(resolve, 250))
    const body = (await (await fetch(new URL(job.headers.get('location')!, server.url), { headers: server.admin() })).json()) as Record<string, unknown>
    state = String(body.state)
    result = body
  }
  const during = await stopUpload()
  t.equal(state, 'completed', `the transform completed: ${JSON.stringify(result).slice(0, 300)}`)
  t.match(result.result, { ingest_stats: { submissions: { file_rows: lines, created: 60 } } }, 'one submission per row key')
  t.ok(
    during.p99 <= P99_BOUND_MS,
    `/health/live p99 ${during.p99.toFixed(1)} ms (max ${during.max.toFixed(1)}, ${during.count} probes) while parsed and transformed`,
  )

  // 16 PNG exports at once: 8 by a user, 8 through a shared link (no credentials), each a new width.
  const dashboard = ((await (await api(server, '/dashboard/?limit=1')).json()) as { objects: Array<{ id: number }> }).objects[0].id
  const share = (await (await api(server, '/dashboard_share/', { method: 'POST', body: JSON.stringify({ dashboard_id: dashboard }) })).json()) as {
    token: string
  }
  const stopExports = probe(server)
  const asked = Array.from({ length: 16 }, (_, i) => {
    const query = `type=png&width=${800 + i * 10}`
    return i < 8
      ? fetch(`${server.url}/api/v1/export_file/?dashboard_id=${dashboard}&${query}`, { headers: server.admin() })
      : fetch(`${server.url}/api/v1/shared/${share.token}/export_file/?${query}`)
  })
  const answers = await Promise.all(asked)
  const exports = await stopExports()
  const statuses = answers.map((a) => a.status)
  t.ok(
    statuses.every((s) => s === 200 || s === 429),
    `each export drawn or refused with 429: ${statuses.join(' ')}`,
  )
  t.ok(
    answers.filter((a) => a.status === 429).every((a) => Number(a.headers.get('retry-after')) > 0),
    'a refusal says when to retry',
  )
  t.ok(statuses.slice(0, 8).includes(200) && statuses.slice(8).includes(200), 'the user and the link each had files drawn')
  t.ok(exports.p99 <= P99_BOUND_MS, `/health/live p99 ${exports.p99.toFixed(1)} ms (max ${exports.max.toFixed(1)}, ${exports.count} probes) during the exports`)

  t.equal(server.child.exitCode, null, 'the process lives')
  const rss = peakRssMb(server.child.pid!)
  t.ok(rss < 1024, `peak RSS ${Math.round(rss)} MB (the server with its worker threads; with PGlite, its database too)`)
})
