// Why lib/data/data-dir-lock.ts is not proper-lockfile (README, "Kept by hand"): proper-lockfile's lock
// lives while its holder renews it, so (1) a holder killed with SIGKILL blocks the directory until the
// lock is stale, and (2) a live holder whose event loop is blocked past the stale time loses it to a
// second process. The libraries come from a scratch directory, not this project:
//   mkdir /tmp/libs && npm install --prefix /tmp/libs proper-lockfile@4
//   LIBS=/tmp/libs node bench/kept-by-hand/lockfile.mjs
import { fork } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const lockfile = createRequire(join(process.env.LIBS ?? '.', 'node_modules', 'x'))('proper-lockfile')
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

if (process.argv[2] === 'hold') {
  await lockfile.lock(process.argv[3], {
    onCompromised: (error) => {
      console.log(`   the holder, still running: ${error.message}`)
      process.exit(3)
    },
  })
  process.send('locked')
  process.on('message', () => {
    const end = Date.now() + 12_000
    while (Date.now() < end);
  })
} else {
  const dir = mkdtempSync(join(tmpdir(), 'rhizome-lockfile-'))
  const file = join(dir, 'pglite')
  writeFileSync(file, '')
  const holder = () =>
    new Promise((resolve) => {
      const child = fork(new URL(import.meta.url).pathname, ['hold', file])
      child.once('message', () => resolve(child))
    })
  const tryLock = () => lockfile.lock(file).catch((error) => error.code)

  let child = await holder()
  child.kill('SIGKILL')
  await new Promise((resolve) => child.once('exit', resolve))
  const killedAt = Date.now()
  let release
  while (typeof (release = await tryLock()) === 'string') await sleep(100)
  console.log(`1. holder killed: refused (ELOCKED) for ${Date.now() - killedAt} ms before another process could take it`)
  await release()

  child = await holder()
  child.send('block')
  await sleep(11_000)
  release = await tryLock()
  console.log(`2. holder alive, its event loop blocked 11 s: a second process ${typeof release === 'string' ? `was refused (${release})` : 'took the lock'}`)
  await new Promise((resolve) => child.once('exit', resolve))
  if (typeof release === 'function') await release().catch(() => {})
  rmSync(dir, { recursive: true, force: true })
}
