// The real server, started as an operator starts it (`node cli/start.mjs`, what `npm start` runs), and
// the CLI beside it: a first start on a busy machine, writes right after it, a data directory that a
// second process may not open, and operator commands while the server runs, on both engines.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { createDatabase } from '../lib/data/database.js'
import { DataDirInUseError } from '../lib/data/data-dir-lock.js'
import { StartupTimeout, startupSteps } from '../plugins/db.js'
import { api, busyMachine, cli, postgresDatabase, startServer, until200 } from './processes.js'
import { ROOT } from './topology.js'

t.test('a start-up step that hangs is given up after STARTUP_TIMEOUT_MS, naming the step', async (t) => {
  const logged: string[] = []
  const app = { log: { info: (...args: unknown[]) => logged.push(String(args.at(-1))) }, config: { STARTUP_TIMEOUT_MS: 100 } }
  const step = startupSteps(app as unknown as Parameters<typeof startupSteps>[0])
  t.equal(await step('a quick step', async () => 7), 7)
  const started = Date.now()
  const hung = await step('loading the detection model', () => new Promise(() => {})).catch((error: unknown) => error)
  t.ok(hung instanceof StartupTimeout, 'a StartupTimeout, which the server reports and exits on')
  t.equal((hung as Error).message, 'loading the detection model: not done after 100 ms (STARTUP_TIMEOUT_MS); the start gives up')
  t.ok(Date.now() - started >= 90, 'after the limit, not before')
  t.same(logged, ['a quick step…', 'a quick step: done', 'loading the detection model…'])
})

t.test('the README’s start: a data directory named relative to where the server starts', async (t) => {
  // DATA_DIR's default is `./.data`: the embedded database's socket lies there, and a relative
  // socket directory was read by the driver as a host name to look up (ENOTFOUND).
  const relative = join('.data', `relative-${process.pid}-${Date.now()}`)
  t.teardown(() => rmSync(join(ROOT, relative), { recursive: true, force: true }))
  const server = await startServer(t, { DATA_DIR: relative, DEMO_DATA: '1' })
  await until200(server, '/health')
  t.equal((await api(server, '/campaign/?limit=1')).status, 200, server.output().slice(-500))
})

t.test('a first start on a machine whose cores are busy comes up, and a burst of writes right after it gets no 503', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'rhizome-start-'))
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }))
  const databaseUrl = await postgresDatabase(t)
  busyMachine(t, 2, 40_000)
  const server = await startServer(t, { DATA_DIR: dataDir, LOG_LEVEL: 'info', ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) })
  const seconds = await until200(server, '/health/ready')
  t.pass(`ready after ${seconds.toFixed(1)} s with both cores busy`)
  // Each step is said as it begins, so a slow start shows where it waits.
  const said = server
    .output()
    .split('\n')
    .flatMap((line) => {
      try {
        return [(JSON.parse(line) as { msg: string }).msg]
      } catch {
        return []
      }
    })
  const steps = ['applying migrations…', 'recomputing campaigns under the current rules…', 'making sure a superuser exists…', 'starting the job queue…']
  if (!databaseUrl) steps.push('loading the demo data into an empty database…')
  const at = steps.map((step) => said.indexOf(step))
  t.ok(
    at.every((index, i) => index >= 0 && (i === 0 || index > at[i - 1])),
    `the first start said, in order: ${steps.join(', ')}`,
    { said: said.slice(0, 30) },
  )
  t.ok(
    said.some((message) => /^(the detection model loaded while the database opened|loading the detection model \(begun with the database\)…)$/.test(message)),
    'and when the model loaded',
  )
  const statuses: number[] = []
  for (let batch = 0; batch < 5; batch++) {
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => api(server, '/campaign_type/', { method: 'POST', body: JSON.stringify({ name: `burst ${batch}-${i}` }) })),
    )
    statuses.push(...answers.map((a) => a.status))
  }
  t.same([...new Set(statuses)], [201], `100 writes right after the start: ${statuses.filter((s) => s === 503).length} answered 503`)
  const listed = (await (await api(server, '/campaign_type/?name__startswith=burst&limit=1')).json()) as { meta: { total_count: number } }
  t.equal(listed.meta.total_count, 100, 'every write is there')
  t.equal((await fetch(`${server.url}/health/live`)).status, 200)
})

