// `npm run seeds -- <design>=<dir>,<dir>… […]`: a design judged on the mean over seeds, not one draw.
// For each design (its models trained with different seeds, `npm run train -- --seed N --out DIR`) and
// each validation split: every seed's macro-F1, their mean with 95 % bootstrap intervals (the seeds
// resampled, which the choice rule reads; and seeds and texts together, the split being a draw too),
// the spread between seeds, and the ensemble (the
// seeds' served logits averaged); each with and without the profanity floor (profanity.ts). The
// word lists' macro-F1 on the same splits closes the table.
import { initTf } from './runtime.js'
import { Detector, logit } from './detector.js'
import { needOffensiveData } from './data.js'
import { validationSplitsWithProfanity } from './splits.js'
import { WORD_LISTS } from './word-lists.js'
import { prng } from '../lib/core/prng.js'

const RESAMPLES = 1000

/** Macro-F1 of decisions against labels over the given example indices. */
function macroF1(labels: Uint8Array, decisions: Uint8Array, indices: ArrayLike<number>) {
  let tp = 0
  let fp = 0
  let fn = 0
  let tn = 0
  for (let i = 0; i < indices.length; i++) {
    const k = indices[i]
    if (decisions[k]) labels[k] ? tp++ : fp++
    else labels[k] ? fn++ : tn++
  }
  const f1 = (a: number, b: number, c: number) => (a === 0 ? 0 : (2 * a) / (2 * a + b + c))
  return (f1(tp, fp, fn) + f1(tn, fn, fp)) / 2
}

interface Summary {
  seeds: number[]
  mean: number
  /** 95 % interval of the mean over seeds, the seeds resampled: what the choice rule reads. */
  seedLow: number
  seedHigh: number
  /** 95 % interval with the texts resampled too: how far the split itself may be from other texts. */
  low: number
  high: number
  ensemble: number
}

/** The 2.5th and 97.5th percentiles of `draws` means (sorted in place). */
function percentiles(means: number[]) {
  means.sort((a, b) => a - b)
  return [means[Math.floor(0.025 * means.length)], means[Math.ceil(0.975 * means.length) - 1]]
}

/** Seeds' decisions on one split → the summary (the ensemble's decisions given separately). */
function summarise(labels: Uint8Array, perSeed: Uint8Array[], ensemble: Uint8Array, random: () => number): Summary {
  const all = Uint32Array.from(labels, (_, i) => i)
  const seeds = perSeed.map((d) => macroF1(labels, d, all))
  const seedMeans: number[] = []
  for (let r = 0; r < RESAMPLES; r++) {
    let sum = 0
    for (let k = 0; k < seeds.length; k++) sum += seeds[Math.floor(random() * seeds.length)]
    seedMeans.push(sum / seeds.length)
  }
  const means: number[] = []
  const sample = new Uint32Array(labels.length)
  for (let r = 0; r < RESAMPLES; r++) {
    for (let i = 0; i < sample.length; i++) sample[i] = Math.floor(random() * labels.length)
    let sum = 0
    for (let k = 0; k < perSeed.length; k++) sum += macroF1(labels, perSeed[Math.floor(random() * perSeed.length)], sample)
    means.push(sum / perSeed.length)
  }
  const [seedLow, seedHigh] = percentiles(seedMeans)
  const [low, high] = percentiles(means)
  return { seeds, mean: seeds.reduce((a, b) => a + b, 0) / seeds.length, seedLow, seedHigh, low, high, ensemble: macroF1(labels, ensemble, all) }
}

async function main() {
  const designs = process.argv.slice(2).map((arg) => {
    const [name, dirs] = arg.split('=')
    if (!dirs) throw new Error(`expected <design>=<dir>,<dir>…, got ${arg}`)
    return { name, dirs: dirs.split(',') }
  })
  if (!designs.length) throw new Error('usage: npm run seeds -- <design>=<dir>,<dir>… […]')
  await initTf('wasm', console.error)
  const splits = validationSplitsWithProfanity()
  const f = (n: number) => n.toFixed(3)
  const lines = [
    '| design | floor | split | mean over seeds [95 %, seeds resampled] | [95 %, texts and seeds resampled] | seeds (min–max) | ensemble |',
    '|---|---|---|---|---|---|---|',
  ]
  for (const design of designs) {
    const detectors = await Promise.all(design.dirs.map((dir) => Detector.load(dir)))
    for (const [split, examples] of Object.entries(splits)) {
      const labels = Uint8Array.from(examples, (e) => e.label)
      const texts = examples.map((e) => e.text)
      for (const floor of [false, true]) {
        const served = detectors.map((d) => d.scoreTexts(texts, { floor }))
        const perSeed = served.map((ps) => Uint8Array.from(ps, (p) => (p > 0.5 ? 1 : 0)))
        // The ensemble averages the seeds' served logits (each already calibrated to its threshold).
        const ensemble = Uint8Array.from(texts, (_, i) => (served.reduce((sum, ps) => sum + logit(ps[i]), 0) > 0 ? 1 : 0))
        const s = summarise(labels, perSeed, ensemble, prng(7))
        lines.push(
          `| ${design.name} (${detectors.length} seeds) | ${floor ? 'yes' : 'no'} | ${split} | ${f(s.mean)} [${f(s.seedLow)}, ${f(s.seedHigh)}] | [${f(s.low)}, ${f(s.high)}] | ${f(Math.min(...s.seeds))}–${f(Math.max(...s.seeds))} | ${f(s.ensemble)} |`,
        )
      }
      console.error(`${design.name} ${split} done`)
    }
  }
  for (const [split, examples] of Object.entries(splits)) {
    const labels = Uint8Array.from(examples, (e) => e.label)
    const all = Uint32Array.from(labels, (_, i) => i)
    const lists = Object.entries(WORD_LISTS).map(
      ([name, offensive]) =>
        `${name} ${f(
          macroF1(
            labels,
            Uint8Array.from(examples, (e) => (offensive(e.text) ? 1 : 0)),
            all,
          ),
        )}`,
    )
    lines.push(`| word lists | | ${split} (${examples.length} texts) | ${lists.join(', ')} | | | |`)
  }
  console.log(lines.join('\n'))
}

needOffensiveData('seeds')
main().catch((error) => {
  console.error(error)
  process.exit(1)
})
