// `npm run bench:others-work`: what one person's reads wait while colleagues' heavy work runs. For each
// engine (the embedded database; PostgreSQL at BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/postgres,
// a scratch database) and each build (`BENCH_BEFORE`: another checkout's root, built there, run
// first; then this one), a server with the demo data, and three probes each asked every 100 ms: GET
// /health, a cached campaign detail, and an uncached datapoint read (`Cache-Control: no-cache`). The
// work, all at once: three uploads of BENCH_UPLOAD_MB (default 20) as multipart, then the transform of
// one, and 10 PNG exports of the demo dashboard (5 through a shared link); each retried after a 429
// as a client would, until it completes.
import { execFileSync } from 'node:child_process'
import { openAsBlob } from 'node:fs'
import { join } from 'node:path'
import { ADMIN_URL, campaignCsv, doing, scratchDatabase, scratchDir, serverLag, startServer, stop } from './lib.js'

const UPLOAD_MB = Number(process.env.BENCH_UPLOAD_MB ?? 20)
const KEY = 'e'.repeat(40)
const headers = { authorization: `ApiKey admin:${KEY}` }
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** `ask` until it is not refused for load (429/503 with Retry-After), as a client would. */
async function completing(ask: () => Promise<Response>): Promise<Response> {
  for (;;) {
    const answer = await ask()
    if (answer.status !== 429 && answer.status !== 503) return answer
    await answer.arrayBuffer()
    await sleep(Number(answer.headers.get('retry-after') ?? 1) * 1000)
  }
}

/** Asks `path` every 100 ms until stopped; the latencies and the statuses other than 200. */
function probe(url: string, path: string, init: RequestInit = {}) {
  const latencies: number[] = []
  const failures: number[] = []
  let running = true
  const done = (async () => {
    while (running) {
      const started = performance.now()
      const answer = await fetch(`${url}${path}`, init).catch(() => undefined)
      await answer?.arrayBuffer()
      latencies.push(performance.now() - started)
      if (answer?.status !== 200) failures.push(answer?.status ?? 0)
      await sleep(100)
    }
  })()
  return async () => {
    running = false
    await done
    const sorted = latencies.sort((a, b) => a - b)
    return { p99: sorted[Math.floor(sorted.length * 0.99)], max: sorted[sorted.length - 1], n: sorted.length, failures: failures.length }
  }
}

async function upload(url: string, file: string): Promise<number> {
  const answer = await completing(async () => {
    const form = new FormData()
    form.set('file_type', 'campaign')
    form.set('docfile', await openAsBlob(file), 'bench.csv')
    return fetch(`${url}/api/v1/document/`, { method: 'POST', headers, body: form })
  })
  if (answer.status !== 201) throw new Error(`upload answered ${answer.status}: ${await answer.text()}`)
  return ((await answer.json()) as { id: number }).id
}

async function exportsOf(url: string): Promise<Array<() => Promise<Response>>> {
  const dashboard = ((await (await fetch(`${url}/api/v1/dashboard/?limit=1`, { headers })).json()) as { objects: Array<{ id: number }> }).objects[0].id
  const made = await fetch(`${url}/api/v1/dashboard_share/`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify({ dashboard_id: dashboard }),
  })
  const { token } = (await made.json()) as { token: string }
  return Array.from({ length: 10 }, (_, i) =>
    i < 5
      ? () => fetch(`${url}/api/v1/export_file/?dashboard_id=${dashboard}&type=png&width=${800 + i * 10}`, { headers })
      : () => fetch(`${url}/api/v1/shared/${token}/export_file/?type=png&width=${800 + i * 10}`),
  )
}

