// A clean stop of the real server process (SIGTERM, as systemd and a cluster supervisor send it): the
// requests in flight finish (an export, which reads through in-process requests, and a list read), a
// request that comes after gets the API's 503 with Retry-After, a background job is finished or handed
// back, and the process exits 0.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { spawn } from 'node:child_process'
import { api, cli, postgresDatabase, ROOT, startServer, until200 } from './processes.js'
import { freePort } from './topology.js'

const ERROR_KEYS = ['code', 'error', 'message', 'request_id', 'statusCode']

t.test('SIGTERM during an export, a job and a list read: they finish, new requests get 503, exit 0', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'rhizome-stop-'))
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }))
  const databaseUrl = await postgresDatabase(t)
  // The demo data (its dashboard to export) loads into the embedded database only.
  const env = { DATA_DIR: dataDir, DEMO_DATA: '1', DATABASE_URL: '', LOG_LEVEL: 'info', ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) }
  const server = await startServer(t, env)
  await until200(server, '/health/ready')
  t.match(server.output(), `ready: sign in at ${server.url}/app/`, 'the log says where people sign in')
  const exited = new Promise<number | null>((resolve) => server.child.once('exit', (code) => resolve(code)))

  // Something to export: the demo's dashboard (on PostgreSQL loaded by the CLI, which writes there itself).
  if (databaseUrl) t.equal((await cli(['demo'], env)).code, 0, 'the demo data loaded')
  const dashboardId = 1
  const csv = ['campaign,geocode,n', ...Array.from({ length: 3_000 }, (_, i) => `C,G${i},${i}`)].join('\n')
  const doc = await api(server, '/document/', {
    method: 'POST',
    body: JSON.stringify({ docfile: Buffer.from(csv).toString('base64'), doc_title: 'stop.csv', file_type: 'campaign' }),
  })
  const documentId = ((await doc.json()) as { id: number }).id

  const exportStarted = api(server, `/export_file/?dashboard_id=${dashboardId}&type=pdf&width=1400`)
  const job = await api(server, `/transform_upload/?document_id=${documentId}`, { headers: { prefer: 'respond-async' } })
  t.equal(job.status, 202, await job.clone().text())
  const jobId = ((await job.json()) as { id: number }).id
  const listStarted = api(server, '/location/?limit=500')
  await new Promise((resolve) => setTimeout(resolve, 100))
  const signalled = Date.now()
  server.child.kill('SIGTERM')
  // The signal is taken once the event loop gets to it (an export may be drawing): then a new request.
  for (let i = 0; i < 200 && !server.output().includes('shutting down'); i++) await new Promise((resolve) => setTimeout(resolve, 25))

  const after = await api(server, '/location/?limit=1').catch((error: Error) => error)
  const exported = await exportStarted
  const exportAnsweredAt = Date.now()
  t.equal(exported.status, 200, 'the export in flight is answered', { body: exported.status === 200 ? '' : await exported.clone().text() })
  const pdf = Buffer.from(await exported.arrayBuffer())
  t.equal(pdf.subarray(0, 5).toString(), '%PDF-', 'a PDF')
  t.match(pdf.subarray(-8).toString(), /%%EOF\s*$/, 'complete, to its end')
  t.ok(exportAnsweredAt > signalled, 'it was still being drawn when the signal came')
  t.equal((await listStarted).status, 200, 'the list read in flight is answered')

  if (after instanceof Error) {
    t.fail(`the request after SIGTERM got no answer (the export ended before it came): ${after.message}`)
  } else {
    t.equal(after.status, 503, 'a request after SIGTERM')
    t.equal(after.headers.get('retry-after'), '5')
    const body = (await after.json()) as Record<string, unknown>
    t.same(Object.keys(body).sort(), ERROR_KEYS, "the API's Error shape")
    t.equal(body.code, 'SHUTTING_DOWN')
  }
  t.equal(await exited, 0, `exit 0: ${server.output()}`)

  // The job ran to its end, or went back to the queue, and completes after a restart.
  const again = await startServer(t, env)
  await until200(again, '/health/ready')
  let state = ''
  for (let i = 0; i < 100 && state !== 'completed' && state !== 'failed'; i++) {
    state = ((await (await api(again, `/job/${jobId}/`)).json()) as { state: string }).state
    if (state !== 'completed') await new Promise((resolve) => setTimeout(resolve, 200))
  }
  t.equal(state, 'completed', 'the job, finished before the stop or after it')
})

// A container's or a supervisor's stop signals the process it started: `npm start`. npm passes the
// signal to the shell of the script, which passed it to nobody, and the server lived on, re-parented.
t.test('SIGTERM to the npm start process stops the server', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'rhizome-npm-stop-'))
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }))
  const port = await freePort()
  const npm = spawn('npm', ['start'], {
    cwd: ROOT,
    env: { ...process.env, DATA_DIR: dataDir, DEMO_DATA: '0', DATABASE_URL: '', PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn' },
    stdio: 'ignore',
  })
  const exited = new Promise<number | null>((resolve) => npm.once('exit', (code) => resolve(code)))
  const url = `http://127.0.0.1:${port}/health/live`
  const answers = () =>
    fetch(url, { signal: AbortSignal.timeout(2_000) }).then(
      (r) => r.status === 200,
      () => false,
    )
  let up = false
  for (let i = 0; i < 600 && !up && npm.exitCode === null; i++) {
    up = await answers()
    if (!up) await new Promise((resolve) => setTimeout(resolve, 100))
  }
  t.ok(up, 'npm start answers')
  npm.kill('SIGTERM')
  t.equal(await exited, 0, 'npm exits 0')
  t.notOk(await answers(), 'and nothing answers on the port any more: the server stopped with it')
})
