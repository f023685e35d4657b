// `npm run bench:metrics`: what the metrics cost. GET /api/v1/campaign/<pk>/ (a detail GET, the
// cheapest authenticated read) on PGlite with METRICS=1 and METRICS=0, in alternating rounds
// (BENCH_PAIRS, default 3) of BENCH_SECONDS (default 10) each, on loopback. Target: ≤ 5 % fewer req/s.
import { rmSync } from 'node:fs'
import { round, startServer, stop, table, type Round, scratchDir } from './lib.js'

const KEY = 'e'.repeat(40)
const auth = { authorization: `ApiKey admin:${KEY}` }
const seconds = Number(process.env.BENCH_SECONDS ?? 10)
const pairs = Number(process.env.BENCH_PAIRS ?? 3)

async function detailRound(metrics: '0' | '1', pair: number): Promise<Round> {
  const dataDir = scratchDir('rhizome-bench-')
  const server = await startServer(['dist/server.js'], { DATA_DIR: dataDir, DATABASE_URL: '', ADMIN_API_KEY: KEY, DEMO_DATA: '1', METRICS: metrics }, 4010)
  try {
    return await round(`pair ${pair}: METRICS=${metrics}`, 'http://127.0.0.1:4010/api/v1/campaign/1/', auth, seconds)
  } finally {
    await stop(server)
    rmSync(dataDir, { recursive: true, force: true })
  }
}

const rounds: Round[] = []
for (let pair = 1; pair <= pairs; pair++) {
  // Alternating which goes first, so a drift of the machine does not favour one side.
  const order: Array<'0' | '1'> = pair % 2 ? ['1', '0'] : ['0', '1']
  for (const metrics of order) rounds.push(await detailRound(metrics, pair))
}
console.log(table(rounds))
const mean = (metrics: string) => {
  const own = rounds.filter((r) => r.name.endsWith(`METRICS=${metrics}`))
  return own.reduce((sum, r) => sum + r.requests_per_s, 0) / own.length
}
const on = mean('1')
const off = mean('0')
console.log(`metrics on: ${Math.round(on)} req/s, off: ${Math.round(off)} req/s: ${((100 * (off - on)) / off).toFixed(1)} % fewer with metrics (target ≤ 5 %)`)
