// `npm run test:slowest`: the slowest test files of the last `npm test` on each engine (each file's
// time as tap measured it in its worker; three workers share two cores).
import { existsSync, readFileSync } from 'node:fs'

const count = Number(process.argv[2] ?? 10)
for (const engine of ['pglite', 'postgres']) {
  const path = `.data/test-times-${engine}.json`
  if (!existsSync(path)) {
    console.log(`${engine}: no run recorded yet (npm test${engine === 'postgres' ? ' with DATABASE_URL' : ''})`)
    continue
  }
  const { wall_s, files_ms } = JSON.parse(readFileSync(path, 'utf8'))
  const files = Object.entries(files_ms).sort(([, a], [, b]) => b - a)
  const total = files.reduce((sum, [, ms]) => sum + ms, 0) / 1000
  console.log(`${engine}: ${files.length} files, ${total.toFixed(0)} s in the files, ${wall_s.toFixed(0)} s wall`)
  for (const [file, ms] of files.slice(0, count)) console.log(`  ${(ms / 1000).toFixed(1).padStart(6)} s  ${file}`)
}
