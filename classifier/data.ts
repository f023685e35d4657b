// Labelled JSONL data ({text, label}) and the metrics of detect.md §7.
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { SHARED_DIR } from '../lib/core/paths.js'

/** Where the labelled data sets are: OFFENSIVE_DATA_DIR, or `../shared/data/offensive` beside the checkout. */
export const OFFENSIVE_DATA = process.env.OFFENSIVE_DATA_DIR || join(SHARED_DIR, 'data', 'offensive')
/** Why a scenario that evaluates the model on the labelled data skips without it. */
export const NEEDS_OFFENSIVE_DATA = `needs the labelled data in ${OFFENSIVE_DATA} (set OFFENSIVE_DATA_DIR; classifier/README.md says where to get it)`
export const hasOffensiveData = () => existsSync(join(OFFENSIVE_DATA, 'tweeteval', 'val.jsonl'))

/** The labelled splits training and evaluation read ({text, label} lines), under OFFENSIVE_DATA. */
export const OFFENSIVE_FILES = ['tweeteval/train.jsonl', 'tweeteval/val.jsonl', 'hasoc2019_en/train.jsonl', 'hasoc2020_en/train.jsonl', 'olid/train.jsonl']

/**
 * Stops `npm run <script>` with what it needs and where, when the labelled data is absent (a clone
 * without ../shared/data), instead of an ENOENT stack. Serving needs none of it: the model is committed.
 */
export function needOffensiveData(script: string) {
  const missing = OFFENSIVE_FILES.filter((file) => !existsSync(join(OFFENSIVE_DATA, file)))
  if (!missing.length) return
  console.error(
    `npm run ${script} needs the labelled data sets (JSONL lines {"text": …, "label": 0|1}) in ${OFFENSIVE_DATA}: ` +
      `${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} missing. Set OFFENSIVE_DATA_DIR to where they are; classifier/README.md says where each comes from; ` +
      'the server needs none of them (the trained model is in classifier/model/).',
  )
  process.exit(2)
}

export interface Example {
  text: string
  label: number
}

export function readJsonl(file: string): Example[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => {
      const { text, label } = JSON.parse(line)
      return { text, label: Number(label) }
    })
}

export interface Scores {
  macro_f1: number
  accuracy: number
  offensive: { precision: number; recall: number; f1: number }
  not_offensive: { precision: number; recall: number; f1: number }
  confusion: { tp: number; fp: number; tn: number; fn: number }
}

/** Macro-F1 over both classes with the decision `score > threshold`. */
export function score(labels: number[], probabilities: ArrayLike<number>, threshold = 0.5): Scores {
  let tp = 0,
    fp = 0,
    tn = 0,
    fn = 0
  labels.forEach((label, i) => {
    const predicted = probabilities[i] > threshold ? 1 : 0
    if (predicted && label) tp++
    else if (predicted) fp++
    else if (label) fn++
    else tn++
  })
  const prf = (t: number, f1p: number, f1n: number) => {
    const precision = t + f1p ? t / (t + f1p) : 0
    const recall = t + f1n ? t / (t + f1n) : 0
    return { precision, recall, f1: precision + recall ? (2 * precision * recall) / (precision + recall) : 0 }
  }
  const offensive = prf(tp, fp, fn)
  const not_offensive = prf(tn, fn, fp)
  return {
    macro_f1: (offensive.f1 + not_offensive.f1) / 2,
    accuracy: (tp + tn) / labels.length,
    offensive,
    not_offensive,
    confusion: { tp, fp, tn, fn },
  }
}
