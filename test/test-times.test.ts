// The suite's runner (test/run.mjs) keeps each file's time for `npm run test:slowest`, whatever files a
// run named: a run of one file is recorded too, beside the times of the others. Its tiers
// (test/tiers.mjs) name real files and split them.
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import t from 'tap'
import { ROOT, tempDir } from './helper.js'

const run = promisify(execFile)

t.test('a run of one file is recorded for test:slowest', async (t) => {
  const env = { ...process.env, TEST_TIMES_DIR: tempDir(t), TEST_JOBS: '1', DATABASE_URL: '' }
  await run(process.execPath, ['test/run.mjs', 'test/filters.test.ts'], { cwd: ROOT, env })
  const { stdout } = await run(process.execPath, ['test/slowest.mjs'], { cwd: ROOT, env })
  t.match(stdout, /pglite: 1 files, .*no whole tier run yet/)
  t.match(stdout, /s {2}test\/filters\.test\.ts/)
})

t.test('a run ends with what failed: each failed assertion, where it is and what it found', async (t) => {
  // Inside the repository (under .data/, ignored by git), where the file's import of tap resolves.
  const dir = mkdtempSync(join(ROOT, '.data', 'runner-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'failing.test.ts')
  writeFileSync(file, "import t from 'tap'\nt.test('outer', async (t) => { t.equal(41, 42, 'the answer') ; t.ok(true, 'a pass') })\n")
  const env = { ...process.env, TEST_TIMES_DIR: tempDir(t), TEST_JOBS: '1', DATABASE_URL: '', TEST_FAILURES_FILE: join(tempDir(t), 'failures') }
  const failed = await run(process.execPath, ['test/run.mjs', file], { cwd: ROOT, env }).catch((error) => error)
  t.equal(failed.code, 1, 'a failure exits 1')
  const report = failed.stdout.slice(failed.stdout.lastIndexOf('what failed'))
  t.match(
    report,
    /^what failed \(pglite, the files named\):\n.*failing\.test\.ts:\n\s+not ok 1 - the answer\n\s+fileName: .*failing\.test\.ts\n\s+lineNumber: 2\n\s+-42\n\s+\+41\n\s+not ok 1 - outer/,
  )
  t.notMatch(report, /a pass/, 'what passed is not repeated')
  t.equal(readFileSync(env.TEST_FAILURES_FILE, 'utf8').trim(), report.trim(), 'and kept for CI to print at its end')
})

t.test('test/tiers.mjs names only files that exist, and every file is in exactly one of fast and e2e', async (t) => {
  const { BROWSER, OPERATOR, LONG, ENGINE, ONE_ENGINE, inTier } = await import('./tiers.mjs')
  const files = readdirSync(join(ROOT, 'test'))
    .filter((f) => f.endsWith('.test.ts'))
    .map((f) => `test/${f}`)
  for (const name of [...BROWSER, ...OPERATOR, ...LONG, ...ENGINE]) t.ok(files.includes(`test/${name}.test.ts`), `${name} is a test file`)
  const fast = inTier('fast', files)
  const e2e = inTier('e2e', files)
  t.equal(fast.length + e2e.length, files.length, 'each file in one tier')
  t.same(inTier('all', files), files, '--tier all runs them all')
  const pg = inTier('pg', files)
  const named = (names: string[]) => names.map((name) => `test/${name}.test.ts`)
  const onPostgres = [...named(OPERATOR.filter((name: string) => !ONE_ENGINE.includes(name))), ...named(LONG), ...named(ENGINE)]
  t.same(
    pg,
    files.filter((f) => onPostgres.includes(f)),
    'the pg tier: operator files but ONE_ENGINE, long runs, ENGINE',
  )
  t.ok(
    named(ONE_ENGINE).every((f: string) => e2e.includes(f)),
    'a ONE_ENGINE file is an e2e file',
  )
  t.ok(
    named(ENGINE).every((f: string) => fast.includes(f)),
    'an ENGINE file runs in the fast tier too',
  )
  t.notOk(
    pg.some((f: string) => named(BROWSER).includes(f)),
    'no page runs on PostgreSQL',
  )
  t.ok(fast.includes('test/authorization.test.ts') && e2e.includes('test/web-dashboard.test.ts'), 'an API file is fast, a page file e2e')
})
