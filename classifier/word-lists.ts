// The four word lists from npm a user first compares a detector with, each as a decision
// "offensive when the text holds a listed word": cuss (a word counts when its rating is ≥ 1),
// obscenity (its English data set with the recommended transformers: leetspeak, confusables,
// repeated and separated letters), leo-profanity, and badwords-list.
import { cuss } from 'cuss'
import { englishDataset, englishRecommendedTransformers, RegExpMatcher } from 'obscenity'
import leoProfanity from 'leo-profanity'
import badwords from 'badwords-list'

/** Lower-case words (letters, digits, apostrophes) of a text, in order. */
const words = (text: string) => text.toLowerCase().match(/[\p{L}\p{N}']+/gu) ?? []

/** Whether any run of 1–3 consecutive words is in `has`. */
function holdsPhrase(text: string, has: (phrase: string) => boolean): boolean {
  const w = words(text)
  for (let i = 0; i < w.length; i++) {
    if (has(w[i])) return true
    if (i + 1 < w.length && has(`${w[i]} ${w[i + 1]}`)) return true
    if (i + 2 < w.length && has(`${w[i]} ${w[i + 1]} ${w[i + 2]}`)) return true
  }
  return false
}

const obscenity = new RegExpMatcher({ ...englishDataset.build(), ...englishRecommendedTransformers })
const badwordSet = new Set(badwords.array.map((w) => w.toLowerCase()))

export const WORD_LISTS: Record<string, (text: string) => boolean> = {
  cuss: (text) => holdsPhrase(text, (phrase) => (cuss[phrase] ?? -1) >= 1),
  obscenity: (text) => obscenity.hasMatch(text),
  'leo-profanity': (text) => leoProfanity.check(text),
  'badwords-list': (text) => holdsPhrase(text, (phrase) => badwordSet.has(phrase)),
}
