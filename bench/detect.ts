// `npm run bench:detect`: POST /detect with a varied text corpus (autocannon, 50 connections,
// loopback) next to a bare Fastify hello-world and a bare POST /detect (constant scores). All three
// servers run at once and their rounds alternate, BENCH_PAIRS times (default 3): on a shared machine
// the req/s of one round can swing by half minutes later, and a ratio of two rounds far apart measures
// that swing, not the service. The median of the per-pass ratios is the figure; then the time left
// for classification, model load time and memory.
import { detectRound, doing, median, round, scratchDir, startServer, stop, table, type Round } from './lib.js'
import { initTf } from '../classifier/runtime.js'
import { Detector } from '../classifier/detector.js'
import { MODEL_DIR } from '../classifier/paths.js'

const seconds = Number(process.env.BENCH_SECONDS ?? 6)
const passes = Number(process.env.BENCH_PAIRS ?? 3)

doing('loading the model')
const rss0 = process.memoryUsage().rss
const t0 = performance.now()
await initTf('wasm')
await Detector.load(MODEL_DIR)
const loadMs = performance.now() - t0
const rssMb = (process.memoryUsage().rss - rss0) / 1e6

const hello = await startServer(['--import', 'tsx', 'bench/hello.ts'], {}, 3999)
// The default micro-batching window (2 ms, detect.md §5); the 0 ms window is one more round at the end.
const dataDir = scratchDir('rhizome-bench-detect-')
const app = await startServer(['dist/server.js'], { DEMO_DATA: '0', DATA_DIR: dataDir, DETECT_MICROBATCH_WAIT_MS: '2' }, 4003)
const rounds: Round[] = []
const passRounds: Array<{ hello: Round; bare: Round; detect: Round }> = []
for (let pass = 1; pass <= passes; pass++) {
  const helloRound = await round(`${pass}: hello-world (bare Fastify)`, 'http://127.0.0.1:3999/', {}, seconds)
  const bare = await detectRound(3999, `${pass}: bare Fastify POST /detect (same bodies parsed, constant scores)`, seconds)
  const detect = await detectRound(4003, `${pass}: POST /detect (varied texts), DETECT_MICROBATCH_WAIT_MS=2`, seconds)
  rounds.push(helloRound, bare, detect)
  passRounds.push({ hello: helloRound, bare, detect })
}
await stop(app)
await stop(hello)
// No window: a batch is scored as soon as the event loop has read what arrived (the forward pass is
// per window, so a batch saves no computation; bench/README.md, "Detection").
const unbatched = await startServer(['dist/server.js'], { DEMO_DATA: '0', DATA_DIR: dataDir, DETECT_MICROBATCH_WAIT_MS: '0' }, 4003)
rounds.push(await detectRound(4003, 'POST /detect (varied texts), DETECT_MICROBATCH_WAIT_MS=0', seconds))
await stop(unbatched)

const share = (r: Round, of: Round) => r.requests_per_s / of.requests_per_s
console.log(table(rounds))
for (const [i, p] of passRounds.entries()) {
  console.log(
    `pass ${i + 1}: /detect ${(100 * share(p.detect, p.hello)).toFixed(1)} % of hello-world (p99 ${p.detect.p99_ms} ms), bare POST ${(100 * share(p.bare, p.hello)).toFixed(1)} % (p99 ${p.bare.p99_ms} ms)`,
  )
}
const ratio = median(passRounds.map((p) => share(p.detect, p.hello)))
console.log(
  `median over ${passes} passes: /detect ÷ hello-world ${ratio.toFixed(3)}; /detect p99 ${median(passRounds.map((p) => p.detect.p99_ms))} ms, bare POST p99 ${median(passRounds.map((p) => p.bare.p99_ms))} ms`,
)
// At half of hello-world's req/s, each request may cost twice a hello-world's time; the bare POST
// route's share of that is spent before any classification, the rest is what a classifier may use.
const helloRps = median(passRounds.map((p) => p.hello.requests_per_s))
const bareRps = median(passRounds.map((p) => p.bare.requests_per_s))
const budget = 1e6 / (0.5 * helloRps) - 1e6 / bareRps
console.log(
  `time per request at 50 % of hello-world: ${(2e6 / helloRps).toFixed(1)} µs; the bare POST route's: ${(1e6 / bareRps).toFixed(1)} µs; left for classification: ${budget.toFixed(1)} µs`,
)
console.log(`model load (TF.js wasm init + files + warm-up): ${loadMs.toFixed(0)} ms; RSS growth ${rssMb.toFixed(0)} MB`)
