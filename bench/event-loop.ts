// `npm run bench:event-loop`: how long the event loop that answers requests is held while an upload
// is parsed and transformed, and while 16 exports (8 through a shared link) are drawn. For each build
// (this one, and `BENCH_BEFORE`: another checkout's root, such as a `git worktree` of an earlier
// commit, built there with `npm run build`), a server on a fresh embedded database with the demo data:
// the server's own event-loop delay over each phase (prom-client's p99 and max, reset at each scrape of
// /metrics) and /health/live's latency seen by a client probing every 10 ms.
import { openAsBlob } from 'node:fs'
import { join } from 'node:path'
import { campaignCsv, doing, scratchDir, serverLag, startServer, stop } from './lib.js'

const UPLOAD_MB = Number(process.env.BENCH_UPLOAD_MB ?? 20)
const KEY = 'e'.repeat(40)
const headers = { authorization: `ApiKey admin:${KEY}` }

/** Runs `work` while timing /health/live every 10 ms; the server's lag and the client's latencies. */
async function phase(url: string, work: () => Promise<string>) {
  await serverLag(url)
  const latencies: number[] = []
  let running = true
  const probe = (async () => {
    while (running) {
      const started = performance.now()
      await fetch(`${url}/health/live`).then((r) => r.arrayBuffer())
      latencies.push(performance.now() - started)
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
  })()
  const started = performance.now()
  const outcome = await work()
  const seconds = (performance.now() - started) / 1000
  running = false
  await probe
  const sorted = latencies.sort((a, b) => a - b)
  return { ...(await serverLag(url)), probeP99: sorted[Math.floor(sorted.length * 0.99)], probeMax: sorted[sorted.length - 1], seconds, outcome }
}

async function upload(url: string, file: string) {
  const form = new FormData()
  form.set('file_type', 'campaign')
  form.set('docfile', await openAsBlob(file), 'bench.csv')
  const posted = await fetch(`${url}/api/v1/document/`, { method: 'POST', headers, body: form })
  if (posted.status !== 201) return `upload ${posted.status}`
  const { id } = (await posted.json()) as { id: number }
  const run = await fetch(`${url}/api/v1/transform_upload/?document_id=${id}`, { headers })
  return `upload 201, transform ${run.status}`
}

async function exports(url: string) {
  const dashboard = ((await (await fetch(`${url}/api/v1/dashboard/?limit=1`, { headers })).json()) as { objects: Array<{ id: number }> }).objects[0].id
  const made = await fetch(`${url}/api/v1/dashboard_share/`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify({ dashboard_id: dashboard }),
  })
  const { token } = (await made.json()) as { token: string }
  return async () => {
    const answers = await Promise.all(
      Array.from({ length: 16 }, (_, i) =>
        i < 8
          ? fetch(`${url}/api/v1/export_file/?dashboard_id=${dashboard}&type=png&width=${800 + i * 10}`, { headers })
          : fetch(`${url}/api/v1/shared/${token}/export_file/?type=png&width=${800 + i * 10}`),
      ),
    )
    const count = (status: number) => answers.filter((a) => a.status === status).length
    return `${count(200)} drawn, ${count(429)} refused (429)`
  }
}

async function measure(label: string, root: string, file: string, port: number) {
  const dataDir = scratchDir('rhizome-bench-loop-')
  const env = { DATA_DIR: dataDir, ADMIN_API_KEY: KEY, DEMO_DATA: '1', MAX_EVENT_LOOP_DELAY_MS: '0', DATABASE_URL: undefined }
  const server = await startServer([join(root, 'dist', 'server.js')], env, port)
  const url = `http://127.0.0.1:${port}`
  try {
    while ((await fetch(`${url}/health/ready`)).status !== 200) await new Promise((resolve) => setTimeout(resolve, 200))
    doing(`${label}: a ${UPLOAD_MB} MB upload, parsed and transformed`)
    const uploaded = await phase(url, () => upload(url, file))
    doing(`${label}: 16 exports, 8 through a shared link`)
    const burst = await phase(url, await exports(url))
    return [
      { label, what: `upload of ${UPLOAD_MB} MB + transform`, ...uploaded },
      { label, what: '16 PNG exports (8 shared)', ...burst },
    ]
  } finally {
    await stop(server)
  }
}

const file = join(scratchDir('rhizome-bench-file-'), 'upload.csv')
doing(`writing a ${UPLOAD_MB} MB CSV`)
await campaignCsv(file, UPLOAD_MB)
const builds: Array<[string, string]> = [['after (this build)', process.cwd()]]
if (process.env.BENCH_BEFORE) builds.unshift([`before (${process.env.BENCH_BEFORE})`, process.env.BENCH_BEFORE])
const rows = []
for (const [i, [label, root]] of builds.entries()) rows.push(...(await measure(label, root, file, 3400 + i)))
const ms = (v: number) => (Number.isFinite(v) ? v.toFixed(0) : '–')
console.log('\n| build | phase | server loop delay p99 ms | max ms | /health/live p99 ms | max ms | phase s | outcome |')
console.log('|---|---|---|---|---|---|---|---|')
for (const r of rows)
  console.log(`| ${r.label} | ${r.what} | ${ms(r.p99)} | ${ms(r.max)} | ${ms(r.probeP99)} | ${ms(r.probeMax)} | ${r.seconds.toFixed(1)} | ${r.outcome} |`)
process.exit(0)
