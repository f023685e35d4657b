// `npm test`: runs the tap suite (on PGlite, or on PostgreSQL when DATABASE_URL is set), streams its
// output, and closes with a plain `N passed, N failed` line. The exit code is tap's. Each file's time
// is kept in .data/test-times-<engine>.json for `npm run test:slowest`.
import { spawn } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'

const child = spawn('npx', ['tap', '--reporter=tap', ...process.argv.slice(2)], { stdio: ['ignore', 'pipe', 'inherit'] })
const started = Date.now()
let tail = ''
let pending = ''
const times = {}
let passed = 0
let failed = 0
let skipped = 0
child.stdout.on('data', (chunk) => {
  process.stdout.write(chunk)
  const text = chunk.toString()
  tail = (tail + text).slice(-200_000)
  // A file's own line: `ok 3 - test/bad-input.test.ts # time=6443.795ms`.
  const lines = (pending + text).split('\n')
  pending = lines.pop()
  for (const line of lines) {
    const file = /^(?:not )?ok \d+ - (test\/\S+) # time=([\d.]+)ms/.exec(line)
    if (file) times[file[1]] = Number(file[2])
  }
})
child.on('close', (code) => {
  // tap's closing summary: `# { total: 12, pass: 11, fail: 1, skip: 0 }`
  const summary = [...tail.matchAll(/^# \{ total: (\d+)(.*?)\}$/gm)].pop()
  if (summary) {
    const count = (name) => Number(new RegExp(`${name}: (\\d+)`).exec(summary[2])?.[1] ?? 0)
    passed = count('pass')
    failed = count('fail')
    skipped = count('skip') + count('todo')
  }
  const engine = process.env.DATABASE_URL ? 'postgres' : 'pglite'
  const wall = (Date.now() - started) / 1000
  if (Object.keys(times).length > 1) {
    mkdirSync('.data', { recursive: true })
    writeFileSync(`.data/test-times-${engine}.json`, `${JSON.stringify({ wall_s: wall, files_ms: times }, null, 1)}\n`)
  }
  console.log(`\n${engine}: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''} in ${wall.toFixed(0)} s`)
  process.exit(code ?? 1)
})
