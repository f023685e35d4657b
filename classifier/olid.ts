// OLID's finer labels of the TweetEval training tweets. TweetEval offensive is OLID's training file
// (train and val) with mentions written `@user` and the `URL` placeholder dropped; OLID also says of
// each offensive tweet whether it is targeted (sub-task B) and at whom (sub-task C). Only training
// tweets are looked up: val's labels are never read from here.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { OFFENSIVE_DATA } from './data.js'

/** The classes of the OLID head: not offensive, untargeted, and targeted at an individual, a group, other. */
export const OLID_CLASSES = ['NOT', 'UNT', 'IND', 'GRP', 'OTH'] as const

/** A text as both files write it: lower case letters and digits only, the `URL` placeholder dropped. */
const key = (text: string) =>
  text
    .toLowerCase()
    .replaceAll('url', '')
    .replace(/[^a-z0-9]+/g, '')

const classOf = (a: string, b: string, c: string) => OLID_CLASSES.indexOf((a === 'NOT' ? 'NOT' : b === 'UNT' ? 'UNT' : c) as (typeof OLID_CLASSES)[number])

/**
 * Each example's OLID class (an index into OLID_CLASSES), or −1 where OLID has no tweet of that text
 * whose sub-task A label agrees with the example's label.
 */
export function olidClasses(examples: Array<{ text: string; label: number }>): number[] {
  const byText = new Map<string, number[]>()
  const rows = readFileSync(join(OFFENSIVE_DATA, 'olid', 'olid-training-v1.0.tsv'), 'utf8')
    .split(/\r?\n/)
    .slice(1)
  for (const row of rows) {
    const [, tweet, a, b, c] = row.split('\t')
    if (!tweet) continue
    const classes = byText.get(key(tweet)) ?? []
    classes.push(classOf(a, b, c))
    byText.set(key(tweet), classes)
  }
  return examples.map((e) => byText.get(key(e.text))?.find((k) => k >= 0 && (k === 0) === (e.label === 0)) ?? -1)
}
