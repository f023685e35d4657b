// `npm run eval [-- file.jsonl …]`: macro-F1, per-class precision/recall/F1 and the threshold of the
// committed model, on TweetEval val and on any labelled JSONL ({text, label}) given.
import { join } from 'node:path'
import { readFileSync } from 'node:fs'
import { initTf } from './runtime.js'
import { Detector } from './detector.js'
import { needOffensiveData, OFFENSIVE_DATA, readJsonl, score } from './data.js'
import { MODEL_DIR } from './paths.js'

export async function evaluate(detector: Detector, file: string) {
  const examples = readJsonl(file)
  const scores = detector.scoreTexts(examples.map((e) => e.text))
  return score(
    examples.map((e) => e.label),
    scores,
    0.5,
  )
}

async function main() {
  await initTf('wasm', console.error)
  const detector = await Detector.load(MODEL_DIR)
  const files = process.argv.slice(2).length ? process.argv.slice(2) : [join(OFFENSIVE_DATA, 'tweeteval', 'val.jsonl')]
  const { threshold } = JSON.parse(readFileSync(join(MODEL_DIR, 'metadata.json'), 'utf8'))
  console.log(`threshold on the model's probability: ${threshold} (served scores are calibrated so 0.5 is the decision)`)
  for (const file of files) {
    const s = await evaluate(detector, file)
    const f = (n: number) => n.toFixed(4)
    console.log(`${file}\n  macro-F1 ${f(s.macro_f1)}  accuracy ${f(s.accuracy)}`)
    console.log(`  offensive      precision ${f(s.offensive.precision)} recall ${f(s.offensive.recall)} F1 ${f(s.offensive.f1)}`)
    console.log(`  not-offensive  precision ${f(s.not_offensive.precision)} recall ${f(s.not_offensive.recall)} F1 ${f(s.not_offensive.f1)}`)
    console.log(`  confusion ${JSON.stringify(s.confusion)}`)
  }
}

if (process.argv[1]?.endsWith('eval.ts') || process.argv[1]?.endsWith('eval.js')) {
  needOffensiveData('eval')
  main().catch((error) => {
    console.error(error)
    process.exit(1)
  })
}