t.test('the embedded database: a second process is refused at once; operator commands go through the running server', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'rhizome-lock-'))
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }))
  // No ADMIN_API_KEY: the first start writes the admin key file, which the CLI then uses.
  const env = { DATA_DIR: dataDir, DATABASE_URL: '', ADMIN_API_KEY: '' }
  const server = await startServer(t, env)
  await until200(server, '/health/ready')
  const pid = server.child.pid!

  // The data directory's files are not opened by a second process, whatever it is.
  const second = createDatabase({ dataDir: join(dataDir, 'pglite') })
  await t.rejects(second, DataDirInUseError)
  await t.rejects(second, { message: new RegExp(`in use by process ${pid} \\(the server at ${server.url}\\)`) })

  const locations = async () => ((await (await api(server, '/location/?limit=1')).json()) as { meta: { total_count: number } }).meta.total_count
  const before = await locations()
  const created = await cli(['create-user', 'carol', '--location', '1'], env)
  t.equal(created.code, 0, 'create-user succeeds', { stderr: created.stderr })
  t.match(created.stderr, `held by the server at ${server.url}: sending create-user there`)
  const key = /^carol:([0-9a-f]{40})$/m.exec(created.stdout)?.[1]
  t.ok(key, `a key is printed: ${created.stdout}`)
  const asCarol = { authorization: `ApiKey carol:${key}` }
  const read = await api(server, '/location/', { headers: asCarol })
  t.equal(read.status, 200, 'the new key works on the running server at once')
  t.equal(((await read.json()) as { meta: { top_lvl_location_id: number } }).meta.top_lvl_location_id, 1, 'with its responsibility')

  const revoked = await cli(['revoke-key', `carol:${key}`], env)
  t.equal(revoked.code, 0, 'revoke-key succeeds', { stderr: revoked.stderr })
  t.match(revoked.stdout, '1 key(s) revoked')
  t.equal((await api(server, '/location/', { headers: asCarol })).status, 401, 'the revoked key is refused on the next request')

  const csv = join(dataDir, 'round.csv')
  writeFileSync(csv, 'campaign,geocode,Vaccinated\nC1,VD11,5\n')
  const uploaded = await cli(['upload', csv, '--type', 'campaign'], env)
  t.equal(uploaded.code, 0, 'upload succeeds', { stderr: uploaded.stderr })
  t.match(uploaded.stderr, 'sending upload there')
  const stats = JSON.parse(uploaded.stdout) as { document_id: number; submissions: { created: number } }
  t.equal(stats.submissions.created, 1, 'the row became a submission on the server')
  t.equal((await api(server, `/document/${stats.document_id}/`)).status, 200, "the document is the server's")

  const demo = await cli(['demo'], env)
  t.equal(demo.code, 1)
  t.match(demo.stderr, `demo cannot run while the server at ${server.url} holds the embedded database: stop the server first`)
  t.notMatch(demo.stderr, 'sending demo there', 'it does not first say it sends what the server cannot take')
  t.equal(await locations(), before, 'nothing was written behind the server')

  // Once the server is gone the lock goes with it, and the CLI opens the database itself.
  await server.stop()
  const direct = await cli(['create-key', 'carol'], env)
  t.equal(direct.code, 0, 'create-key succeeds on its own', { stderr: direct.stderr })
  t.notMatch(direct.stderr, 'sending')
  const restarted = await startServer(t, env)
  await until200(restarted, '/health/ready')
  const newKey = /^carol:([0-9a-f]{40})$/m.exec(direct.stdout)![1]
  t.equal((await api(restarted, '/location/', { headers: { authorization: `ApiKey carol:${newKey}` } })).status, 200, 'nothing was lost')
  t.equal((await api(restarted, '/location/', { headers: asCarol })).status, 401, 'the revoked key stays revoked after a restart')
})

t.test(
  'PostgreSQL: the CLI writes to the database, and the running server hears a revocation at once',
  { skip: process.env.DATABASE_URL ? false : 'needs DATABASE_URL' },
  async (t) => {
    const databaseUrl = (await postgresDatabase(t))!
    const dataDir = mkdtempSync(join(tmpdir(), 'rhizome-pg-'))
    t.teardown(() => rmSync(dataDir, { recursive: true, force: true }))
    const env = { DATA_DIR: dataDir, DATABASE_URL: databaseUrl }
    const server = await startServer(t, env)
    await until200(server, '/health/ready')
    const created = await cli(['create-user', 'dave'], env)
    t.equal(created.code, 0, 'create-user succeeds', { stderr: created.stderr })
    const key = /^dave:([0-9a-f]{40})$/m.exec(created.stdout)![1]
    const asDave = { authorization: `ApiKey dave:${key}` }
    t.equal((await api(server, '/campaign/', { headers: asDave })).status, 200)
    t.equal((await cli(['revoke-key', `dave:${key}`], env)).code, 0)
    let status = 200
    for (let i = 0; i < 40 && status === 200; i++) {
      status = (await api(server, '/campaign/', { headers: asDave })).status
      if (status === 200) await new Promise((resolve) => setTimeout(resolve, 25))
    }
    t.equal(status, 401, 'refused once the notification has arrived (within a second)')
  },
)
