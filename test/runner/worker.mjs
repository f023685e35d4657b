// One test process of `npm test`: asks the runner (test/run.mjs) for the next test file, runs it as a
// subtest of this process's tap root, and asks again until none is left. Files share the process, so
// its start (the TypeScript loader, the imports, PGlite from the template) is paid once per worker,
// not once per file; each file still gets its own subtest, timeout and teardowns.
import { register } from 'node:module'
import { pathToFileURL } from 'node:url'
import t from 'tap'
import { runningIn } from './current-test.mjs'

register('./tap-hook.mjs', import.meta.url)
// The worker lives as long as the queue; each file has its own timeout instead of the root's 30 s.
t.setTimeout(0)

const FILE_TIMEOUT_MS = 300_000

/**
 * The runner's answer to `{ next: true }`: a file, or null when the queue is empty. tap shares the
 * channel (its timeout message) and unrefs it, so it keeps the process alive only while a question is out.
 */
function nextFile() {
  return new Promise((resolve) => {
    const onMessage = (message) => {
      if (message === null || typeof message !== 'object' || !('testFile' in message)) return
      process.off('message', onMessage)
      process.channel.unref()
      resolve(message.testFile)
    }
    process.on('message', onMessage)
    process.channel.ref()
    process.send({ next: true })
  })
}

// The next file is asked for by a teardown of the current one, so the root is never idle between two
// files: tap ends a root that has teardowns of its own (test/helper.ts's shared database) once it sits
// idle for a few timer turns.
let file = await nextFile()
while (file) {
  let next = null
  await t.test(file, { timeout: FILE_TIMEOUT_MS }, async (fileTest) => {
    fileTest.teardown(async () => {
      next = await nextFile()
    })
    runningIn(fileTest)
    await import(pathToFileURL(file).href)
  })
  file = next
}
process.disconnect()
