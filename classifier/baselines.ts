// `npm run baselines`: macro-F1 of the committed model's served decision and of the four word lists
// (word-lists.ts) on every validation split (splits.ts), as a table for classifier/README.md.
import { initTf } from './runtime.js'
import { Detector } from './detector.js'
import { needOffensiveData, score } from './data.js'
import { MODEL_DIR } from './paths.js'
import { validationSplitsWithProfanity } from './splits.js'
import { WORD_LISTS } from './word-lists.js'

needOffensiveData('baselines')
await initTf('wasm', console.error)
const detector = await Detector.load(MODEL_DIR)
const splits = validationSplitsWithProfanity()
const rows: string[][] = []
const macro = (labels: number[], decisions: number[]) => score(labels, decisions, 0.5).macro_f1.toFixed(3)
for (const [split, examples] of Object.entries(splits)) {
  const labels = examples.map((e) => e.label)
  const texts = examples.map((e) => e.text)
  const model = macro(labels, detector.scoreTexts(texts))
  const lists = Object.values(WORD_LISTS).map((offensive) =>
    macro(
      labels,
      texts.map((t) => (offensive(t) ? 1 : 0)),
    ),
  )
  rows.push([split, String(examples.length), model, ...lists])
}
console.log(`| split | texts | model | ${Object.keys(WORD_LISTS).join(' | ')} |`)
console.log(
  `|---|---|---|${Object.keys(WORD_LISTS)
    .map(() => '---')
    .join('|')}|`,
)
for (const row of rows) console.log(`| ${row.join(' | ')} |`)
