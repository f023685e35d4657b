// The labelled splits designs are chosen on (never a public test split: those are scored blind).
// - TweetEval val (in-domain: the task of the training data).
// - Out-of-domain validation folds: a fifth of each HASOC train file (2019, 2020), chosen by a hash of
//   the example's text (so that a text repeated under two ids falls on one side), held out of every
//   training run. HASOC labels hate, offence and profanity (HOF),
//   a broader policy than OLID's, on other topics: how a design does there is how it does on text
//   unlike its training tweets.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { OFFENSIVE_DATA, type Example } from './data.js'
import { analyse, fnv1a } from './tokenizer.js'
import { rating } from './disguises.js'

/** HASOC texts whose hash is 0 of 5 are the out-of-domain fold (white space and case aside). */
const OOD_SHARE = 5
export const isOodFold = (text: string) => fnv1a(text.trim().replace(/\s+/g, ' ').toLowerCase()) % OOD_SHARE === 0

function readRows(file: string): Example[] {
  return readFileSync(join(OFFENSIVE_DATA, file), 'utf8')
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => {
      const { text, label } = JSON.parse(line)
      return { text, label: Number(label) }
    })
}

const HASOC = { hasoc2019: 'hasoc2019_en/train.jsonl', hasoc2020: 'hasoc2020_en/train.jsonl' } as const

/** The validation splits, by name. */
export function validationSplits(): Record<string, Example[]> {
  return {
    'tweeteval-val': readRows('tweeteval/val.jsonl'),
    'hasoc2019-ood': readRows(HASOC.hasoc2019).filter((r) => isOodFold(r.text)),
    'hasoc2020-ood': readRows(HASOC.hasoc2020).filter((r) => isOodFold(r.text)),
  }
}

/** The validation splits and the profanity-heavy set drawn from them. */
export function validationSplitsWithProfanity(): Record<string, Example[]> {
  const splits = validationSplits()
  return { ...splits, 'profanity-val': profanitySplit(splits) }
}

/** Whether a text holds a word cuss lists (rating ≥ 1), read through the tokenizer's disguises. */
const holdsListedWord = (text: string) => analyse(text).tokens.some((token) => rating(token) >= 1)

/**
 * The profanity-heavy validation set, from the held-out splits only: every text of them that holds a
 * listed word, with as many held-out texts without one (every k-th by the text's hash), each with its
 * own label. Most of its offensive texts are profane, as on a set of casual profanity and slurs.
 */
export function profanitySplit(splits: Record<string, Example[]>): Example[] {
  const heldOut = Object.values(splits).flat()
  const listed = heldOut.filter((e) => holdsListedWord(e.text))
  const clean = heldOut.filter((e) => !holdsListedWord(e.text))
  const every = Math.max(1, Math.floor(clean.length / listed.length))
  return [...listed, ...clean.filter((e) => fnv1a(e.text) % every === 0).slice(0, listed.length)]
}

/** HASOC's training part: every example outside the out-of-domain folds. */
export function hasocTraining(): Example[] {
  return Object.values(HASOC).flatMap((file) => readRows(file).filter((r) => !isOodFold(r.text)))
}
