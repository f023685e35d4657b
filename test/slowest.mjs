// `npm run test:slowest`: the slowest test files on each engine, each as its last `npm test` run of it
// measured it (tap's time in its worker; three workers share two cores).
import { existsSync, readFileSync } from 'node:fs'

const count = Number(process.argv[2] ?? 10)
for (const engine of ['pglite', 'postgres']) {
  const path = `${process.env.TEST_TIMES_DIR ?? '.data'}/test-times-${engine}.json`
  if (!existsSync(path)) {
    console.log(`${engine}: no run recorded yet (npm test${engine === 'postgres' ? ' with DATABASE_URL' : ''})`)
    continue
  }
  const { tier_wall_s = {}, files_ms } = JSON.parse(readFileSync(path, 'utf8'))
  const files = Object.entries(files_ms).sort(([, a], [, b]) => b - a)
  const total = files.reduce((sum, [, ms]) => sum + ms, 0) / 1000
  const tiers = Object.entries(tier_wall_s).map(([tier, s]) => `${tier} ${s} s`)
  const wall = tiers.length ? `the last whole run of each tier: ${tiers.join(', ')}` : 'no whole tier run yet'
  console.log(`${engine}: ${files.length} files, ${total.toFixed(0)} s in the files, ${wall}`)
  for (const [file, ms] of files.slice(0, count)) console.log(`  ${(ms / 1000).toFixed(1).padStart(6)} s  ${file}`)
}