async function measure(label: string, engine: 'pglite' | 'postgres', root: string, file: string, port: number) {
  const scratch = engine === 'postgres' ? await scratchDatabase(ADMIN_URL, 'rhizome_bench_others_') : undefined
  const env = { DATA_DIR: scratchDir('rhizome-bench-others-'), ADMIN_API_KEY: KEY, DEMO_DATA: '1', MAX_EVENT_LOOP_DELAY_MS: '0', DATABASE_URL: scratch?.url }
  // The embedded database gets the demo at its first start, PostgreSQL from the CLI.
  if (scratch) execFileSync(process.execPath, [join(root, 'cli', 'run.mjs'), 'demo'], { cwd: root, env: { ...process.env, ...env }, stdio: 'ignore' })
  const server = await startServer([join(root, 'dist', 'server.js')], env, port)
  const url = `http://127.0.0.1:${port}`
  try {
    while ((await fetch(`${url}/health/ready`)).status !== 200) await sleep(200)
    const campaign = ((await (await fetch(`${url}/api/v1/campaign/?limit=1`, { headers })).json()) as { objects: Array<{ id: number }> }).objects[0].id
    const detail = `/api/v1/campaign/${campaign}/`
    const ids = async (resource: string, count: number) =>
      ((await (await fetch(`${url}/api/v1/${resource}/?limit=${count}`, { headers })).json()) as { objects: Array<{ id: number }> }).objects
        .map((o) => o.id)
        .join(',')
    const datapoints = `/api/v1/campaign_datapoint/?campaign__in=${campaign}&indicator__in=${await ids('indicator', 5)}&location_id__in=${await ids('location', 20)}`
    await fetch(`${url}${detail}`, { headers })
    const exports = await exportsOf(url)
    doing(`${label}, ${engine}: 3 uploads of ${UPLOAD_MB} MB, a transform, 10 exports`)
    await serverLag(url)
    const probes = {
      health: probe(url, '/health'),
      cached: probe(url, detail, { headers }),
      uncached: probe(url, datapoints, { headers: { ...headers, 'cache-control': 'no-cache' } }),
    }
    const started = performance.now()
    const work = await Promise.all([
      (async () => {
        const ids = await Promise.all([upload(url, file), upload(url, file), upload(url, file)])
        const run = await completing(() => fetch(`${url}/api/v1/transform_upload/?document_id=${ids[0]}`, { headers }))
        return `3 uploads 201, transform ${run.status}`
      })(),
      (async () => {
        const answers = await Promise.all(exports.map((ask) => completing(ask)))
        return `${answers.filter((a) => a.status === 200).length}/10 exports drawn`
      })(),
    ])
    const seconds = (performance.now() - started) / 1000
    const results = {
      health: await probes.health(),
      cached: await probes.cached(),
      uncached: await probes.uncached(),
      loop: { ...(await serverLag(url)), failures: 0 },
    }
    return { label, engine, ...results, seconds, outcome: work.join(', ') }
  } finally {
    await stop(server)
    await scratch?.close()
  }
}

const file = join(scratchDir('rhizome-bench-file-'), 'upload.csv')
doing(`writing a ${UPLOAD_MB} MB CSV`)
await campaignCsv(file, UPLOAD_MB)
const builds: Array<[string, string]> = [['after (this build)', process.cwd()]]
if (process.env.BENCH_BEFORE) builds.unshift([`before (${process.env.BENCH_BEFORE})`, process.env.BENCH_BEFORE])
const engines = (process.env.BENCH_ENGINES ?? 'pglite,postgres').split(',') as Array<'pglite' | 'postgres'>
const rows = []
let port = 3420
for (const engine of engines)
  for (const [label, root] of builds) {
    rows.push(await measure(label, engine, root, file, port++))
    doing(JSON.stringify(rows.at(-1)))
  }
const ms = (v: number) => (Number.isFinite(v) ? Math.round(v).toLocaleString('en') : '–')
const cell = (p: { p99: number; max: number; failures: number }) => `${ms(p.p99)} / ${ms(p.max)}${p.failures ? ` (${p.failures} not 200)` : ''}`
console.log(
  '\n| engine | build | /health p99 / max ms | cached detail p99 / max ms | uncached datapoint read p99 / max ms | server loop delay p99 / max ms | work s | outcome |',
)
console.log('|---|---|---|---|---|---|---|---|')
for (const r of rows)
  console.log(
    `| ${r.engine} | ${r.label} | ${cell(r.health)} | ${cell(r.cached)} | ${cell(r.uncached)} | ${cell(r.loop)} | ${r.seconds.toFixed(1)} | ${r.outcome} |`,
  )
process.exit(0)
