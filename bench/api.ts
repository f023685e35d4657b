// `npm run bench:api`: req/s and p99 of GET /api/v1/campaign/<pk>/, GET /api/v1/indicator/?id__in=<10 ids>
// and POST /api/v1/campaign_type/ (a new row each) on PGlite and on PostgreSQL (and the detail GET once
// more with the detail cache off), next to a bare Fastify hello-world, all on loopback, each run 10 s.
// The write comes last: each one empties the read caches, which the reads before it have filled.
// PostgreSQL: BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres); a scratch
// database is created and dropped. `BENCH_BEFORE`: another checkout's root (its dist/ built, such as a
// `git worktree` of an earlier commit): the app's rounds then alternate with that build's,
// `BENCH_PAIRS` times (default 1), each build on a database of its own.
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { ADMIN_URL, round, scratchDatabase, scratchDir, startServer, stop, table, type Round, writeRound } from './lib.js'

const KEY = 'e'.repeat(40)
const auth = { authorization: `ApiKey admin:${KEY}` }
const seconds = Number(process.env.BENCH_SECONDS ?? 10)

async function seed(port: number) {
  const call = async (path: string, body: unknown) => {
    const res = await fetch(`http://127.0.0.1:${port}/api/v1/${path}`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
    return (await res.json()) as { id: number }
  }
  const type = await call('campaign_type/', { name: 'NID' })
  const campaign = await call('campaign/', { name: 'March', campaign_type_id: type.id, start_date: '2016-03-01', end_date: '2016-03-31' })
  const indicators: number[] = []
  for (let i = 0; i < 50; i++) indicators.push((await call('indicator/', { name: `Indicator ${i}`, short_name: `i${i}`, data_format: 'int' })).id)
  return { campaign: campaign.id, indicators: indicators.slice(10, 20) }
}

async function appRounds(
  label: string,
  env: Record<string, string | undefined>,
  port: number,
  { list = true, write = true, root = '.' } = {},
): Promise<Round[]> {
  const server = await startServer([join(root, 'dist', 'server.js')], { ...env, ADMIN_API_KEY: KEY, DEMO_DATA: '0' }, port)
  try {
    const { campaign, indicators } = await seed(port)
    const rounds = [await round(`${label}: GET /api/v1/campaign/<pk>/`, `http://127.0.0.1:${port}/api/v1/campaign/${campaign}/`, auth, seconds)]
    if (list)
      rounds.push(
        await round(
          `${label}: GET /api/v1/indicator/?id__in=<10 ids>`,
          `http://127.0.0.1:${port}/api/v1/indicator/?id__in=${indicators.join(',')}`,
          auth,
          seconds,
        ),
      )
    if (write)
      rounds.push(
        await writeRound(`${label}: POST /api/v1/campaign_type/`, `http://127.0.0.1:${port}/api/v1/campaign_type/`, { name: 'Type [<id>]' }, auth, seconds),
      )
    return rounds
  } finally {
    await stop(server)
  }
}

const rounds: Round[] = []
const hello = await startServer(['--import', 'tsx', 'bench/hello.ts'], {}, 3999)
rounds.push(await round('hello-world (bare Fastify)', 'http://127.0.0.1:3999/', {}, seconds))
await stop(hello)

/** Every app round of the build at `root`, its labels prefixed with `name` when two builds are compared. */
async function buildRounds(name: string, root: string, port: number): Promise<Round[]> {
  const rounds: Round[] = []
  const label = (engine: string) => (name ? `${name}, ${engine}` : engine)
  const dataDir = scratchDir('rhizome-bench-')
  rounds.push(...(await appRounds(label('PGlite'), { DATA_DIR: dataDir, DATABASE_URL: '' }, port, { root })))
  rmSync(dataDir, { recursive: true, force: true })
  const scratch = await scratchDatabase(ADMIN_URL, 'rhizome_bench')
  try {
    rounds.push(...(await appRounds(label('PostgreSQL'), { DATA_DIR: scratchDir('rhizome-bench-'), DATABASE_URL: scratch.url }, port + 1, { root })))
  } finally {
    await scratch.close()
  }
  // The same without the detail cache: every detail GET reads the database and writes its row's JSON.
  const uncachedScratch = await scratchDatabase(ADMIN_URL, 'rhizome_bench_uncached')
  try {
    const env = { DATA_DIR: scratchDir('rhizome-bench-'), DATABASE_URL: uncachedScratch.url, DETAIL_CACHE_BYTES: '0' }
    rounds.push(...(await appRounds(label('PostgreSQL, DETAIL_CACHE_BYTES=0'), env, port + 2, { list: false, write: false, root })))
  } finally {
    await uncachedScratch.close()
  }
  return rounds
}

const before = process.env.BENCH_BEFORE
const builds: Array<[string, string]> = before
  ? [
      [`before (${before})`, before],
      ['this build', '.'],
    ]
  : [['', '.']]
for (let pair = 0; pair < (before ? Number(process.env.BENCH_PAIRS ?? 1) : 1); pair++) {
  for (const [name, root] of builds) rounds.push(...(await buildRounds(name, root, 4001)))
}

console.log(table(rounds))
const helloRate = rounds[0].requests_per_s
for (const r of rounds.slice(1)) console.log(`${r.name}: ${((100 * r.requests_per_s) / helloRate).toFixed(1)} % of hello-world`)
