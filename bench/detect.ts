// `npm run bench:detect`: POST /detect with a varied text corpus (autocannon, 50 connections, 10 s,
// loopback), next to a bare Fastify hello-world and a bare POST /detect (constant scores) in the same
// run; plus the time left for classification, model load time and memory.
import { detectRound, startServer, stop, round, table, type Round } from './lib.js'
import { initTf } from '../classifier/runtime.js'
import { Detector } from '../classifier/detector.js'
import { MODEL_DIR } from '../classifier/paths.js'

const seconds = Number(process.env.BENCH_SECONDS ?? 10)

const rss0 = process.memoryUsage().rss
const t0 = performance.now()
await initTf('wasm')
await Detector.load(MODEL_DIR)
const loadMs = performance.now() - t0
const rssMb = (process.memoryUsage().rss - rss0) / 1e6

const rounds: Round[] = []
const hello = await startServer(['--import', 'tsx', 'bench/hello.ts'], {}, 3999)
rounds.push(await round('hello-world (bare Fastify)', 'http://127.0.0.1:3999/', {}, seconds))
rounds.push(await detectRound(3999, 'bare Fastify POST /detect (same bodies parsed, constant scores)', seconds))
await stop(hello)
// The default micro-batching window (2 ms, detect.md §5), then none: a batch is scored as soon as the
// event loop has read what arrived (the forward pass is per window, so a batch saves no computation;
// bench/README.md, "Detection").
for (const wait of ['2', '0']) {
  const app = await startServer(['dist/server.js'], { DEMO_DATA: '0', DATA_DIR: '/tmp/rhizome-bench-detect', DETECT_MICROBATCH_WAIT_MS: wait }, 4003)
  rounds.push(await detectRound(4003, `POST /detect (varied texts), DETECT_MICROBATCH_WAIT_MS=${wait}`, seconds))
  await stop(app)
}

console.log(table(rounds))
for (const detect of rounds.slice(1)) console.log(`${detect.name}: ${((100 * detect.requests_per_s) / rounds[0].requests_per_s).toFixed(1)} % of hello-world`)
// At half of hello-world's req/s, each request may cost twice a hello-world's time; the bare POST
// route's share of that is spent before any classification, the rest is what a classifier may use.
const [helloRound, barePost] = rounds
const budget = 1e6 / (0.5 * helloRound.requests_per_s) - 1e6 / barePost.requests_per_s
console.log(`time per request at 50 % of hello-world: ${(2e6 / helloRound.requests_per_s).toFixed(1)} µs; the bare POST route's: ${(1e6 / barePost.requests_per_s).toFixed(1)} µs; left for classification: ${budget.toFixed(1)} µs`)
console.log(`model load (TF.js wasm init + files + warm-up): ${loadMs.toFixed(0)} ms; RSS growth ${rssMb.toFixed(0)} MB`)
