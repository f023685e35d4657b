// bench:export — what a dashboard's export costs: the demo dashboard (five charts: columns, a pie, a map,
// a line and a table) as PDF, PNG and SVG from `node dist/server.js` on the embedded database, a fresh
// server for each type. For each: its first export (nothing cached, nothing compiled), a render made
// again (`Cache-Control: no-cache`: drawn anew from the reads, which stay cached) and a cached one, the
// last two the median of BENCH_EXPORTS (default 15) sequential requests with an API key. Targets: the
// first ≤ 2 s; a cached export ≤ 10 % of a first one.
import { readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { doing, median, startServer, stop, scratchDir } from './lib.js'

const PORT = 3470
const COUNT = Number(process.env.BENCH_EXPORTS ?? 15)
const base = `http://127.0.0.1:${PORT}`

/** A server on a fresh embedded database with the demo, and an API key of its administrator. */
async function freshServer() {
  const dataDir = scratchDir('rhizome-bench-export-')
  const server = await startServer(['dist/server.js'], { DATA_DIR: dataDir }, PORT)
  const password = readFileSync(join(dataDir, 'admin-password'), 'utf8').trim()
  const signIn = await fetch(`${base}/api/v1/session/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: base },
    body: JSON.stringify({ username: 'admin', password }),
  })
  const { id: userId } = (await signIn.json()) as { id: number }
  const cookie = signIn.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ')
  const made = await fetch(`${base}/api/v1/api_key/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: base, cookie },
    body: JSON.stringify({ user_id: userId }),
  })
  const { key } = (await made.json()) as { key: string }
  const authorization = `Bearer ${key}`
  const dashboards = (await (await fetch(`${base}/api/v1/dashboard/?limit=0`, { headers: { authorization } })).json()) as { objects: Array<{ id: number }> }
  const close = async () => {
    await stop(server)
    rmSync(dataDir, { recursive: true, force: true })
  }
  return { authorization, dashboardId: dashboards.objects[0].id, close }
}

const rows: string[] = []
for (const type of ['pdf', 'png', 'svg']) {
  // A server of its own for each type: its first export is a first one (no read cached, nothing compiled).
  const { authorization, dashboardId, close } = await freshServer()
  try {
    /** One export's time in ms (and its size), with extra headers. */
    const timed = async (headers: Record<string, string> = {}) => {
      const started = performance.now()
      const res = await fetch(`${base}/api/v1/export_file/?dashboard_id=${dashboardId}&type=${type}`, { headers: { authorization, ...headers } })
      const bytes = (await res.arrayBuffer()).byteLength
      if (res.status !== 200) throw new Error(`${type}: ${res.status}`)
      return { ms: performance.now() - started, bytes }
    }
    doing(`${type}: a first export, then ${COUNT} renders and ${COUNT} cached`)
    const first = await timed()
    const renders: number[] = []
    const hits: number[] = []
    for (let i = 0; i < COUNT; i++) renders.push((await timed({ 'cache-control': 'no-cache' })).ms)
    for (let i = 0; i < COUNT; i++) hits.push((await timed()).ms)
    const render = median(renders)
    const hit = median(hits)
    rows.push(
      `| ${type} | ${Math.round(first.ms)} | ${render.toFixed(1)} | ${hit.toFixed(2)} | ${((100 * hit) / first.ms).toFixed(1)} % | ${((100 * hit) / render).toFixed(1)} % | ${Math.round(first.bytes / 1024)} KB |`,
    )
  } finally {
    await close()
  }
}
console.log(`\nbench:export — the demo dashboard, ${COUNT} requests per median, Node ${process.versions.node}\n`)
console.log('| type | first export, ms | render again (reads cached), median ms | cached, median ms | cached ÷ first | cached ÷ render | size |')
console.log('|---|---|---|---|---|---|---|')
for (const row of rows) console.log(row)
