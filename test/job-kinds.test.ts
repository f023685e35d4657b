// A kind of background job is one entry of resources/jobs.ts: the job table accepts the declared kinds
// (job_kind, registered as the queue starts, sql/015), the job resource documents them as its `kind`
// enum. The second test proves it the way a contributor would: a copy of the project with one entry
// added and nothing else edited migrates a fresh database, takes a job of the new kind and runs it.
import { execFile } from 'node:child_process'
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { sql } from 'kysely'
import { build, ROOT } from './helper.js'
import { backgroundJobs, jobOf } from '../resources/jobs.js'

t.test('the declared job kinds are the kinds the job table accepts and the job resource documents', async (t) => {
  const { db, app } = await build(t)
  const declared = backgroundJobs.map((job) => job.kind).sort()
  const { rows } = await sql<{ name: string }>`select name from job_kind order by name`.execute(db)
  t.same(
    rows.map((r) => r.name),
    declared,
    'job_kind holds the declared kinds',
  )
  const refused = await sql`insert into job (kind, params, subject, queue_name, queue_job_id) values ('no_such_kind', '{}', 's', 'q', gen_random_uuid())`
    .execute(db)
    .then(
      () => 'inserted',
      (error: { code?: string }) => error.code,
    )
  t.equal(refused, '23503', 'a job of an undeclared kind is refused by the database (foreign key)')
  const kindEnums = jobKindEnums((await app.inject('/documentation/json')).json())
  t.ok(kindEnums.length > 0, 'OpenAPI documents the job kind')
  for (const values of kindEnums) t.same([...values].sort(), declared, 'OpenAPI lists the declared kinds')
  for (const job of backgroundJobs) t.ok(jobOf(job.kind), `${job.kind} runs in the background`)
  t.same([...new Set(backgroundJobs.map((job) => job.queue))].sort(), ['campaign', 'document'], 'the queues come from the declarations')
})

/** Every enum of the OpenAPI document that lists job kinds (the job resource's `kind`). */
function jobKindEnums(document: unknown): string[][] {
  const found: string[][] = []
  const visit = (node: unknown) => {
    if (Array.isArray(node)) node.forEach(visit)
    else if (node && typeof node === 'object') {
      const { enum: values } = node as { enum?: unknown }
      if (Array.isArray(values) && values.includes('agg_refresh')) found.push(values as string[])
      Object.values(node).forEach(visit)
    }
  }
  visit(document)
  return found
}

/** What the copy runs: a fresh embedded database, migrated, the app on it, one job of the new kind. */
const PROBE = `
import { buildApp } from './app.js'
import { createDatabase } from './lib/data/database.js'
import { migrateToLatest } from './lib/data/migrations.js'
import { createApiKey, createUser } from './lib/data/auth.js'
const database = await createDatabase({})
await migrateToLatest(database)
const app = await buildApp({ database, logger: false, config: { DATA_DIR: process.env.DATA_DIR, MAX_EVENT_LOOP_DELAY_MS: 0, JOB_POLL_MS: 500 } })
await app.ready()
const userId = await createUser(database.db, { username: 'admin', is_superuser: true })
await createApiKey(database.db, userId, 'k'.repeat(40))
const { id } = await database.db.transaction().execute((trx) => app.jobs.submit(trx, 'count_campaigns', {}, userId))
app.jobs.wake()
let job
for (let i = 0; i < 300; i++) {
  job = (await app.inject({ url: '/api/v1/job/' + id + '/', headers: { authorization: 'ApiKey admin:' + 'k'.repeat(40) } })).json()
  if (job.state === 'completed' || job.state === 'failed') break
  await new Promise((resolve) => setTimeout(resolve, 100))
}
const documented = JSON.stringify((await app.inject('/documentation/json')).json()).includes('"count_campaigns"')
console.log(JSON.stringify({ kind: job.kind, state: job.state, result: job.result, documented }))
await app.close()
await database.close()
`

/** The one edit: an entry at the end of `backgroundJobs`. */
const NEW_KIND = `  {
    kind: 'count_campaigns',
    queue: 'campaign',
    subject: () => 'campaigns',
    dedupe: 'waits',
    check: async () => ({}),
    run: async (ctx) => ({ campaigns: (await ctx.db.selectFrom('campaign').select('id').execute()).length }),
  },
]`

t.test('adding a job kind is one entry in resources/jobs.ts: a copy with it migrates, takes the job and runs it', async (t) => {
  const copy = mkdtempSync(join(tmpdir(), 'rhizome-job-kind-'))
  t.teardown(() => rmSync(copy, { recursive: true, force: true }))
  // Copied: what imports the declarations (relative imports resolve from a file's real path). Linked: the rest.
  for (const path of ['app.ts', 'plugins', 'resources']) cpSync(join(ROOT, path), join(copy, path), { recursive: true })
  for (const path of ['lib', 'schemas', 'classifier', 'sql', 'web', 'node_modules', 'package.json', 'tsconfig.json']) {
    symlinkSync(join(ROOT, path), join(copy, path))
  }
  const jobsFile = join(copy, 'resources', 'jobs.ts')
  const source = readFileSync(jobsFile, 'utf8')
  const edited = source.replace(/(export const backgroundJobs: JobDeclaration\[\] = \[[\s\S]*?\n)\]/, `$1${NEW_KIND}`)
  t.not(edited, source, 'the entry is added')
  writeFileSync(jobsFile, edited)
  writeFileSync(join(copy, 'probe.ts'), PROBE)

  const output = await new Promise<string>((resolve, reject) =>
    execFile(
      process.execPath,
      ['--import', 'tsx', 'probe.ts'],
      { cwd: copy, env: { ...process.env, DATA_DIR: join(copy, '.data') }, timeout: 120_000 },
      (error, stdout, stderr) => (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout)),
    ),
  )
  const outcome = JSON.parse(output.trim().split('\n').pop()!)
  t.equal(outcome.kind, 'count_campaigns')
  t.equal(outcome.state, 'completed', 'the new kind ran')
  t.same(outcome.result, { campaigns: 0 }, 'its result, from a fresh database')
  t.ok(outcome.documented, 'and the OpenAPI document names it')
})
