// `npm test`: runs the tap suite (on PGlite, or on PostgreSQL when DATABASE_URL is set), streams its
// output, and closes with a plain `N passed, N failed` line. The exit code is tap's.
import { spawn } from 'node:child_process'

const child = spawn('npx', ['tap', '--reporter=tap', ...process.argv.slice(2)], { stdio: ['ignore', 'pipe', 'inherit'] })
let tail = ''
let passed = 0
let failed = 0
let skipped = 0
child.stdout.on('data', (chunk) => {
  process.stdout.write(chunk)
  tail = (tail + chunk.toString()).slice(-200_000)
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
  console.log(`\n${engine}: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`)
  process.exit(code ?? 1)
})
