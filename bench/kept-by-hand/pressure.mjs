// Why lib/api/lag-monitor.ts is not @fastify/under-pressure (README, "Kept by hand"): under-pressure
// sheds when the mean event-loop delay of one sample interval (1 s, 10 ms samples) exceeds the limit,
// so heavy synchronous work with short gaps between reads as a small mean; LagMonitor measures how late
// its timer runs and sheds when every sample of PRESSURE_WINDOW_MS was over the limit. Both here with
// the defaults (1,000 ms; 5,000 ms): single 1.5 s stalls, then 10 s of 1.5 s blocks 100 ms apart.
//   mkdir /tmp/libs && npm install --prefix /tmp/libs fastify@5 @fastify/under-pressure@9
//   LIBS=/tmp/libs npx tsx bench/kept-by-hand/pressure.mjs
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { LagMonitor } from '../../lib/api/lag-monitor.ts'

const need = createRequire(join(process.env.LIBS ?? '.', 'node_modules', 'x'))
const app = need('fastify')()
await app.register(need('@fastify/under-pressure'), { maxEventLoopDelay: 1000 })
app.get('/', async () => 'ok')
await app.ready()
const monitor = new LagMonitor(1000, 5000)
monitor.start()
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const block = (ms) => {
  const end = Date.now() + ms
  while (Date.now() < end);
}
const check = async (counts) => {
  counts.checks++
  if ((await app.inject('/')).statusCode === 503) counts.library++
  if (monitor.saturated()) counts.ours++
}
const report = (what, c) => console.log(`${what}: under-pressure shed ${c.library} of ${c.checks}, LagMonitor ${c.ours} of ${c.checks}`)

await sleep(2000)
const single = { checks: 0, library: 0, ours: 0 }
for (let i = 0; i < 6; i++) {
  await sleep(2000 + Math.random() * 1000)
  block(1500)
  for (let j = 0; j < 10; j++) await check(single).then(() => sleep(100))
}
report('the second after each of 6 single 1.5 s stalls', single)

const sustained = { checks: 0, library: 0, ours: 0 }
const started = Date.now()
while (Date.now() - started < 10_000) {
  block(1500)
  await sleep(100)
  await check(sustained)
}
report('10 s of 1.5 s blocks 100 ms apart (requests wait up to 1.6 s)', sustained)
monitor.stop()
await app.close()
