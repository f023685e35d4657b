// The suite's runner (test/run.mjs) keeps each file's time for `npm run test:slowest`, whatever files a
// run named: a run of one file is recorded too, beside the times of the others.
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import t from 'tap'
import { ROOT, tempDir } from './helper.js'

const run = promisify(execFile)

t.test('a run of one file is recorded for test:slowest', async (t) => {
  const env = { ...process.env, TEST_TIMES_DIR: tempDir(t), TEST_JOBS: '1', DATABASE_URL: '' }
  await run(process.execPath, ['test/run.mjs', 'test/filters.test.ts'], { cwd: ROOT, env })
  const { stdout } = await run(process.execPath, ['test/slowest.mjs'], { cwd: ROOT, env })
  t.match(stdout, /pglite: 1 files, .*no whole suite run yet/)
  t.match(stdout, /s {2}test\/filters\.test\.ts/)
})
