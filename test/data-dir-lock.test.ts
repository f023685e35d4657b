// The embedded data directory's lock (lib/data/data-dir-lock.ts), kept by hand (README, "Kept by
// hand"): a holder that is gone is replaced at once, and a live holder keeps the lock however long
// its process does not run (no heartbeat to miss), so two processes never write one directory.
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { DataDirInUseError, lockDataDir } from '../lib/data/data-dir-lock.js'

const scratch = (t: Test) => {
  const dir = mkdtempSync(join(tmpdir(), 'rhizome-lock-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return join(dir, 'pglite')
}

/** A process that runs until killed (its pid is the lock's holder). */
async function holder(t: Test) {
  const child = spawn('sleep', ['60'], { stdio: 'ignore' })
  const exited = new Promise((resolve) => child.once('exit', resolve))
  t.teardown(async () => {
    child.kill('SIGKILL')
    await exited
  })
  return { pid: child.pid!, kill: async () => (child.kill('SIGKILL'), await exited) }
}

t.test('a lock whose holder was killed is taken at once, not after a staleness delay', async (t) => {
  const dir = scratch(t)
  const gone = await holder(t)
  writeFileSync(`${dir}.lock`, JSON.stringify({ pid: gone.pid }))
  await gone.kill()
  const started = performance.now()
  const lock = lockDataDir(dir)
  t.ok(performance.now() - started < 100, 'taken without waiting')
  t.equal(JSON.parse(readFileSync(`${dir}.lock`, 'utf8')).pid, process.pid)
  lock.release()
})

t.test('a live holder keeps the lock (nothing it must renew), and is named with its address', async (t) => {
  const dir = scratch(t)
  const live = await holder(t)
  writeFileSync(`${dir}.lock`, JSON.stringify({ pid: live.pid, url: 'http://127.0.0.1:3999' }))
  t.throws(() => lockDataDir(dir), DataDirInUseError)
  t.throws(() => lockDataDir(dir), { message: new RegExp(`in use by process ${live.pid} \\(the server at http://127.0.0.1:3999\\)`) })
})
