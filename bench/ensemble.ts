// `npm run bench:ensemble`: what serving an ensemble of networks would cost a text next to one network,
// in a warm loop over the texts bench:detect posts (`corpus(500)`): the windows computed once, each
// network's served pass (forward.ts) and served score, their logits averaged as `npm run seeds` scores
// the ensemble. The committed
// network is loaded BENCH_MODELS times (default 5): seeds of one design cost the same, weights aside.
// Rounds of one network and of the ensemble alternate BENCH_ROUNDS times (default 5).
import { corpus, median } from './lib.js'
import { initTf } from '../classifier/runtime.js'
import { Detector, logit } from '../classifier/detector.js'
import { MODEL_DIR } from '../classifier/paths.js'

const models = Number(process.env.BENCH_MODELS ?? 5)
const rounds = Number(process.env.BENCH_ROUNDS ?? 5)
const texts = corpus(500)

await initTf('wasm')
const detectors: Detector[] = []
for (let i = 0; i < models; i++) detectors.push(await Detector.load(MODEL_DIR))
const [first] = detectors

/** µs a text: windows, then each network's served score of its best window, the mean of their logits. */
function perText(networks: Detector[]): number {
  const start = performance.now()
  let sink = 0
  for (const text of texts) {
    const windows = first.windowsOf(text)
    let logits = 0
    for (const network of networks) {
      let best = 0
      for (const p of network.scoreWindows(windows)) best = Math.max(best, p)
      logits += logit(network.served(windows, best))
    }
    sink += 1 / (1 + Math.exp(-logits / networks.length))
  }
  if (Number.isNaN(sink)) throw new Error('a score was NaN')
  return ((performance.now() - start) * 1000) / texts.length
}

perText(detectors) // every network's word tables filled (forward.ts computes a word's rows on first use)
const one: number[] = []
const all: number[] = []
for (let round = 0; round < rounds; round++) {
  one.push(perText([first]))
  all.push(perText(detectors))
}
const range = (values: number[]) => `${Math.min(...values).toFixed(1)}–${Math.max(...values).toFixed(1)}`
console.log('| served pass | µs a text, median | range over rounds |')
console.log('|---|---|---|')
console.log(`| one network | ${median(one).toFixed(1)} | ${range(one)} |`)
console.log(`| ${models} networks averaged | ${median(all).toFixed(1)} | ${range(all)} |`)
console.log(`\nthe ensemble costs ${(median(all) / median(one)).toFixed(2)}× one network a text (${rounds} alternated rounds, ${texts.length} texts)`)
