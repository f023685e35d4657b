// `npm run bench:scale-out`: the datapoint read of bench:reads (campaign_datapoint, one indicator, one
// campaign, the root's districts, over 1,000,000 computed values) through nginx, with 1 and 2 server
// processes (WEB_CONCURRENCY), reading from a streaming replica (DATABASE_READ_URL) or from the
// primary. The deployment is test/topology.ts's: a primary and a replica of their own, started in
// temporary directories, nginx with deploy/nginx/rhizome.conf. Each configuration: a warm-up, then
// BENCH_SECONDS (default 10) of autocannon (50 connections) through nginx. On a machine of 2 cores,
// the load generator, nginx, both PostgreSQL servers and the server processes share them.
import pg from 'pg'
import { cpuMicros, doing, onStop, round, table, type Round } from './lib.js'
import { reads, seedReads } from './read-statements.js'
import { allProcessesUp, missingTools, startNginx, startPrimary, startReplica, startServer, withChildren } from '../test/topology.js'

const KEY = '8'.repeat(40)
const seconds = Number(process.env.BENCH_SECONDS ?? 10)
const read = reads[0]

const missing = missingTools()
if (missing) {
  console.error(`bench:scale-out ${missing}`)
  process.exit(2)
}

/**
 * What test/topology.ts starts, undone last first when the scope closes, or all at once on a stop
 * (bench/scratch.ts): each cleanup runs once, whichever comes first.
 */
function scope() {
  const cleanups: Array<() => unknown> = []
  return {
    teardown(cleanup: () => unknown) {
      const forget = onStop(cleanup)
      cleanups.unshift(() => forget() && cleanup())
    },
    async close() {
      for (const cleanup of cleanups.splice(0)) await cleanup()
    },
  }
}

const deployment = scope()
try {
  doing('starting a primary and a replica')
  const primary = await startPrimary(deployment)
  const replica = await startReplica(deployment, primary)
  const env = { DATABASE_URL: primary.url, ADMIN_API_KEY: KEY, DEMO_DATA: '0', MAX_EVENT_LOOP_DELAY_MS: '0', TRUST_PROXY: '127.0.0.1', JOB_CONCURRENCY: '0' }
  // The first server migrates the database; then the data is seeded and the tree built.
  doing(`starting the first server (the primary in ${primary.dir}, the replica in ${replica.dir})`)
  const first = await startServer(deployment, env)
  doing('seeding the data of bench:reads')
  const seeder = new pg.Client({ connectionString: primary.url })
  await seeder.connect()
  const started = Date.now()
  await seedReads(seeder)
  const tree = await fetch(`${first.url}/api/v1/cache_meta/`, { headers: { authorization: `ApiKey admin:${KEY}` } })
  if (tree.status !== 200) throw new Error(`cache_meta: ${tree.status}`)
  await seeder.query('vacuum analyze location_tree')
  await seeder.end()
  await first.stop()
  console.log(`seeded in ${((Date.now() - started) / 1000).toFixed(1)} s`)

  const rounds: Round[] = []
  for (const processes of [1, 2]) {
    for (const source of ['replica', 'primary'] as const) {
      doing(`${processes} process(es), reads from the ${source}: starting`)
      const servers = scope()
      const server = await startServer(servers, {
        ...env,
        WEB_CONCURRENCY: String(processes),
        ...(source === 'replica' ? { DATABASE_READ_URL: replica.url } : {}),
      })
      await allProcessesUp(server, processes)
      const proxy = await startNginx(servers, [server.port])
      const served = (await fetch(proxy.url + read.path, { headers: { authorization: `ApiKey admin:${KEY}` } })).headers.get('x-database')
      // CPU time of each part over the measured run, per request: where a read's work is done.
      const parts = { servers: () => withChildren(server.child.pid!), primary: primary.pids, replica: replica.pids, nginx: proxy.pids }
      const cpu = () => Object.fromEntries(Object.entries(parts).map(([name, pids]) => [name, pids().reduce((sum, pid) => sum + (cpuMicros(pid) ?? 0), 0)]))
      const client = process.cpuUsage()
      const before = cpu()
      const wallStarted = performance.now()
      const result = await round(
        `${processes} process(es), reads from the ${source} (x-database: ${served ?? 'primary'})`,
        proxy.url + read.path,
        { authorization: `ApiKey admin:${KEY}` },
        seconds,
      )
      const after = cpu()
      const clientUsage = process.cpuUsage(client)
      rounds.push(result)
      // Over the warm-up and the measured run alike (the same load): cores kept busy, and per read.
      const wallMicros = (performance.now() - wallStarted) * 1000
      const usage = {
        ...Object.fromEntries(Object.keys(parts).map((name) => [name, after[name] - before[name]])),
        'load generator': clientUsage.user + clientUsage.system,
      }
      const shares = Object.entries(usage).map(
        ([name, micros]) => `${name} ${(micros / wallMicros).toFixed(2)} cores (${((micros / wallMicros / result.requests_per_s) * 1000).toFixed(1)} ms/read)`,
      )
      console.log(table(rounds.slice(-1)))
      console.log(`CPU: ${shares.join(', ')}`)
      await servers.close()
    }
  }
  console.log(`\n${read.name}, through nginx, ${seconds} s per configuration:\n${table(rounds)}`)
} finally {
  await deployment.close()
}
